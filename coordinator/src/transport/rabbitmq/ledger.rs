//! Which dead letters may change a match: anyone who can publish to the broker can put anything
//! on the dead-letter queue (copies of real jobs, forged `x-death` headers), so nothing there is
//! believed until it is checked against what this coordinator itself published. Pure
//! bookkeeping, tested without a broker.
//!
//! The rule. Every publication of a job is a [`shared::msg::Posting`] with a fresh random id
//! inside the farm key's signature. A dead letter counts only when it names the latest
//! publication of a match of this tournament that is still pending (no valid result, no failure
//! reported), and only once per publication (a copy or a replay is rejected), and only if it is
//! - a worker's refusal signed with the farm key ([`shared::msg::Refusal`]): the match is
//!   reported failed with the worker's reason (and retried like any infrastructure failure), or
//! - that job itself, signed by this coordinator, carrying the broker's dead-lettering headers
//!   (`x-first-death-reason` = `delivery_limit`, `x-first-death-queue` = the tournament's jobs
//!   queue): it is treated as a lost job, published again as a new publication, and reported
//!   failed only after [`crate::transport::watch::MAX_LOST`] losses. Headers can be forged, so a
//!   forged one costs at most one republication per publication the forger took off the queue,
//!   no more than taking the job alone would.
//!
//! Everything else (unsigned or foreign messages, other tournaments, earlier publications, matches
//! already answered, copies) is rejected: logged, counted in `farm_dead_letters_rejected_total`
//! and listed in `dead-letters.jsonl`, never acted on. A valid result always ends the pending
//! state, so no dead letter changes a match whose result has arrived.

use std::collections::{HashMap, HashSet};

use shared::msg::Refusal;

/// The broker's dead-lettering reason for a quorum queue's delivery limit.
pub const DELIVERY_LIMIT_REASON: &str = "delivery_limit";

/// What the dead-letter reader found in one message: signatures checked, nothing judged yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Letter {
    /// A worker's refusal whose signature verifies.
    Refusal(Refusal),
    /// A job signed with the farm key, with the broker's dead-lettering headers as found.
    Job {
        tournament: String,
        number: u64,
        publication: u64,
        death: Death,
    },
    /// Nothing signed with the farm key (why it does not verify or decode).
    Unreadable { why: String },
}

/// The broker's dead-lettering headers on a message, as found (anyone may have set them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Death {
    /// `x-first-death-reason`.
    pub reason: Option<String>,
    /// `x-first-death-queue`.
    pub queue: Option<String>,
}

impl Death {
    /// True when the headers say the broker dead-lettered the message at the delivery limit of
    /// `jobs_queue`.
    pub fn is_delivery_limit(&self, jobs_queue: &str) -> bool {
        self.reason.as_deref() == Some(DELIVERY_LIMIT_REASON)
            && self.queue.as_deref() == Some(jobs_queue)
    }
}

/// What a letter does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Judgement {
    /// A worker's signed refusal of a pending match: report it failed with the reason.
    Refused {
        number: u64,
        worker: String,
        reason: String,
    },
    /// The broker's delivery limit on a pending match: a loss (published again, or failed).
    DeliveryLimit { number: u64 },
    /// Nothing changes.
    Rejected { number: Option<u64>, why: String },
}

/// The latest publication of every pending match, and the publications a letter counted for.
#[derive(Debug, Default)]
pub struct Ledger {
    latest: HashMap<u64, u64>,
    spent: HashSet<u64>,
}

impl Ledger {
    pub fn new() -> Ledger {
        Ledger::default()
    }

    /// Match `number` was published (again) as `publication`: earlier ones no longer count.
    pub fn published(&mut self, number: u64, publication: u64) {
        self.latest.insert(number, publication);
    }

    /// Match `number` is no longer pending (a result or a failure arrived).
    pub fn answered(&mut self, number: u64) {
        self.latest.remove(&number);
    }

    /// Judge one letter for `tournament`, whose jobs queue is `jobs_queue`. An accepted letter
    /// spends its publication.
    pub fn judge(&mut self, tournament: &str, jobs_queue: &str, letter: &Letter) -> Judgement {
        let (t, number, publication) = match letter {
            Letter::Unreadable { why } => return unreadable(why),
            Letter::Refusal(r) => (&r.tournament, r.number, r.publication),
            Letter::Job {
                tournament,
                number,
                publication,
                ..
            } => (tournament, *number, *publication),
        };
        if t != tournament {
            return rejected(Some(number), format!("a job of another tournament ({t})"));
        }
        if self.spent.contains(&publication) {
            return rejected(
                Some(number),
                "a copy of a dead letter already counted for this publication".into(),
            );
        }
        match self.latest.get(&number) {
            None => {
                return rejected(
                    Some(number),
                    format!("match {number} is not pending (its result or failure arrived, or this coordinator never published it)"),
                )
            }
            Some(p) if *p != publication => {
                return rejected(
                    Some(number),
                    format!("an earlier publication of match {number} (a later one is pending)"),
                )
            }
            Some(_) => {}
        }
        let judged = match letter {
            Letter::Refusal(r) => Judgement::Refused {
                number,
                worker: r.worker.clone(),
                reason: r.reason.clone(),
            },
            Letter::Job { death, .. } if death.is_delivery_limit(jobs_queue) => {
                Judgement::DeliveryLimit { number }
            }
            Letter::Job { death, .. } => {
                return rejected(
                    Some(number),
                    format!(
                        "a job without the broker's delivery-limit dead-lettering from {jobs_queue} (x-first-death-reason {:?}, x-first-death-queue {:?})",
                        death.reason, death.queue
                    ),
                )
            }
            Letter::Unreadable { why } => return unreadable(why),
        };
        self.spent.insert(publication);
        judged
    }
}

