//! The farm behind `farm ladder serve`: the coordinator's end of the ladder's [`Farm`] handle.
//! Every game the ladder asks for (smoke test or challenge) becomes a farm job through the one
//! engine loop ([`crate::sink::pump`]), on embedded workers in this process or on `farm
//! worker`s behind RabbitMQ (the contenders' code handed over through Redis, once per hash);
//! each report is held to its job by the game boundary (`games::accept`) before its record
//! answers the request, and a game the host failed is played again first. The ladder crate
//! knows nothing of this: it only sees [`GameRequests`] answered.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use games::qianwang::MatchRecord;
use ladder::code::CodeFolder;
use ladder::farm::{Contender, Farm, FarmError, GameRequest, GameRequests, Reply};
use shared::msg::{GameJob, Job, ProgramRef, QianwangJob, SeatSpec};
use tokio::sync::oneshot;

use crate::dispatch::{Arrival, Dispatcher};
use crate::sink::{retry_attempt, Outside, Sink};
use crate::transport::embedded::Embedded;
use crate::transport::rabbitmq::{ClusterSpec, RabbitMq};
use crate::transport::Transport;
use broker::Store;

/// Where the ladder's games run.
pub enum FarmKind {
    /// Local worker tasks in this process (the default).
    Embedded {
        workers: usize,
        runner: Box<worker::job::JobRunner>,
    },
    /// `farm worker`s behind RabbitMQ, code handed over through Redis.
    Cluster {
        broker: String,
        redis: String,
        key: shared::codec::FarmKey,
        tournament: String,
        /// The ladder's terms beside other tournaments (its priority puts challenges first).
        terms: broker::Terms,
    },
}

/// The running farm thread: [`Running::stop`] ends it the way a finished tournament ends (its
/// queues and dead-letter exchange deleted from the broker), instead of leaving them behind
/// when the process exits under it.
pub struct Running {
    stop: Option<oneshot::Sender<()>>,
    done: oneshot::Receiver<()>,
}

impl Running {
    /// Stop the farm: games still waiting are answered [`FarmError::WorkersStopped`], the
    /// transport shuts down (a cluster's queues are deleted). Waits at most `limit`.
    pub async fn stop(mut self, limit: Duration) -> Result<()> {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        match tokio::time::timeout(limit, &mut self.done).await {
            Ok(_) => Ok(()),
            Err(_) => anyhow::bail!(
                "the ladder's farm did not stop within {} s; its broker queues may be left",
                limit.as_secs()
            ),
        }
    }
}

/// Starts the transport and the dispatcher on a thread of their own (the transport's futures
/// need not be `Send`), answering the games asked of the returned handle (each waits at most
/// `timeout`) until [`Running::stop`]; returns once the transport is up.
pub async fn start(
    kind: FarmKind,
    code: Arc<CodeFolder>,
    timeout: Duration,
) -> Result<(Farm, Running)> {
    let (farm, requests) = Farm::channel(timeout);
    let (ready_tx, ready_rx) = oneshot::channel::<Result<String>>();
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let (done_tx, done_rx) = oneshot::channel::<()>();
    std::thread::Builder::new()
        .name("ladder-farm".into())
        .spawn(move || {
            let rt = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    let _ = ready_tx.send(Err(anyhow::anyhow!("farm runtime: {e}")));
                    return;
                }
            };
            rt.block_on(run_farm(kind, code, requests, ready_tx, stop_rx));
            let _ = done_tx.send(());
        })
        .context("starting the ladder's farm thread")?;
    let describe = ready_rx
        .await
        .context("the ladder's farm thread stopped while starting")??;
    tracing::info!(farm = %describe, "ladder farm up");
    let running = Running {
        stop: Some(stop_tx),
        done: done_rx,
    };
    Ok((farm.describing(describe), running))
}

