//! `farm ladder`: the 钳王 ladder service (`serve`: the `ladder` crate's server, its games played
//! by the farm of [`crate::ladder_farm`], embedded or on a cluster) and its admin CLI (`admin`:
//! create players and keys, list, rotate keys, verify emails by hand, set RP), both on the same
//! --data/--database.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};

use ladder::db::Db;
use ladder::limits::Rate;
use ladder::service::{new_key, tier_json};
use ladder::{database_url, ServeConfig, Server};

use super::flags::{KeyArgs, SandboxArgs};
use crate::botprep::BotPrep;
use crate::ladder_farm::{self, FarmKind};

/// How long a stopping ladder waits for its farm to delete its broker queues.
const FARM_STOP: Duration = Duration::from_secs(20);

#[derive(Args, Debug)]
pub struct LadderArgs {
    #[command(subcommand)]
    pub command: LadderCommand,
}

#[derive(Subcommand, Debug)]
pub enum LadderCommand {
    /// Serve the ladder's HTTP API and pages (matches run as farm jobs on an embedded farm).
    Serve(Box<ServeArgs>),
    /// Manage players: create-player, list, rotate-key, verify-email, set-rp.
    Admin(AdminArgs),
}

/// Where the ladder keeps its state.
#[derive(Args, Debug, Clone)]
pub struct StoreArgs {
    /// Folder for the SQLite database, code files, mail outbox and caches.
    #[arg(
        long,
        env = "FARM_LADDER_DATA",
        value_name = "DIR",
        default_value = "ladder-data"
    )]
    pub data: PathBuf,
    /// PostgreSQL instead of SQLite: postgres://user@host:5432/db (or a sqlite:// URL).
    #[arg(
        long,
        env = "FARM_LADDER_DATABASE",
        value_name = "URL",
        hide_env_values = true
    )]
    pub database: Option<String>,
}

#[derive(Args, Debug)]
pub struct ServeArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// Address to listen on (port 0: any free port; the chosen address is printed).
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// Embedded farm workers (games played at once; default: number of cores).
    #[arg(long, value_name = "N")]
    pub workers: Option<usize>,
    /// Folder of the training bots (*.js) the smoke test plays against.
    #[arg(long, value_name = "DIR", default_value = "bots/qianwang")]
    pub training_bots: PathBuf,
    /// Challenges per bot key: COUNT/SECONDS.
    #[arg(long, value_name = "N/SECS", default_value = "30/60")]
    pub rate_challenge: Rate,
    /// Code submissions and reverts per bot key: COUNT/SECONDS.
    #[arg(long, value_name = "N/SECS", default_value = "10/60")]
    pub rate_submit: Rate,
    /// Email requests per key, token confirmations and bad keys per IP: COUNT/SECONDS.
    #[arg(long, value_name = "N/SECS", default_value = "20/60")]
    pub rate_auth: Rate,
    /// Largest accepted code in bytes (larger: 413).
    #[arg(long, value_name = "BYTES", default_value_t = 64 * 1024)]
    pub max_code_bytes: usize,
    /// Give up on a game's farm job after this many seconds (answered 503).
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    pub job_timeout: u64,
    /// How the embedded farm runs bots (its compile cache defaults to DIR/cache of --data).
    #[command(flatten)]
    pub sandbox: SandboxArgs,
    /// Play games on a cluster: the RabbitMQ broker of the `farm worker`s (amqp://...).
    #[arg(
        long,
        env = "FARM_BROKER",
        value_name = "URL",
        hide_env_values = true,
        requires = "redis"
    )]
    pub broker: Option<String>,
    /// The cluster's Redis (code is handed to workers there).
    #[arg(
        long,
        env = "FARM_REDIS",
        value_name = "URL",
        hide_env_values = true,
        requires = "broker"
    )]
    pub redis: Option<String>,
    #[command(flatten)]
    pub key: KeyArgs,
    /// Tournament name of the ladder's jobs on the cluster (one per ladder).
    #[arg(long, value_name = "NAME", default_value = "qianwang-ladder")]
    pub cluster_name: String,
    /// On a cluster: workers serve the tournament of the highest priority first whenever it has
    /// a job ready; the ladder's 1 puts its challenges ahead of tournaments (0 by default), so a
    /// submitter does not wait behind a long run. 0 shares the workers by `--share` instead.
    #[arg(
        long,
        env = "FARM_LADDER_PRIORITY",
        value_name = "N",
        default_value_t = 1,
        allow_negative_numbers = true
    )]
    pub priority: i32,
}

#[derive(Args, Debug)]
pub struct AdminArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(subcommand)]
    pub command: AdminCommand,
}

#[derive(Subcommand, Debug)]
pub enum AdminCommand {
    /// Create a player (bot) and print its key.
    CreatePlayer {
        #[arg(long)]
        name: String,
        #[arg(long)]
        email: String,
        /// Mark the email verified right away.
        #[arg(long)]
        verified: bool,
    },
    /// List players: botId, name, email, verified, RP, tier, current version, Elo.
    List,
    /// Give a player a new key (the old one stops working) and print it.
    RotateKey {
        #[arg(long)]
        name: String,
    },
    /// Mark a player's email verified by hand.
    VerifyEmail {
        #[arg(long)]
        name: String,
    },
    /// Set a player's RP (operators and tests).
    SetRp {
        #[arg(long)]
        name: String,
        #[arg(long)]
        rp: u32,
    },
}

