//! The ladder's farm: every ladder game (smoke test or challenge) is a farm job on an embedded
//! transport, driven by one dispatcher task that numbers jobs and hands each report back to the
//! request waiting for it. Code lives content-addressed in `<data>/code/<sha256>.js`, served to
//! workers by [`CodeFolder`]. The only calls into the JS engine (`worker::qianwang`) are here.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use broker::Store;
use games::qianwang::MatchRecord;
use shared::msg::{GameJob, Job, JobFailure, ProgramRef, SeatSpec};
use tokio::sync::{mpsc, oneshot};
use worker::job::Artifacts;

use crate::dispatch::{Arrival, Dispatcher};
use crate::transport::embedded::Embedded;
use crate::transport::rabbitmq::{ClusterSpec, RabbitMq};
use crate::transport::Transport;

/// Why code was refused before any game (from the engine's load check).
pub fn check_code(code: &str) -> Result<(), worker::qianwang::LoadError> {
    worker::qianwang::check_code(code, &worker::qianwang::Limits::default())
}

/// Why a ladder game has no result: an infrastructure problem, never a bot's fault (a bot's
/// fault is a finished game it loses). Answered 503 `farm_unavailable` with this text.
#[derive(Debug, thiserror::Error)]
pub enum FarmError {
    #[error("the ladder's farm dispatcher has stopped")]
    DispatcherStopped,
    #[error("the farm dropped the job")]
    Dropped,
    #[error("no result from the farm within {0} s")]
    Timeout(u64),
    #[error("uploading code for a ladder job: {0:#}")]
    Upload(anyhow::Error),
    #[error("publishing a ladder job: {0:#}")]
    Publish(anyhow::Error),
    #[error("the ladder's workers stopped")]
    WorkersStopped,
    /// The report did not pass the game boundary: the worker failed the job, or its record
    /// does not verify or is not the job's (seed, seats, code hashes).
    #[error("{0}")]
    Refused(games::accept::AcceptError),
}

/// Programs by hash in one folder: `<dir>/<sha256>.js`, re-hashed before use.
pub struct CodeFolder {
    dir: PathBuf,
}

impl CodeFolder {
    pub fn new(dir: PathBuf) -> Result<CodeFolder> {
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("creating the code folder {}", dir.display()))?;
        Ok(CodeFolder { dir })
    }

    pub fn path(&self, sha256: &str) -> PathBuf {
        self.dir.join(format!("{sha256}.js"))
    }

    /// Writes `code` under its hash (atomically; nothing to do when it is already there).
    pub fn put(&self, code: &str) -> Result<String> {
        let sha = shared::manifest::sha256_hex(code.as_bytes());
        let path = self.path(&sha);
        if !path.exists() {
            let tmp = self.dir.join(format!(".{sha}.{}.tmp", std::process::id()));
            std::fs::write(&tmp, code).with_context(|| format!("writing {}", tmp.display()))?;
            std::fs::rename(&tmp, &path).with_context(|| format!("writing {}", path.display()))?;
        }
        Ok(sha)
    }

    pub fn program(&self, sha256: &str) -> ProgramRef {
        ProgramRef::for_file(sha256, &self.path(sha256))
    }
}

impl Artifacts for CodeFolder {
    fn path_for(&self, program: &ProgramRef) -> Result<PathBuf, JobFailure> {
        let ok = program.sha256.len() == 64
            && program
                .sha256
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !ok {
            return Err(JobFailure::Artifact(format!(
                "{:?} is not a sha256",
                program.sha256
            )));
        }
        let path = self.path(&program.sha256);
        let bytes = std::fs::read(&path)
            .map_err(|e| JobFailure::Artifact(format!("reading {}: {e}", path.display())))?;
        let got = shared::manifest::sha256_hex(&bytes);
        if got != program.sha256 {
            return Err(JobFailure::Artifact(format!(
                "{} hashes to {got}, not {}",
                path.display(),
                program.sha256
            )));
        }
        Ok(path)
    }
}

/// A training bot (smoke-test opponent).
#[derive(Debug, Clone)]
pub struct TrainingBot {
    pub name: String,
    pub sha256: String,
}

/// Loads every `*.js` in `dir` (sorted by name) into the code folder.
pub fn load_training(dir: &Path, code: &CodeFolder) -> Result<Vec<TrainingBot>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading the training bots folder {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "js"))
        .collect();
    files.sort();
    if files.is_empty() {
        anyhow::bail!("no training bots (*.js) in {}", dir.display());
    }
    files
        .iter()
        .map(|p| {
            let text =
                std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
            let sha = code.put(&text)?;
            let name = p
                .file_stem()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_default();
            Ok(TrainingBot { name, sha256: sha })
        })
        .collect()
}

/// Who plays one side of a ladder game: a display name and the code's hash.
#[derive(Debug, Clone)]
pub struct Contender {
    pub name: String,
    pub sha256: String,
}

type Waiter = oneshot::Sender<Result<MatchRecord, FarmError>>;

