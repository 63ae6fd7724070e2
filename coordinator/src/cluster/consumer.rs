//! The stateless cluster worker: serves every tournament announced in Redis. It takes a job from
//! a tournament's RabbitMQ queue only when it has a free slot (`basic.get`, nothing prefetched),
//! checks signature, tournament and referee version (refusals go to the dead-letter queue with
//! the reason), skips matches already completed, lists the job in its heartbeat and only then
//! acknowledges it: from there on the job is this worker's, under a lease the coordinator watches
//! (a job no live worker lists is published again), so no broker consumer timeout can end a long
//! match. It fetches artifacts and the referee package by hash, plays through the worker library
//! and keeps the signed report in an outbox until the broker confirms it, across reconnects; the
//! job leaves the heartbeat only then. SIGTERM: stop taking jobs, finish those in hand, deliver
//! their reports, exit. Lost broker: reconnect with backoff and jitter.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use lapin::message::Delivery;
use lapin::options::*;
use lapin::types::{AMQPValue, FieldTable, LongString};
use lapin::{Channel, Connection};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;

use shared::codec::{self, FarmKey};
use shared::msg::{GameJob, Job, JobReport};
use worker::job::JobRunner;

use super::artifacts::RedisArtifacts;
use crate::broker::store::{Heartbeat, Store};
use crate::broker::{backoff, connect, persistent, Names, REASON_HEADER, WORKER_VERSION};
use crate::shutdown::Shutdown;

/// How often a worker renews its heartbeat (it expires after `HEARTBEAT_TTL`).
const BEAT_EVERY: Duration = Duration::from_secs(3);
/// After SIGTERM, how long a worker keeps trying to deliver finished reports to a lost broker.
const DELIVER_AFTER_STOP: Duration = Duration::from_secs(120);

/// Everything a worker process is configured with.
pub struct WorkerConfig {
    pub broker: String,
    pub redis: String,
    pub slots: usize,
    pub key: FarmKey,
    pub scratch: PathBuf,
    pub id: String,
    /// A referee-package digest this worker is pinned to (`--workspace`); None: any package
    /// whose files verify and whose VERSION is this worker's referee.
    pub manifest_digest: Option<String>,
}

/// A signed report waiting for the broker's confirm.
struct Outgoing {
    queue: String,
    body: Vec<u8>,
    label: String,
    number: u64,
}

struct Ctx {
    cfg: WorkerConfig,
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
        let hb = Heartbeat {
            id: self.cfg.id.clone(),
            host: crate::broker::hostname(),
            slots: self.cfg.slots,
            current: self
                .current
                .lock()
                .map(|c| c.iter().cloned().collect())
                .unwrap_or_default(),
            version: format!(
                "{WORKER_VERSION} referees {}",
                worker::job::supported_versions().join(" ")
            ),
        };
        if let Err(e) = self.store.heartbeat(&hb).await {
            tracing::warn!("heartbeat failed: {e:#}");
        }
    }
}

/// Run the worker until `stop` (SIGTERM/SIGINT for `farm worker`).
pub async fn serve(cfg: WorkerConfig, runner: JobRunner, stop: Shutdown) -> Result<()> {
    let mut attempt = 0;
    let store = loop {
        match Store::connect(&cfg.redis).await {
            Ok(s) => break s,
            Err(e) => {
                if stop.is_set() {
                    return Ok(());
                }
                tracing::warn!("Redis not reachable ({e:#}); retrying");
                tokio::time::sleep(backoff(attempt)).await;
                attempt += 1;
            }
        }
    };
    let artifacts = RedisArtifacts::new(store.clone(), cfg.scratch.join("artifacts"))
        .with_context(|| format!("creating {}", cfg.scratch.join("artifacts").display()))?;
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
        match session(ctx.clone(), &mut tasks).await {
            Ok(()) => break,
            Err(e) => {
                if began.elapsed() > Duration::from_secs(10) {
                    attempt = 0;
                }
                tracing::warn!("broker session ended: {e:#}; reconnecting");
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
    Ok(())
}

async fn open_channel(conn: &Connection) -> Result<Channel> {
    let ch = conn.create_channel().await?;
    ch.confirm_select(ConfirmSelectOptions::default()).await?;
    Ok(ch)
}

/// One broker connection: Ok(()) after a graceful stop, Err when the connection broke.
async fn session(ctx: Arc<Ctx>, tasks: &mut JoinSet<()>) -> Result<()> {
    let conn = connect(&ctx.cfg.broker).await?;
    let mut ch = open_channel(&conn).await?;
    tracing::info!("connected to the broker");
    let mut served: Vec<Names> = Vec::new();
    let mut listed = Instant::now() - Duration::from_secs(60);
    let mut turn = 0usize;
    loop {
        deliver(&ctx, &ch).await?;
        if ctx.stopping() {
            if tasks.is_empty() && ctx.outbox_len() == 0 {
                let _ = ch.close(200, "worker stopping").await;
                let _ = conn.close(200, "worker stopping").await;
                return Ok(());
            }
            tokio::select! {
                _ = ctx.finished.notified() => {},
                Some(_) = tasks.join_next(), if !tasks.is_empty() => {},
                _ = tokio::time::sleep(Duration::from_millis(500)) => {},
            }
            continue;
        }
        if listed.elapsed() >= Duration::from_millis(500) {
            listed = Instant::now();
            refresh(&ctx, &ch, &mut served).await?;
        }
        let mut took = false;
        if let Ok(permit) = ctx.slots.clone().try_acquire_owned() {
            if let Some(job) = take(&ctx, &mut ch, &conn, &mut served, &mut turn).await? {
                tasks.spawn(play(ctx.clone(), job, permit));
                took = true;
            }
        }
        if !took {
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(250)) => {},
                _ = ctx.finished.notified() => {},
                Some(_) = tasks.join_next(), if !tasks.is_empty() => {},
                _ = ctx.stop.wait() => {},
            }
        }
    }
}

