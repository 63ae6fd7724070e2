//! The 钳王 (qianwang) ladder platform (`farm ladder serve`): bots submitted as JavaScript over a
//! Bearer-key HTTP API, smoke-tested and ranked by challenges whose games are farm jobs on an
//! embedded farm (RP tiers and an Elo rating, [`elo`]); SQLite or PostgreSQL storage; public
//! leaderboard and replay pages.

pub mod api;
pub mod db;
pub mod elo;
pub mod error;
pub mod extract;
pub mod farm;
pub mod limits;
pub mod mail;
pub mod metrics;
pub mod pages;
pub mod service;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};

use crate::botprep::{BotPrep, SandboxArgs};
use limits::{Limiter, Rate};

/// Everything `farm ladder serve` needs.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    pub data: PathBuf,
    pub database: Option<String>,
    pub listen: String,
    pub workers: usize,
    pub training: PathBuf,
    pub challenge_rate: Rate,
    pub submit_rate: Rate,
    pub auth_rate: Rate,
    pub max_code_bytes: usize,
    pub job_timeout: Duration,
    pub cores: Option<usize>,
    /// Play on a cluster instead of the embedded farm.
    pub cluster: Option<ClusterConfig>,
}

/// `--broker/--redis/--key-file`: games as jobs for `farm worker`s.
#[derive(Debug, Clone)]
pub struct ClusterConfig {
    pub broker: String,
    pub redis: String,
    pub key: crate::cluster::KeyArgs,
    /// The tournament name of the ladder's jobs (its queues).
    pub name: String,
}

/// The database URL: `--database`, else SQLite in `<data>/ladder.db`.
pub fn database_url(data: &Path, database: Option<&str>) -> Result<String> {
    match database {
        Some(url) => Ok(url.to_string()),
        None => {
            std::fs::create_dir_all(data)
                .with_context(|| format!("creating the data folder {}", data.display()))?;
            Ok(format!(
                "sqlite://{}?mode=rwc",
                data.join("ladder.db").display()
            ))
        }
    }
}

/// Runs the ladder until `stop` (SIGINT/SIGTERM for `farm ladder serve`). Prints `ladder
/// listening on http://ADDR` once ready.
pub async fn serve(cfg: ServeConfig, stop: broker::Shutdown) -> Result<()> {
    let url = database_url(&cfg.data, cfg.database.as_deref())?;
    let db = db::Db::open(&url).await?;
    let code = Arc::new(farm::CodeFolder::new(cfg.data.join("code"))?);
    let training = farm::load_training(&cfg.training, &code)?;
    let kind = match &cfg.cluster {
        None => {
            let prep = BotPrep::new(&SandboxArgs {
                cache_dir: Some(cfg.data.join("cache")),
                cores: cfg.cores,
                scratch_dir: None,
                uid_lease_dir: None,
                uid_base: 60001,
                uid_count: 256,
            })?;
            farm::FarmKind::Embedded {
                workers: cfg.workers.max(1),
                runner: Box::new(prep.into_runner(format!("ladder-{}", std::process::id()))),
            }
        }
        Some(c) => farm::FarmKind::Cluster {
            broker: c.broker.clone(),
            redis: c.redis.clone(),
            key: c.key.load()?,
            tournament: c.name.clone(),
        },
    };
    let farm = farm::Farm::start(kind, code, cfg.job_timeout).await?;
    let mailer = Arc::new(mail::OutboxMailer::new(cfg.data.join("outbox"))?);
    let ladder = Arc::new(service::Ladder {
        db,
        farm,
        training,
        mailer,
        challenge_limit: Limiter::new(cfg.challenge_rate),
        submit_limit: Limiter::new(cfg.submit_rate),
        auth_limit: Limiter::new(cfg.auth_rate),
        max_code_bytes: cfg.max_code_bytes,
        write_lock: tokio::sync::Mutex::new(()),
    });
    metrics::global();
    let listener = tokio::net::TcpListener::bind(&cfg.listen)
        .await
        .with_context(|| format!("--listen {}", cfg.listen))?;
    let addr = listener.local_addr()?;
    tracing::info!(
        %addr,
        database = %db::redact(&url),
        farm = ladder.farm.describe(),
        training = ladder.training.len(),
        "ladder up"
    );
    println!("ladder listening on http://{addr}");
    let stop = async move {
        stop.wait().await;
        tracing::info!("ladder shutting down");
    };
    let app = api::router(ladder).into_make_service_with_connect_info::<SocketAddr>();
    axum::serve(listener, app)
        .with_graceful_shutdown(stop)
        .await
        .context("serving the ladder")?;
    Ok(())
}
