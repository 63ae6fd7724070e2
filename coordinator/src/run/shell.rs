//! The effectful side of a running tournament, around the pure [`super::flow::Flow`]: the
//! results log, the live views (ratings, 汇总.md, report.html), the quarantine guard, the
//! played-by record, progress and metrics. [`Shell::batch`] takes one batch of reports through
//! the flow's decisions: each is admitted (or dropped, cancelled, refused), verified and saved
//! through the game, logged, and checkpointed in schedule order; then the log is synced, the
//! reports acknowledged and the views refreshed when due.

use std::time::Instant;

use anyhow::Result;

use super::checkpoint::{Log, Row};
use super::engine::Engine;
use super::flow::{Admit, Flow, Settled};
use super::outputs::{Live, Timings};
use super::played_by;
use super::prepare::Plan;
use super::progress::Progress;
use super::quarantine::Guard;
use super::stop::StopRule;
use crate::dispatch::{Arrival, Dispatcher};
use crate::transport::Transport;

/// Everything a run touches while it plays, besides the dispatcher (the engine loop's, handed
/// to each call).
pub struct Shell<'a> {
    pub plan: &'a Plan,
    pub log: Log,
    pub live: Live,
    pub guard: Guard,
    /// Only the speed matters here: share and priority steer the workers, not the results.
    pub terms: broker::Terms,
    pub progress: Progress,
    pub timings: Timings,
    pub metrics: &'static crate::metrics::Metrics,
    since_report: u64,
}