struct Request {
    black: Contender,
    red: Contender,
    seed: u64,
    reply: Waiter,
}

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
    },
}

/// Handle to the dispatcher: plays games as farm jobs.
#[derive(Clone)]
pub struct Farm {
    tx: mpsc::Sender<Request>,
    code: Arc<CodeFolder>,
    timeout: Duration,
    describe: Arc<String>,
}

impl Farm {
    /// Starts the transport and the dispatcher on a thread of their own (the transport's futures
    /// need not be `Send`); returns once the transport is up.
    pub async fn start(kind: FarmKind, code: Arc<CodeFolder>, timeout: Duration) -> Result<Farm> {
        let (tx, rx) = mpsc::channel(1024);
        let (ready_tx, ready_rx) = oneshot::channel::<Result<String>>();
        let folder = code.clone();
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
                rt.block_on(run_farm(kind, folder, rx, ready_tx));
            })
            .context("starting the ladder's farm thread")?;
        let describe = ready_rx
            .await
            .context("the ladder's farm thread stopped while starting")??;
        tracing::info!(farm = %describe, "ladder farm up");
        Ok(Farm {
            tx,
            code,
            timeout,
            describe: Arc::new(describe),
        })
    }

    /// "embedded, 2 local workers" or the broker and queue.
    pub fn describe(&self) -> &str {
        &self.describe
    }

    pub fn code(&self) -> &CodeFolder {
        &self.code
    }

    /// Plays one game as a farm job; Err is an infrastructure problem (never a bot's fault).
    pub async fn play(
        &self,
        black: Contender,
        red: Contender,
        seed: u64,
    ) -> Result<MatchRecord, FarmError> {
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(Request {
                black,
                red,
                seed,
                reply,
            })
            .await
            .map_err(|_| FarmError::DispatcherStopped)?;
        match tokio::time::timeout(self.timeout, rx).await {
            Ok(Ok(r)) => r,
            Ok(Err(_)) => Err(FarmError::Dropped),
            Err(_) => Err(FarmError::Timeout(self.timeout.as_secs())),
        }
    }
}

fn job(tournament: &str, number: u64, req: &Request) -> Job {
    let seat = |s: &Contender| SeatSpec {
        name: s.name.clone(),
        program: ProgramRef {
            sha256: s.sha256.clone(),
            file_name: format!("{}.js", s.sha256),
        },
    };
    Job {
        tournament: tournament.to_string(),
        number,
        referee_version: games::qianwang::VERSION.into(),
        manifest_digest: String::new(),
        size: 2,
        seed: req.seed,
        seats: vec![seat(&req.black), seat(&req.red)],
        game: GameJob::Qianwang,
    }
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
    rx: mpsc::Receiver<Request>,
    ready: oneshot::Sender<Result<String>>,
) {
    match kind {
        FarmKind::Embedded { workers, runner } => {
            let window = (workers * 4).max(8);
            let t = Embedded::start(workers, window, Arc::new(*runner), code);
            let _ = ready.send(Ok(t.describe()));
            dispatch(t, rx, window, "ladder".into(), None).await;
        }
        FarmKind::Cluster {
            broker,
            redis,
            key,
            tournament,
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
                })
                .await?;
                anyhow::Ok((t, uploads))
            };
            match up.await {
                Ok((t, uploads)) => {
                    let _ = ready.send(Ok(t.describe()));
                    dispatch(t, rx, 256, tournament, Some((uploads, code))).await;
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
    req: &Request,
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
/// microseconds, so a stale report of an earlier process never matches a waiting job.
async fn dispatch<T: Transport>(
    transport: T,
    mut rx: mpsc::Receiver<Request>,
    window: usize,
    tournament: String,
    uploads: Option<(Store, Arc<CodeFolder>)>,
) {
    let mut number = (super::db::now_ms().max(0) as u64) * 1000;
    let mut uploaded = HashSet::new();
    let mut flights = Dispatcher::new(transport, &tournament, window);
    let mut waiting: HashMap<u64, Waiter> = HashMap::new();
    let mut backlog: VecDeque<Request> = VecDeque::new();
    let mut open = true;
    loop {
        while flights.has_room() {
            let Some(req) = backlog.pop_front() else {
                break;
            };
            number += 1;
            if let Err(e) = upload(&uploads, &mut uploaded, &req).await {
                let _ = req.reply.send(Err(FarmError::Upload(e)));
                continue;
            }
            if let Err(e) = flights.publish(job(&tournament, number, &req)).await {
                let _ = req.reply.send(Err(FarmError::Publish(e)));
                continue;
            }
            waiting.insert(number, req.reply);
        }
        if !open && waiting.is_empty() && backlog.is_empty() {
            break;
        }
        tokio::select! {
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
                                let _ = w.send(decode(&a));
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
                        let _ = w.send(Err(FarmError::WorkersStopped));
                    }
                    for r in backlog.drain(..) {
                        let _ = r.reply.send(Err(FarmError::WorkersStopped));
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
