//! The run engine's decisions as a pure state machine: which match to publish next, what to do
//! with each report (drop a duplicate, cancel it after a stop, refuse it, retry it, log it), when
//! a stop rule cuts the run, and how the run ended. Events in, actions out: the I/O loop
//! (`super::execute::drive`, the tournament's sink on `crate::sink::pump`) feeds it what happened (a report arrived, a row was checkpointed,
//! the transport went idle) and does what it answers, so every decision here is testable without
//! a transport, a folder or a clock.

use std::collections::VecDeque;

use super::checkpoint::Row;
use super::stop::{StopRule, Stopped};
use crate::sink::retry_attempt;

/// The state of a run between its events.
#[derive(Debug)]
pub struct Flow {
    scheduled: u64,
    limit: u64,
    pending: VecDeque<u64>,
    /// The last row of the run and why, once a stop rule said so.
    cut: Option<(u64, String)>,
    announced: bool,
    cancelled: Vec<u64>,
    failures: u64,
}

/// What to do with a report before it is looked at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Admit {
    /// Its match is already in the log: acknowledge and drop it.
    Duplicate,
    /// The run has stopped: acknowledge it, log nothing (it counts as cancelled).
    Cancelled,
    /// Its worker may not play this run (quarantined, too slow): record why, play it elsewhere.
    Refused(String),
    /// Verify it and save it.
    Accept,
}

/// What to do with a report once it was verified, or refused by the verification.
#[derive(Debug, Clone, PartialEq)]
pub enum Settled {
    /// The host failed it: publish it again (this is the `attempt`-th retry).
    Retry { why: String, attempt: u32 },
    /// Log this row (a result, or a match failed for good after its retries).
    Log(Row),
}

/// What the loop does when the transport has no report to give.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Idle {
    /// The run has stopped: cancel what is in flight and end.
    CancelAndEnd,
    /// Every worker is gone with matches in flight: the run cannot go on.
    Stranded(String),
}

impl Flow {
    /// A run of `scheduled` matches of which none above `limit` is ever published.
    pub fn new(scheduled: u64, limit: u64) -> Flow {
        Flow {
            scheduled,
            limit: limit.min(scheduled),
            pending: VecDeque::new(),
            cut: None,
            announced: false,
            cancelled: Vec::new(),
            failures: 0,
        }
    }

    /// The matches this run publishes at most (the schedule, or a stop rule's limit).
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Queue matches to publish, in this order (nothing is queued once the run has stopped).
    pub fn queue(&mut self, numbers: impl IntoIterator<Item = u64>) {
        if self.cut.is_none() {
            self.pending.extend(numbers);
        }
    }

    /// Matches queued and not yet published.
    pub fn waiting(&self) -> usize {
        self.pending.len()
    }

    /// True once a stop rule has cut the run.
    pub fn stopped(&self) -> bool {
        self.cut.is_some()
    }

