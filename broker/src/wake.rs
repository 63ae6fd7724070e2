//! Waking idle workers instead of having them poll. A worker that finds every jobs queue it
//! serves empty backs off (its next look comes later and later, up to [`IDLE_POLL_MAX`]), so an
//! idle fleet costs the broker and Redis little; a coordinator that publishes a job after a
//! lull sends one wake-up to the fanout exchange [`EXCHANGE`], and every worker, which listens
//! on a private queue bound to it, looks again at once. A wake-up carries nothing and changes
//! no result (it only makes a worker look at the queues it already serves, whose jobs are
//! signed), so it is not signed; a forged or lost one costs at most one early or late look.
//! The back-off schedule and the lull rule are pure ([`next_poll`], [`Lull`]); the broker calls
//! are at the bottom.

use std::time::{Duration, Instant};

use lapin::options::*;
use lapin::types::FieldTable;
use lapin::{Channel, Consumer, ExchangeKind};

use crate::BrokerError;

/// The fanout exchange of wake-ups (durable, so a publish to it never fails for its absence).
pub const EXCHANGE: &str = "farm.wake";
/// How soon an idle worker first looks again.
pub const IDLE_POLL_MIN: Duration = Duration::from_millis(250);
/// The longest an idle worker goes without looking (bounds the delay when a wake-up is lost).
pub const IDLE_POLL_MAX: Duration = Duration::from_secs(8);
/// A publish after this long without one wakes the fleet.
pub const LULL: Duration = Duration::from_secs(1);

/// How long to wait before the next look after `empty` looks in a row found nothing: 250 ms
/// doubling up to `max` ([`IDLE_POLL_MAX`] unless the operator says otherwise), never below
/// [`IDLE_POLL_MIN`].
pub fn next_poll(empty: u32, max: Duration) -> Duration {
    let doubled = IDLE_POLL_MIN.saturating_mul(1u32 << empty.min(16));
    doubled.min(max).max(IDLE_POLL_MIN)
}

/// When a publisher wakes the fleet: on its first publish, and on the first after a lull.
#[derive(Debug, Default)]
pub struct Lull {
    last_publish: Option<Instant>,
}

impl Lull {
    /// A publish at `now`: whether it should send a wake-up.
    pub fn publish(&mut self, now: Instant) -> bool {
        let wake = self
            .last_publish
            .is_none_or(|t| now.saturating_duration_since(t) >= LULL);
        self.last_publish = Some(now);
        wake
    }
}

/// Declare the wake-up exchange (both sides, with the same arguments).
pub async fn declare(ch: &Channel) -> Result<(), BrokerError> {
    let options = ExchangeDeclareOptions {
        durable: true,
        ..Default::default()
    };
    ch.exchange_declare(
        EXCHANGE,
        ExchangeKind::Fanout,
        options,
        FieldTable::default(),
    )
    .await
    .map_err(|source| BrokerError::DeclareExchange {
        name: EXCHANGE.to_string(),
        source,
    })
}

/// Send one wake-up (transient, unconfirmed: a lost one only delays a look).
pub async fn send(ch: &Channel) -> Result<(), BrokerError> {
    ch.basic_publish(
        EXCHANGE,
        "",
        BasicPublishOptions::default(),
        b"",
        lapin::BasicProperties::default(),
    )
    .await?;
    Ok(())
}

/// A worker's wake-ups: a private queue (exclusive, removed with its connection) bound to
/// [`EXCHANGE`], consumed without acks on `ch`.
pub async fn listen(ch: &Channel, worker: &str) -> Result<Consumer, BrokerError> {
    declare(ch).await?;
    let options = QueueDeclareOptions {
        exclusive: true,
        auto_delete: true,
        ..Default::default()
    };
    let q = ch
        .queue_declare("", options, FieldTable::default())
        .await
        .map_err(|source| BrokerError::DeclareQueue {
            name: "(a worker's wake-up queue)".to_string(),
            source,
        })?;
    let name = q.name().as_str().to_string();
    ch.queue_bind(
        &name,
        EXCHANGE,
        "",
        QueueBindOptions::default(),
        FieldTable::default(),
    )
    .await
    .map_err(|source| BrokerError::Bind {
        queue: name.clone(),
        exchange: EXCHANGE.to_string(),
        source,
    })?;
    let consumer = ch
        .basic_consume(
            &name,
            &format!("wake-{worker}"),
            BasicConsumeOptions {
                no_ack: true,
                ..Default::default()
            },
            FieldTable::default(),
        )
        .await?;
    Ok(consumer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_idle_worker_backs_off_to_the_cap() {
        let max = IDLE_POLL_MAX;
        assert_eq!(next_poll(0, max), Duration::from_millis(250));
        assert_eq!(next_poll(1, max), Duration::from_millis(500));
        assert_eq!(next_poll(4, max), Duration::from_secs(4));
        assert_eq!(next_poll(5, max), IDLE_POLL_MAX);
        assert_eq!(next_poll(u32::MAX, max), IDLE_POLL_MAX);
        assert_eq!(
            next_poll(20, Duration::from_secs(600)),
            Duration::from_secs(600)
        );
        assert_eq!(next_poll(3, Duration::ZERO), IDLE_POLL_MIN);
    }

    #[test]
    fn the_first_publish_and_the_first_after_a_lull_wake_the_fleet() {
        let t0 = Instant::now();
        let mut l = Lull::default();
        assert!(l.publish(t0));
        // A steady stream of publishes sends no more wake-ups ...
        for ms in (100..3000).step_by(100) {
            assert!(!l.publish(t0 + Duration::from_millis(ms)), "{ms}");
        }
        // ... until one comes after a lull.
        assert!(l.publish(t0 + Duration::from_millis(2900) + LULL));
    }
}
