//! The RabbitMQ transport: jobs go to the tournament's durable quorum queue as persistent,
//! signed messages with publisher confirms (at most `confirm_window` unconfirmed); signed reports
//! come back on the results queue and are acked only after the coordinator made them durable.
//! Every publication carries a fresh id inside the signature; a dead letter changes a match only
//! when it is a worker's signed refusal or the broker's delivery limit on the latest publication
//! of a match still pending, once per publication (the rule: the `ledger` module); every dead letter,
//! accepted or not, is listed in `dead-letters.jsonl`. A lost
//! broker connection is re-established with backoff and every job whose publish was not confirmed
//! is published again (duplicates are harmless: results are idempotent by match number).
//!
//! The first job published, and the first after a lull, wakes idle workers (`broker::wake`).
//!
//! Workers take a job off the queue when they start it, so the broker's consumer timeout never
//! ends a long match; the jobs they hold are in their heartbeats, and [`super::watch`]
//! publishes again a job whose holder's heartbeat expired (whatever is still queued), or a job
//! never seen held that no live worker holds while the queue is empty. At start the
//! tournament's ownership lease is taken (one coordinator per tournament) and its completed set
//! is reset to what this coordinator's log holds, so nothing of an earlier run is inherited.

mod ledger;
mod letters;
mod readers;
mod upkeep;

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use lapin::options::*;
use lapin::publisher_confirm::PublisherConfirm;
use lapin::types::FieldTable;
use lapin::{Channel, Connection};
use tokio::sync::mpsc;

use broker::{backoff, connect, persistent, Names, Store};
use shared::codec::{self, FarmKey};
use shared::msg::{Job, JobFailure, JobReport, Posting};

use super::watch::Watch;
use super::{Delivery, Transport};
use ledger::{Ledger, Letter};
use readers::{read_dead, read_results};
use upkeep::owner_token;

const TAG_BITS: u32 = 48;
const TAG_MASK: u64 = (1 << TAG_BITS) - 1;

/// What the coordinator needs to talk to the cluster for one tournament.
pub struct ClusterSpec {
    pub broker: String,
    pub key: FarmKey,
    pub tournament: String,
    pub store: Store,
    /// (sha256, file) of every artifact workers may ask for; re-uploaded when Redis lost them.
    pub artifacts: Vec<(String, PathBuf)>,
    /// Where every dead letter is listed with what it did (JSON lines).
    pub dead_file: Option<PathBuf>,
    /// Publisher confirms outstanding at most.
    pub confirm_window: usize,
    /// Print the live-worker view this often.
    pub view_every: Duration,
    /// Matches whose result is already durable in the coordinator's log: the completed set is
    /// reset to exactly these.
    pub completed: Vec<u64>,
    /// The terms workers serve the tournament on (announced with it in Redis).
    pub terms: broker::Terms,
}

/// How long a coordinator's ownership lease of a tournament lasts without renewal.
pub const OWNER_TTL: Duration = Duration::from_secs(10);

enum Event {
    Report {
        generation: u64,
        tag: u64,
        report: JobReport,
    },
    /// A message of the dead-letter queue, its signature checked (judged by the transport).
    Letter {
        letter: Letter,
        /// The reason header someone set (a worker, or anyone: never trusted).
        claimed: Option<String>,
        bytes: usize,
    },
    /// Lost with its workers too often: reported failed.
    Lost {
        number: u64,
        reason: String,
    },
    Broken {
        generation: u64,
        why: String,
    },
}

struct Link {
    conn: Connection,
    ch: Channel,
}

/// Coordinator side of a RabbitMQ cluster.
pub struct RabbitMq {
    spec: ClusterSpec,
    names: Names,
    link: Option<Link>,
    generation: u64,
    confirms: VecDeque<(u64, PublisherConfirm)>,
    unanswered: HashMap<u64, Job>,
    tx: mpsc::Sender<Event>,
    rx: mpsc::Receiver<Event>,
    reupload: bool,
    last_house: Instant,
    last_view: Instant,
    published: u64,
    watch: Watch,
    owner: String,
    /// Jobs whose publish failed before the broker could confirm it (sent again on reconnect).
    unsent: Vec<u64>,
    /// The latest publication of every pending match, to judge dead letters by.
    ledger: Ledger,
    /// Jobs the broker dead-lettered at the delivery limit, to publish again.
    again: Vec<u64>,
    /// Workers this run quarantined (no longer counted live: their jobs are played elsewhere).
    quarantined: HashSet<String>,
    /// Quarantined workers an operator released, for the run to learn.
    released: Vec<String>,
    /// When a publish wakes idle workers (the first one, and the first after a lull).
    lull: broker::wake::Lull,
}

