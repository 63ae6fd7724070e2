//! The stateless cluster worker (`farm worker`): serves every tournament announced in Redis. It
//! takes a job from a tournament's RabbitMQ queue only when it has a free slot (`basic.get`,
//! nothing prefetched), checks signature, tournament and referee version (refusals go to the
//! dead-letter queue with the reason, signed), skips matches already completed, lists the job in its
//! heartbeat and only then acknowledges it: from there on the job is this worker's, under a lease
//! the coordinator watches (a job no live worker lists is published again), so no broker consumer
//! timeout can end a long match (`session`). It fetches artifacts and the referee package by hash
//! (`artifacts`), plays through the job runner and keeps the signed report in an outbox until
//! the broker confirms it, across reconnects; the job leaves the heartbeat only then (`outbox`).
//! On shutdown: stop taking jobs, finish those in hand, deliver their reports, return. Lost
//! broker: reconnect with backoff and jitter.
//!
//! The entry is [`serve`] with a plain [`ServeConfig`]; the `farm` CLI builds it from its flags.

pub mod artifacts;
mod outbox;
mod session;
mod shares;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::{Notify, Semaphore};
use tokio::task::JoinSet;

use broker::{backoff, Heartbeat, Shutdown, Store, WorkerState, WORKER_VERSION};
use shared::codec::FarmKey;

use crate::job::JobRunner;
use artifacts::RedisArtifacts;
use outbox::Outgoing;

/// How often a worker renews its heartbeat (it expires after `broker::HEARTBEAT_TTL`).
const BEAT_EVERY: Duration = Duration::from_secs(3);
/// After the shutdown, how long a worker keeps trying to deliver finished reports to a lost
/// broker.
const DELIVER_AFTER_STOP: Duration = Duration::from_secs(120);

/// Everything a worker process is configured with.
pub struct ServeConfig {
    /// The RabbitMQ broker (`amqp://user:pass@host:5672/vhost`).
    pub broker: String,
    /// The Redis with artifacts, heartbeats and the completed sets (`redis://host:6379/0`).
    pub redis: String,
    /// Matches played at once.
    pub slots: usize,
    /// The farm key every job and report is signed with.
    pub key: FarmKey,
    /// Scratch folder; fetched artifacts are cached in its `artifacts/`.
    pub scratch: PathBuf,
    /// This worker's id in heartbeats and dead letters.
    pub id: String,
    /// A referee-package digest this worker is pinned to (`--workspace`); None: any package
    /// whose files verify and whose VERSION is this worker's referee.
    pub manifest_digest: Option<String>,
    /// Counted once for every job the broker delivered again (the caller's
    /// `farm_jobs_redelivered_total`); None: not counted.
    pub redelivered: Option<prometheus::IntCounter>,
    /// The self-test's speed signature, announced in the heartbeat; None: not measured yet.
    pub speed: Option<f64>,
    /// The longest an idle worker waits between looks at the queues (`broker::wake`).
    pub idle_poll_max: Duration,
}

/// Why the worker loop could not run. Broker and Redis trouble never ends it: sessions are
/// re-established with backoff until the shutdown.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("creating {}", path.display())]
    Scratch {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A match failed on this host's side and the host check failed too: the worker stopped
    /// taking jobs (its withheld matches are played elsewhere).
    #[error("this host can no longer play matches: {0}")]
    HostUnfit(String),
}

/// An error with its sources, `: `-separated, for the log.
struct Chain<'a>(&'a (dyn std::error::Error + 'static));

impl std::fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)?;
        let mut next = self.0.source();
        while let Some(e) = next {
            write!(f, ": {e}")?;
            next = e.source();
        }
        Ok(())
    }
}

