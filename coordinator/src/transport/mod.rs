//! The one path between the coordinator and its workers: publish a job, receive a report, ack
//! it once it is durable. Two implementations: embedded (in-process queue, local worker threads;
//! the default) and RabbitMQ (cluster). Everything above this trait is the same for both.

pub mod embedded;
pub mod rabbitmq;
pub mod watch;

use shared::msg::{Job, JobReport};

/// A report from a worker and the token that acknowledges it.
#[derive(Debug)]
pub struct Delivery {
    pub report: JobReport,
    pub tag: u64,
}

/// How the coordinator reaches workers.
#[allow(async_fn_in_trait)]
pub trait Transport {
    /// Hand one job to the workers.
    async fn publish(&mut self, job: Job) -> anyhow::Result<()>;
    /// The next report from any worker; `None` when no worker can ever answer again.
    async fn next(&mut self) -> anyhow::Result<Option<Delivery>>;
    /// A report that is ready now, without waiting (used to batch fsyncs).
    fn try_next(&mut self) -> anyhow::Result<Option<Delivery>>;
    /// Acknowledge a report after its result is durable (or deliberately dropped).
    async fn ack(&mut self, tag: u64) -> anyhow::Result<()>;
    /// These matches now have a durable, accepted result (the cluster records them so workers
    /// skip redelivered duplicates). Default: nothing to do.
    async fn completed(&mut self, _numbers: &[u64]) -> anyhow::Result<()> {
        Ok(())
    }
    /// Stop handing jobs to `worker`: the run quarantined it (`evidence` says why). Default:
    /// nothing to do (the run refuses its reports whatever the transport does).
    async fn quarantine(&mut self, _worker: &str, _evidence: &str) -> anyhow::Result<()> {
        Ok(())
    }
    /// Quarantined workers an operator released since the last call. Default: none.
    async fn released(&mut self) -> Vec<String> {
        Vec::new()
    }
    /// Stop the workers this transport owns (embedded) or close connections (cluster).
    async fn shutdown(self) -> anyhow::Result<()>;
    /// A short description for logs ("embedded, 2 workers").
    fn describe(&self) -> String;
}