impl RabbitMq {
    /// Connect, declare the tournament's queues, drop stale jobs of an earlier coordinator
    /// (everything unanswered is published again by the caller) and start consuming.
    pub async fn start(spec: ClusterSpec) -> Result<RabbitMq> {
        let (tx, rx) = mpsc::channel(4096);
        let names = Names::for_tournament(&spec.tournament);
        let mut t = RabbitMq {
            names,
            spec,
            link: None,
            generation: 0,
            confirms: VecDeque::new(),
            unanswered: HashMap::new(),
            tx,
            rx,
            reupload: false,
            last_house: Instant::now(),
            last_view: Instant::now(),
            published: 0,
            watch: Watch::new(),
            owner: owner_token(),
            unsent: Vec::new(),
            ledger: Ledger::new(),
            again: Vec::new(),
            quarantined: HashSet::new(),
            released: Vec::new(),
            lull: broker::wake::Lull::default(),
        };
        t.take_ownership().await?;
        let completed = std::mem::take(&mut t.spec.completed);
        t.spec
            .store
            .reset_done(&t.spec.tournament, &completed)
            .await
            .context("resetting the completed set in Redis")?;
        t.open().await?;
        if let Some(l) = &t.link {
            let purged =
                l.ch.queue_purge(&t.names.jobs, QueuePurgeOptions::default())
                    .await?;
            if purged > 0 {
                tracing::info!(purged, "dropped queued jobs of an earlier coordinator");
            }
        }
        t.spec
            .store
            .register(&t.spec.tournament, &t.spec.terms)
            .await?;
        Ok(t)
    }

    pub fn names(&self) -> &Names {
        &self.names
    }

    async fn open(&mut self) -> Result<()> {
        let conn = connect(&self.spec.broker).await?;
        let ch = conn.create_channel().await?;
        ch.confirm_select(ConfirmSelectOptions::default()).await?;
        self.names.declare(&ch).await?;
        broker::wake::declare(&ch).await?;
        ch.basic_qos(1000, BasicQosOptions::default()).await?;
        self.generation += 1;
        let generation = self.generation;
        let results = ch
            .basic_consume(
                &self.names.results,
                "",
                BasicConsumeOptions::default(),
                FieldTable::default(),
            )
            .await?;
        let dead = ch
            .basic_consume(
                &self.names.dlq,
                "",
                BasicConsumeOptions::default(),
                FieldTable::default(),
            )
            .await?;
        tokio::spawn(read_results(
            results,
            self.tx.clone(),
            self.spec.key.clone(),
            generation,
            self.spec.tournament.clone(),
        ));
        tokio::spawn(read_dead(
            dead,
            self.tx.clone(),
            self.spec.key.clone(),
            generation,
        ));
        self.link = Some(Link { conn, ch });
        Ok(())
    }

    /// Reconnect with backoff, then publish every unanswered job again.
    async fn recover(&mut self, why: &str) -> Result<()> {
        tracing::warn!("broker link lost ({why}); reconnecting");
        if let Some(l) = self.link.take() {
            let _ = l.conn.close(200, "reconnecting").await;
        }
        let mut attempt = 0;
        loop {
            match self.open().await {
                Ok(()) => break,
                Err(e) => {
                    if attempt % 5 == 0 {
                        eprintln!("broker unreachable ({e:#}); retrying");
                    }
                    tokio::time::sleep(backoff(attempt)).await;
                    attempt = (attempt + 1).min(8);
                }
            }
        }
        // Jobs whose publish was not confirmed may be lost; confirmed ones are in the durable
        // queue or with a worker (and the watch catches any the broker lost after all).
        let mut unconfirmed: Vec<u64> = self.confirms.drain(..).map(|(n, _)| n).collect();
        unconfirmed.append(&mut self.unsent);
        unconfirmed.sort_unstable();
        unconfirmed.dedup();
        let again: Vec<Job> = unconfirmed
            .iter()
            .filter_map(|n| self.unanswered.get(n).cloned())
            .collect();
        tracing::info!(
            jobs = again.len(),
            "reconnected; publishing unconfirmed jobs again"
        );
        for job in again {
            self.send(&job).await?;
        }
        Ok(())
    }

