//! `farm run`: a whole tournament, with the flags and files of the reference evaluate.py
//! (same checks, same outputs, same numbers), dispatched through a transport (embedded by
//! default), checkpointed in schedule order and rated live with Bradley–Terry. Like the
//! reference run.py, every `.cpp` entrant is compiled before anything is scheduled or played.
//! With `--until-settled` the run stops after the first whole unit (one map with all its seat
//! rotations) at which the Bradley–Terry ranking is settled (see [`stop`]).
//!
//! The engine ([`execute::drive`], [`dispatch`]) takes a [`prepare::Plan`] and an
//! [`execute::Engine`], never these flags, so other commands (`farm sprt`) run through it too.

pub mod checkpoint;
pub mod cluster;
pub mod execute;
pub mod outputs;
pub mod prepare;
pub mod progress;
pub mod stop;
pub mod viewer_index;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;

use crate::botprep::SandboxArgs;

#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// The referee package (its MANIFEST.json is checked before anything runs).
    #[arg(long, default_value = "workspace/bomberman", value_name = "DIR")]
    pub workspace: PathBuf,
    /// Unique Name=program entries (executables or .cpp sources); their order is the frozen
    /// slot order.
    #[arg(long, num_args = 1.., value_name = "NAME=PROGRAM", required_unless_present = "formal")]
    pub bots: Vec<String>,
    /// Match sizes to play (each unique, 2..min(10, bots)); no filler bots.
    #[arg(long, num_args = 1.., value_name = "N", required_unless_present = "formal")]
    pub sizes: Vec<i64>,
    /// Name of the public baseline among --bots (rated 0).
    #[arg(long, value_name = "NAME", required_unless_present = "formal")]
    pub anchor: Option<String>,
    /// Number of maps (seeds) per size.
    #[arg(
        long,
        default_value_t = 5,
        value_name = "N",
        allow_negative_numbers = true
    )]
    pub seeds: i64,
    /// Schedule seed (any integer); drawn at random (63 bits) and recorded when omitted.
    #[arg(long, value_name = "INT", allow_negative_numbers = true)]
    pub seed: Option<String>,
    /// Output folder (must not exist, unless --resume).
    #[arg(long, value_name = "DIR")]
    pub output: PathBuf,
    /// Compile the bots, write schedule.json and identity.json, then stop without running any
    /// bot.
    #[arg(long)]
    pub plan_only: bool,
    /// A frozen slot schedule (JSON: sizes, entries with size/seed/slots, baseline_slot,
    /// schedule_seed, version); the order of --bots defines the slots.
    #[arg(long, value_name = "FILE")]
    pub schedule: Option<PathBuf>,
    /// Continue a run in --output after checking that nothing about it changed.
    #[arg(long)]
    pub resume: bool,
    /// With --resume: play again the matches that failed (infrastructure) last time.
    #[arg(long, requires = "resume")]
    pub redo_failed: bool,
    /// Play even if some .cpp entrants do not compile. Each such bot is eliminated at turn 0 in
    /// every one of its matches and those matches do not count for scoring; 汇总.md, bt.json and
    /// the final output name these bots. Without this flag the run compiles every entrant first
    /// and stops, playing nothing, with the compiler's message for each bot that does not
    /// compile. A host that cannot compile at all stops the run either way.
    #[arg(long)]
    pub allow_compile_failures: bool,
    /// Concurrent matches (default: number of cores).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub workers: Option<i64>,
    /// Refresh 汇总.md every N results (results themselves are checkpointed continuously).
    #[arg(
        long,
        default_value_t = 25,
        value_name = "N",
        allow_negative_numbers = true
    )]
    pub report_every: i64,
    /// The bundled tournament: every bot in bots/bomberman with Base as anchor, on the frozen
    /// schedule in the workspace (schedule-bundled.json): the formal-run shortcut.
    #[arg(long, conflicts_with_all = ["bots", "sizes", "anchor", "schedule", "seeds", "seed"])]
    pub formal: bool,
    #[command(flatten)]
    pub serve: MetricsArgs,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
    #[command(flatten)]
    pub clock: crate::clock::ClockArgs,
    /// Stop early, after the first whole unit (one map with all its seat rotations, in schedule
    /// order) at which every adjacent pair of the Bradley-Terry ranking is separated at
    /// --confidence by the map-unit bootstrap. results.json is then a prefix of the schedule;
    /// 汇总.md, bt.json and stopped.json say why and how many matches were saved. Part of the
    /// run's identity: a --resume must give the same flags. An expanded schedule (--seeds) is
    /// played in `--order rounds` unless --order says otherwise.
    #[arg(long)]
    pub until_settled: bool,
    /// The order an expanded schedule (--seeds) is played in: `reference` is evaluate.py's (size
    /// by size, seat group by seat group, map by map); `rounds` plays the same matches with
    /// round k holding the k-th map of every size for every seat group, so the ranking can be
    /// judged after the first round. Default: rounds with --until-settled, reference otherwise.
    /// schedule.json records the order; a full run with --order rounds is what an
    /// --until-settled run is a prefix of.
    #[arg(long, value_enum, value_name = "ORDER", conflicts_with_all = ["schedule", "formal"])]
    pub order: Option<Order>,
    /// With --until-settled: the share of bootstrap resamples that must keep each adjacent
    /// pair in its order (0 < C < 1).
    #[arg(long, requires = "until_settled", value_name = "C")]
    pub confidence: Option<f64>,
    /// With --until-settled: stop at the last whole unit within N matches at the latest.
    #[arg(long, requires = "until_settled", value_name = "N")]
    pub max_matches: Option<u64>,
}