fn unreadable(why: &str) -> Judgement {
    rejected(None, format!("not signed with the farm key: {why}"))
}

fn rejected(number: Option<u64>, why: String) -> Judgement {
    Judgement::Rejected { number, why }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: &str = "t1";
    const Q: &str = "farm.t1.jobs";

    fn limit(number: u64, publication: u64) -> Letter {
        Letter::Job {
            tournament: T.into(),
            number,
            publication,
            death: Death {
                reason: Some(DELIVERY_LIMIT_REASON.into()),
                queue: Some(Q.into()),
            },
        }
    }

    fn refusal(number: u64, publication: u64) -> Letter {
        Letter::Refusal(Refusal {
            tournament: T.into(),
            number,
            publication,
            worker: "w1".into(),
            reason: "pinned elsewhere".into(),
        })
    }

    fn is_rejected(j: &Judgement, what: &str) -> bool {
        matches!(j, Judgement::Rejected { why, .. } if why.contains(what))
    }

    #[test]
    fn a_job_without_the_brokers_headers_or_with_anothers_queue_changes_nothing() {
        let mut l = Ledger::new();
        l.published(3, 77);
        let bare = Letter::Job {
            tournament: T.into(),
            number: 3,
            publication: 77,
            death: Death::default(),
        };
        assert!(is_rejected(&l.judge(T, Q, &bare), "delivery-limit"));
        let elsewhere = Letter::Job {
            tournament: T.into(),
            number: 3,
            publication: 77,
            death: Death {
                reason: Some(DELIVERY_LIMIT_REASON.into()),
                queue: Some("farm.other.jobs".into()),
            },
        };
        assert!(is_rejected(&l.judge(T, Q, &elsewhere), "delivery-limit"));
        let unsigned = Letter::Unreadable {
            why: "signature does not verify".into(),
        };
        assert!(is_rejected(&l.judge(T, Q, &unsigned), "farm key"));
        // None of them spent the publication: the genuine one still counts.
        assert_eq!(
            l.judge(T, Q, &limit(3, 77)),
            Judgement::DeliveryLimit { number: 3 }
        );
    }

    #[test]
    fn each_publication_counts_once_and_only_the_latest_of_a_pending_match() {
        let mut l = Ledger::new();
        l.published(5, 1);
        assert_eq!(
            l.judge(T, Q, &limit(5, 1)),
            Judgement::DeliveryLimit { number: 5 }
        );
        // Copies of the same dead letter, however many, are rejected.
        for _ in 0..3 {
            assert!(is_rejected(&l.judge(T, Q, &limit(5, 1)), "copy"));
            assert!(is_rejected(&l.judge(T, Q, &refusal(5, 1)), "copy"));
        }
        // Published again: a dead letter of the earlier publication no longer counts.
        l.published(5, 2);
        l.published(5, 3);
        assert!(is_rejected(
            &l.judge(T, Q, &refusal(5, 2)),
            "earlier publication"
        ));
        assert_eq!(
            l.judge(T, Q, &refusal(5, 3)),
            Judgement::Refused {
                number: 5,
                worker: "w1".into(),
                reason: "pinned elsewhere".into()
            }
        );
        // Another tournament's job, and a match never published here.
        let mut other = refusal(5, 4);
        if let Letter::Refusal(r) = &mut other {
            r.tournament = "t2".into();
        }
        l.published(5, 4);
        assert!(is_rejected(&l.judge(T, Q, &other), "another tournament"));
        assert!(is_rejected(&l.judge(T, Q, &limit(9, 4)), "not pending"));
    }

    #[test]
    fn once_a_result_arrived_no_dead_letter_changes_the_match() {
        let mut l = Ledger::new();
        l.published(2, 10);
        l.answered(2);
        assert!(is_rejected(&l.judge(T, Q, &limit(2, 10)), "not pending"));
        assert!(is_rejected(&l.judge(T, Q, &refusal(2, 10)), "not pending"));
    }
}
