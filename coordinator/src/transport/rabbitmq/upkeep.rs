//! The RabbitMQ transport's upkeep, between reports: the tournament's ownership lease (one
//! coordinator per tournament), its Redis bookkeeping (announcement, artifacts re-uploaded when
//! Redis lost them), publishing again the jobs no live worker holds, and the worker view.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use lapin::options::*;
use lapin::types::FieldTable;

use super::{Event, RabbitMq, OWNER_TTL};
use crate::transport::watch::{Cause, Fleet, Verdict};

impl RabbitMq {
    /// Take the tournament's ownership lease, waiting out the lease of a coordinator that was
    /// killed (it expires within [`OWNER_TTL`]); refuse when another one keeps renewing it.
    pub(super) async fn take_ownership(&mut self) -> Result<()> {
        let started = Instant::now();
        let mut told = false;
        loop {
            let other = self
                .spec
                .store
                .claim_owner(&self.spec.tournament, &self.owner, OWNER_TTL)
                .await
                .context("taking the tournament's lease in Redis")?;
            let Some(other) = other else { return Ok(()) };
            if holder_is_dead(&other) {
                tracing::info!(holder = %other, "taking over from a coordinator that is gone");
                self.spec
                    .store
                    .release_owner(&self.spec.tournament, &other)
                    .await?;
                continue;
            }
            if started.elapsed() > OWNER_TTL * 2 {
                anyhow::bail!(
                    "another coordinator ({other}) is running tournament {} (same bots, schedule and referee) on this broker and Redis; stop it first, or give this run other bots, seeds or --seed",
                    self.spec.tournament
                );
            }
            if !told {
                eprintln!(
                    "waiting for the lease of coordinator {other} on this tournament to expire (at most {} s)",
                    OWNER_TTL.as_secs() * 2
                );
                told = true;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// Keep Redis whole (lease renewed, tournament announced, artifacts present), publish lost
    /// jobs again, and show the workers.
    pub(super) async fn housekeeping(&mut self) -> Result<()> {
        self.last_house = Instant::now();
        match self
            .spec
            .store
            .claim_owner(&self.spec.tournament, &self.owner, OWNER_TTL)
            .await
        {
            Ok(None) => {}
            Ok(Some(other)) => anyhow::bail!(
                "coordinator {other} took over tournament {}; this one stops",
                self.spec.tournament
            ),
            Err(e) => {
                tracing::warn!("Redis: {e:#}");
                return Ok(());
            }
        }
        if let Err(e) = self
            .spec
            .store
            .register(&self.spec.tournament, &self.spec.terms)
            .await
        {
            tracing::warn!("Redis: {e:#}");
            return Ok(());
        }
        self.watch_released().await;
        self.watch_lost().await?;
        let overwrite = std::mem::take(&mut self.reupload);
        for (sha, path) in &self.spec.artifacts {
            let present = !overwrite && self.spec.store.has_artifact(sha).await.unwrap_or(false);
            if present {
                continue;
            }
            match std::fs::read(path) {
                Ok(bytes) if shared::manifest::sha256_hex(&bytes) == *sha => {
                    match self.spec.store.put_artifact(sha, &bytes, true).await {
                        Ok(_) => {
                            tracing::info!(file = %path.display(), "uploaded an artifact again")
                        }
                        Err(e) => tracing::warn!("Redis: {e:#}"),
                    }
                }
                Ok(_) => {
                    tracing::error!(file = %path.display(), "changed on disk since the run started; not uploaded")
                }
                Err(e) => tracing::error!(file = %path.display(), "cannot read: {e}"),
            }
        }
        if self.last_view.elapsed() >= self.spec.view_every {
            self.last_view = Instant::now();
            eprintln!("{}", self.view().await);
        }
        Ok(())
    }

    /// Notice the quarantined workers an operator released (`farm quarantine release`): their
    /// entry for this tournament is gone from Redis. Skipped while Redis cannot be asked.
    async fn watch_released(&mut self) {
        let mut gone = Vec::new();
        for w in &self.quarantined {
            match self.spec.store.quarantined_by(w).await {
                Ok(by) if !by.iter().any(|(t, _)| *t == self.spec.tournament) => {
                    gone.push(w.clone())
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!("Redis: {e:#}");
                    return;
                }
            }
        }
        for w in gone {
            self.quarantined.remove(&w);
            self.released.push(w);
        }
    }

    /// Publish again the jobs lost with their workers (see [`crate::transport::watch`]); report
    /// failed the ones lost too often. Skipped while Redis or the broker
    /// cannot be asked (nothing is concluded from missing information).
    async fn watch_lost(&mut self) -> Result<()> {
        if self.unanswered.is_empty() {
            return Ok(());
        }
        let Some(link) = &self.link else {
            return Ok(());
        };
        let queued = match link
            .ch
            .queue_declare(
                &self.names.jobs,
                QueueDeclareOptions {
                    passive: true,
                    ..Default::default()
                },
                FieldTable::default(),
            )
            .await
        {
            Ok(q) => q.message_count(),
            Err(e) => {
                tracing::debug!("jobs queue depth: {e}");
                return Ok(());
            }
        };
        let workers = match self.spec.store.workers().await {
            Ok(w) => w,
            Err(e) => {
                tracing::warn!("Redis: {e:#}");
                return Ok(());
            }
        };
        // A quarantined worker counts as gone: the jobs it holds are played elsewhere.
        let fleet = Fleet::of(
            &self.spec.tournament,
            workers
                .iter()
                .filter(|w| !self.quarantined.contains(&w.id))
                .map(|w| (w.id.as_str(), w.current.iter().map(String::as_str))),
            queued,
        );
        let verdicts = self
            .watch
            .observe(Instant::now(), self.unanswered.keys().copied(), &fleet);
        for v in verdicts {
            match v {
                Verdict::Republish {
                    number,
                    losses,
                    cause,
                } => {
                    let Some(job) = self.unanswered.get(&number).cloned() else {
                        continue;
                    };
                    match &cause {
                        Cause::HolderGone(worker) => tracing::warn!(
                            number,
                            losses,
                            worker = worker.as_str(),
                            "match lost with its worker (its heartbeat expired and no live worker holds it); publishing it again"
                        ),
                        _ => tracing::warn!(
                            number,
                            losses,
                            "match lost with its worker (no live worker holds it, the queue is empty); publishing it again"
                        ),
                    }
                    crate::metrics::global().retried.inc();
                    if let Err(e) = self
                        .spec
                        .store
                        .undo_done(&self.spec.tournament, number)
                        .await
                    {
                        tracing::warn!("Redis: {e:#}");
                    }
                    self.send(&job).await?;
                }
                Verdict::Fail { number, losses, .. } => {
                    let reason = format!(
                        "lost {losses} times: every worker that took it died or vanished before its result arrived"
                    );
                    tracing::error!(number, "{reason}");
                    let _ = self.tx.try_send(Event::Lost { number, reason });
                }
            }
        }
        Ok(())
    }

    /// "cluster: 2 live workers [...], 1 in its self-test [...], 1 below --min-speed [...]; 12
    /// matches in flight".
    pub async fn view(&self) -> String {
        let workers = self.spec.store.workers().await.unwrap_or_default();
        let (ready, testing): (Vec<_>, Vec<_>) = workers
            .iter()
            .partition(|w| w.state == broker::WorkerState::Ready);
        let (slow, ready): (Vec<_>, Vec<_>) = ready
            .into_iter()
            .partition(|w| self.spec.terms.refuses(w.speed).is_some());
        crate::metrics::global().workers.set(ready.len() as i64);
        let line = fleet_line(&ready, &testing, self.unanswered.len());
        match slow.is_empty() {
            true => line,
            false => {
                let names: Vec<String> = slow
                    .iter()
                    .map(|w| match w.speed {
                        Some(s) => format!("{}@{} {s:.1}", w.id, w.host),
                        None => format!("{}@{} no speed", w.id, w.host),
                    })
                    .collect();
                format!(
                    "{line}; {} below --min-speed {:.1}, serving other tournaments [{}]",
                    slow.len(),
                    self.spec.terms.min_speed.unwrap_or(0.0),
                    names.join(", ")
                )
            }
        }
    }
}

/// `cluster: 2 live workers [a@h 1/1 busy, b@h 0/1 busy], 1 in its self-test [c@h]; 3 matches
/// in flight`.
fn fleet_line(
    ready: &[&broker::Heartbeat],
    testing: &[&broker::Heartbeat],
    flying: usize,
) -> String {
    let list: Vec<String> = ready
        .iter()
        .map(|w| format!("{}@{} {}/{} busy", w.id, w.host, w.current.len(), w.slots))
        .collect();
    let plural = |n: usize, one: &'static str, many: &'static str| if n == 1 { one } else { many };
    let mut line = format!(
        "cluster: {} live {} [{}]",
        ready.len(),
        plural(ready.len(), "worker", "workers"),
        list.join(", ")
    );
    if !testing.is_empty() {
        let names: Vec<String> = testing
            .iter()
            .map(|w| format!("{}@{}", w.id, w.host))
            .collect();
        line += &format!(
            ", {} in {} self-test [{}]",
            testing.len(),
            plural(testing.len(), "its", "their"),
            names.join(", ")
        );
    }
    line + &format!(
        "; {flying} {} in flight",
        plural(flying, "match", "matches")
    )
}

/// Who holds a tournament: `host:pid:random`, unique per coordinator process.
pub(super) fn owner_token() -> String {
    format!(
        "{}:{}:{:016x}",
        broker::hostname(),
        std::process::id(),
        rand::random::<u64>()
    )
}

/// True when `holder` was a coordinator on this host that is certainly gone: its pid is ours
/// (an earlier incarnation in the same container) or no longer exists.
fn holder_is_dead(holder: &str) -> bool {
    let mut parts = holder.rsplitn(3, ':');
    let (Some(_token), Some(pid), Some(host)) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    if host != broker::hostname() {
        return false;
    }
    match pid.parse::<u32>() {
        Ok(p) if p == std::process::id() => true,
        Ok(p) => !std::path::Path::new(&format!("/proc/{p}")).exists(),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hb(id: &str, state: broker::WorkerState, busy: usize) -> broker::Heartbeat {
        broker::Heartbeat {
            speed: None,
            id: id.into(),
            host: "h".into(),
            slots: 2,
            current: (0..busy).map(|n| format!("t#{n}")).collect(),
            version: "v".into(),
            state,
        }
    }

    #[test]
    fn the_fleet_line_counts_workers_in_their_self_test_apart() {
        use broker::WorkerState::{Ready, SelfTest};
        let (a, b, c) = (
            hb("a", Ready, 1),
            hb("b", SelfTest, 0),
            hb("c", SelfTest, 0),
        );
        assert_eq!(
            fleet_line(&[&a], &[&b], 1),
            "cluster: 1 live worker [a@h 1/2 busy], 1 in its self-test [b@h]; 1 match in flight"
        );
        assert_eq!(
            fleet_line(&[&a, &a], &[&b, &c], 3),
            "cluster: 2 live workers [a@h 1/2 busy, a@h 1/2 busy], 2 in their self-test [b@h, c@h]; 3 matches in flight"
        );
        assert_eq!(
            fleet_line(&[], &[], 0),
            "cluster: 0 live workers []; 0 matches in flight"
        );
    }
}
