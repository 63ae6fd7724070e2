//! proboj games as farm jobs, whatever transport plays them: one job per games.json entry, sent
//! through the one dispatcher, and the sink that writes each game's folder into game_root once
//! its bundle is held to its game. `farm proboj` uses it on this machine (the embedded transport,
//! games played in place: [`local`]) and with `--broker` (`cluster::proboj` ships the package
//! first). Outcomes come back in games.json order.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};

use games::accept::Accepted;
use shared::msg::{GameJob, Job, JobFailure, ProbojJob};
use worker::job::{JobRunner, LocalArtifacts, Steering, NOT_STARTED};
use worker::proboj::remote::{self, Package};
use worker::proboj::{Config, Game, GameOutcome, RunOptions};
use worker::CompileCache;

use crate::dispatch::Dispatcher;
use crate::transport::embedded::Embedded;
use crate::transport::Transport;
use broker::Shutdown;

/// How the games of one run are played, whatever the transport.
pub struct Settings {
    /// Stop players while the server is not waiting on them.
    pub fair: bool,
    /// End a game whose server is silent this long.
    pub server_timeout: Option<Duration>,
}

/// One job per game of `games`, numbered from 1 in games.json order.
pub fn jobs(
    tournament: &str,
    package: &Package,
    games: &[Game],
    settings: &Settings,
) -> Result<Vec<Job>> {
    games
        .iter()
        .enumerate()
        .map(|(i, g)| {
            Ok(games::job::job(
                tournament,
                i as u64 + 1,
                Vec::new(),
                GameJob::Proboj(ProbojJob {
                    manifest_digest: package.digest.clone(),
                    config_json: package.config_json.clone(),
                    game_json: serde_json::to_string(g)?,
                    files: package.files.clone(),
                    fair: settings.fair,
                    server_timeout_ms: settings.server_timeout.map(|d| d.as_millis() as u64),
                }),
            ))
        })
        .collect()
}

/// What a stop request does to the games in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnStop {
    /// Wait for them: their runner ends them cleanly and reports them interrupted (this
    /// machine's games).
    Drain,
    /// Leave them to the workers and return at once (the cluster's).
    Leave,
}

/// Send `jobs` through `flights` (as many in flight as its window allows) and write every
/// game's folder into `config.game_root` as its report arrives; `on_done` sees each game then.
/// After `stop`, no more games start. Returns the outcomes in games.json order (a game that was
/// never started is left out) and stops the transport.
pub async fn play<T: Transport>(
    mut flights: Dispatcher<T>,
    jobs: Vec<Job>,
    games: &[Game],
    config: &Config,
    stop: &Shutdown,
    on_stop: OnStop,
    on_done: &(dyn Fn(&GameOutcome) + Sync),
) -> Result<Vec<GameOutcome>> {
    let mut queue = jobs.into_iter();
    let mut outcomes: Vec<Option<GameOutcome>> = vec![None; games.len()];
    loop {
        while flights.has_room() && !stop.is_set() {
            let Some(job) = queue.next() else { break };
            flights.publish(job).await?;
        }
        if flights.in_flight() == 0 {
            break;
        }
        // next_batch is cancel-safe: a stop while waiting loses no report.
        let batch = match on_stop {
            OnStop::Drain => flights.next_batch().await?,
            OnStop::Leave => tokio::select! {
                r = flights.next_batch() => r?,
                _ = stop.wait() => break,
            },
        };
        let batch = batch.context("no worker can answer any more")?;
        for a in batch {
            let n = a.job.number;
            let game = &games[n as usize - 1];
            let not_started = matches!(&a.report.outcome,
                Err(JobFailure::Infrastructure(why)) if why == NOT_STARTED);
            if !not_started {
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
            }
            flights.ack([a.tag]).await?;
            flights.completed(&[n]).await?;
        }
    }
    // Stopping the transport also removes a cluster tournament's queues and Redis bookkeeping.
    flights.shutdown().await?;
    Ok(outcomes.into_iter().flatten().collect())
}

/// Play `games` on this machine: `concurrency` embedded workers, each game in place (the
/// config's own paths, its folder written straight into game_root), sandboxed and CPU-fair with
/// `opts.tokens` (this host's cores when None) shared by every game, as on any worker; `stop`
/// ends running games cleanly and starts no more.
#[allow(clippy::too_many_arguments)]
pub async fn local(
    raw: &worker::proboj::config::RawConfig,
    config: &Config,
    games: &[Game],
    start_dir: &Path,
    opts: &RunOptions,
    concurrency: usize,
    stop: &Shutdown,
    on_done: &(dyn Fn(&GameOutcome) + Sync),
) -> Result<Vec<GameOutcome>> {
    let package = remote::in_place_package(raw)?;
    let settings = Settings {
        fair: opts.fair,
        server_timeout: opts.server_timeout,
    };
    let tournament = "proboj-local";
    let jobs = jobs(tournament, &package, games, &settings)?;
    // proboj games compile nothing; the runner's cache lives as long as the run.
    let cache_dir = tempfile::Builder::new()
        .prefix("farm-proboj-cache-")
        .tempdir()
        .context("a folder for the runner's (unused) compile cache")?;
    let cache = CompileCache::new(cache_dir.path().to_path_buf(), opts.sandbox.clone())
        .context("the runner's compile cache")?;
    let runner = JobRunner {
        cache,
        sandbox: opts.sandbox.clone(),
        tokens: opts
            .tokens
            .clone()
            .unwrap_or_else(sandbox::CoreTokens::default_for_host),
        worker_id: format!("{}/local", broker::hostname()),
        speed: None,
        js_program: None,
    };
    let workers = concurrency.clamp(1, games.len().max(1));
    let transport = Embedded::start_steered(
        workers,
        workers,
        Arc::new(runner),
        Arc::new(LocalArtifacts::new()),
        Steering {
            stop: Some(stop.shared_flag()),
            in_place: Some(start_dir.to_path_buf()),
            verbose: opts.verbose,
        },
    );
    let flights = Dispatcher::new(transport, tournament, workers);
    eprintln!("{}", flights.describe());
    play(flights, jobs, games, config, stop, OnStop::Drain, on_done).await
}
