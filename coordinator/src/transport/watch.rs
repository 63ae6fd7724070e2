//! Watching jobs that workers took off the queue. A cluster worker acknowledges a job as soon as
//! it starts it (so no broker consumer timeout can cut a long match short) and lists it in its
//! heartbeat until its result is confirmed by the broker. A job the coordinator still waits for
//! was lost with its worker (killed, its host gone, its result dropped by a dying broker) when
//! - the worker last seen holding it has not been live (its heartbeat expired) for
//!   [`HOLDER_GRACE`] and no live worker holds it: lost whatever the jobs queue holds, so a long
//!   tournament's in-order log does not stand still behind it until the queue drains (the grace
//!   outlasts a heartbeat interval, so a Redis flush that dropped every heartbeat at once is not
//!   the fleet dying); or
//! - no worker was ever seen holding it (a worker that died before its first heartbeat listed
//!   the job) and it stayed unheld for [`LOST_GRACE`] while the queue held nothing ready.
//!
//! A lost job is published again, and after [`MAX_LOST`] losses reported failed
//! (infrastructure), never scored. A job the broker dead-lettered at its delivery limit counts
//! as one loss too. Pure bookkeeping over what the transport observes, so it is tested without a
//! broker.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

/// How long a job must stay unheld (queue empty, no live worker lists it) before it counts as
/// lost: covers a worker between taking a job and its next heartbeat, and a result on its way.
pub const LOST_GRACE: Duration = Duration::from_secs(8);
/// How long the worker last seen holding a job must stay absent from the live workers before
/// the job counts as lost: longer than a worker's heartbeat interval (3 s), so heartbeats lost
/// all at once with Redis's data are renewed first.
pub const HOLDER_GRACE: Duration = Duration::from_secs(5);
/// After this many losses of one job it is reported failed instead of published again.
pub const MAX_LOST: u32 = 5;

/// Why a job counts as lost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cause {
    /// The worker last seen holding it is gone (its heartbeat expired).
    HolderGone(String),
    /// Nobody held it for [`LOST_GRACE`] while the queue was empty.
    Unheld,
    /// The broker dead-lettered it at its delivery limit.
    DeliveryLimit,
}

/// What to do about one job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Publish it again (the n-th loss).
    Republish {
        number: u64,
        losses: u32,
        cause: Cause,
    },
    /// Give up: report it failed.
    Fail {
        number: u64,
        losses: u32,
        cause: Cause,
    },
}

impl Verdict {
    pub fn number(&self) -> u64 {
        match self {
            Verdict::Republish { number, .. } | Verdict::Fail { number, .. } => *number,
        }
    }
}

/// What the coordinator sees of the fleet at one moment.
#[derive(Debug, Default, Clone)]
pub struct Fleet {
    /// Live workers (heartbeat not expired) by id.
    pub live: HashSet<String>,
    /// Jobs of this tournament that live workers list, with the worker listing each.
    pub holders: HashMap<u64, String>,
    /// Ready messages in the jobs queue.
    pub queued: u32,
}

/// Per-job loss tracking.
#[derive(Debug, Default)]
pub struct Watch {
    unheld_since: HashMap<u64, Instant>,
    last_holder: HashMap<u64, String>,
    holder_gone_since: HashMap<u64, Instant>,
    losses: HashMap<u64, u32>,
}

impl Watch {
    pub fn new() -> Self {
        Self::default()
    }

    /// One observation: `waiting` are the jobs without a result yet, `fleet` what live workers
    /// hold and how many jobs are ready in the queue. Returns what to do, in match order.
    pub fn observe(
        &mut self,
        now: Instant,
        waiting: impl IntoIterator<Item = u64>,
        fleet: &Fleet,
    ) -> Vec<Verdict> {
        let waiting: Vec<u64> = waiting.into_iter().collect();
        let live: HashSet<u64> = waiting.iter().copied().collect();
        self.unheld_since.retain(|n, _| live.contains(n));
        self.last_holder.retain(|n, _| live.contains(n));
        self.holder_gone_since.retain(|n, _| live.contains(n));
        let mut out = Vec::new();
        for n in waiting {
            if let Some(w) = fleet.holders.get(&n) {
                self.unheld_since.remove(&n);
                self.holder_gone_since.remove(&n);
                self.last_holder.insert(n, w.clone());
                continue;
            }
            if let Some(w) = self.last_holder.get(&n) {
                if fleet.live.contains(w) {
                    // A live holder that no longer lists it has its result on the way.
                    self.holder_gone_since.remove(&n);
                    continue;
                }
                let since = *self.holder_gone_since.entry(n).or_insert(now);
                if now.duration_since(since) >= HOLDER_GRACE {
                    let cause = Cause::HolderGone(w.clone());
                    out.push(self.lose(n, cause));
                }
                continue;
            }
            if fleet.queued > 0 {
                // Possibly still in the queue: not lost.
                self.unheld_since.remove(&n);
                continue;
            }
            let since = *self.unheld_since.entry(n).or_insert(now);
            if now.duration_since(since) < LOST_GRACE {
                continue;
            }
            out.push(self.lose(n, Cause::Unheld));
        }
        out.sort_by_key(Verdict::number);
        out
    }

