//! The cluster's vocabulary over RabbitMQ and Redis, spoken by both sides: the queue names of a
//! tournament and how they are declared, how to connect and back off, the headers and delivery
//! mode, and the Redis store (`store`). The coordinator's transport (`transport::rabbitmq`) and
//! the cluster commands (`cluster`: the worker loop, uploads, proboj) build on it; it depends on
//! neither.

pub mod store;

use std::time::Duration;

use anyhow::{Context, Result};
use lapin::types::{AMQPValue, FieldTable, LongString};
use lapin::{options::*, BasicProperties, Channel, ExchangeKind};

/// Jobs a worker has tried this often (deaths, requeues) are dead-lettered as poison.
pub const DELIVERY_LIMIT: i32 = 5;
/// AMQP header a worker sets on a job it refuses, giving the reason.
pub const REASON_HEADER: &str = "x-farm-reason";
/// A worker's heartbeat expires after this long without renewal.
pub const HEARTBEAT_TTL: Duration = Duration::from_secs(10);
/// Version a worker announces in its heartbeat.
pub const WORKER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The RabbitMQ names of one tournament.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Names {
    pub tournament: String,
    /// Durable quorum queue of jobs (delivery limit, dead-lettered to `dlx`).
    pub jobs: String,
    /// Durable quorum queue of results for the coordinator.
    pub results: String,
    /// Fanout exchange that dead letters go to.
    pub dlx: String,
    /// Durable queue behind `dlx`.
    pub dlq: String,
}

impl Names {
    /// Names from the tournament id's first 16 characters (readable in the broker's lists)
    /// plus 8 hex digits of its sha256, so ids that share a prefix never share queues.
    pub fn for_tournament(tournament: &str) -> Names {
        let hash = shared::manifest::sha256_hex(tournament.as_bytes());
        let short = format!(
            "{}-{}",
            tournament.chars().take(16).collect::<String>(),
            &hash[..8]
        );
        Names {
            tournament: tournament.to_string(),
            jobs: format!("farm.{short}.jobs"),
            results: format!("farm.{short}.results"),
            dlx: format!("farm.{short}.dlx"),
            dlq: format!("farm.{short}.dlq"),
        }
    }

    /// Declare every queue and exchange (idempotent; both sides call it with the same arguments).
    pub async fn declare(&self, ch: &Channel) -> Result<()> {
        let durable = QueueDeclareOptions {
            durable: true,
            ..Default::default()
        };
        ch.exchange_declare(
            &self.dlx,
            ExchangeKind::Fanout,
            ExchangeDeclareOptions {
                durable: true,
                ..Default::default()
            },
            FieldTable::default(),
        )
        .await
        .with_context(|| format!("declaring exchange {}", self.dlx))?;
        ch.queue_declare(&self.dlq, durable, quorum())
            .await
            .with_context(|| format!("declaring queue {}", self.dlq))?;
        ch.queue_bind(
            &self.dlq,
            &self.dlx,
            "",
            QueueBindOptions::default(),
            FieldTable::default(),
        )
        .await
        .with_context(|| format!("binding {} to {}", self.dlq, self.dlx))?;
        let mut jobs = quorum();
        jobs.insert(
            "x-delivery-limit".into(),
            AMQPValue::LongInt(DELIVERY_LIMIT),
        );
        jobs.insert(
            "x-dead-letter-exchange".into(),
            AMQPValue::LongString(LongString::from(self.dlx.as_bytes().to_vec())),
        );
        ch.queue_declare(&self.jobs, durable, jobs)
            .await
            .with_context(|| format!("declaring queue {}", self.jobs))?;
        ch.queue_declare(&self.results, durable, quorum())
            .await
            .with_context(|| format!("declaring queue {}", self.results))?;
        Ok(())
    }

    /// Remove the tournament's queues and exchange (after a finished run, or by tests).
    pub async fn delete(&self, ch: &Channel) -> Result<()> {
        for q in [&self.jobs, &self.results, &self.dlq] {
            ch.queue_delete(q, QueueDeleteOptions::default()).await?;
        }
        ch.exchange_delete(&self.dlx, ExchangeDeleteOptions::default())
            .await?;
        Ok(())
    }
}

fn quorum() -> FieldTable {
    let mut t = FieldTable::default();
    t.insert(
        "x-queue-type".into(),
        AMQPValue::LongString(LongString::from(b"quorum".to_vec())),
    );
    t
}

/// Connect to RabbitMQ (lapin's own executor; works under tokio).
pub async fn connect(broker: &str) -> Result<lapin::Connection> {
    lapin::Connection::connect(broker, lapin::ConnectionProperties::default())
        .await
        .with_context(|| format!("connecting to the broker {}", redact(broker)))
}

/// A URL with its password hidden, for messages.
pub fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => {
            let creds = &url[s + 3..at];
            match creds.find(':') {
                Some(c) => format!("{}{}:***{}", &url[..s + 3], &creds[..c], &url[at..]),
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}

/// Exponential backoff with jitter for reconnects: attempt 0 -> ~0.2 s, capped near 10 s.
pub fn backoff(attempt: u32) -> Duration {
    let base = 200u64.saturating_mul(1u64 << attempt.min(6)).min(10_000);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos() as u64)
        .unwrap_or(0);
    Duration::from_millis(base / 2 + nanos % (base / 2 + 1))
}

/// This host's name.
pub fn hostname() -> String {
    nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .unwrap_or_else(|| "localhost".to_string())
}

/// Persistent delivery mode.
pub fn persistent() -> BasicProperties {
    BasicProperties::default().with_delivery_mode(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_sharing_a_prefix_get_distinct_queues_and_multibyte_ids_are_fine() {
        let a = Names::for_tournament("qianwang-ladder-a");
        let b = Names::for_tournament("qianwang-ladder-b");
        assert_ne!(a.jobs, b.jobs);
        assert_ne!(a.results, b.results);
        let c = Names::for_tournament("钳王钳王钳王钳王钳王钳王钳王钳王钳王");
        assert!(c.jobs.starts_with("farm.钳王"), "{}", c.jobs);
        assert_eq!(
            Names::for_tournament("x").jobs,
            Names::for_tournament("x").jobs
        );
    }
}
