//! The RabbitMQ names of one tournament (jobs and results queues, the dead-letter exchange and
//! its queue) and how both sides declare them, with the same arguments, so either may come first.

use lapin::types::{AMQPValue, FieldTable, LongString};
use lapin::{options::*, Channel, ExchangeKind};

use crate::{BrokerError, DELIVERY_LIMIT};

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

    /// Declare every queue and exchange (idempotent: the coordinator's side, at every start).
    pub async fn declare(&self, ch: &Channel) -> Result<(), BrokerError> {
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
        .map_err(|source| BrokerError::DeclareExchange {
            name: self.dlx.clone(),
            source,
        })?;
        ch.queue_declare(&self.dlq, durable, quorum())
            .await
            .map_err(|source| BrokerError::DeclareQueue {
                name: self.dlq.clone(),
                source,
            })?;
        ch.queue_bind(
            &self.dlq,
            &self.dlx,
            "",
            QueueBindOptions::default(),
            FieldTable::default(),
        )
        .await
        .map_err(|source| BrokerError::Bind {
            queue: self.dlq.clone(),
            exchange: self.dlx.clone(),
            source,
        })?;
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
            .map_err(|source| BrokerError::DeclareQueue {
                name: self.jobs.clone(),
                source,
            })?;
        ch.queue_declare(&self.results, durable, quorum())
            .await
            .map_err(|source| BrokerError::DeclareQueue {
                name: self.results.clone(),
                source,
            })?;
        Ok(())
    }

    /// Check, without creating anything, that the tournament's queues and dead-letter exchange
    /// exist (a worker's side: only the coordinator creates them, so a worker never brings back
    /// the queues of a tournament that just ended). A missing one closes the channel (NOT_FOUND).
    pub async fn check(&self, ch: &Channel) -> Result<(), BrokerError> {
        let passive = QueueDeclareOptions {
            passive: true,
            ..Default::default()
        };
        ch.exchange_declare(
            &self.dlx,
            ExchangeKind::Fanout,
            ExchangeDeclareOptions {
                passive: true,
                ..Default::default()
            },
            FieldTable::default(),
        )
        .await
        .map_err(|source| BrokerError::DeclareExchange {
            name: self.dlx.clone(),
            source,
        })?;
        for q in [&self.jobs, &self.results] {
            ch.queue_declare(q, passive, FieldTable::default())
                .await
                .map_err(|source| BrokerError::DeclareQueue {
                    name: q.clone(),
                    source,
                })?;
        }
        Ok(())
    }

    /// Remove the tournament's queues and exchange (after a finished run, or by tests).
    pub async fn delete(&self, ch: &Channel) -> Result<(), BrokerError> {
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