pub fn run(args: LadderArgs) -> Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .worker_threads(2)
        .build()
        .context("starting the async runtime")?;
    match args.command {
        LadderCommand::Serve(a) => {
            let a = *a;
            let workers = a.workers.unwrap_or_else(|| {
                std::thread::available_parallelism()
                    .map(|n| n.get())
                    .unwrap_or(1)
            });
            if workers == 0 {
                anyhow::bail!("--workers must be positive");
            }
            let data = a.store.data.clone();
            let cfg = ServeConfig {
                data: a.store.data,
                database: a.store.database,
                listen: a.listen,
                training: a.training_bots,
                challenge_rate: a.rate_challenge,
                submit_rate: a.rate_submit,
                auth_rate: a.rate_auth,
                max_code_bytes: a.max_code_bytes,
            };
            // Made once the ladder's storage is open (its errors come first).
            let mut host = a.sandbox.settings()?;
            if a.sandbox.cache_dir.is_none() {
                host.cache_dir = data.join("cache");
            }
            let (broker, redis, key) = (a.broker, a.redis, a.key);
            let kind = move || -> Result<FarmKind> {
                Ok(match (broker, redis) {
                    (Some(broker), Some(redis)) => FarmKind::Cluster {
                        broker,
                        redis,
                        key: key.load()?,
                        tournament: a.cluster_name,
                        terms: broker::Terms {
                            priority: a.priority,
                            ..broker::Terms::default()
                        },
                    },
                    _ => {
                        let prep = BotPrep::new(&host)?;
                        let id = format!("ladder-{}", std::process::id());
                        FarmKind::Embedded {
                            workers,
                            runner: Box::new(prep.into_runner(id)),
                        }
                    }
                })
            };
            let timeout = Duration::from_secs(a.job_timeout.max(1));
            let stop = broker::Shutdown::on_signals("the ladder stops serving")
                .context("installing the SIGTERM/SIGINT handlers")?;
            runtime.block_on(async move {
                let server = Server::open(cfg).await?;
                let (farm, running) = ladder_farm::start(kind()?, server.code(), timeout).await?;
                let served = server.serve(farm, async move { stop.wait().await }).await;
                // Whatever ended serving, the farm ends as a tournament does (queues deleted).
                if let Err(e) = running.stop(FARM_STOP).await {
                    tracing::warn!("{e:#}");
                }
                served?;
                anyhow::Ok(())
            })?;
            Ok(ExitCode::SUCCESS)
        }
        LadderCommand::Admin(a) => runtime.block_on(admin(a)),
    }
}

async fn admin(a: AdminArgs) -> Result<ExitCode> {
    let url = database_url(&a.store.data, a.store.database.as_deref())?;
    let db = Db::open(&url).await?;
    let by_name = |name: String| {
        let db = db.clone();
        async move {
            db.player_by_name(&name)
                .await?
                .with_context(|| format!("no player named {name:?} (see `farm ladder admin list`)"))
        }
    };
    match a.command {
        AdminCommand::CreatePlayer {
            name,
            email,
            verified,
        } => {
            let name = name.trim().to_string();
            if name.is_empty() || name.len() > 64 || name.chars().any(char::is_control) {
                anyhow::bail!("--name {name:?}: 1 to 64 printable characters");
            }
            if db.player_by_name(&name).await?.is_some() {
                anyhow::bail!("a player named {name:?} already exists");
            }
            let (key, hash) = new_key();
            let id = db.create_player(&name, email.trim(), &hash).await?;
            if verified {
                db.set_email_verified(id, email.trim()).await?;
            }
            println!("botId: {id}");
            println!("key: {key}");
        }
        AdminCommand::List => {
            println!("botId\tname\temail\tverified\trp\ttier\tversion\telo");
            for p in db.players().await? {
                println!(
                    "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                    p.id,
                    p.name,
                    p.email,
                    if p.email_verified.0 { "yes" } else { "no" },
                    p.rp,
                    tier_json(p.rp)["name"].as_str().unwrap_or(""),
                    p.current_version
                        .map(|v| v.to_string())
                        .unwrap_or("-".into()),
                    p.elo,
                );
            }
        }
        AdminCommand::RotateKey { name } => {
            let p = by_name(name).await?;
            let (key, hash) = new_key();
            db.set_key_hash(p.id, &hash).await?;
            println!("botId: {}", p.id);
            println!("key: {key}");
        }
        AdminCommand::VerifyEmail { name } => {
            let p = by_name(name).await?;
            db.set_email_verified(p.id, &p.email).await?;
            println!("verified {} for bot {} ({})", p.email, p.id, p.name);
        }
        AdminCommand::SetRp { name, rp } => {
            let p = by_name(name).await?;
            db.set_rp(p.id, rp as i64).await?;
            println!("bot {} ({}): rp {} -> {rp}", p.id, p.name, p.rp);
        }
    }
    db.pool.close().await;
    Ok(ExitCode::SUCCESS)
}