fn job(tournament: &str, number: u64, req: &GameRequest) -> Job {
    let seat = |s: &Contender| SeatSpec {
        name: s.name.clone(),
        program: ProgramRef {
            sha256: s.sha256.clone(),
            file_name: format!("{}.js", s.sha256),
        },
    };
    games::job::job(
        tournament,
        number,
        vec![seat(&req.black), seat(&req.red)],
        GameJob::Qianwang(QianwangJob { seed: req.seed }),
    )
}

/// The record of a report, once the game boundary has held it to its job.
fn decode(a: &Arrival) -> Result<MatchRecord, FarmError> {
    match a.verdict().map_err(FarmError::Refused)? {
        games::accept::Accepted::Qianwang(record) => Ok(*record),
        other => Err(FarmError::Refused(games::accept::AcceptError::Mismatch {
            number: a.job.number,
            worker: a.report.worker.clone(),
            what: format!("{}, not 钳王", other.name()),
        })),
    }
}

async fn run_farm(
    kind: FarmKind,
    code: Arc<CodeFolder>,
    rx: GameRequests,
    ready: oneshot::Sender<Result<String>>,
    stop: oneshot::Receiver<()>,
) {
    match kind {
        FarmKind::Embedded { workers, runner } => {
            let window = (workers * 4).max(8);
            let t = Embedded::start(workers, window, Arc::new(*runner), code);
            let _ = ready.send(Ok(t.describe()));
            dispatch(t, rx, stop, window, "ladder".into(), None).await;
        }
        FarmKind::Cluster {
            broker,
            redis,
            key,
            tournament,
            terms,
        } => {
            let up = async {
                let store = Store::connect(&redis).await?;
                let uploads = Store::connect(&redis).await?;
                let t = RabbitMq::start(ClusterSpec {
                    broker,
                    key,
                    tournament: tournament.clone(),
                    store,
                    artifacts: Vec::new(),
                    dead_file: None,
                    confirm_window: 256,
                    view_every: Duration::from_secs(300),
                    completed: Vec::new(),
                    terms,
                })
                .await?;
                anyhow::Ok((t, uploads))
            };
            match up.await {
                Ok((t, uploads)) => {
                    let _ = ready.send(Ok(t.describe()));
                    dispatch(t, rx, stop, 256, tournament, Some((uploads, code))).await;
                }
                Err(e) => {
                    let _ = ready.send(Err(e.context("starting the ladder's cluster farm")));
                }
            }
        }
    }
}

/// Hands the seats' code to remote workers (Redis), once per hash.
async fn upload(
    uploads: &Option<(Store, Arc<CodeFolder>)>,
    done: &mut HashSet<String>,
    req: &GameRequest,
) -> Result<()> {
    let Some((store, code)) = uploads else {
        return Ok(());
    };
    for sha in [&req.black.sha256, &req.red.sha256] {
        if done.contains(sha) {
            continue;
        }
        let path = code.path(sha);
        let bytes = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
        store.put_artifact(sha, &bytes, false).await?;
        done.insert(sha.clone());
    }
    Ok(())
}

/// Keeps at most `window` jobs in flight (so publishing never blocks the report side) through
/// the engine loop, and routes each report to its waiter by job number once the game boundary
/// has held it to its job; a report the host failed is played again first, as in a tournament.
/// Numbers start at this process's start time in microseconds, so a stale report of an earlier
/// process never matches a waiting job. Ends when `stop` fires (or its sender is gone), or when
/// the handles are gone and nothing waits.
async fn dispatch<T: Transport>(
    transport: T,
    rx: GameRequests,
    stop: oneshot::Receiver<()>,
    window: usize,
    tournament: String,
    uploads: Option<(Store, Arc<CodeFolder>)>,
) {
    let mut flights = Dispatcher::new(transport, &tournament, window);
    let mut sink = Requests {
        rx,
        stop,
        open: true,
        number: (ladder::db::now_ms().max(0) as u64) * 1000,
        tournament,
        uploads,
        uploaded: HashSet::new(),
        waiting: HashMap::new(),
        backlog: VecDeque::new(),
    };
    if let Err(e) = crate::sink::pump(&mut flights, &mut sink).await {
        tracing::error!("the ladder's farm transport stopped: {e:#}");
    }
    // Whatever still waits (after an error of the transport) is told the workers are gone.
    sink.answer_all(|| FarmError::WorkersStopped);
    if let Err(e) = flights.shutdown().await {
        tracing::warn!("stopping the ladder's farm transport: {e:#}");
    }
}

