//! The stateless cluster worker: serves every tournament announced in Redis, takes jobs from
//! their RabbitMQ queues (prefetch = slots), checks signature, tournament and referee version
//! (refusals go to the dead-letter queue with the reason), skips matches already completed,
//! fetches artifacts by hash, plays through the worker library, publishes the signed report with
//! a publisher confirm and only then acks the job. SIGTERM: stop taking jobs, finish those that
//! started, requeue the rest, exit. Lost broker: reconnect with backoff and jitter.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use futures_lite::StreamExt;
use lapin::message::Delivery;
use lapin::options::*;
use lapin::types::{AMQPValue, FieldTable, LongString};
use lapin::{BasicProperties, Channel};
use tokio::sync::{mpsc, watch, Semaphore};
use tokio::task::JoinSet;

use games::bomberman as bm;
use shared::codec::{self, FarmKey};
use shared::msg::{Job, JobReport};
use worker::job::JobRunner;

use super::artifacts::RedisArtifacts;
use super::store::{Heartbeat, Store};
use super::{backoff, connect, Names, REASON_HEADER, WORKER_VERSION};

/// Everything a worker process is configured with.
pub struct WorkerConfig {
    pub broker: String,
    pub redis: String,
    pub slots: usize,
    pub key: FarmKey,
    pub scratch: PathBuf,
    pub id: String,
    /// Digest of the referee package's MANIFEST this worker has (None: not checked).
    pub manifest_digest: Option<String>,
}

struct Ctx {
    cfg: WorkerConfig,
    runner: Arc<JobRunner>,
    store: Store,
    artifacts: RedisArtifacts,
    slots: Arc<Semaphore>,
    current: Mutex<BTreeSet<String>>,
    stop: watch::Receiver<bool>,
}

enum Event {
    Job(Names, Box<Delivery>),
    /// The broker cancelled a consumer (its queue was deleted: the tournament is over).
    Gone(String),
    Broken(String),
}

