//! The coordinator's two consumers on the broker: the results queue (signed reports, handed on
//! as they come and acked only once durable) and the dead-letter queue (poison and refused jobs,
//! handed on as failed reports with their reason; anything unreadable is listed in the dead
//! letters file). Each runs on its own channel and reports a broken one to the transport.

use std::io::Write;
use std::path::PathBuf;

use futures_lite::StreamExt;
use lapin::options::*;
use lapin::types::AMQPValue;
use tokio::sync::mpsc;

use broker::{Store, REASON_HEADER};
use shared::codec::{self, FarmKey};
use shared::msg::{Job, JobReport};

use super::Event;

pub(super) async fn read_results(
    mut consumer: lapin::Consumer,
    tx: mpsc::Sender<Event>,
    key: FarmKey,
    generation: u64,
    tournament: String,
) {
    while let Some(d) = consumer.next().await {
        let d = match d {
            Ok(d) => d,
            Err(e) => {
                let _ = tx
                    .send(Event::Broken {
                        generation,
                        why: e.to_string(),
                    })
                    .await;
                return;
            }
        };
        match codec::decode::<JobReport>(&d.data, &key) {
            Ok(report) => {
                if tx
                    .send(Event::Report {
                        generation,
                        tag: d.delivery_tag,
                        report,
                    })
                    .await
                    .is_err()
                {
                    return;
                }
            }
            Err(e) => {
                tracing::warn!(tournament = %tournament, "dropped a result that does not verify: {e}");
                let _ = d.acker.ack(BasicAckOptions::default()).await;
            }
        }
    }
    let _ = tx
        .send(Event::Broken {
            generation,
            why: "results consumer cancelled".into(),
        })
        .await;
}

#[allow(clippy::too_many_arguments)]
pub(super) async fn read_dead(
    mut consumer: lapin::Consumer,
    tx: mpsc::Sender<Event>,
    key: FarmKey,
    generation: u64,
    tournament: String,
    store: Store,
    file: Option<PathBuf>,
) {
    while let Some(d) = consumer.next().await {
        let d = match d {
            Ok(d) => d,
            Err(e) => {
                let _ = tx
                    .send(Event::Broken {
                        generation,
                        why: e.to_string(),
                    })
                    .await;
                return;
            }
        };
        let headers = d.properties.headers().clone().unwrap_or_default();
        let header = |name: &str| -> Option<String> {
            match headers.inner().get(name)? {
                AMQPValue::LongString(s) => Some(String::from_utf8_lossy(s.as_bytes()).to_string()),
                AMQPValue::ShortString(s) => Some(s.as_str().to_string()),
                _ => None,
            }
        };
        let reason = header(REASON_HEADER)
            .or_else(|| {
                header("x-first-death-reason").map(|r| match r.as_str() {
                    "delivery_limit" => format!(
                        "delivered {} times without a result (poison job or workers dying on it)",
                        broker::DELIVERY_LIMIT
                    ),
                    _ => format!("dead-lettered by the broker: {r}"),
                })
            })
            .unwrap_or_else(|| "dead-lettered".to_string());
        let job = codec::decode::<Job>(&d.data, &key)
            .ok()
            .filter(|j| j.tournament == tournament);
        let entry = serde_json::json!({
            "number": job.as_ref().map(|j| j.number),
            "reason": reason,
            "bytes": d.data.len(),
        })
        .to_string();
        tracing::warn!("dead letter: {entry}");
        crate::metrics::global().dead_lettered.inc();
        if let Err(e) = store.add_dead(&tournament, &entry).await {
            tracing::warn!("Redis: {e:#}");
        }
        if let Some(f) = &file {
            let written = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(f)
                .and_then(|mut fh| writeln!(fh, "{entry}").and_then(|_| fh.sync_data()));
            if let Err(e) = written {
                tracing::error!(file = %f.display(), "cannot record a dead letter: {e}");
            }
        }
        if let Some(job) = job {
            if tx
                .send(Event::Dead {
                    number: job.number,
                    reason,
                })
                .await
                .is_err()
            {
                return;
            }
        }
        let _ = d.acker.ack(BasicAckOptions::default()).await;
    }
}