/// Follow the tournaments announced in Redis: declare the queues of new ones, drop ended ones.
async fn refresh(ctx: &Ctx, ch: &Channel, served: &mut Vec<Names>) -> Result<()> {
    let tids = match ctx.store.tournaments().await {
        Ok(t) => t,
        Err(e) => {
            tracing::warn!("listing tournaments: {e:#}");
            return Ok(());
        }
    };
    served.retain(|n| tids.contains(&n.tournament));
    for tid in tids {
        if served.iter().any(|n| n.tournament == tid) {
            continue;
        }
        let names = Names::for_tournament(&tid);
        names.declare(ch).await?;
        tracing::info!(queue = %names.jobs, "serving tournament");
        served.push(names);
    }
    Ok(())
}

/// A job taken off a queue, acked, and listed in the heartbeat.
struct Taken {
    names: Names,
    job: Job,
    label: String,
}

/// Take at most one job from the served queues (round robin). A queue deleted under us (its
/// tournament ended) closes the channel: open another and forget that tournament.
async fn take(
    ctx: &Ctx,
    ch: &mut Channel,
    conn: &Connection,
    served: &mut Vec<Names>,
    turn: &mut usize,
) -> Result<Option<Taken>> {
    for i in 0..served.len() {
        let k = (*turn + i) % served.len();
        let got = ch
            .basic_get(&served[k].jobs, BasicGetOptions { no_ack: false })
            .await;
        let msg = match got {
            Ok(Some(m)) => m,
            Ok(None) => continue,
            Err(e) if e.to_string().contains("NOT_FOUND") => {
                tracing::info!(queue = %served[k].jobs, "tournament queue gone");
                served.remove(k);
                *ch = open_channel(conn).await?;
                return Ok(None);
            }
            Err(e) => return Err(e.into()),
        };
        *turn = k + 1;
        let names = served[k].clone();
        let d = msg.delivery;
        if d.redelivered {
            crate::metrics::global().redelivered.inc();
        }
        return admit(ctx, ch, names, d).await;
    }
    Ok(None)
}

/// Check a delivery; refuse it to the dead-letter queue, drop it as already completed, or make
/// it this worker's (listed in the heartbeat, then acked).
async fn admit(ctx: &Ctx, ch: &Channel, names: Names, d: Delivery) -> Result<Option<Taken>> {
    let job: Job = match codec::decode(&d.data, &ctx.cfg.key) {
        Ok(j) => j,
        Err(e) => {
            let why = format!("refused by worker {}: {e}", ctx.cfg.id);
            dead_letter(ctx, ch, &names, &d, &why).await?;
            return Ok(None);
        }
    };
    if job.tournament != names.tournament {
        let why = format!(
            "job of tournament {} sent to the queue of {}",
            job.tournament, names.tournament
        );
        dead_letter(ctx, ch, &names, &d, &why).await?;
        return Ok(None);
    }
    if let Some(failure) = worker::job::unsupported(&job) {
        let why = format!("worker {}: {failure}", ctx.cfg.id);
        dead_letter(ctx, ch, &names, &d, &why).await?;
        return Ok(None);
    }
    if let (Some(mine), GameJob::Bomberman(_)) = (&ctx.cfg.manifest_digest, &job.game) {
        if *mine != job.manifest_digest {
            let why = format!(
                "match {}: needs the referee package with MANIFEST digest {}; worker {} is pinned to {mine}",
                job.number, job.manifest_digest, ctx.cfg.id
            );
            dead_letter(ctx, ch, &names, &d, &why).await?;
            return Ok(None);
        }
    }
    if ctx
        .store
        .is_done(&job.tournament, job.number)
        .await
        .unwrap_or(false)
    {
        tracing::debug!(number = job.number, "already completed; dropped");
        d.acker.ack(BasicAckOptions::default()).await?;
        return Ok(None);
    }
    let label = format!("{}#{}", job.tournament, job.number);
    if let Ok(mut c) = ctx.current.lock() {
        c.insert(label.clone());
    }
    // Listed before acked: the coordinator never sees the job neither queued nor held.
    ctx.beat().await;
    if let Err(e) = d.acker.ack(BasicAckOptions::default()).await {
        if let Ok(mut c) = ctx.current.lock() {
            c.remove(&label);
        }
        return Err(e).context("acknowledging a job (the broker will redeliver it)");
    }
    Ok(Some(Taken { names, job, label }))
}