/// The state every task of a running worker shares.
struct Ctx {
    cfg: ServeConfig,
    runner: Arc<JobRunner>,
    store: Store,
    artifacts: RedisArtifacts,
    slots: Arc<Semaphore>,
    /// Jobs this worker holds (`<tournament>#<number>`), as its heartbeat lists them.
    current: Mutex<BTreeSet<String>>,
    outbox: Mutex<Vec<Outgoing>>,
    /// A match finished (its report is in the outbox).
    finished: Notify,
    stop: Shutdown,
    /// Why this host can no longer play (set once; the worker then stops).
    unfit: Mutex<Option<String>>,
    /// How the slots' time splits between the tournaments served (their terms).
    shares: Mutex<shares::Shares>,
}

impl Ctx {
    fn stopping(&self) -> bool {
        self.stop.is_set()
    }

    fn outbox_len(&self) -> usize {
        self.outbox.lock().map(|o| o.len()).unwrap_or(0)
    }

    /// Write the heartbeat now (also called right after taking a job, before acking it).
    async fn beat(&self) {
        let current = self
            .current
            .lock()
            .map(|c| c.iter().cloned().collect())
            .unwrap_or_default();
        let hb = heartbeat(&self.cfg, WorkerState::Ready, current);
        if let Err(e) = self.store.heartbeat(&hb).await {
            tracing::warn!("heartbeat failed: {}", Chain(&e));
        }
    }
}

fn heartbeat(cfg: &ServeConfig, state: WorkerState, current: Vec<String>) -> Heartbeat {
    Heartbeat {
        id: cfg.id.clone(),
        host: broker::hostname(),
        slots: cfg.slots,
        current,
        version: format!(
            "{WORKER_VERSION} referees {}",
            crate::job::supported_versions().join(" ")
        ),
        state,
        speed: cfg.speed,
    }
}

/// A worker still in its self-test, announced by a heartbeat in state `self-test` (no job is
/// taken), so the coordinator's view counts it as starting rather than missing. Renewed until
/// [`Announcement::end`]; Redis out of reach only means it is not announced.
pub struct Announcement {
    task: tokio::task::JoinHandle<()>,
    redis: String,
    id: String,
}

impl Announcement {
    /// Start announcing (on the caller's runtime).
    pub fn start(cfg: &ServeConfig) -> Announcement {
        let hb = heartbeat(cfg, WorkerState::SelfTest, Vec::new());
        let redis = cfg.redis.clone();
        let task = tokio::spawn(async move {
            let Some(store) = connect_briefly(&redis).await else {
                return;
            };
            loop {
                let _ = store.heartbeat(&hb).await;
                tokio::time::sleep(BEAT_EVERY).await;
            }
        });
        Announcement {
            task,
            redis: cfg.redis.clone(),
            id: cfg.id.clone(),
        }
    }

    /// Stop announcing; a worker that will not serve (`serving` false) withdraws its heartbeat.
    pub async fn end(self, serving: bool) {
        self.task.abort();
        let _ = self.task.await;
        if !serving {
            if let Some(store) = connect_briefly(&self.redis).await {
                let _ = store.drop_heartbeat(&self.id).await;
            }
        }
    }
}

/// Redis within 5 s, or None.
async fn connect_briefly(redis: &str) -> Option<Store> {
    tokio::time::timeout(Duration::from_secs(5), Store::connect(redis))
        .await
        .ok()?
        .ok()
}