    /// The broker dead-lettered the job at its delivery limit: one more loss, like a job lost
    /// with its worker.
    pub fn dead_lettered(&mut self, number: u64) -> Verdict {
        self.lose(number, Cause::DeliveryLimit)
    }

    fn lose(&mut self, number: u64, cause: Cause) -> Verdict {
        self.forget(number);
        let l = self.losses.entry(number).or_insert(0);
        *l += 1;
        let losses = *l;
        if losses >= MAX_LOST {
            Verdict::Fail {
                number,
                losses,
                cause,
            }
        } else {
            Verdict::Republish {
                number,
                losses,
                cause,
            }
        }
    }

    /// The job got its answer: forget it.
    pub fn answered(&mut self, number: u64) {
        self.forget(number);
    }

    fn forget(&mut self, number: u64) {
        self.unheld_since.remove(&number);
        self.last_holder.remove(&number);
        self.holder_gone_since.remove(&number);
    }
}

/// The match number of `tournament` in a heartbeat label (`<tournament>#<number>`), if it is one.
fn label_number(tournament: &str, label: &str) -> Option<u64> {
    let (t, n) = label.rsplit_once('#')?;
    (t == tournament).then(|| n.parse().ok())?
}

impl Fleet {
    /// The fleet from live workers' heartbeats: each worker's id and the labels it lists.
    pub fn of<'a, L>(
        tournament: &str,
        workers: impl IntoIterator<Item = (&'a str, L)>,
        queued: u32,
    ) -> Fleet
    where
        L: IntoIterator<Item = &'a str>,
    {
        let mut fleet = Fleet {
            queued,
            ..Fleet::default()
        };
        for (id, labels) in workers {
            fleet.live.insert(id.to_string());
            for n in labels
                .into_iter()
                .filter_map(|l| label_number(tournament, l))
            {
                fleet.holders.insert(n, id.to_string());
            }
        }
        fleet
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fleet(workers: &[(&str, &[u64])], queued: u32) -> Fleet {
        let labels: Vec<(&str, Vec<String>)> = workers
            .iter()
            .map(|(id, ns)| (*id, ns.iter().map(|n| format!("t#{n}")).collect()))
            .collect();
        Fleet::of(
            "t",
            labels
                .iter()
                .map(|(id, ls)| (*id, ls.iter().map(String::as_str))),
            queued,
        )
    }

    fn republish(number: u64, losses: u32, cause: Cause) -> Verdict {
        Verdict::Republish {
            number,
            losses,
            cause,
        }
    }

    #[test]
    fn a_job_never_seen_held_is_lost_only_after_the_grace_with_the_queue_empty() {
        let mut w = Watch::new();
        let t0 = Instant::now();
        // Queue not empty: never lost.
        assert!(w.observe(t0, [1], &fleet(&[], 3)).is_empty());
        assert!(w
            .observe(t0 + LOST_GRACE * 2, [1], &fleet(&[], 3))
            .is_empty());
        // Empty queue, unheld: lost once the grace has passed since it was first seen unheld.
        let t1 = t0 + LOST_GRACE * 3;
        let empty = fleet(&[("a", &[])], 0);
        assert!(w.observe(t1, [1], &empty).is_empty());
        assert!(w.observe(t1 + LOST_GRACE / 2, [1], &empty).is_empty());
        assert_eq!(
            w.observe(t1 + LOST_GRACE, [1], &empty),
            [republish(1, 1, Cause::Unheld)]
        );
    }

    #[test]
    fn a_job_whose_holder_is_gone_is_lost_at_once_whatever_is_queued() {
        let mut w = Watch::new();
        let t = Instant::now();
        assert!(w
            .observe(t, [1, 2], &fleet(&[("a", &[1]), ("b", &[2])], 40))
            .is_empty());
        // Worker a's heartbeat expired; b still plays match 2; 40 jobs still queued.
        let t = t + Duration::from_secs(1);
        assert!(w.observe(t, [1, 2], &fleet(&[("b", &[2])], 40)).is_empty());
        assert!(w
            .observe(t + HOLDER_GRACE / 2, [1, 2], &fleet(&[("b", &[2])], 40))
            .is_empty());
        assert_eq!(
            w.observe(t + HOLDER_GRACE, [1, 2], &fleet(&[("b", &[2])], 40)),
            [republish(1, 1, Cause::HolderGone("a".into()))]
        );
        // Published again and still queued: not lost a second time.
        assert!(w
            .observe(t + LOST_GRACE * 3, [1, 2], &fleet(&[("b", &[2])], 40))
            .is_empty());
        // Taken by b, whose heartbeat then expires: a second loss.
        assert!(w.observe(t, [1], &fleet(&[("b", &[1])], 40)).is_empty());
        assert!(w.observe(t, [1], &fleet(&[], 40)).is_empty());
        assert_eq!(
            w.observe(t + HOLDER_GRACE, [1], &fleet(&[], 40)),
            [republish(1, 2, Cause::HolderGone("b".into()))]
        );
    }

    #[test]
    fn heartbeats_renewed_within_the_grace_lose_nothing() {
        // A Redis flush drops every heartbeat at once; workers renew theirs within seconds.
        let mut w = Watch::new();
        let t = Instant::now();
        assert!(w
            .observe(t, [1, 2], &fleet(&[("a", &[1, 2])], 9))
            .is_empty());
        assert!(w
            .observe(t + HOLDER_GRACE / 2, [1, 2], &fleet(&[], 9))
            .is_empty());
        assert!(w
            .observe(
                t + HOLDER_GRACE * 3 / 4,
                [1, 2],
                &fleet(&[("a", &[1, 2])], 9)
            )
            .is_empty());
        assert!(w
            .observe(t + HOLDER_GRACE * 2, [1, 2], &fleet(&[("a", &[1, 2])], 9))
            .is_empty());
    }

    #[test]
    fn a_live_holder_that_dropped_the_job_has_its_result_on_the_way() {
        let mut w = Watch::new();
        let t = Instant::now();
        assert!(w.observe(t, [5], &fleet(&[("a", &[5])], 0)).is_empty());
        // a no longer lists it (its result was confirmed) and is still live: wait for the result.
        assert!(w
            .observe(t + LOST_GRACE * 10, [5], &fleet(&[("a", &[])], 0))
            .is_empty());
        // A holder seen again restarts the unheld clock of the grace rule too.
        w.answered(5);
        assert!(w.observe(t, [5], &fleet(&[], 0)).is_empty());
        assert!(w.observe(t, [5], &fleet(&[("a", &[5])], 0)).is_empty());
        assert!(w
            .observe(t + LOST_GRACE, [5], &fleet(&[("a", &[5])], 0))
            .is_empty());
    }

    #[test]
    fn repeated_losses_end_in_failure() {
        let mut w = Watch::new();
        let mut t = Instant::now();
        let none = fleet(&[], 0);
        let mut verdicts = Vec::new();
        for _ in 0..MAX_LOST {
            w.observe(t, [7], &none);
            t += LOST_GRACE;
            verdicts.extend(w.observe(t, [7], &none));
            t += Duration::from_millis(1);
        }
        assert_eq!(verdicts.len() as u32, MAX_LOST);
        assert!(matches!(
            verdicts.last(),
            Some(Verdict::Fail { number: 7, losses, .. }) if *losses == MAX_LOST
        ));
        assert!(verdicts[..verdicts.len() - 1]
            .iter()
            .all(|v| matches!(v, Verdict::Republish { .. })));
    }

    #[test]
    fn a_delivery_limit_dead_letter_is_one_more_loss() {
        let mut w = Watch::new();
        let t = Instant::now();
        let none = fleet(&[], 0);
        w.observe(t, [4], &none);
        assert_eq!(
            w.observe(t + LOST_GRACE, [4], &none),
            [republish(4, 1, Cause::Unheld)]
        );
        for losses in 2..MAX_LOST {
            assert_eq!(
                w.dead_lettered(4),
                republish(4, losses, Cause::DeliveryLimit)
            );
        }
        assert_eq!(
            w.dead_lettered(4),
            Verdict::Fail {
                number: 4,
                losses: MAX_LOST,
                cause: Cause::DeliveryLimit,
            }
        );
    }

    #[test]
    fn answered_jobs_are_forgotten_and_labels_parse_per_tournament() {
        let mut w = Watch::new();
        let t = Instant::now();
        let none = fleet(&[], 0);
        w.observe(t, [1, 2], &none);
        w.answered(1);
        let v = w.observe(t + LOST_GRACE, [2], &none);
        assert_eq!(v, [republish(2, 1, Cause::Unheld)]);
        let f = Fleet::of(
            "abc#d",
            [("w1", ["abc#d#4", "abc#5", "other#6", "abc#d#x"])],
            0,
        );
        assert_eq!(f.holders, [(4, "w1".to_string())].into());
        assert_eq!(f.live, ["w1".to_string()].into());
    }
}