/// Where a run serves its metrics (shared by `farm run` and `farm sprt`).
#[derive(Args, Debug, Clone)]
pub struct MetricsArgs {
    /// Serve Prometheus metrics at http://HOST:PORT/metrics while the run goes (port 0: any
    /// free port; the address is printed on stderr).
    #[arg(long, env = "FARM_METRICS_ADDR", value_name = "HOST:PORT")]
    pub metrics_addr: Option<String>,
    /// With --metrics-addr: keep serving this many seconds after the run ends (a last scrape).
    #[arg(long, default_value_t = 0, value_name = "SECONDS")]
    pub linger_secs: u64,
}

/// The cluster a run dispatches to (shared by `farm run` and `farm sprt`).
#[derive(Args, Debug, Clone)]
pub struct ClusterArgs {
    /// Run on a cluster: the RabbitMQ broker (amqp://user:pass@host:5672/vhost); embedded
    /// local workers when absent.
    #[arg(long, env = "FARM_BROKER", value_name = "URL", hide_env_values = true)]
    pub broker: Option<String>,
    /// Cluster mode: the Redis holding artifacts, heartbeats and the completed set.
    #[arg(long, env = "FARM_REDIS", value_name = "URL", hide_env_values = true)]
    pub redis: Option<String>,
    #[command(flatten)]
    pub key: crate::cluster::KeyArgs,
}

/// The play order of an expanded schedule (`--order`).
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// evaluate.py's order.
    Reference,
    /// Round k: the k-th map of every size, every seat group ([`shared::settle::in_rounds`]).
    Rounds,
}

/// --confidence when not given.
pub const DEFAULT_CONFIDENCE: f64 = 0.95;

impl RunArgs {
    /// The play order of an expanded schedule: --order, else rounds with --until-settled.
    pub fn order(&self) -> Order {
        self.order.unwrap_or(if self.until_settled {
            Order::Rounds
        } else {
            Order::Reference
        })
    }

    /// The --until-settled settings, when the flag is given.
    pub fn settle_settings(&self) -> Option<stop::SettleSettings> {
        self.until_settled.then(|| stop::SettleSettings {
            confidence: self.confidence.unwrap_or(DEFAULT_CONFIDENCE),
            max_matches: self.max_matches,
        })
    }
}

/// Run a prepared plan on the cluster (when the engine names a broker) or on embedded local
/// workers, with an optional stop rule.
pub async fn dispatch(
    plan: prepare::Plan,
    engine: &execute::Engine,
    stop: Option<&mut dyn stop::StopRule>,
) -> Result<execute::Finished> {
    match &engine.broker {
        Some(broker) => {
            let redis = engine
                .redis
                .as_deref()
                .context("cluster mode needs --redis (or FARM_REDIS)")?;
            cluster::execute(plan, engine, broker, redis, stop).await
        }
        None => execute::embedded(plan, engine, stop).await,
    }
}

pub fn run(args: RunArgs) -> Result<ExitCode> {
    let plan = prepare::prepare(&args)?;
    println!(
        "{} entrants; sizes={:?}; {} games; no fillers.",
        plan.entries.len(),
        plan.sizes,
        plan.schedule.len()
    );
    if args.order() == Order::Rounds && args.schedule.is_none() && !args.formal {
        println!("Played in rounds: round k is the k-th map of every size, every seat group.");
    }
    if args.plan_only {
        return Ok(ExitCode::SUCCESS);
    }
    let engine = execute::Engine::of_run(&args);
    let mut rule = match args.settle_settings() {
        Some(settings) => Some(stop::UntilSettled::new(
            settings,
            &plan.schedule,
            plan.entries.iter().map(|e| e.name.clone()).collect(),
            &plan.sizes,
            plan.anchor.clone(),
        )?),
        None => None,
    };
    let stop = rule.as_mut().map(|r| r as &mut dyn stop::StopRule);
    let finished = args.serve.run(dispatch(plan, &engine, stop))??;
    Ok(finished.code)
}

impl MetricsArgs {
    /// Run `work` on the coordinator's runtime, serving /metrics meanwhile when asked (and
    /// lingering after it).
    pub fn run<F: std::future::Future>(&self, work: F) -> Result<F::Output> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .worker_threads(2)
            .build()?;
        let metrics = match &self.metrics_addr {
            Some(addr) => Some(runtime.block_on(crate::metrics::serve(addr))?),
            None => None,
        };
        let out = runtime.block_on(work);
        if metrics.is_some() && self.linger_secs > 0 {
            let linger = std::time::Duration::from_secs(self.linger_secs);
            runtime.block_on(async { tokio::time::sleep(linger).await });
        }
        Ok(out)
    }
}