/// Run the worker until `stop` (SIGTERM/SIGINT for `farm worker`), then finish the matches in
/// hand and deliver their reports (for at most two minutes to a lost broker).
pub async fn serve(cfg: ServeConfig, runner: JobRunner, stop: Shutdown) -> Result<(), ServeError> {
    let mut attempt = 0;
    let store = loop {
        match Store::connect(&cfg.redis).await {
            Ok(s) => break s,
            Err(e) => {
                if stop.is_set() {
                    return Ok(());
                }
                tracing::warn!("Redis not reachable ({}); retrying", Chain(&e));
                tokio::time::sleep(backoff(attempt)).await;
                attempt += 1;
            }
        }
    };
    let dir = cfg.scratch.join("artifacts");
    let artifacts = RedisArtifacts::new(store.clone(), dir.clone())
        .map_err(|source| ServeError::Scratch { path: dir, source })?;
    let ctx = Arc::new(Ctx {
        slots: Arc::new(Semaphore::new(cfg.slots)),
        cfg,
        runner: Arc::new(runner),
        store,
        artifacts,
        current: Mutex::new(BTreeSet::new()),
        outbox: Mutex::new(Vec::new()),
        finished: Notify::new(),
        stop,
        unfit: Mutex::new(None),
        shares: Mutex::new(shares::Shares::default()),
    });
    let beat = tokio::spawn({
        let ctx = ctx.clone();
        async move {
            loop {
                ctx.beat().await;
                tokio::time::sleep(BEAT_EVERY).await;
            }
        }
    });
    println!("worker {} ready: {} slots", ctx.cfg.id, ctx.cfg.slots);
    let mut attempt = 0u32;
    let mut tasks = JoinSet::new();
    let mut stopped_at: Option<Instant> = None;
    loop {
        if ctx.stopping() {
            let since = *stopped_at.get_or_insert_with(Instant::now);
            if tasks.is_empty() && ctx.outbox_len() == 0 {
                break;
            }
            if since.elapsed() > DELIVER_AFTER_STOP {
                tracing::error!(
                    undelivered = ctx.outbox_len(),
                    "giving up delivering reports to the broker; the coordinator will have those matches played again"
                );
                break;
            }
        }
        let began = Instant::now();
        match session::session(ctx.clone(), &mut tasks).await {
            Ok(()) => break,
            Err(e) => {
                if began.elapsed() > Duration::from_secs(10) {
                    attempt = 0;
                }
                tracing::warn!("broker session ended: {}; reconnecting", Chain(&e));
                let wait = backoff(attempt);
                attempt = (attempt + 1).min(10);
                tokio::select! {
                    _ = tokio::time::sleep(wait) => {},
                    _ = ctx.stop.wait(), if !ctx.stopping() => {},
                }
            }
        }
    }
    while tasks.join_next().await.is_some() {}
    beat.abort();
    let _ = ctx.store.drop_heartbeat(&ctx.cfg.id).await;
    println!("worker {} stopped", ctx.cfg.id);
    match ctx.unfit.lock().ok().and_then(|mut u| u.take()) {
        Some(why) => Err(ServeError::HostUnfit(why)),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("outer")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn the_log_shows_an_error_with_its_sources() {
        let e = Outer(std::io::Error::other("inner"));
        assert_eq!(Chain(&e).to_string(), "outer: inner");
    }
}

/// Why a broker session ended (logged; the worker reconnects).
#[derive(Debug, thiserror::Error)]
pub(super) enum SessionError {
    #[error(transparent)]
    Broker(#[from] broker::BrokerError),
    #[error(transparent)]
    Amqp(#[from] lapin::Error),
    #[error("acknowledging a job (the broker will redeliver it)")]
    Ack(#[source] lapin::Error),
    #[error("publishing the report of match {number} (kept to send again)")]
    Publish {
        number: u64,
        #[source]
        source: lapin::Error,
    },
    #[error("confirming the report of match {number} (kept to send again)")]
    Confirm {
        number: u64,
        #[source]
        source: lapin::Error,
    },
    #[error("the broker refused the report of match {number} (kept to send again)")]
    ReportRefused { number: u64 },
    #[error("the broker refused a dead letter")]
    DeadLetterRefused,
    #[error("signing a refusal")]
    Sign(#[source] shared::codec::CodecError),
}

/// A job taken off a queue, acked, and listed in the heartbeat.
pub(super) struct Taken {
    pub names: broker::Names,
    pub job: shared::msg::Job,
    pub label: String,
    /// The slot-seconds [`shares::Shares::took`] charged for it.
    pub charged: f64,
}