    /// Publish one job as a new publication; on a broken link, recover (which republishes it).
    async fn send(&mut self, job: &Job) -> Result<()> {
        let publication = rand::random::<u64>();
        self.ledger.published(job.number, publication);
        let posting = Posting {
            publication,
            job: job.clone(),
        };
        let body = codec::encode(&posting, &self.spec.key)?;
        let Some(link) = &self.link else {
            self.unsent.push(job.number);
            return Box::pin(self.recover("no connection")).await;
        };
        let sent = link
            .ch
            .basic_publish(
                "",
                &self.names.jobs,
                BasicPublishOptions::default(),
                &body,
                persistent(),
            )
            .await;
        match sent {
            Ok(c) => {
                self.confirms.push_back((job.number, c));
                self.published += 1;
                // Idle workers back off; the first job after a lull wakes them.
                if self.lull.publish(Instant::now()) {
                    if let Err(e) = broker::wake::send(&link.ch).await {
                        tracing::debug!("waking the workers: {e}");
                    }
                }
            }
            Err(e) => {
                self.unsent.push(job.number);
                return Box::pin(self.recover(&e.to_string())).await;
            }
        }
        while self.confirms.len() > self.spec.confirm_window {
            self.await_confirm().await?;
        }
        Ok(())
    }

    async fn await_confirm(&mut self) -> Result<()> {
        let Some((n, c)) = self.confirms.pop_front() else {
            return Ok(());
        };
        match c.await {
            Ok(conf) if conf.is_ack() => Ok(()),
            Ok(_) => {
                tracing::warn!(number = n, "broker nacked a job; publishing it again");
                if let Some(job) = self.unanswered.get(&n).cloned() {
                    Box::pin(self.send(&job)).await?;
                }
                Ok(())
            }
            Err(e) => {
                self.unsent.push(n);
                Box::pin(self.recover(&e.to_string())).await
            }
        }
    }

    /// Wait until every published job is confirmed (the raw-dispatch measurement uses this).
    pub async fn flush(&mut self) -> Result<()> {
        while !self.confirms.is_empty() {
            self.await_confirm().await?;
        }
        Ok(())
    }

    fn handle(&mut self, ev: Event) -> Option<Delivery> {
        match ev {
            Event::Report {
                generation,
                tag,
                report,
            } => {
                if report.tournament == self.spec.tournament {
                    self.forget(report.number);
                }
                if matches!(report.outcome, Err(JobFailure::Artifact(_))) {
                    self.reupload = true;
                }
                Some(Delivery {
                    report,
                    tag: (generation << TAG_BITS) | (tag & TAG_MASK),
                })
            }
            Event::Letter {
                letter,
                claimed,
                bytes,
            } => self.on_letter(letter, claimed, bytes),
            Event::Lost { number, reason } => {
                self.forget(number);
                Some(self.failed(number, "dead-letter queue", reason))
            }
            Event::Broken { generation, why } => {
                if generation == self.generation {
                    if let Some(l) = self.link.take() {
                        tokio::spawn(async move {
                            let _ = l.conn.close(200, "reconnecting").await;
                        });
                    }
                    tracing::warn!("broker link broken: {why}");
                }
                None
            }
        }
    }

    /// Match `number` is answered (a result, or a failure reported): no longer pending.
    fn forget(&mut self, number: u64) {
        self.unanswered.remove(&number);
        self.watch.answered(number);
        self.ledger.answered(number);
    }

    /// A failed report of match `number` (infrastructure: never scored).
    fn failed(&self, number: u64, by: &str, reason: String) -> Delivery {
        Delivery {
            report: JobReport {
                tournament: self.spec.tournament.clone(),
                number,
                worker: by.to_string(),
                seconds: 0.0,
                speed: None,
                outcome: Err(JobFailure::Infrastructure(format!(
                    "dead-lettered: {reason}"
                ))),
            },
            tag: 0,
        }
    }

