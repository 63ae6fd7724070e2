//! Which tournament a worker's free slot serves next, so that its time splits between the
//! tournaments it serves as their terms ask (`broker::Terms`): a higher priority first, and
//! within a priority the tournament that has used the least slot time per unit of share.
//!
//! Pure bookkeeping over plain data, no clock: the session says how long each match held its
//! slot. A match is charged an estimate (the tournament's recent mean) when taken and corrected
//! when it ends, so the slots of a many-slot worker taken in one burst spread as well. A
//! tournament gets no credit for time in which it had nothing to give: one found empty ahead of
//! the one that gave a job is brought up to that one's usage per share (as a fair scheduler's
//! virtual time), and a newly served tournament starts level with the least used one. Each
//! worker keeps the split on its own, so a fleet of them keeps it too.

use std::collections::HashMap;

use broker::Terms;

/// A first match's estimate, before any of the tournament's matches ended here (seconds).
const FIRST_ESTIMATE: f64 = 1.0;
/// Weight of the newest match in the running mean of a tournament's match time.
const MEAN_WEIGHT: f64 = 0.2;

#[derive(Debug, Clone, Copy)]
struct Account {
    /// Slot-seconds charged so far (estimates of matches still playing included).
    used: f64,
    /// Running mean of this tournament's match time here (seconds).
    mean: f64,
}

/// One worker's accounts, by tournament.
#[derive(Debug, Default)]
pub struct Shares {
    accounts: HashMap<String, Account>,
}

impl Shares {
    /// The order in which to look for a job in `served` (tournament, terms): higher priority
    /// first, then least used per share, then by id. Opens an account for a tournament seen
    /// for the first time (level with the least used of its priority) and forgets those no
    /// longer served.
    pub fn order(&mut self, served: &[(String, Terms)]) -> Vec<usize> {
        self.accounts
            .retain(|t, _| served.iter().any(|(s, _)| s == t));
        for (t, terms) in served {
            if self.accounts.contains_key(t) {
                continue;
            }
            let level = served
                .iter()
                .filter(|(_, o)| o.priority == terms.priority)
                .filter_map(|(o, ot)| Some(self.accounts.get(o)?.used / ot.share))
                .reduce(f64::min)
                .unwrap_or(0.0);
            let account = Account {
                used: level * terms.share,
                mean: FIRST_ESTIMATE,
            };
            self.accounts.insert(t.clone(), account);
        }
        let mut order: Vec<usize> = (0..served.len()).collect();
        order.sort_by(|&a, &b| {
            let (ta, tb) = (&served[a], &served[b]);
            tb.1.priority
                .cmp(&ta.1.priority)
                .then(self.per_share(ta).total_cmp(&self.per_share(tb)))
                .then(ta.0.cmp(&tb.0))
        });
        order
    }

    fn per_share(&self, (t, terms): &(String, Terms)) -> f64 {
        self.accounts.get(t).map_or(0.0, |a| a.used) / terms.share
    }

    /// A job was taken from `served[got]` after the tournaments `skipped` (indices into
    /// `served`) were found empty: the skipped ones of the same priority lose the credit they
    /// would have banked, and `got` is charged its estimate, which is returned (give it back to
    /// [`Shares::ended`]).
    pub fn took(&mut self, served: &[(String, Terms)], skipped: &[usize], got: usize) -> f64 {
        let Some(taken) = served.get(got) else {
            return 0.0;
        };
        let level = self.per_share(taken);
        for s in skipped.iter().filter_map(|&i| served.get(i)) {
            if s.1.priority != taken.1.priority {
                continue;
            }
            if let Some(a) = self.accounts.get_mut(&s.0) {
                a.used = a.used.max(level * s.1.share);
            }
        }
        let Some(a) = self.accounts.get_mut(&taken.0) else {
            return 0.0;
        };
        a.used += a.mean;
        a.mean
    }

