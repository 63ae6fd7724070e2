//! The embedded transport: an in-process bounded job queue served by N local worker threads
//! built from the worker library, so one machine runs a tournament with no broker at all.

use std::sync::Arc;

use anyhow::Context;
use tokio::sync::{mpsc, Mutex};

use shared::msg::{Job, JobReport};
use worker::job::{Artifacts, JobRunner, Steering};

use super::{Delivery, Transport};

/// In-process queue + local workers.
pub struct Embedded {
    jobs: Option<mpsc::Sender<Job>>,
    reports: mpsc::Receiver<JobReport>,
    workers: Vec<tokio::task::JoinHandle<()>>,
    next_tag: u64,
    count: usize,
}

impl Embedded {
    /// Start `workers` local workers sharing `runner` (one compile cache, one set of core
    /// tokens) and `artifacts`. The job queue holds at most `queue` jobs.
    pub fn start(
        workers: usize,
        queue: usize,
        runner: Arc<JobRunner>,
        artifacts: Arc<dyn Artifacts>,
    ) -> Embedded {
        Self::start_steered(workers, queue, runner, artifacts, Steering::default())
    }

    /// [`Embedded::start`] with every job steered from this process (`farm proboj`'s stop
    /// flag, in-place games, verbose servers: [`Steering`]).
    pub fn start_steered(
        workers: usize,
        queue: usize,
        runner: Arc<JobRunner>,
        artifacts: Arc<dyn Artifacts>,
        steering: Steering,
    ) -> Embedded {
        let steering = Arc::new(steering);
        let (job_tx, job_rx) = mpsc::channel::<Job>(queue.max(1));
        let (rep_tx, rep_rx) = mpsc::channel::<JobReport>(queue.max(1) + workers);
        let job_rx = Arc::new(Mutex::new(job_rx));
        let handles = (0..workers)
            .map(|_| {
                let job_rx = job_rx.clone();
                let rep_tx = rep_tx.clone();
                let runner = runner.clone();
                let artifacts = artifacts.clone();
                let steering = steering.clone();
                tokio::spawn(async move {
                    loop {
                        let job = { job_rx.lock().await.recv().await };
                        let Some(job) = job else { break };
                        let runner = runner.clone();
                        let artifacts = artifacts.clone();
                        let steering = steering.clone();
                        let report = tokio::task::spawn_blocking(move || {
                            runner.execute_steered(&job, artifacts.as_ref(), &steering)
                        })
                        .await;
                        match report {
                            Ok(r) => {
                                if rep_tx.send(r).await.is_err() {
                                    break;
                                }
                            }
                            Err(e) => {
                                tracing::error!("embedded worker task failed: {e}");
                                break;
                            }
                        }
                    }
                })
            })
            .collect();
        Embedded {
            jobs: Some(job_tx),
            reports: rep_rx,
            workers: handles,
            next_tag: 0,
            count: workers,
        }
    }
}

impl Transport for Embedded {
    async fn publish(&mut self, job: Job) -> anyhow::Result<()> {
        let tx = self
            .jobs
            .as_ref()
            .context("embedded transport already shut down")?;
        tx.send(job)
            .await
            .map_err(|_| anyhow::anyhow!("all embedded workers have stopped"))
    }

    async fn next(&mut self) -> anyhow::Result<Option<Delivery>> {
        Ok(self.reports.recv().await.map(|report| {
            self.next_tag += 1;
            Delivery {
                report,
                tag: self.next_tag,
            }
        }))
    }

    fn try_next(&mut self) -> anyhow::Result<Option<Delivery>> {
        Ok(self.reports.try_recv().ok().map(|report| {
            self.next_tag += 1;
            Delivery {
                report,
                tag: self.next_tag,
            }
        }))
    }

    async fn ack(&mut self, _tag: u64) -> anyhow::Result<()> {
        Ok(())
    }

    async fn shutdown(mut self) -> anyhow::Result<()> {
        self.jobs = None;
        for h in self.workers.drain(..) {
            h.await.context("joining an embedded worker")?;
        }
        Ok(())
    }

    fn describe(&self) -> String {
        format!("embedded, {} local workers", self.count)
    }
}
