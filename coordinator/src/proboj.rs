//! proboj games as farm jobs, whatever transport plays them: one job per games.json entry, sent
//! through the engine loop ([`crate::sink::pump`]), and the sink that writes each game's folder
//! into game_root once its bundle is held to its game (a game the host failed is played again
//! first). `farm proboj` uses it on this machine (the embedded transport,
//! games played in place: [`local`]) and with `--broker` (`cluster::proboj` ships the package
//! first). Outcomes come back in games.json order.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};

use games::accept::{AcceptError, Accepted};
use shared::msg::{GameJob, Job, JobFailure, ProbojJob};
use worker::job::{JobRunner, LocalArtifacts, Steering, NOT_STARTED};
use worker::proboj::remote::{self, Package};
use worker::proboj::{Config, Game, GameOutcome, RunOptions};
use worker::CompileCache;

use crate::dispatch::{Arrival, Dispatcher};
use crate::sink::{retry_attempt, Outside, Sink};
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
/// A game the host failed is played again first ([`retry_attempt`]), then written failed.
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
    let mut sink = Folders {
        queue: jobs.into_iter(),
        games,
        config,
        stop,
        on_stop,
        on_done,
        outcomes: vec![None; games.len()],
    };
    crate::sink::pump(&mut flights, &mut sink).await?;
    // Stopping the transport also removes a cluster tournament's queues and Redis bookkeeping.
    flights.shutdown().await?;
    Ok(sink.outcomes.into_iter().flatten().collect())
}

/// proboj's games as the engine loop's sink: the game folders in game_root.
struct Folders<'a> {
    queue: std::vec::IntoIter<Job>,
    games: &'a [Game],
    config: &'a Config,
    stop: &'a Shutdown,
    on_stop: OnStop,
    on_done: &'a (dyn Fn(&GameOutcome) + Sync),
    outcomes: Vec<Option<GameOutcome>>,
}

impl Folders<'_> {
    /// The game's folder once its bundle is held to its game, or a failed folder saying why.
    fn outcome(
        &self,
        verdict: Result<Accepted, AcceptError>,
        a: &Arrival,
        game: &Game,
    ) -> GameOutcome {
        let root = &self.config.game_root;
        match verdict {
            Ok(Accepted::Proboj(b)) => remote::unpack(&b, root)
                .unwrap_or_else(|e| remote::failed(game, root, e.to_string())),
            Ok(other) => remote::failed(
                game,
                root,
                format!("worker {} sent a {} record", a.report.worker, other.name()),
            ),
            Err(e) => remote::failed(game, root, e.to_string()),
        }
    }
}

impl<T: Transport> Sink<T> for Folders<'_> {
    async fn publish(&mut self, flights: &mut Dispatcher<T>) -> Result<()> {
        while flights.has_room() && !self.stop.is_set() {
            let Some(job) = self.queue.next() else { break };
            flights.publish(job).await?;
        }
        Ok(())
    }

    async fn outside(&mut self) -> Outside {
        match self.on_stop {
            OnStop::Drain => std::future::pending().await,
            OnStop::Leave => {
                self.stop.wait().await;
                Outside::Stop
            }
        }
    }

    async fn take(&mut self, batch: Vec<Arrival>, flights: &mut Dispatcher<T>) -> Result<()> {
        for a in batch {
            let n = a.job.number;
            let game = usize::try_from(n)
                .ok()
                .and_then(|n| n.checked_sub(1))
                .and_then(|i| self.games.get(i).map(|g| (i, g)));
            let Some((i, game)) = game else {
                anyhow::bail!("a report of game {n}, which games.json does not have");
            };
            let not_started = matches!(&a.report.outcome,
                Err(JobFailure::Infrastructure(why)) if why == NOT_STARTED);
            if not_started {
                // Stopped before it started: no folder, and nothing to play again.
                flights.completed(&[n]).await?;
                flights.ack([a.tag]).await?;
                continue;
            }
            let verdict = a.verdict();
            if let (Err(why), Some(attempt)) = (&verdict, retry_attempt(a.tries)) {
                if !self.stop.is_set() {
                    tracing::warn!(game = n, attempt, "game failed, retrying: {why}");
                    flights.retry(&a).await?;
                    flights.ack([a.tag]).await?;
                    continue;
                }
            }
            let outcome = self.outcome(verdict, &a, game);
            (self.on_done)(&outcome);
            self.outcomes[i] = Some(outcome);
            flights.completed(&[n]).await?;
            flights.ack([a.tag]).await?;
        }
        Ok(())
    }

    fn stranded(&mut self, _flights: &mut Dispatcher<T>) -> Result<()> {
        anyhow::bail!("no worker can answer any more")
    }
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