    /// Publish again the jobs the broker dead-lettered at the delivery limit (still pending).
    async fn send_again(&mut self) -> Result<()> {
        for number in std::mem::take(&mut self.again) {
            if let Some(job) = self.unanswered.get(&number).cloned() {
                self.send(&job).await?;
            }
        }
        Ok(())
    }

    /// Delete the tournament's queues and Redis bookkeeping (after the run is complete). The
    /// tournament leaves Redis first and its queues 1.5 s later (`WORKERS_LET_GO`), so that workers
    /// (which look every 500 ms) stop asking its queue before it is gone: an ended tournament
    /// reads as normal in their logs, not as a broker error.
    pub async fn cleanup(&mut self) -> Result<()> {
        self.spec.store.forget(&self.spec.tournament).await?;
        for w in &self.quarantined {
            self.spec
                .store
                .release(w, Some(&self.spec.tournament))
                .await?;
        }
        if let Some(l) = &self.link {
            tokio::time::sleep(WORKERS_LET_GO).await;
            self.names.delete(&l.ch).await?;
        }
        Ok(())
    }
}

/// How long a finished tournament's queues outlive its announcement in Redis.
const WORKERS_LET_GO: Duration = Duration::from_millis(1500);

impl Transport for RabbitMq {
    async fn publish(&mut self, job: Job) -> Result<()> {
        if self.reupload {
            self.housekeeping().await?;
        }
        self.unanswered.insert(job.number, job.clone());
        self.send(&job).await
    }

    async fn next(&mut self) -> Result<Option<Delivery>> {
        loop {
            if self.link.is_none() {
                self.recover("connection closed").await?;
            }
            if !self.again.is_empty() {
                self.send_again().await?;
            }
            if self.reupload || self.last_house.elapsed() >= Duration::from_secs(2) {
                self.housekeeping().await?;
            }
            let wait = Duration::from_secs(2).saturating_sub(self.last_house.elapsed());
            tokio::select! {
                ev = self.rx.recv() => {
                    let ev = ev.context("result readers stopped")?;
                    if let Some(d) = self.handle(ev) {
                        return Ok(Some(d));
                    }
                }
                _ = tokio::time::sleep(wait) => {}
            }
        }
    }

    fn try_next(&mut self) -> Result<Option<Delivery>> {
        while let Ok(ev) = self.rx.try_recv() {
            if let Some(d) = self.handle(ev) {
                return Ok(Some(d));
            }
        }
        Ok(None)
    }

    async fn ack(&mut self, tag: u64) -> Result<()> {
        if tag == 0 || tag >> TAG_BITS != self.generation {
            return Ok(()); // a dead letter (already acked) or a delivery of a lost connection
        }
        if let Some(l) = &self.link {
            if let Err(e) =
                l.ch.basic_ack(tag & TAG_MASK, BasicAckOptions::default())
                    .await
            {
                self.handle(Event::Broken {
                    generation: self.generation,
                    why: e.to_string(),
                });
            }
        }
        Ok(())
    }

    async fn completed(&mut self, numbers: &[u64]) -> Result<()> {
        if let Err(e) = self
            .spec
            .store
            .mark_done(&self.spec.tournament, numbers)
            .await
        {
            tracing::warn!("Redis: recording completed matches: {e:#}");
        }
        Ok(())
    }

    async fn quarantine(&mut self, worker: &str, evidence: &str) -> Result<()> {
        self.quarantined.insert(worker.to_string());
        if let Err(e) = self
            .spec
            .store
            .quarantine(&self.spec.tournament, worker, evidence)
            .await
        {
            // The run refuses its reports all the same; the worker keeps taking jobs meanwhile.
            tracing::warn!(worker, "Redis: recording the quarantine: {e:#}");
        }
        Ok(())
    }

    async fn released(&mut self) -> Vec<String> {
        std::mem::take(&mut self.released)
    }

    async fn shutdown(mut self) -> Result<()> {
        if let Err(e) = self.cleanup().await {
            tracing::warn!("cleaning up the tournament's queues: {e:#}");
        }
        if let Some(l) = self.link.take() {
            let _ = l.conn.close(200, "tournament finished").await;
        }
        Ok(())
    }

    fn describe(&self) -> String {
        format!(
            "RabbitMQ {} (queue {})",
            broker::redact(&self.spec.broker),
            self.names.jobs
        )
    }
}