/// Play a taken job and put its signed report in the outbox.
async fn play(ctx: Arc<Ctx>, taken: Taken, permit: OwnedSemaphorePermit) {
    let Taken { names, job, label } = taken;
    let failed = |f| JobReport {
        tournament: job.tournament.clone(),
        number: job.number,
        worker: ctx.runner.worker_id.clone(),
        seconds: 0.0,
        outcome: Err(f),
    };
    let report = match ctx.artifacts.referee_package(&job).await {
        Err(f) => {
            tracing::warn!(number = job.number, "{f}");
            failed(f)
        }
        Ok(()) => match ctx.artifacts.fetch(&job).await {
            Err(f) => {
                tracing::warn!(number = job.number, "{f}");
                failed(f)
            }
            Ok(local) => {
                let runner = ctx.runner.clone();
                let j = job.clone();
                match tokio::task::spawn_blocking(move || runner.execute(&j, &local)).await {
                    Ok(r) => r,
                    Err(e) => failed(shared::msg::JobFailure::Infrastructure(format!(
                        "the match thread of worker {} died: {e}",
                        ctx.cfg.id
                    ))),
                }
            }
        },
    };
    drop(permit);
    println!(
        "worker {}: played {label} in {:.1} s{}",
        ctx.cfg.id,
        report.seconds,
        match &report.outcome {
            Ok(_) => String::new(),
            Err(f) => format!(" (no result: {f})"),
        }
    );
    match codec::encode(&report, &ctx.cfg.key) {
        Ok(body) => {
            if let Ok(mut o) = ctx.outbox.lock() {
                o.push(Outgoing {
                    queue: names.results,
                    body,
                    label,
                    number: job.number,
                });
            }
        }
        Err(e) => {
            tracing::error!(number = job.number, "cannot encode the report: {e}");
            if let Ok(mut c) = ctx.current.lock() {
                c.remove(&label);
            }
        }
    }
    ctx.finished.notify_one();
}

/// Publish every report in the outbox; each leaves it (and the heartbeat) once confirmed.
async fn deliver(ctx: &Ctx, ch: &Channel) -> Result<()> {
    loop {
        let next = ctx.outbox.lock().ok().and_then(|o| {
            o.first()
                .map(|m| (m.queue.clone(), m.body.clone(), m.number))
        });
        let Some((queue, body, number)) = next else {
            return Ok(());
        };
        let confirm = ch
            .basic_publish(
                "",
                &queue,
                BasicPublishOptions::default(),
                &body,
                persistent(),
            )
            .await
            .with_context(|| {
                format!("publishing the report of match {number} (kept to send again)")
            })?
            .await
            .with_context(|| {
                format!("confirming the report of match {number} (kept to send again)")
            })?;
        anyhow::ensure!(
            confirm.is_ack(),
            "the broker refused the report of match {number} (kept to send again)"
        );
        let label = ctx.outbox.lock().ok().and_then(|mut o| {
            let i = o
                .iter()
                .position(|m| m.number == number && m.queue == queue)?;
            Some(o.remove(i).label)
        });
        if let (Some(label), Ok(mut c)) = (label, ctx.current.lock()) {
            c.remove(&label);
        }
    }
}

/// Send a refused job to the dead-letter exchange with the reason, then ack the original.
async fn dead_letter(
    ctx: &Ctx,
    ch: &Channel,
    names: &Names,
    d: &Delivery,
    why: &str,
) -> Result<()> {
    tracing::warn!(queue = %names.jobs, "dead-lettering a job: {why}");
    let mut headers = FieldTable::default();
    headers.insert(
        REASON_HEADER.into(),
        AMQPValue::LongString(LongString::from(why.as_bytes().to_vec())),
    );
    headers.insert(
        "x-farm-worker".into(),
        AMQPValue::LongString(LongString::from(ctx.cfg.id.as_bytes().to_vec())),
    );
    let confirm = ch
        .basic_publish(
            &names.dlx,
            "",
            BasicPublishOptions::default(),
            &d.data,
            persistent().with_headers(headers),
        )
        .await?
        .await?;
    anyhow::ensure!(confirm.is_ack(), "the broker refused a dead letter");
    d.acker.ack(BasicAckOptions::default()).await?;
    Ok(())
}