/// The ladder's games as the engine loop's sink: requests in, each answered by its record.
struct Requests {
    rx: GameRequests,
    stop: oneshot::Receiver<()>,
    /// False once every handle of the farm is gone.
    open: bool,
    number: u64,
    tournament: String,
    uploads: Option<(Store, Arc<CodeFolder>)>,
    uploaded: HashSet<String>,
    /// Requests whose job is in flight, by job number.
    waiting: HashMap<u64, Reply>,
    /// Requests not yet published (the window was full).
    backlog: VecDeque<GameRequest>,
}

impl Requests {
    /// Answer every request still waiting or not yet published.
    fn answer_all(&mut self, why: impl Fn() -> FarmError) {
        for (_, w) in self.waiting.drain() {
            w.send(Err(why()));
        }
        for r in self.backlog.drain(..) {
            r.reply.send(Err(why()));
        }
    }
}

impl<T: Transport> Sink<T> for Requests {
    async fn publish(&mut self, flights: &mut Dispatcher<T>) -> Result<()> {
        while flights.has_room() {
            let Some(req) = self.backlog.pop_front() else {
                break;
            };
            self.number += 1;
            if let Err(e) = upload(&self.uploads, &mut self.uploaded, &req).await {
                req.reply.send(Err(FarmError::Upload(e.into())));
                continue;
            }
            if let Err(e) = flights
                .publish(job(&self.tournament, self.number, &req))
                .await
            {
                req.reply.send(Err(FarmError::Publish(e.into())));
                continue;
            }
            self.waiting.insert(self.number, req.reply);
        }
        Ok(())
    }

    fn exhausted(&self) -> bool {
        !self.open && self.backlog.is_empty()
    }

    async fn outside(&mut self) -> Outside {
        tokio::select! {
            _ = &mut self.stop => Outside::Stop,
            req = self.rx.recv(), if self.open => {
                match req {
                    Some(r) => self.backlog.push_back(r),
                    None => self.open = false,
                }
                Outside::More
            }
        }
    }

    async fn take(&mut self, batch: Vec<Arrival>, flights: &mut Dispatcher<T>) -> Result<()> {
        let mut tags = Vec::with_capacity(batch.len());
        for a in batch {
            tags.push(a.tag);
            let n = a.job.number;
            let answer = decode(&a);
            if let (Err(why), Some(attempt)) = (&answer, retry_attempt(a.tries)) {
                tracing::warn!(number = n, attempt, "ladder game failed, retrying: {why}");
                match flights.retry(&a).await {
                    Ok(()) => continue,
                    Err(e) => tracing::warn!(number = n, "publishing a retry: {e:#}"),
                }
            }
            match self.waiting.remove(&n) {
                Some(w) => w.send(answer),
                None => tracing::warn!(number = n, "a report no request waits for (dropped)"),
            }
        }
        if let Err(e) = flights.ack(tags).await {
            tracing::warn!("acknowledging ladder reports: {e:#}");
        }
        Ok(())
    }

    fn stranded(&mut self, _flights: &mut Dispatcher<T>) -> Result<()> {
        tracing::error!("the ladder's farm transport stopped");
        self.answer_all(|| FarmError::WorkersStopped);
        Ok(())
    }

    fn stopped(&mut self) {
        tracing::info!(waiting = self.waiting.len(), "the ladder's farm stops");
        self.answer_all(|| FarmError::WorkersStopped);
    }
}
