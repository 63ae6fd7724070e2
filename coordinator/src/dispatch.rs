//! The one dispatcher: jobs go out over the one [`Transport`] within a window, reports come back
//! matched to the job in flight, to be held to it by the game boundary
//! ([`games::accept::accept`]). Reports of another tournament, of a job not in flight and
//! duplicates are dropped (and acknowledged) here, once, for every use. What a use does with a
//! result is its sink, the code around [`Dispatcher::next_batch`]: the tournament's checkpoint
//! log (`run::execute`), the ladder's waiters (`ladder_farm`), proboj's game folders
//! (`proboj`, on this machine and on the cluster).

use std::collections::HashMap;

use anyhow::Result;
use games::accept::{accept, AcceptError, Accepted};
use shared::msg::{Job, JobReport};

use crate::transport::Transport;

/// A report that answers a job in flight.
#[derive(Debug)]
pub struct Arrival {
    /// The job as it was published.
    pub job: Job,
    /// How many times the job had been published again before this report.
    pub tries: u32,
    pub report: JobReport,
    /// Acknowledges the report ([`Dispatcher::ack`]) once the sink has made it durable.
    pub tag: u64,
}

impl Arrival {
    /// The report held to its job: the game's record re-verified, with the job's seed, seats,
    /// programs (and clock), or why not.
    pub fn verdict(&self) -> Result<Accepted, AcceptError> {
        accept(&self.job, &self.report)
    }
}

/// Jobs in flight on one transport for one tournament.
pub struct Dispatcher<T: Transport> {
    transport: T,
    tournament: String,
    window: usize,
    flights: HashMap<u64, (Job, u32)>,
    /// Tags of dropped reports, acknowledged with the next [`Dispatcher::ack`].
    stale: Vec<u64>,
}

impl<T: Transport> Dispatcher<T> {
    /// Dispatch `tournament`'s jobs over `transport`, at most `window` in flight.
    pub fn new(transport: T, tournament: &str, window: usize) -> Dispatcher<T> {
        Dispatcher {
            transport,
            tournament: tournament.to_string(),
            window: window.max(1),
            flights: HashMap::new(),
            stale: Vec::new(),
        }
    }

    pub fn describe(&self) -> String {
        self.transport.describe()
    }

    /// Jobs published and not yet answered.
    pub fn in_flight(&self) -> usize {
        self.flights.len()
    }

    /// True while fewer than the window's jobs are in flight.
    pub fn has_room(&self) -> bool {
        self.flights.len() < self.window
    }

    /// Publish a job (its number must not be in flight already).
    pub async fn publish(&mut self, job: Job) -> Result<()> {
        anyhow::ensure!(
            job.tournament == self.tournament,
            "job of tournament {:?} given to the dispatcher of {:?}",
            job.tournament,
            self.tournament
        );
        self.transport.publish(job.clone()).await?;
        self.flights.insert(job.number, (job, 0));
        Ok(())
    }

    /// Publish the job of `arrival` again (its report was refused); it counts one more try.
    pub async fn retry(&mut self, arrival: &Arrival) -> Result<()> {
        self.transport.publish(arrival.job.clone()).await?;
        self.flights
            .insert(arrival.job.number, (arrival.job.clone(), arrival.tries + 1));
        Ok(())
    }

    /// Publish the job of `arrival` again without counting a try (its worker's report was
    /// refused for who sent it, not for what the match did).
    pub async fn requeue(&mut self, arrival: &Arrival) -> Result<()> {
        self.transport.publish(arrival.job.clone()).await?;
        self.flights
            .insert(arrival.job.number, (arrival.job.clone(), arrival.tries));
        Ok(())
    }

    /// The transport stops handing jobs to a quarantined worker (`evidence` says why).
    pub async fn quarantine(&mut self, worker: &str, evidence: &str) -> Result<()> {
        self.transport.quarantine(worker, evidence).await
    }

    /// Workers an operator released since the last call.
    pub async fn released(&mut self) -> Vec<String> {
        self.transport.released().await
    }

    /// Wait for the next report that answers a job in flight, then take every other one that
    /// is ready (so a sink can make a batch durable at once). `None` when no worker can answer
    /// any more. Waiting is the only await: dropping the future (a `select!`) loses nothing.
    pub async fn next_batch(&mut self) -> Result<Option<Vec<Arrival>>> {
        let mut batch = Vec::new();
        while batch.is_empty() {
            let Some(first) = self.transport.next().await? else {
                return Ok(None);
            };
            self.take(first, &mut batch);
            while let Some(d) = self.transport.try_next()? {
                self.take(d, &mut batch);
            }
        }
        Ok(Some(batch))
    }

    fn take(&mut self, d: crate::transport::Delivery, batch: &mut Vec<Arrival>) {
        let n = d.report.number;
        if d.report.tournament != self.tournament {
            tracing::warn!(number = n, "dropped a report of another tournament");
            self.stale.push(d.tag);
            return;
        }
        let Some((job, tries)) = self.flights.remove(&n) else {
            tracing::debug!(number = n, "dropped a duplicate report");
            self.stale.push(d.tag);
            return;
        };
        batch.push(Arrival {
            job,
            tries,
            report: d.report,
            tag: d.tag,
        });
    }

    /// Forget every job in flight (the run has stopped); returns their numbers.
    pub fn cancel(&mut self) -> Vec<u64> {
        self.flights.drain().map(|(n, _)| n).collect()
    }

    /// Acknowledge these reports, and every dropped one.
    pub async fn ack(&mut self, tags: impl IntoIterator<Item = u64>) -> Result<()> {
        let stale = std::mem::take(&mut self.stale);
        for tag in tags.into_iter().chain(stale) {
            self.transport.ack(tag).await?;
        }
        Ok(())
    }

    /// These matches have a durable, accepted result (see [`Transport::completed`]).
    pub async fn completed(&mut self, numbers: &[u64]) -> Result<()> {
        self.transport.completed(numbers).await
    }

    /// Acknowledge what was dropped and stop the transport.
    pub async fn shutdown(mut self) -> Result<()> {
        self.ack([]).await?;
        self.transport.shutdown().await
    }
}
