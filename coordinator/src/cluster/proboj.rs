//! `farm proboj --broker`: the package (server, its data, the players) goes to Redis by sha256,
//! the games' jobs ([`crate::proboj`]) to the RabbitMQ workers; each game's folder comes back as
//! a bundle and is written into `game_root` exactly as a run on this machine leaves it.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};

use broker::{Shutdown, Store};
use worker::proboj::config::RawConfig;
use worker::proboj::remote;
use worker::proboj::{Config, Game, GameOutcome};

use crate::dispatch::Dispatcher;
use crate::proboj::OnStop;
use crate::transport::rabbitmq::{ClusterSpec, RabbitMq};
use crate::transport::Transport;

/// Where the cluster is and how games are run there.
pub struct ProbojCluster<'a> {
    pub cluster: &'a super::Cluster,
    pub fair: bool,
    pub server_timeout: Option<Duration>,
    /// Extra folders to ship (relative to the start directory), e.g. maps.
    pub data: &'a [std::path::PathBuf],
}

/// Run `games` on the cluster; `on_done` sees each game as its folder is written.
pub async fn run_games(
    cluster: &ProbojCluster<'_>,
    raw: &RawConfig,
    config: &Config,
    games: &[Game],
    start_dir: &Path,
    stop: &Shutdown,
    on_done: &(dyn Fn(&GameOutcome) + Sync),
) -> Result<Vec<GameOutcome>> {
    let key = cluster.cluster.key.clone();
    let package = remote::build_package(raw, config, games, start_dir, cluster.data)?;
    let store = Store::connect(&cluster.cluster.redis).await?;
    let mut artifacts = Vec::with_capacity(package.files.len());
    for (f, src) in package.files.iter().zip(&package.sources) {
        let bytes = std::fs::read(src).with_context(|| format!("reading {}", src.display()))?;
        anyhow::ensure!(
            shared::manifest::sha256_hex(&bytes) == f.sha256,
            "{} changed while the package was built",
            src.display()
        );
        store.put_artifact(&f.sha256, &bytes, false).await?;
        artifacts.push((f.sha256.clone(), src.clone()));
    }
    let games_json = serde_json::to_string(games)?;
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let id = shared::manifest::sha256_hex(
        format!("{}\n{games_json}\n{nonce}", package.digest).as_bytes(),
    );
    let tournament = format!("proboj-{}", &id[..9]);
    eprintln!(
        "proboj on the cluster: tournament {tournament}, package of {} files (MANIFEST digest {})",
        package.files.len(),
        &package.digest[..16]
    );
    std::fs::create_dir_all(&config.game_root)
        .with_context(|| format!("game_root {}", config.game_root.display()))?;
    let t = RabbitMq::start(ClusterSpec {
        broker: cluster.cluster.broker.clone(),
        key,
        tournament: tournament.clone(),
        store,
        artifacts,
        dead_file: Some(config.game_root.join("dead-letters.jsonl")),
        confirm_window: 256,
        view_every: Duration::from_secs(10),
        completed: Vec::new(),
        terms: cluster.cluster.terms,
    })
    .await?;
    eprintln!("{}", t.describe());
    let settings = crate::proboj::Settings {
        fair: cluster.fair,
        server_timeout: cluster.server_timeout,
    };
    let jobs = crate::proboj::jobs(&tournament, &package, games, &settings)?;
    let flights = Dispatcher::new(t, &tournament, games.len());
    crate::proboj::play(flights, jobs, games, config, stop, OnStop::Leave, on_done).await
}
