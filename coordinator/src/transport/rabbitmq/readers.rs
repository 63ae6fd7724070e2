//! The coordinator's two consumers on the broker: the results queue (signed reports, handed on
//! as they come and acked only once durable) and the dead-letter queue (each message's signature
//! checked and handed to the transport, which judges it: [`super::ledger`]). Each runs on its
//! own channel and reports a broken one to the transport.

use futures_lite::StreamExt;
use lapin::options::*;
use lapin::types::AMQPValue;
use tokio::sync::mpsc;

use broker::REASON_HEADER;
use shared::codec::{self, FarmKey};
use shared::msg::{JobReport, Posting, Refusal};

use super::ledger::{Death, Letter};
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

/// Read the dead-letter queue: check each message's signature (a worker's [`Refusal`] or a job
/// this coordinator signed) and hand it to the transport, which alone judges it (see
/// [`super::ledger`]); then ack it.
pub(super) async fn read_dead(
    mut consumer: lapin::Consumer,
    tx: mpsc::Sender<Event>,
    key: FarmKey,
    generation: u64,
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
        let letter = match codec::decode::<Refusal>(&d.data, &key) {
            Ok(r) => Letter::Refusal(r),
            Err(_) => match codec::decode::<Posting>(&d.data, &key) {
                Ok(Posting { publication, job }) => Letter::Job {
                    tournament: job.tournament,
                    number: job.number,
                    publication,
                    death: Death {
                        reason: header("x-first-death-reason"),
                        queue: header("x-first-death-queue"),
                    },
                },
                Err(e) => Letter::Unreadable { why: e.to_string() },
            },
        };
        let event = Event::Letter {
            letter,
            claimed: header(REASON_HEADER),
            bytes: d.data.len(),
        };
        if tx.send(event).await.is_err() {
            return;
        }
        let _ = d.acker.ack(BasicAckOptions::default()).await;
    }
}
