//! The farm behind `farm ladder serve`: the coordinator's end of the ladder's [`Farm`] handle.
//! Every game the ladder asks for (smoke test or challenge) becomes a farm job through the one
//! [`Dispatcher`], on embedded workers in this process or on `farm worker`s behind RabbitMQ
//! (the contenders' code handed over through Redis, once per hash); each report is held to its
//! job by the game boundary (`games::accept`) before its record answers the request. The
//! ladder crate knows nothing of this: it only sees [`GameRequests`] answered.

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
/// the one dispatcher, and routes each report to its waiter by job number once the game
/// boundary has held it to its job. Numbers start at this process's start time in
/// microseconds, so a stale report of an earlier process never matches a waiting job. Ends when
/// `stop` fires (or its sender is gone), or when the handles are gone and nothing waits.
async fn dispatch<T: Transport>(
    transport: T,
    mut rx: GameRequests,
    mut stop: oneshot::Receiver<()>,
    window: usize,
    tournament: String,
    uploads: Option<(Store, Arc<CodeFolder>)>,
) {
    let mut number = (ladder::db::now_ms().max(0) as u64) * 1000;
    let mut uploaded = HashSet::new();
    let mut flights = Dispatcher::new(transport, &tournament, window);
    let mut waiting: HashMap<u64, Reply> = HashMap::new();
    let mut backlog: VecDeque<GameRequest> = VecDeque::new();
    let mut open = true;
    loop {
        while flights.has_room() {
            let Some(req) = backlog.pop_front() else {
                break;
            };
            number += 1;
            if let Err(e) = upload(&uploads, &mut uploaded, &req).await {
                req.reply.send(Err(FarmError::Upload(e.into())));
                continue;
            }
            if let Err(e) = flights.publish(job(&tournament, number, &req)).await {
                req.reply.send(Err(FarmError::Publish(e.into())));
                continue;
            }
            waiting.insert(number, req.reply);
        }
        if !open && waiting.is_empty() && backlog.is_empty() {
            break;
        }
        tokio::select! {
            _ = &mut stop => {
                tracing::info!(waiting = waiting.len(), "the ladder's farm stops");
                for (_, w) in waiting.drain() {
                    w.send(Err(FarmError::WorkersStopped));
                }
                for r in backlog.drain(..) {
                    r.reply.send(Err(FarmError::WorkersStopped));
                }
                break;
            }
            req = rx.recv(), if open => match req {
                Some(r) => backlog.push_back(r),
                None => open = false,
            },
            batch = flights.next_batch(), if flights.in_flight() > 0 => match batch {
                Ok(Some(batch)) => {
                    let tags: Vec<u64> = batch.iter().map(|a| a.tag).collect();
                    for a in batch {
                        match waiting.remove(&a.job.number) {
                            Some(w) => {
                                w.send(decode(&a));
                            }
                            None => tracing::warn!(number = a.job.number, "a report no request waits for (dropped)"),
                        }
                    }
                    if let Err(e) = flights.ack(tags).await {
                        tracing::warn!("acknowledging ladder reports: {e:#}");
                    }
                }
                Ok(None) | Err(_) => {
                    tracing::error!("the ladder's farm transport stopped");
                    for (_, w) in waiting.drain() {
                        w.send(Err(FarmError::WorkersStopped));
                    }
                    for r in backlog.drain(..) {
                        r.reply.send(Err(FarmError::WorkersStopped));
                    }
                    break;
                }
            },
        }
    }
    if let Err(e) = flights.shutdown().await {
        tracing::warn!("stopping the ladder's farm transport: {e:#}");
    }
}