    /// A match of `tournament` that was charged `charged` held its slot for `seconds`.
    pub fn ended(&mut self, tournament: &str, charged: f64, seconds: f64) {
        let seconds = if seconds.is_finite() {
            seconds.max(0.0)
        } else {
            0.0
        };
        if let Some(a) = self.accounts.get_mut(tournament) {
            a.used += seconds - charged;
            a.mean += MEAN_WEIGHT * (seconds - a.mean);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(share: f64, priority: i32) -> Terms {
        Terms {
            share,
            priority,
            min_speed: None,
        }
    }

    /// Play `steps` matches on one slot; `ready(t, step)` says whether tournament `t` has a
    /// job, `len(t)` how long its matches take. Returns the slot-seconds each got.
    fn simulate(
        served: &[(String, Terms)],
        steps: usize,
        ready: impl Fn(usize, usize) -> bool,
        len: impl Fn(usize) -> f64,
    ) -> Vec<f64> {
        let mut s = Shares::default();
        let mut time = vec![0.0; served.len()];
        for step in 0..steps {
            let order = s.order(served);
            let Some(pos) = order.iter().position(|&t| ready(t, step)) else {
                continue;
            };
            let got = order[pos];
            let charged = s.took(served, &order[..pos], got);
            s.ended(&served[got].0, charged, len(got));
            time[got] += len(got);
        }
        time
    }

    fn served(v: &[(&str, f64, i32)]) -> Vec<(String, Terms)> {
        v.iter()
            .map(|&(t, s, p)| (t.to_string(), terms(s, p)))
            .collect()
    }

    #[test]
    fn time_splits_as_the_shares_even_when_match_lengths_differ() {
        // Tournament a's matches take 0.3 s, b's 1.7 s; shares 3:1.
        let sv = served(&[("a", 3.0, 0), ("b", 1.0, 0)]);
        let time = simulate(&sv, 2000, |_, _| true, |t| [0.3, 1.7][t]);
        let ratio = time[0] / time[1];
        assert!((ratio - 3.0).abs() < 0.05, "{time:?}");
        // Equal shares: equal time.
        let sv = served(&[("a", 1.0, 0), ("b", 1.0, 0)]);
        let time = simulate(&sv, 2000, |_, _| true, |t| [0.3, 1.7][t]);
        assert!((time[0] / time[1] - 1.0).abs() < 0.05, "{time:?}");
    }

    #[test]
    fn a_higher_priority_is_served_first_whatever_the_shares() {
        let sv = served(&[("long", 100.0, 0), ("ladder", 1.0, 10)]);
        // The ladder has a challenge ready every 4th step only.
        let time = simulate(&sv, 400, |t, step| t == 0 || step % 4 == 0, |_| 1.0);
        assert_eq!(time, vec![300.0, 100.0]);
    }

    #[test]
    fn a_tournament_with_nothing_to_give_banks_no_credit() {
        // b is empty for the first 500 steps, then both always have jobs: from then on the
        // split is 1:1 at once, not b alone until it caught up.
        let sv = served(&[("a", 1.0, 0), ("b", 1.0, 0)]);
        let mut s = Shares::default();
        let mut after = [0.0f64, 0.0];
        for step in 0..700 {
            let order = s.order(&sv);
            let ready = |t: usize| t == 0 || step >= 500;
            let pos = order.iter().position(|&t| ready(t)).unwrap();
            let got = order[pos];
            let charged = s.took(&sv, &order[..pos], got);
            s.ended(&sv[got].0, charged, 1.0);
            if step >= 500 {
                after[got] += 1.0;
            }
        }
        assert!((after[0] - after[1]).abs() <= 2.0, "{after:?}");
    }

    #[test]
    fn a_late_tournament_starts_level_and_gone_ones_are_forgotten() {
        let mut s = Shares::default();
        let one = served(&[("a", 1.0, 0)]);
        s.order(&one);
        for _ in 0..50 {
            let c = s.took(&one, &[], 0);
            s.ended("a", c, 2.0);
        }
        let two = served(&[("a", 1.0, 0), ("b", 1.0, 0)]);
        s.order(&two);
        assert_eq!(s.per_share(&two[1]), s.per_share(&two[0]));
        s.order(&served(&[("b", 1.0, 0)]));
        assert!(!s.accounts.contains_key("a"));
    }

    #[test]
    fn a_burst_of_takes_on_many_slots_spreads_by_the_estimates() {
        // Eight slots free at once, shares 3:1, matches of one second known by now.
        let sv = served(&[("a", 3.0, 0), ("b", 1.0, 0)]);
        let mut s = Shares::default();
        s.order(&sv);
        for t in [0, 0, 0, 0, 0, 0, 1, 1] {
            let c = s.took(&sv, &[], t);
            s.ended(&sv[t].0, c, 1.0);
        }
        let mut got = [0, 0];
        for _ in 0..8 {
            let order = s.order(&sv);
            s.took(&sv, &[], order[0]);
            got[order[0]] += 1;
        }
        assert_eq!(got, [6, 2]);
    }
}
