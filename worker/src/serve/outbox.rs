//! The worker's side of a taken job after admission: fetch its referee package and artifacts,
//! play it on a blocking thread, sign the report and keep it in the outbox; [`deliver`]
//! publishes the outbox with publisher confirms, and a report (and its job in the heartbeat)
//! leaves only once the broker confirmed it, so reports survive reconnects.

use std::sync::Arc;

use lapin::options::BasicPublishOptions;
use lapin::Channel;
use tokio::sync::OwnedSemaphorePermit;

use broker::persistent;
use shared::codec;
use shared::msg::{JobFailure, JobReport};

use super::{Ctx, SessionError, Taken};

/// A signed report waiting for the broker's confirm.
pub(super) struct Outgoing {
    queue: String,
    body: Vec<u8>,
    label: String,
    number: u64,
}

/// Play a taken job and put its signed report in the outbox.
pub(super) async fn play(ctx: Arc<Ctx>, taken: Taken, permit: OwnedSemaphorePermit) {
    let Taken {
        names,
        job,
        label,
        charged,
    } = taken;
    let held = std::time::Instant::now();
    let failed = |f| JobReport {
        tournament: job.tournament.clone(),
        number: job.number,
        worker: ctx.runner.worker_id.clone(),
        seconds: 0.0,
        speed: ctx.runner.speed,
        outcome: Err(f),
    };
    let report = match ctx.artifacts.referee_package(&job).await {
        Err(f) => {
            tracing::warn!(number = job.number, "{f}");
            failed(f)
        }
        Ok(()) => match ctx.artifacts.fetch(&job).await {
            Err(f) => {
                tracing::warn!(number = job.number, "{f}");
                failed(f)
            }
            Ok(local) => {
                let runner = ctx.runner.clone();
                let j = job.clone();
                match tokio::task::spawn_blocking(move || runner.execute(&j, &local)).await {
                    Ok(r) => r,
                    Err(e) => failed(JobFailure::Infrastructure(format!(
                        "the match thread of worker {} died: {e}",
                        ctx.cfg.id
                    ))),
                }
            }
        },
    };
    drop(permit);
    if let Ok(mut s) = ctx.shares.lock() {
        s.ended(&job.tournament, charged, held.elapsed().as_secs_f64());
    }
    if matches!(report.outcome, Err(JobFailure::Infrastructure(_))) && !host_still_fit(&ctx) {
        // Withheld: the job leaves the heartbeat unreported, and the coordinator has it played
        // again elsewhere without counting a failure against the match.
        if let Ok(mut c) = ctx.current.lock() {
            c.remove(&label);
        }
        ctx.finished.notify_one();
        return;
    }
    println!(
        "worker {}: played {label} in {:.1} s{}",
        ctx.cfg.id,
        report.seconds,
        match &report.outcome {
            Ok(_) => String::new(),
            Err(f) => format!(" (no result: {f})"),
        }
    );
    match codec::encode(&report, &ctx.cfg.key) {
        Ok(body) => {
            if let Ok(mut o) = ctx.outbox.lock() {
                o.push(Outgoing {
                    queue: names.results,
                    body,
                    label,
                    number: job.number,
                });
            }
        }
        Err(e) => {
            tracing::error!(number = job.number, "cannot encode the report: {e}");
            if let Ok(mut c) = ctx.current.lock() {
                c.remove(&label);
            }
        }
    }
    ctx.finished.notify_one();
}

/// After a failure on this host's side: whether the host can still play. When it cannot, the
/// worker records why, stops taking jobs and ends with that error once the matches in hand
/// are delivered (an unfit host reporting every job it takes as failed would use up each
/// match's retries in milliseconds while healthy workers wait).
fn host_still_fit(ctx: &Ctx) -> bool {
    let Err(e) = ctx.runner.host_fit(&[ctx.artifacts.dir()]) else {
        return true;
    };
    tracing::error!(
        "worker {}: this host can no longer play matches ({e}); taking no more jobs, its \
         matches are played elsewhere",
        ctx.cfg.id
    );
    if let Ok(mut u) = ctx.unfit.lock() {
        u.get_or_insert_with(|| e.to_string());
    }
    ctx.stop.trigger();
    false
}

/// Publish every report in the outbox; each leaves it (and the heartbeat) once confirmed.
pub(super) async fn deliver(ctx: &Ctx, ch: &Channel) -> Result<(), SessionError> {
    loop {
        let next = ctx.outbox.lock().ok().and_then(|o| {
            o.first()
                .map(|m| (m.queue.clone(), m.body.clone(), m.number))
        });
        let Some((queue, body, number)) = next else {
            return Ok(());
        };
        let confirm = ch
            .basic_publish(
                "",
                &queue,
                BasicPublishOptions::default(),
                &body,
                persistent(),
            )
            .await
            .map_err(|source| SessionError::Publish { number, source })?
            .await
            .map_err(|source| SessionError::Confirm { number, source })?;
        if !confirm.is_ack() {
            return Err(SessionError::ReportRefused { number });
        }
        let label = ctx.outbox.lock().ok().and_then(|mut o| {
            let i = o
                .iter()
                .position(|m| m.number == number && m.queue == queue)?;
            Some(o.remove(i).label)
        });
        if let (Some(label), Ok(mut c)) = (label, ctx.current.lock()) {
            c.remove(&label);
        }
    }
}