/// Run the worker until SIGTERM/SIGINT.
pub async fn serve(cfg: WorkerConfig, runner: JobRunner) -> Result<()> {
    let (stop_tx, stop) = watch::channel(false);
    tokio::spawn(async move {
        use tokio::signal::unix::{signal, SignalKind};
        let (Ok(mut term), Ok(mut int)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) else {
            return;
        };
        tokio::select! { _ = term.recv() => {}, _ = int.recv() => {} }
        tracing::info!("stopping: finishing matches in progress, requeueing the rest");
        let _ = stop_tx.send(true);
    });
    let mut attempt = 0;
    let store = loop {
        match Store::connect(&cfg.redis).await {
            Ok(s) => break s,
            Err(e) => {
                if *stop.borrow() {
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
        stop,
    });
    let beat = tokio::spawn(heartbeats(ctx.clone()));
    println!("worker {} ready: {} slots", ctx.cfg.id, ctx.cfg.slots);
    let mut attempt = 0u32;
    let mut tasks = JoinSet::new();
    loop {
        if *ctx.stop.borrow() {
            break;
        }
        let began = std::time::Instant::now();
        match session(ctx.clone(), &mut tasks).await {
            Ok(()) => break,
            Err(e) => {
                if began.elapsed() > Duration::from_secs(10) {
                    attempt = 0;
                }
                tracing::warn!("broker session ended: {e:#}; reconnecting");
                let wait = backoff(attempt);
                attempt = (attempt + 1).min(10);
                let mut stop = ctx.stop.clone();
                tokio::select! { _ = tokio::time::sleep(wait) => {}, _ = stop.changed() => {} }
            }
        }
    }
    while tasks.join_next().await.is_some() {}
    beat.abort();
    let _ = ctx.store.drop_heartbeat(&ctx.cfg.id).await;
    println!("worker {} stopped", ctx.cfg.id);
    Ok(())
}

async fn heartbeats(ctx: Arc<Ctx>) {
    loop {
        let hb = Heartbeat {
            id: ctx.cfg.id.clone(),
            host: super::hostname(),
            slots: ctx.cfg.slots,
            current: ctx
                .current
                .lock()
                .map(|c| c.iter().cloned().collect())
                .unwrap_or_default(),
            version: format!(
                "{WORKER_VERSION} referees {}",
                worker::job::supported_versions().join(" ")
            ),
        };
        if let Err(e) = ctx.store.heartbeat(&hb).await {
            tracing::warn!("heartbeat failed: {e:#}");
        }
        tokio::time::sleep(Duration::from_secs(3)).await;
    }
}

/// One broker connection: Ok(()) after a graceful stop, Err when the connection broke.
async fn session(ctx: Arc<Ctx>, tasks: &mut JoinSet<()>) -> Result<()> {
    let conn = connect(&ctx.cfg.broker).await?;
    let ch = conn.create_channel().await?;
    ch.confirm_select(ConfirmSelectOptions::default()).await?;
    ch.basic_qos(
        ctx.cfg.slots.min(u16::MAX as usize) as u16,
        BasicQosOptions::default(),
    )
    .await?;
    tracing::info!("connected to the broker");
    let (tx, mut rx) = mpsc::channel::<Event>(ctx.cfg.slots * 2 + 4);
    let mut served: HashMap<String, String> = HashMap::new();
    let mut poll = tokio::time::interval(Duration::from_millis(500));
    let mut stop = ctx.stop.clone();
    let result = loop {
        tokio::select! {
            _ = poll.tick() => {
                let tids = match ctx.store.tournaments().await {
                    Ok(t) => t,
                    Err(e) => { tracing::warn!("listing tournaments: {e:#}"); continue; }
                };
                for tid in tids {
                    if served.contains_key(&tid) { continue; }
                    let names = Names::for_tournament(&tid);
                    names.declare(&ch).await?;
                    let tag = format!("{}-{}", ctx.cfg.id, &names.jobs);
                    let mut consumer = ch
                        .basic_consume(&names.jobs, &tag, BasicConsumeOptions::default(), FieldTable::default())
                        .await?;
                    tracing::info!(queue = %names.jobs, "serving tournament");
                    served.insert(tid, tag);
                    let tx = tx.clone();
                    tokio::spawn(async move {
                        while let Some(d) = consumer.next().await {
                            match d {
                                Ok(d) => if tx.send(Event::Job(names.clone(), Box::new(d))).await.is_err() { return },
                                Err(e) => { let _ = tx.send(Event::Broken(e.to_string())).await; return }
                            }
                        }
                        let _ = tx.send(Event::Gone(names.tournament.clone())).await;
                    });
                }
            }
            ev = rx.recv() => match ev {
                Some(Event::Job(names, d)) => {
                    if d.redelivered {
                        crate::metrics::global().redelivered.inc();
                    }
                    tasks.spawn(handle(ctx.clone(), ch.clone(), names, *d));
                }
                Some(Event::Gone(tid)) => {
                    tracing::info!(tournament = %tid, "tournament queue gone");
                    served.remove(&tid);
                }
                Some(Event::Broken(e)) => break Err(anyhow::anyhow!("consumer stopped: {e}")),
                None => break Err(anyhow::anyhow!("consumers stopped")),
            },
            _ = stop.changed() => {
                for tag in served.values() {
                    let _ = ch.basic_cancel(tag, BasicCancelOptions::default()).await;
                }
                // Deliveries already buffered: requeue them (the tasks see the stop flag).
                while let Ok(ev) = rx.try_recv() {
                    if let Event::Job(_, d) = ev {
                        let _ = d.acker.nack(BasicNackOptions { requeue: true, ..Default::default() }).await;
                    }
                }
                while tasks.join_next().await.is_some() {}
                let _ = ch.close(200, "worker stopping").await;
                let _ = conn.close(200, "worker stopping").await;
                break Ok(());
            }
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
        }
    };
    result
}

async fn handle(ctx: Arc<Ctx>, ch: Channel, names: Names, d: Delivery) {
    if let Err(e) = handle_inner(&ctx, &ch, &names, &d).await {
        tracing::warn!(
            "job on {}: {e:#} (the broker will redeliver it)",
            names.jobs
        );
    }
}

async fn handle_inner(ctx: &Ctx, ch: &Channel, names: &Names, d: &Delivery) -> Result<()> {
    let job: Job = match codec::decode(&d.data, &ctx.cfg.key) {
        Ok(j) => j,
        Err(e) => {
            return dead_letter(
                ctx,
                ch,
                names,
                d,
                &format!("refused by worker {}: {e}", ctx.cfg.id),
            )
            .await
        }
    };
    if job.tournament != names.tournament {
        let why = format!(
            "job of tournament {} sent to the queue of {}",
            job.tournament, names.tournament
        );
        return dead_letter(ctx, ch, names, d, &why).await;
    }
    if !worker::job::supports(&job.referee_version) {
        let why = format!(
            "match {}: needs referee {:?}; worker {} runs {:?}",
            job.number,
            job.referee_version,
            ctx.cfg.id,
            worker::job::supported_versions()
        );
        return dead_letter(ctx, ch, names, d, &why).await;
    }
    // The bomberman referee package is this worker's --workspace; other games carry their
    // package in the job (checked file by file against its digest).
    if let (Some(mine), true) = (&ctx.cfg.manifest_digest, job.referee_version == bm::VERSION) {
        if *mine != job.manifest_digest {
            let why = format!(
                "match {}: needs the referee package with MANIFEST digest {}; worker {} has {mine}",
                job.number, job.manifest_digest, ctx.cfg.id
            );
            return dead_letter(ctx, ch, names, d, &why).await;
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
        return Ok(());
    }
    let permit = ctx.slots.clone().acquire_owned().await?;
    if *ctx.stop.borrow() {
        drop(permit);
        d.acker
            .nack(BasicNackOptions {
                requeue: true,
                ..Default::default()
            })
            .await?;
        return Ok(());
    }
    let label = format!(
        "{}#{}",
        &job.tournament[..job.tournament.len().min(16)],
        job.number
    );
    if let Ok(mut c) = ctx.current.lock() {
        c.insert(label.clone());
    }
    let report = match ctx.artifacts.fetch(&job).await {
        Err(f) => {
            tracing::warn!(number = job.number, "{f}");
            JobReport {
                tournament: job.tournament.clone(),
                number: job.number,
                worker: ctx.runner.worker_id.clone(),
                seconds: 0.0,
                outcome: Err(f),
            }
        }
        Ok(local) => {
            let runner = ctx.runner.clone();
            let job = job.clone();
            tokio::task::spawn_blocking(move || runner.execute(&job, &local)).await?
        }
    };
    drop(permit);
    let body = codec::encode(&report, &ctx.cfg.key)?;
    let confirm = ch
        .basic_publish(
            "",
            &names.results,
            BasicPublishOptions::default(),
            &body,
            persistent(),
        )
        .await?
        .await?;
    if let Ok(mut c) = ctx.current.lock() {
        c.remove(&label);
    }
    anyhow::ensure!(
        confirm.is_ack(),
        "the broker refused the report of match {}",
        job.number
    );
    d.acker.ack(BasicAckOptions::default()).await?;
    Ok(())
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

/// Persistent delivery mode.
pub fn persistent() -> BasicProperties {
    BasicProperties::default().with_delivery_mode(2)
}