    /// One row checkpointed in schedule order, shown to the stop rule (none once stopped).
    pub fn observe(&mut self, row: &Row, rule: Option<&mut (dyn StopRule + '_)>) {
        if self.cut.is_some() {
            return;
        }
        if let Some(why) = rule.and_then(|r| r.observe(row)) {
            self.cut = Some((row.number, why));
            self.pending.clear();
        }
    }

    /// The line that says the run stops, once, the first time it is asked after the cut.
    pub fn announcement(&mut self, in_flight: usize) -> Option<String> {
        let (after, why) = self.cut.as_ref()?;
        if self.announced {
            return None;
        }
        self.announced = true;
        Some(format!(
            "stopping after match {after} of {}: {why}; {in_flight} jobs in flight are cancelled (acknowledged, not logged)",
            self.scheduled
        ))
    }

    /// The next match to publish, if any.
    pub fn next_match(&mut self) -> Option<u64> {
        match self.cut {
            Some(_) => None,
            None => self.pending.pop_front(),
        }
    }

    /// A report of match `n` arrived: `logged` when the log already has it, `refused` when its
    /// worker may not play this run.
    pub fn admit(&mut self, n: u64, logged: bool, refused: Option<String>) -> Admit {
        if logged {
            return Admit::Duplicate;
        }
        if self.cut.is_some() {
            self.cancelled.push(n);
            return Admit::Cancelled;
        }
        match refused {
            Some(why) => Admit::Refused(why),
            None => Admit::Accept,
        }
    }

    /// The verification of match `n` (of `size` seats, tried `tries` times before) gave `row`,
    /// or refused it saying why (the host's fault: retried, then failed for good).
    pub fn settle(
        &mut self,
        n: u64,
        size: u32,
        verified: Result<Row, String>,
        tries: u32,
    ) -> Settled {
        match (verified, retry_attempt(tries)) {
            (Ok(row), _) => Settled::Log(row),
            (Err(why), Some(attempt)) => Settled::Retry { why, attempt },
            (Err(why), None) => {
                self.failures += 1;
                Settled::Log(Row {
                    number: n,
                    size,
                    result: None,
                    failed: Some(why),
                })
            }
        }
    }

    /// The transport has nothing more to give with `in_flight` matches out.
    pub fn idle(&self, in_flight: usize) -> Idle {
        match self.cut {
            Some(_) => Idle::CancelAndEnd,
            None => Idle::Stranded(format!(
                "every worker has stopped with {in_flight} matches in flight"
            )),
        }
    }

    /// Matches in flight at the stop, cancelled.
    pub fn cancel(&mut self, numbers: impl IntoIterator<Item = u64>) {
        self.cancelled.extend(numbers);
    }

    /// Matches that failed for good in this run.
    pub fn failures(&self) -> u64 {
        self.failures
    }

    /// How the run ended, with `written` rows in the log and results `ahead` of the cut kept
    /// aside: the cut, if a rule (or the limit) ended it before the end of the schedule.
    pub fn finish(mut self, written: u64, ahead: &[u64]) -> Option<Stopped> {
        // A run cut by --max-matches ends at its limit without the rule having to say so.
        if self.cut.is_none() && self.limit < self.scheduled && written == self.limit {
            self.cut = Some((
                self.limit,
                format!(
                    "the last whole unit within the limit ends at match {}",
                    self.limit
                ),
            ));
        }
        // A rule that ends the run at its last match has not cut anything.
        let (after, reason) = self.cut.filter(|(after, _)| *after < self.scheduled)?;
        let mut cut_numbers: Vec<u64> = self.cancelled.iter().chain(ahead).copied().collect();
        cut_numbers.sort_unstable();
        Some(Stopped {
            reason,
            after,
            matches_played: written,
            matches_scheduled: self.scheduled,
            cancelled: self.cancelled.len() as u64,
            kept_ahead: ahead.len() as u64,
            cut_numbers,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sink::RETRIES;

    fn row(n: u64) -> Row {
        Row {
            number: n,
            size: 2,
            result: Some(serde_json::json!({})),
            failed: None,
        }
    }

    /// Stops after the row numbered `at`.
    struct At(u64);
    impl StopRule for At {
        fn observe(&mut self, row: &Row) -> Option<String> {
            (row.number == self.0).then(|| "settled".to_string())
        }
    }

    #[test]
    fn publishes_in_order_and_a_cut_stops_publishing_and_cancels_what_arrives() {
        let mut f = Flow::new(10, 10);
        f.queue(1..=10);
        assert_eq!((f.next_match(), f.next_match()), (Some(1), Some(2)));
        assert_eq!(f.admit(1, false, None), Admit::Accept);
        let mut rule = At(1);
        f.observe(&row(1), Some(&mut rule));
        assert!(f.stopped());
        assert_eq!(f.next_match(), None, "nothing published after the cut");
        let line = f.announcement(1).expect("said once");
        assert!(
            line.starts_with("stopping after match 1 of 10: settled; 1 jobs"),
            "{line}"
        );
        assert_eq!(f.announcement(1), None);
        assert_eq!(f.admit(2, false, None), Admit::Cancelled);
        assert_eq!(f.admit(1, true, None), Admit::Duplicate);
        assert_eq!(f.idle(0), Idle::CancelAndEnd);
        let s = f.finish(1, &[4]).expect("cut before the end");
        assert_eq!((s.after, s.cancelled, s.kept_ahead), (1, 1, 1));
        assert_eq!(s.cut_numbers, vec![2, 4]);
    }

    #[test]
    fn a_host_failure_is_retried_then_logged_failed() {
        let mut f = Flow::new(3, 3);
        let settled = f.settle(2, 3, Err("disk full".into()), 0);
        assert_eq!(
            settled,
            Settled::Retry {
                why: "disk full".into(),
                attempt: 1
            }
        );
        let Settled::Log(r) = f.settle(2, 3, Err("disk full".into()), RETRIES) else {
            panic!("failed for good after its retries");
        };
        assert_eq!(
            (r.number, r.size, r.result, r.failed),
            (2, 3, None, Some("disk full".into()))
        );
        assert_eq!(f.failures(), 1);
        assert!(matches!(f.idle(1), Idle::Stranded(w) if w.contains("1 matches in flight")));
        assert_eq!(f.finish(3, &[]), None, "a whole run is not stopped");
    }

    #[test]
    fn a_refused_worker_is_named_and_a_limit_ends_the_run_at_it() {
        let mut f = Flow::new(10, 4);
        assert_eq!(
            f.admit(3, false, Some("quarantined".into())),
            Admit::Refused("quarantined".into())
        );
        let s = f.finish(4, &[]).expect("the limit cut the schedule");
        assert_eq!(s.after, 4);
        assert!(s.reason.contains("ends at match 4"), "{}", s.reason);
        // A rule that stops at the last match cuts nothing.
        let mut f = Flow::new(2, 2);
        f.observe(&row(2), Some(&mut At(2)));
        assert_eq!(f.finish(2, &[]), None);
    }
}
