//! `farm proboj --broker`: every game of a games.json becomes a farm job. The package (server,
//! its data, the players) goes to Redis by sha256, the jobs to the RabbitMQ workers; each game's
//! folder comes back as a bundle and is written into `game_root` exactly as a local run leaves
//! it. Results arrive in any order; the outcomes are returned in games.json order.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};

use broker::{Shutdown, Store};
use games::accept::Accepted;
use shared::msg::{GameJob, Job, ProbojJob};
use worker::proboj::config::RawConfig;
use worker::proboj::remote;
use worker::proboj::{Config, Game, GameOutcome};

use crate::dispatch::Dispatcher;
use crate::transport::rabbitmq::{ClusterSpec, RabbitMq};
use crate::transport::Transport;

/// Where the cluster is and how games are run there.
pub struct ProbojCluster<'a> {
    pub broker: &'a str,
    pub redis: &'a str,
    pub key: &'a super::KeyArgs,
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
    let key = cluster.key.load()?;
    let package = remote::build_package(raw, config, start_dir, cluster.data)?;
    let store = Store::connect(cluster.redis).await?;
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
        broker: cluster.broker.to_string(),
        key,
        tournament: tournament.clone(),
        store,
        artifacts,
        dead_file: Some(config.game_root.join("dead-letters.jsonl")),
        confirm_window: 256,
        view_every: Duration::from_secs(10),
        completed: Vec::new(),
    })
    .await?;
    eprintln!("{}", t.describe());
    let mut flights = Dispatcher::new(t, &tournament, games.len());
    for (i, g) in games.iter().enumerate() {
        flights
            .publish(Job {
                tournament: tournament.clone(),
                number: i as u64 + 1,
                referee_version: remote::VERSION.to_string(),
                manifest_digest: package.digest.clone(),
                size: g.players.len() as u32,
                seed: 0,
                seats: Vec::new(),
                game: GameJob::Proboj(Box::new(ProbojJob {
                    config_json: package.config_json.clone(),
                    game_json: serde_json::to_string(g)?,
                    files: package.files.clone(),
                    fair: cluster.fair,
                    server_timeout_ms: cluster.server_timeout.map(|d| d.as_millis() as u64),
                })),
            })
            .await?;
    }
    let mut outcomes: Vec<Option<GameOutcome>> = vec![None; games.len()];
    while flights.in_flight() > 0 && !stop.is_set() {
        // next_batch is cancel-safe: a stop while waiting loses no report.
        let batch = tokio::select! {
            r = flights.next_batch() => r?.context("no worker can answer any more")?,
            _ = stop.wait() => break,
        };
        for a in batch {
            let n = a.job.number;
            let game = &games[n as usize - 1];
            // The game folder is the sink: written once the bundle is held to its game.
            let outcome = match a.verdict() {
                Ok(Accepted::Proboj(b)) => remote::unpack(&b, &config.game_root)
                    .unwrap_or_else(|e| remote::failed(game, &config.game_root, e.to_string())),
                Ok(other) => remote::failed(
                    game,
                    &config.game_root,
                    format!("worker {} sent a {} record", a.report.worker, other.name()),
                ),
                Err(e) => remote::failed(game, &config.game_root, e.to_string()),
            };
            on_done(&outcome);
            outcomes[n as usize - 1] = Some(outcome);
            flights.ack([a.tag]).await?;
            flights.completed(&[n]).await?;
        }
    }
    // Stopping the transport also removes the tournament's queues and Redis bookkeeping.
    flights.shutdown().await?;
    Ok(outcomes.into_iter().flatten().collect())
}
