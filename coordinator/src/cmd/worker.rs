//! `farm worker`: a stateless cluster worker. Everything comes from flags or the environment
//! (broker, Redis, slots, farm key, scratch folder), so containers and autoscalers can start and
//! stop any number of them; SIGTERM finishes or requeues the matches in hand, then exits.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::botprep::{default_cache_dir, BotPrep, SandboxArgs};
use crate::cluster::consumer::{serve, WorkerConfig};

#[derive(Args, Debug, Clone)]
pub struct WorkerArgs {
    /// The RabbitMQ broker (amqp://user:pass@host:5672/vhost).
    #[arg(long, env = "FARM_BROKER", value_name = "URL", hide_env_values = true)]
    pub broker: String,
    /// The Redis with artifacts, heartbeats and the completed set (redis://host:6379/0).
    #[arg(long, env = "FARM_REDIS", value_name = "URL", hide_env_values = true)]
    pub redis: String,
    /// Matches this worker plays at once (default: number of cores).
    #[arg(long, env = "FARM_SLOTS", value_name = "N")]
    pub slots: Option<usize>,
    /// File holding the farm key (HMAC); else the key itself in FARM_KEY.
    #[arg(long, env = "FARM_KEY_FILE", value_name = "FILE")]
    pub key_file: Option<PathBuf>,
    /// Scratch folder for fetched artifacts (default: <cache dir>/worker).
    #[arg(long, env = "FARM_SCRATCH", value_name = "DIR")]
    pub scratch: Option<PathBuf>,
    /// This worker's id in heartbeats and reports (default: host-pid).
    #[arg(long, env = "FARM_WORKER_ID", value_name = "ID")]
    pub id: Option<String>,
    /// Serve Prometheus metrics at http://HOST:PORT/metrics (port 0: any free port).
    #[arg(long, env = "FARM_METRICS_ADDR", value_name = "HOST:PORT")]
    pub metrics_addr: Option<String>,
    /// Pin this worker to one referee package (its MANIFEST.json is checked at start; jobs with
    /// another MANIFEST digest are refused to the dead-letter queue). Not needed: without it the
    /// worker fetches each job's package from Redis by its digest, re-hashes every file and
    /// checks that the package's VERSION is the referee it runs.
    #[arg(long, env = "FARM_WORKSPACE", value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

pub fn run(args: WorkerArgs) -> Result<ExitCode> {
    let key = crate::cluster::load_key(args.key_file.as_deref())?;
    let slots = match args.slots {
        Some(0) => anyhow::bail!("--slots must be positive"),
        Some(n) => n,
        None => std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
    };
    let id = args
        .id
        .clone()
        .unwrap_or_else(|| format!("{}-{}", crate::cluster::hostname(), std::process::id()));
    let scratch = args.scratch.clone().unwrap_or_else(|| {
        args.sandbox
            .cache_dir
            .clone()
            .unwrap_or_else(default_cache_dir)
            .join("worker")
    });
    let manifest_digest = match &args.workspace {
        Some(dir) => Some(crate::workspace::digest(&crate::workspace::check(dir)?)),
        None => None,
    };
    let runner = BotPrep::new(&args.sandbox)?.into_runner(id.clone());
    let cfg = WorkerConfig {
        broker: args.broker,
        redis: args.redis,
        slots,
        key,
        scratch,
        id,
        manifest_digest,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .worker_threads(2)
        .build()?;
    worker::metrics::global().slots.set(slots as i64);
    let _metrics = match &args.metrics_addr {
        Some(addr) => Some(runtime.block_on(crate::metrics::serve(addr))?),
        None => None,
    };
    runtime.block_on(serve(cfg, runner))?;
    Ok(ExitCode::SUCCESS)
}
