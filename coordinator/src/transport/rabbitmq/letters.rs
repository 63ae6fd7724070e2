//! What the RabbitMQ transport does with a dead letter once [`super::ledger`] has judged it: a
//! worker's signed refusal becomes a failed report with its reason, the broker's delivery limit
//! a loss (published again, failed after [`crate::transport::watch::MAX_LOST`]), anything else
//! nothing. Every letter is logged, counted and listed (Redis and `dead-letters.jsonl`) with
//! what it did and why.

use std::io::Write;

use broker::DELIVERY_LIMIT;

use super::ledger::{Judgement, Letter};
use super::{Delivery, RabbitMq};
use crate::transport::watch::Verdict;

impl RabbitMq {
    /// Judge one dead letter, record it, and return the failed report it causes, if any.
    pub(super) fn on_letter(
        &mut self,
        letter: Letter,
        claimed: Option<String>,
        bytes: usize,
    ) -> Option<Delivery> {
        let metrics = crate::metrics::global();
        metrics.dead_lettered.inc();
        let judged = self
            .ledger
            .judge(&self.spec.tournament, &self.names.jobs, &letter);
        let (number, verdict, reason, out) = match judged {
            Judgement::Refused {
                number,
                worker,
                reason,
            } => {
                self.forget(number);
                let out = self.failed(number, &worker, reason.clone());
                (Some(number), "failed the match", reason, Some(out))
            }
            Judgement::DeliveryLimit { number } => {
                let reason = format!(
                    "delivered {DELIVERY_LIMIT} times without a result (poison job or workers dying on it)"
                );
                match self.watch.dead_lettered(number) {
                    Verdict::Republish { losses, .. } => {
                        metrics.retried.inc();
                        self.again.push(number);
                        let reason = format!("{reason}; published again (loss {losses})");
                        (Some(number), "published again", reason, None)
                    }
                    Verdict::Fail { losses, .. } => {
                        self.forget(number);
                        let reason = format!("{reason}; lost {losses} times");
                        let out = self.failed(number, "dead-letter queue", reason.clone());
                        (Some(number), "failed the match", reason, Some(out))
                    }
                }
            }
            Judgement::Rejected { number, why } => {
                metrics.dead_letters_rejected.inc();
                (number, "rejected", why, None)
            }
        };
        let entry = serde_json::json!({
            "number": number,
            "verdict": verdict,
            "reason": reason,
            "claimed": claimed,
            "bytes": bytes,
        })
        .to_string();
        if verdict == "rejected" {
            tracing::warn!(tournament = %self.spec.tournament, "dead letter rejected, nothing changes: {entry}");
        } else {
            tracing::warn!(tournament = %self.spec.tournament, "dead letter: {entry}");
        }
        self.record(entry);
        out
    }

    /// List a dead letter in Redis (in the background) and in the dead letters file.
    fn record(&self, entry: String) {
        if let Some(f) = &self.spec.dead_file {
            let written = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(f)
                .and_then(|mut fh| writeln!(fh, "{entry}").and_then(|_| fh.sync_data()));
            if let Err(e) = written {
                tracing::error!(file = %f.display(), "cannot record a dead letter: {e}");
            }
        }
        let store = self.spec.store.clone();
        let tournament = self.spec.tournament.clone();
        tokio::spawn(async move {
            if let Err(e) = store.add_dead(&tournament, &entry).await {
                tracing::warn!("Redis: {e:#}");
            }
        });
    }
}
