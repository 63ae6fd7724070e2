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
        self.exchange(ch, false).await?;
        queue(ch, &self.dlq, false, quorum()).await?;
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
        queue(ch, &self.jobs, false, jobs).await?;
        queue(ch, &self.results, false, quorum()).await
    }

    /// Check, without creating anything, that the tournament's queues and dead-letter exchange
    /// exist (a worker's side: only the coordinator creates them, so a worker never brings back
    /// the queues of a tournament that just ended). A missing one closes the channel (NOT_FOUND).
    pub async fn check(&self, ch: &Channel) -> Result<(), BrokerError> {
        self.exchange(ch, true).await?;
        for q in [&self.jobs, &self.results] {
            queue(ch, q, true, FieldTable::default()).await?;
        }
        Ok(())
    }

    /// Declare the dead-letter exchange (`passive`: only check that it exists).
    async fn exchange(&self, ch: &Channel, passive: bool) -> Result<(), BrokerError> {
        let options = ExchangeDeclareOptions {
            durable: !passive,
            passive,
            ..Default::default()
        };
        ch.exchange_declare(
            &self.dlx,
            ExchangeKind::Fanout,
            options,
            FieldTable::default(),
        )
        .await
        .map_err(|source| BrokerError::DeclareExchange {
            name: self.dlx.clone(),
            source,
        })
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

/// Declare a durable queue with `args` (`passive`: only check that it exists).
async fn queue(
    ch: &Channel,
    name: &str,
    passive: bool,
    args: FieldTable,
) -> Result<(), BrokerError> {
    let options = QueueDeclareOptions {
        durable: !passive,
        passive,
        ..Default::default()
    };
    ch.queue_declare(name, options, args)
        .await
        .map(|_| ())
        .map_err(|source| BrokerError::DeclareQueue {
            name: name.to_string(),
            source,
        })
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