impl<'a> Shell<'a> {
    /// Open the run's guard (its quarantined workers told to the dispatcher), progress and
    /// metrics, with `flow`'s matches still to play.
    pub async fn start<T: Transport>(
        plan: &'a Plan,
        engine: &Engine,
        flights: &mut Dispatcher<T>,
        log: Log,
        live: Live,
        flow: &Flow,
    ) -> Result<Shell<'a>> {
        let describe = flights.describe();
        let guard = Guard::open(&plan.output);
        for e in guard.quarantined() {
            flights.quarantine(&e.worker, &e.to_string()).await?;
        }
        let done = plan.done.len() as u64;
        let metrics = crate::metrics::global();
        let names: Vec<String> = plan.entries.iter().map(|e| e.name.clone()).collect();
        metrics.start(&plan.tournament, &describe, flow.limit(), done, &names);
        Ok(Shell {
            plan,
            log,
            live,
            guard,
            terms: broker::Terms {
                min_speed: engine.min_speed,
                ..broker::Terms::default()
            },
            progress: Progress::new(flow.limit(), done),
            timings: Timings::default(),
            metrics,
            since_report: 0,
        })
    }

    /// Workers an operator released from quarantine count again.
    pub async fn released<T: Transport>(&mut self, flights: &mut Dispatcher<T>) {
        for worker in flights.released().await {
            self.guard.release(&worker);
        }
    }

    /// One batch of reports, then the log synced, the reports acknowledged and the views
    /// refreshed when due.
    pub async fn batch<T: Transport>(
        &mut self,
        batch: Vec<Arrival>,
        flights: &mut Dispatcher<T>,
        flow: &mut Flow,
        stop: &mut Option<&mut dyn StopRule>,
    ) -> Result<()> {
        let mut acks = Vec::with_capacity(batch.len());
        let mut completed = Vec::new();
        for arrival in batch {
            acks.push(arrival.tag);
            if let Some(row) = self.arrival(&arrival, flights, flow).await? {
                if row.result.is_some() {
                    completed.push(row.number);
                }
                self.checkpoint(row, flow, stop)?;
            }
        }
        let tick = Instant::now();
        self.log.sync()?;
        self.guard.save_counts();
        self.timings.checkpoint_seconds += tick.elapsed().as_secs_f64();
        flights.completed(&completed).await?;
        flights.ack(acks).await?;
        if self.since_report >= self.plan.report_every
            || self.log.written() == flow.limit()
            || flow.stopped()
        {
            let tick = Instant::now();
            self.live.write_report(&self.plan.output)?;
            if let Ok(fit) = self.live.fit() {
                self.metrics.ratings(&fit);
            }
            self.timings.report_seconds += tick.elapsed().as_secs_f64();
            self.since_report = 0;
        }
        Ok(())
    }

    /// One report through the flow's decisions: the row to log, if any.
    async fn arrival<T: Transport>(
        &mut self,
        arrival: &Arrival,
        flights: &mut Dispatcher<T>,
        flow: &mut Flow,
    ) -> Result<Option<Row>> {
        let n = arrival.job.number;
        let worker = arrival.report.worker.as_str();
        let refused = match self.guard.refuses(worker) {
            true => Some(format!("refused: worker {worker} is quarantined")),
            false => self
                .terms
                .refuses(arrival.report.speed)
                .map(|why| format!("refused: worker {worker} cannot play this run: {why}")),
        };
        match flow.admit(n, self.log.has(n), refused) {
            Admit::Duplicate => {
                tracing::debug!(number = n, "dropped a duplicate report");
                return Ok(None);
            }
            Admit::Cancelled => {
                tracing::debug!(number = n, "cancelled: the run stopped before it");
                return Ok(None);
            }
            Admit::Refused(why) => {
                self.timings.match_seconds += arrival.report.seconds;
                tracing::info!(number = n, "{why}; the match is played elsewhere");
                played_by::append(
                    &self.plan.output,
                    &played_by::Played::of(&arrival.report, Some(why)),
                );
                flights.requeue(arrival).await?;
                self.metrics.dispatched.inc();
                return Ok(None);
            }
            Admit::Accept => self.timings.match_seconds += arrival.report.seconds,
        }
        let out = &self.plan.output;
        let verified = accept(self.plan, arrival, out).map_err(|e| format!("{e:#}"));
        played_by::append(
            out,
            &played_by::Played::of(&arrival.report, verified.as_ref().err().cloned()),
        );
        let result = verified.as_ref().ok().and_then(|r| r.result.as_ref());
        if let Some(e) = self.guard.took(worker, result) {
            self.progress
                .println(&format!("quarantined worker {}: {e}", e.worker));
            flights.quarantine(&e.worker, &e.to_string()).await?;
        }
        let size = self.plan.size_of(n)?;
        match flow.settle(n, size, verified, arrival.tries) {
            Settled::Retry { why, attempt } => {
                tracing::warn!(number = n, attempt, "match failed, retrying: {why}");
                flights.retry(arrival).await?;
                self.metrics.dispatched.inc();
                self.metrics.retried.inc();
                Ok(None)
            }
            Settled::Log(row) => {
                if let Some(why) = &row.failed {
                    tracing::error!(number = n, "match failed for good: {why}");
                }
                Ok(Some(row))
            }
        }
    }

    /// Log `row` and checkpoint every row now ready in schedule order, one at a time (a stop
    /// rule may cut between two rows).
    fn checkpoint(
        &mut self,
        row: Row,
        flow: &mut Flow,
        stop: &mut Option<&mut dyn StopRule>,
    ) -> Result<()> {
        self.plan.game.index_row(&self.plan.output, &row);
        let tick = Instant::now();
        self.log.offer(row)?;
        while !flow.stopped() {
            let Some(r) = self.log.pop_ready()? else {
                break;
            };
            self.live.add(&r);
            self.metrics.checkpointed(r.result.as_ref());
            self.since_report += 1;
            flow.observe(&r, stop.as_deref_mut());
            if let Some(s) = stop.as_ref().and_then(|rule| rule.status()) {
                self.progress.set_status(s);
            }
            self.progress.done(&r);
        }
        self.timings.checkpoint_seconds += tick.elapsed().as_secs_f64();
        Ok(())
    }
}

/// Accept a report through the game's side of the boundary ([`crate::run::game::Game::accept`]:
/// the record verified for the job's seats, seed, programs and clock, its replay saved).
fn accept(plan: &Plan, arrival: &Arrival, out: &std::path::Path) -> Result<Row> {
    let n = arrival.job.number;
    let entry = plan.entry(n)?;
    let result = plan
        .game
        .accept(arrival, &plan.kit, entry, &plan.bot_hashes, out)?;
    Ok(Row {
        number: n,
        size: entry.size as u32,
        result: Some(result),
        failed: None,
    })
}
