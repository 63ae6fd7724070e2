//! `farm worker`: a stateless cluster worker. Everything comes from flags or the environment
//! (broker, Redis, slots, farm key, scratch folder), so containers and autoscalers can start and
//! stop any number of them; SIGTERM finishes or requeues the matches in hand, then exits. The
//! flags become a [`ServeConfig`] for the worker loop, `worker::serve`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use broker::Shutdown;
use clap::Args;
use worker::serve::{serve, Announcement, ServeConfig};

use super::flags::{positive_speed, KeyArgs, SandboxArgs};
use crate::botprep::BotPrep;

#[derive(Args, Debug, Clone)]
pub struct WorkerArgs {
    /// The RabbitMQ broker (amqp://user:pass@host:5672/vhost).
    #[arg(
        long,
        env = "FARM_BROKER",
        value_name = "URL",
        hide_env_values = true,
        required_unless_present = "self_test"
    )]
    pub broker: Option<String>,
    /// The Redis with artifacts, heartbeats and the completed set (redis://host:6379/0).
    #[arg(
        long,
        env = "FARM_REDIS",
        value_name = "URL",
        hide_env_values = true,
        required_unless_present = "self_test"
    )]
    pub redis: Option<String>,
    /// Matches this worker plays at once (default: number of cores).
    #[arg(long, env = "FARM_SLOTS", value_name = "N")]
    pub slots: Option<usize>,
    #[command(flatten)]
    pub key: KeyArgs,
    /// Scratch folder for fetched artifacts (default: the worker/ folder in the cache dir).
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
    /// Only run the self-test (compile and play a tiny bot through the real sandbox, scratch and
    /// cache as configured), print its result and exit: 0 when this host can run bots. Needs
    /// no broker. `farm worker` runs the same test at start and takes no job when it fails.
    #[arg(long)]
    pub self_test: bool,
    /// Refuse to serve on a host slower than this: the self-test measures a speed signature
    /// (reference bot-turns per second of a fixed CPU-bound bot through the real sandbox,
    /// printed by `farm worker --self-test`); below it the worker takes no job and exits 2.
    /// Time-controlled bots play weaker on slower hosts, so a tournament's results stay
    /// comparable only across hosts of similar speed.
    #[arg(
        long,
        env = "FARM_MIN_SPEED",
        value_name = "TURNS_PER_S",
        value_parser = positive_speed,
        allow_negative_numbers = true
    )]
    pub min_speed: Option<f64>,
    /// The longest an idle worker goes without looking at the jobs queues, in seconds. An idle
    /// worker (every queue it serves empty) looks again after 0.25 s, then 0.5, 1, 2, ... up
    /// to this, and at once when a coordinator publishes a job after a lull (a wake-up on the
    /// broker's `farm.wake` exchange), so an idle fleet costs the broker and Redis next to
    /// nothing; a lost wake-up delays a job by at most this long.
    #[arg(
        long,
        env = "FARM_IDLE_POLL_MAX",
        value_name = "SECONDS",
        default_value_t = broker::wake::IDLE_POLL_MAX.as_secs(),
        value_parser = clap::value_parser!(u64).range(1..=3600)
    )]
    pub idle_poll_max: u64,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

pub fn run(args: WorkerArgs) -> Result<ExitCode> {
    let host = args.sandbox.settings()?;
    if args.self_test {
        let prep = BotPrep::new(&host)?;
        return match prep.self_test() {
            Ok(report) => {
                println!("{report}");
                if let Some(why) = too_slow(report.speed, args.min_speed) {
                    eprintln!("{why}");
                    return Ok(ExitCode::from(2));
                }
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => {
                eprintln!("{e:#}");
                Ok(ExitCode::from(2))
            }
        };
    }
    let (Some(broker), Some(redis)) = (args.broker.clone(), args.redis.clone()) else {
        anyhow::bail!("farm worker needs --broker and --redis (or FARM_BROKER and FARM_REDIS)");
    };
    let key = args.key.load()?;
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
        .unwrap_or_else(|| format!("{}-{}", broker::hostname(), std::process::id()));
    let scratch = args
        .scratch
        .clone()
        .unwrap_or_else(|| host.cache_dir.join("worker"));
    let manifest_digest = match &args.workspace {
        Some(dir) => Some(crate::workspace::digest(&crate::workspace::check(dir)?)),
        None => None,
    };
    let prep = BotPrep::new(&host)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .worker_threads(2)
        .build()?;
    worker::metrics::global().slots.set(slots as i64);
    // Metrics first, so a failing self-test is visible on /metrics while the worker exits.
    let _metrics = match &args.metrics_addr {
        Some(addr) => Some(runtime.block_on(crate::metrics::serve(addr))?),
        None => None,
    };
    let mut cfg = ServeConfig {
        broker,
        redis,
        slots,
        key,
        scratch,
        id: id.clone(),
        manifest_digest,
        redelivered: Some(crate::metrics::global().redelivered.clone()),
        speed: None,
        idle_poll_max: std::time::Duration::from_secs(args.idle_poll_max),
    };
    // Announced while it tests itself, so a coordinator counts it as starting, not missing.
    let announced = runtime.block_on(async { Announcement::start(&cfg) });
    let tested = prep.self_test().and_then(|report| {
        println!("worker {id}: {report}");
        match too_slow(report.speed, args.min_speed) {
            Some(why) => Err(anyhow::anyhow!(why)),
            None => Ok(report),
        }
    });
    runtime.block_on(announced.end(tested.is_ok()));
    match tested {
        Ok(report) => cfg.speed = Some(report.speed),
        Err(e) => {
            eprintln!("worker {id} takes no jobs: {e:#}");
            return Ok(ExitCode::from(2));
        }
    }
    let runner = prep.into_runner(id);
    let stop = Shutdown::on_signals("taking no more jobs, finishing the matches in hand")
        .context("installing the SIGTERM/SIGINT handlers")?;
    runtime.block_on(serve(cfg, runner, stop))?;
    Ok(ExitCode::SUCCESS)
}

/// Why a host of speed `speed` may not serve under `--min-speed` (None: it may).
fn too_slow(speed: f64, min: Option<f64>) -> Option<String> {
    let min = min?;
    (speed < min).then(|| {
        format!(
            "this host's speed signature is {speed:.1} reference turns/s, below --min-speed \
             {min:.1}: it takes no jobs (lower --min-speed, or run the worker on a faster or \
             less loaded host)"
        )
    })
}
