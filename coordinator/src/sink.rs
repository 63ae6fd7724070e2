//! The one engine loop every use of the farm goes through, and the [`Sink`] each use plugs
//! into it: a tournament's checkpoint log (`run::execute`), the ladder's waiting requests
//! (`ladder_farm`) and proboj's game folders (`proboj`, on this machine and on the cluster).
//! The loop owns the order of things (publish while the window has room, wait for reports or
//! for something outside, hand each batch to the sink, end when nothing is left); the sink owns
//! what a result means. A report the host failed is published again by the same rule
//! everywhere ([`retry_attempt`]), so a dying worker costs no use a result.

use std::future::Future;

use anyhow::Result;

use crate::dispatch::{Arrival, Dispatcher};
use crate::transport::Transport;

/// How often an infrastructure failure of one job is retried before it is reported failed.
pub const RETRIES: u32 = 2;

/// The attempt a failed job (published `tries` times again before) is retried as, if any try
/// is left: the rule every sink follows for a report the host failed.
pub fn retry_attempt(tries: u32) -> Option<u32> {
    (tries < RETRIES).then(|| tries + 1)
}

/// What happened outside the reports while the loop waited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outside {
    /// Something changed (e.g. a new request): publish what there is and wait again.
    More,
    /// Stop now: the sink answers what still waits ([`Sink::stopped`]) and the loop ends.
    Stop,
}

/// One use of the farm, as the engine loop sees it. The futures need not be `Send`: the loop
/// runs on the task that owns the transport.
pub trait Sink<T: Transport> {
    /// Publish what the sink has while `flights` has room (and refresh what it shows before
    /// the loop waits).
    fn publish(&mut self, flights: &mut Dispatcher<T>) -> impl Future<Output = Result<()>>;

    /// True once the sink will publish nothing more: with nothing in flight, the loop ends. By
    /// default a sink knows all its jobs up front and publishes whatever it may on each
    /// [`Sink::publish`], so with nothing in flight it is done.
    fn exhausted(&self) -> bool {
        true
    }

    /// Something besides the reports the loop waits on (new requests, a stop). Must be
    /// cancel-safe: the loop drops it when a report comes first. Never ready by default.
    fn outside(&mut self) -> impl Future<Output = Outside> {
        std::future::pending()
    }

    /// One batch of reports: the sink makes them durable, publishes again what the host
    /// failed, and acknowledges them, through `flights`.
    fn take(
        &mut self,
        batch: Vec<Arrival>,
        flights: &mut Dispatcher<T>,
    ) -> impl Future<Output = Result<()>>;

    /// No worker can answer any more with jobs in flight: `Ok` ends the loop quietly, an error
    /// ends it with that error.
    fn stranded(&mut self, flights: &mut Dispatcher<T>) -> Result<()>;

    /// The loop ends on [`Outside::Stop`]: answer whatever still waits.
    fn stopped(&mut self) {}
}

/// Run `sink` over `flights` until it is exhausted with nothing in flight, the transport can
/// answer no more, or the sink's outside says stop. The caller shuts the transport down.
pub async fn pump<T: Transport, S: Sink<T>>(
    flights: &mut Dispatcher<T>,
    sink: &mut S,
) -> Result<()> {
    loop {
        sink.publish(flights).await?;
        let idle = flights.in_flight() == 0;
        if idle && sink.exhausted() {
            return Ok(());
        }
        let event = match idle {
            true => Event::Outside(sink.outside().await),
            // next_batch is cancel-safe: an outside event while waiting loses no report.
            false => tokio::select! {
                b = flights.next_batch() => Event::Reports(b?),
                o = sink.outside() => Event::Outside(o),
            },
        };
        match event {
            Event::Reports(Some(batch)) => sink.take(batch, flights).await?,
            Event::Reports(None) => return sink.stranded(flights),
            Event::Outside(Outside::More) => {}
            Event::Outside(Outside::Stop) => {
                sink.stopped();
                return Ok(());
            }
        }
    }
}

/// What the loop waited for: reports (`None`: the transport ended with jobs in flight), or
/// something outside.
enum Event {
    Reports(Option<Vec<Arrival>>),
    Outside(Outside),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_job_is_retried_twice_then_given_up() {
        assert_eq!(retry_attempt(0), Some(1));
        assert_eq!(retry_attempt(1), Some(2));
        assert_eq!(retry_attempt(RETRIES), None);
        assert_eq!(retry_attempt(u32::MAX), None);
    }
}
