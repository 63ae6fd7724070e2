//! Watching jobs that workers took off the queue. A cluster worker acknowledges a job as soon as
//! it starts it (so no broker consumer timeout can cut a long match short) and lists it in its
//! heartbeat until its result is confirmed by the broker. A job the coordinator still waits for,
//! that no live worker lists while the jobs queue holds nothing ready, was lost with its worker
//! (killed, its host gone, its result dropped by a dying broker): it is published again, and
//! after [`MAX_LOST`] losses reported failed (infrastructure), never scored. A job the broker
//! dead-lettered at its delivery limit counts as one loss too. Pure bookkeeping
//! over what the transport observes, so it is tested without a broker.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

/// How long a job must stay unheld (queue empty, no live worker lists it) before it counts as
/// lost: covers a worker between taking a job and its next heartbeat, and a result on its way.
pub const LOST_GRACE: Duration = Duration::from_secs(8);
/// After this many losses of one job it is reported failed instead of published again.
pub const MAX_LOST: u32 = 5;

/// What to do about one job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Publish it again (the n-th loss).
    Republish { number: u64, losses: u32 },
    /// Give up: report it failed.
    Fail { number: u64, losses: u32 },
}

/// Per-job loss tracking.
#[derive(Debug, Default)]
pub struct Watch {
    unheld_since: HashMap<u64, Instant>,
    losses: HashMap<u64, u32>,
}

impl Watch {
    pub fn new() -> Self {
        Self::default()
    }

    /// One observation: `waiting` are the jobs without a result yet, `held` the ones live workers
    /// list, `queued` the number of ready messages in the jobs queue. Returns what to do.
    pub fn observe(
        &mut self,
        now: Instant,
        waiting: impl IntoIterator<Item = u64>,
        held: &HashSet<u64>,
        queued: u32,
    ) -> Vec<Verdict> {
        let waiting: Vec<u64> = waiting.into_iter().collect();
        let live: HashSet<u64> = waiting.iter().copied().collect();
        self.unheld_since.retain(|n, _| live.contains(n));
        let mut out = Vec::new();
        for n in waiting {
            if held.contains(&n) || queued > 0 {
                // Held, or possibly still in the queue: not lost.
                self.unheld_since.remove(&n);
                continue;
            }
            let since = *self.unheld_since.entry(n).or_insert(now);
            if now.duration_since(since) < LOST_GRACE {
                continue;
            }
            out.push(self.lose(n));
        }
        out.sort_by_key(|v| match v {
            Verdict::Republish { number, .. } | Verdict::Fail { number, .. } => *number,
        });
        out
    }

    /// The broker dead-lettered the job at its delivery limit: one more loss, like a job lost
    /// with its worker.
    pub fn dead_lettered(&mut self, number: u64) -> Verdict {
        self.lose(number)
    }

    fn lose(&mut self, number: u64) -> Verdict {
        self.unheld_since.remove(&number);
        let l = self.losses.entry(number).or_insert(0);
        *l += 1;
        let losses = *l;
        if losses >= MAX_LOST {
            Verdict::Fail { number, losses }
        } else {
            Verdict::Republish { number, losses }
        }
    }

    /// The job got its answer: forget it.
    pub fn answered(&mut self, number: u64) {
        self.unheld_since.remove(&number);
    }
}

/// Match numbers of `tournament` in heartbeat labels (`<tournament>#<number>`).
pub fn held_numbers<'a>(
    tournament: &str,
    labels: impl IntoIterator<Item = &'a str>,
) -> HashSet<u64> {
    labels
        .into_iter()
        .filter_map(|l| {
            let (t, n) = l.rsplit_once('#')?;
            (t == tournament).then(|| n.parse().ok())?
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_is_lost_only_after_the_grace_with_the_queue_empty_and_no_holder() {
        let mut w = Watch::new();
        let t0 = Instant::now();
        let none = HashSet::new();
        // Queue not empty: never lost.
        assert!(w.observe(t0, [1], &none, 3).is_empty());
        assert!(w.observe(t0 + LOST_GRACE * 2, [1], &none, 3).is_empty());
        // Empty queue, unheld: lost once the grace has passed since it was first seen unheld.
        let t1 = t0 + LOST_GRACE * 3;
        assert!(w.observe(t1, [1], &none, 0).is_empty());
        assert!(w.observe(t1 + LOST_GRACE / 2, [1], &none, 0).is_empty());
        assert_eq!(
            w.observe(t1 + LOST_GRACE, [1], &none, 0),
            [Verdict::Republish {
                number: 1,
                losses: 1
            }]
        );
        // Held by a worker: the clock restarts.
        let held: HashSet<u64> = [1].into();
        let t2 = t1 + LOST_GRACE * 2;
        assert!(w.observe(t2, [1], &held, 0).is_empty());
        assert!(w.observe(t2 + LOST_GRACE / 2, [1], &none, 0).is_empty());
        assert!(w.observe(t2 + LOST_GRACE, [1], &none, 0).is_empty());
    }

    #[test]
    fn repeated_losses_end_in_failure() {
        let mut w = Watch::new();
        let mut t = Instant::now();
        let none = HashSet::new();
        let mut verdicts = Vec::new();
        for _ in 0..MAX_LOST {
            w.observe(t, [7], &none, 0);
            t += LOST_GRACE;
            verdicts.extend(w.observe(t, [7], &none, 0));
            t += Duration::from_millis(1);
        }
        assert_eq!(verdicts.len() as u32, MAX_LOST);
        assert!(matches!(
            verdicts.last(),
            Some(Verdict::Fail { number: 7, losses }) if *losses == MAX_LOST
        ));
        assert!(verdicts[..verdicts.len() - 1]
            .iter()
            .all(|v| matches!(v, Verdict::Republish { .. })));
    }

    #[test]
    fn a_delivery_limit_dead_letter_is_one_more_loss() {
        let mut w = Watch::new();
        let t = Instant::now();
        let none = HashSet::new();
        w.observe(t, [4], &none, 0);
        assert!(matches!(
            w.observe(t + LOST_GRACE, [4], &none, 0)[..],
            [Verdict::Republish { losses: 1, .. }]
        ));
        for losses in 2..MAX_LOST {
            assert_eq!(w.dead_lettered(4), Verdict::Republish { number: 4, losses });
        }
        assert_eq!(
            w.dead_lettered(4),
            Verdict::Fail {
                number: 4,
                losses: MAX_LOST
            }
        );
    }

    #[test]
    fn answered_jobs_are_forgotten_and_labels_parse_per_tournament() {
        let mut w = Watch::new();
        let t = Instant::now();
        let none = HashSet::new();
        w.observe(t, [1, 2], &none, 0);
        w.answered(1);
        let v = w.observe(t + LOST_GRACE, [2], &none, 0);
        assert_eq!(
            v,
            [Verdict::Republish {
                number: 2,
                losses: 1
            }]
        );
        let held = held_numbers("abc#d", ["abc#d#4", "abc#5", "other#6", "abc#d#x"]);
        assert_eq!(held, [4].into());
    }
}
