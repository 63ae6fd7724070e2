//! Telling a bad machine from a bad bot, as a pure function of the reports a coordinator takes
//! in. A bot's faults follow the bot across workers; a machine's follow the machine across
//! bots. So each worker is held to what the *other* workers saw of the same bots: for every seat
//! it played, the bot's fault rate on the rest of the fleet predicts how likely a fault was
//! there; a worker whose faults far exceed that prediction, or whose reports come back without
//! a result far more often than the rest of the fleet's, is quarantined.
//!
//! The test, stated: the observed count `O` is a sum of independent Bernoulli trials whose mean
//! `E` and variance `V` come from the prediction. Two bounds hold for its upper tail: a Poisson
//! tail of the same mean (for `O >= E + 1`) and Bernstein's inequality,
//! `exp(-t² / (2V + 2t/3))` with `t = O - E` (which gains from seats whose bot faults almost
//! always or almost never); `p` is the smaller of the two, so it is conservative. A worker is
//! quarantined when
//! `p < alpha / (2 W k (k + 1))`, `W` the workers seen so far, `k` the worker's reports so far,
//! 2 the two tests: summed over every look at every worker this bounds the chance that any
//! good worker is ever quarantined by `alpha` (a union bound; `sum 1/(k(k+1)) = 1`). A bot
//! counts in a worker's test only once it has [`MIN_ELSEWHERE`] seats on other workers (a
//! bot that crashes everywhere predicts its own crashes), rates are smoothed (+½ fault, +1
//! seat) so that a clean record elsewhere never predicts zero, at least [`MIN_EXCESS`] faults
//! are needed, and never more than half the workers seen (nor the last one) are quarantined:
//! a fleet that mostly disagrees with itself is a bad tournament, not bad machines.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use serde::{Deserialize, Serialize};

/// The default family-wise bound on ever quarantining a good worker.
pub const ALPHA: f64 = 1e-3;
/// Seats a bot needs on other workers before it predicts anything about this one.
pub const MIN_ELSEWHERE: u64 = 5;
/// Fewer faults than this never quarantine a worker, whatever the prediction.
pub const MIN_EXCESS: u64 = 3;

/// Which record of a worker stood out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Test {
    /// Seats in which the bot faulted (timeout, crash, start or compile failure, ...).
    BotFaults,
    /// Reports that came back without a usable result (the worker's own failures).
    NoResult,
}

/// Why a worker was quarantined: the figures of the test that put it there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    pub worker: String,
    pub test: Test,
    /// Faulted seats (or failed reports) on this worker.
    pub observed: u64,
    /// Seats (or reports) that count in the test.
    pub trials: u64,
    /// What the rest of the fleet predicts for them.
    pub expected: f64,
    pub p_value: f64,
    /// The bound it fell under.
    pub threshold: f64,
    /// The worker's reports taken in when it was quarantined.
    pub reports: u64,
}

impl fmt::Display for Evidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.test {
            Test::BotFaults => "seats with a bot fault",
            Test::NoResult => "reports without a result",
        };
        write!(
            f,
            "{} of {} {what} where the rest of the fleet predicts {:.2} (p = {:.1e} < {:.1e}), after {} reports",
            self.observed, self.trials, self.expected, self.p_value, self.threshold, self.reports
        )
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
struct Counts {
    trials: u64,
    hits: u64,
}

impl Counts {
    fn add(&mut self, hit: bool) {
        self.trials += 1;
        self.hits += u64::from(hit);
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct WorkerCounts {
    by_bot: BTreeMap<String, Counts>,
    reports: Counts,
}

/// The counts a [`Quarantine`] judges by (per worker and bot, per bot, in all), saved beside its
/// record so that a resumed run goes on from them instead of from nothing. A quarantined
/// worker's counts are gone from them (forgotten when it was quarantined), so a worker released
/// before a resume starts from a clean record.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Counted {
    workers: BTreeMap<String, WorkerCounts>,
    bots: BTreeMap<String, Counts>,
    reports: Counts,
}

/// Per-worker and per-bot fault counts and the workers quarantined so far. Each report costs
/// O(bots the reporting worker has seated).
#[derive(Debug, Clone)]
pub struct Quarantine {
    alpha: f64,
    workers: BTreeMap<String, WorkerCounts>,
    bots: HashMap<String, Counts>,
    reports: Counts,
    quarantined: BTreeMap<String, Evidence>,
}

impl Default for Quarantine {
    fn default() -> Self {
        Quarantine::new(ALPHA)
    }
}

impl Quarantine {
    /// A tracker that bounds the chance of ever quarantining a good worker by `alpha`.
    pub fn new(alpha: f64) -> Quarantine {
        Quarantine {
            alpha,
            workers: BTreeMap::new(),
            bots: HashMap::new(),
            reports: Counts::default(),
            quarantined: BTreeMap::new(),
        }
    }

    /// `worker` reported a result; `seats` are the bots seated and whether each faulted.
    /// Returns the evidence when this report gets the worker quarantined.
    pub fn result(&mut self, worker: &str, seats: &[(&str, bool)]) -> Option<Evidence> {
        if self.is_quarantined(worker) {
            return None;
        }
        let w = self.workers.entry(worker.to_string()).or_default();
        w.reports.add(false);
        for &(bot, faulted) in seats {
            w.by_bot.entry(bot.to_string()).or_default().add(faulted);
            self.bots.entry(bot.to_string()).or_default().add(faulted);
        }
        self.reports.add(false);
        self.judge(worker)
    }

    /// `worker` reported no usable result (its own failure, or a record refused).
    pub fn no_result(&mut self, worker: &str) -> Option<Evidence> {
        if self.is_quarantined(worker) {
            return None;
        }
        self.workers
            .entry(worker.to_string())
            .or_default()
            .reports
            .add(true);
        self.reports.add(true);
        self.judge(worker)
    }

    pub fn is_quarantined(&self, worker: &str) -> bool {
        self.quarantined.contains_key(worker)
    }

    /// The quarantined workers with their evidence, by name.
    pub fn quarantined(&self) -> impl Iterator<Item = &Evidence> {
        self.quarantined.values()
    }

    /// Put a worker back (an operator released it): its counts start again from nothing.
    /// False when it was not quarantined.
    pub fn release(&mut self, worker: &str) -> bool {
        self.forget_counts(worker);
        self.quarantined.remove(worker).is_some()
    }

    /// The counts so far, to save.
    pub fn counted(&self) -> Counted {
        Counted {
            workers: self.workers.clone(),
            bots: self.bots.iter().map(|(k, v)| (k.clone(), *v)).collect(),
            reports: self.reports,
        }
    }

    /// Go on from counts saved earlier (a resumed run; before [`restore`](Self::restore)ing
    /// its quarantines).
    pub fn resume(&mut self, counted: Counted) {
        self.workers = counted.workers;
        self.bots = counted.bots.into_iter().collect();
        self.reports = counted.reports;
    }

    /// Restore a quarantine recorded earlier (a resumed run).
    pub fn restore(&mut self, evidence: Evidence) {
        self.forget_counts(&evidence.worker);
        self.quarantined.insert(evidence.worker.clone(), evidence);
    }

    fn forget_counts(&mut self, worker: &str) {
        let Some(w) = self.workers.remove(worker) else {
            return;
        };
        for (bot, c) in w.by_bot {
            if let Some(total) = self.bots.get_mut(&bot) {
                total.trials -= c.trials.min(total.trials);
                total.hits -= c.hits.min(total.hits);
            }
        }
        self.reports.trials -= w.reports.trials.min(self.reports.trials);
        self.reports.hits -= w.reports.hits.min(self.reports.hits);
        self.workers
            .insert(worker.to_string(), WorkerCounts::default());
    }

    fn judge(&mut self, worker: &str) -> Option<Evidence> {
        let seen = self.workers.len() as u64;
        let room = self.quarantined.len() as u64 + 1;
        if seen < 2 || room > seen / 2 || room >= seen {
            return None;
        }
        let w = self.workers.get(worker)?;
        let k = w.reports.trials as f64;
        let threshold = self.alpha / (2.0 * seen as f64 * k * (k + 1.0));
        let evidence = [self.bot_faults(w), self.no_results(w)]
            .into_iter()
            .flatten()
            .filter(|t| t.observed >= MIN_EXCESS)
            .map(|t| Evidence {
                worker: worker.to_string(),
                test: t.test,
                observed: t.observed,
                trials: t.trials,
                expected: t.expected,
                p_value: tail_bound(t.expected, t.variance, t.observed),
                threshold,
                reports: w.reports.trials,
            })
            .filter(|e| e.observed as f64 >= e.expected + 1.0 && e.p_value < threshold)
            .min_by(|a, b| a.p_value.total_cmp(&b.p_value))?;
        // Its record is suspect: the rest of the fleet is judged without it from now on.
        self.forget_counts(worker);
        self.quarantined
            .insert(worker.to_string(), evidence.clone());
        Some(evidence)
    }

    /// The worker's seats against the other workers' rates for the same bots.
    fn bot_faults(&self, w: &WorkerCounts) -> Option<Tally> {
        let (mut observed, mut trials, mut expected, mut variance) = (0u64, 0u64, 0.0, 0.0);
        for (bot, mine) in &w.by_bot {
            let total = self.bots.get(bot).copied().unwrap_or_default();
            let elsewhere = Counts {
                trials: total.trials.saturating_sub(mine.trials),
                hits: total.hits.saturating_sub(mine.hits),
            };
            if elsewhere.trials < MIN_ELSEWHERE {
                continue;
            }
            let p = smoothed(elsewhere);
            observed += mine.hits;
            trials += mine.trials;
            expected += mine.trials as f64 * p;
            variance += mine.trials as f64 * p * (1.0 - p);
        }
        (trials > 0).then_some(Tally {
            test: Test::BotFaults,
            observed,
            trials,
            expected,
            variance,
        })
    }

    /// The worker's reports without a result against the rest of the fleet's rate.
    fn no_results(&self, w: &WorkerCounts) -> Option<Tally> {
        let elsewhere = Counts {
            trials: self.reports.trials.saturating_sub(w.reports.trials),
            hits: self.reports.hits.saturating_sub(w.reports.hits),
        };
        (elsewhere.trials >= MIN_ELSEWHERE).then(|| {
            let p = smoothed(elsewhere);
            let n = w.reports.trials as f64;
            Tally {
                test: Test::NoResult,
                observed: w.reports.hits,
                trials: w.reports.trials,
                expected: n * p,
                variance: n * p * (1.0 - p),
            }
        })
    }
}

/// One test's figures for one worker.
struct Tally {
    test: Test,
    observed: u64,
    trials: u64,
    expected: f64,
    variance: f64,
}

/// An upper bound on P(S >= observed) for a sum S of independent Bernoulli trials of mean
/// `expected` and variance `variance`: the smaller of the Poisson and Bernstein bounds.
pub fn tail_bound(expected: f64, variance: f64, observed: u64) -> f64 {
    let poisson = poisson_upper_tail(expected, observed);
    let t = observed as f64 - expected;
    if t <= 0.0 {
        return poisson;
    }
    let bernstein = (-t * t / (2.0 * variance + 2.0 * t / 3.0)).exp();
    poisson.min(bernstein)
}

/// A rate that a clean record never makes zero: (hits + ½) / (trials + 1).
fn smoothed(c: Counts) -> f64 {
    (c.hits as f64 + 0.5) / (c.trials as f64 + 1.0)
}

/// P(X >= k) for X ~ Poisson(mean), summed upward from k in log space (no cancellation for
/// the tiny tails the test needs).
pub fn poisson_upper_tail(mean: f64, k: u64) -> f64 {
    if k == 0 {
        return 1.0;
    }
    if mean <= 0.0 {
        return 0.0;
    }
    let ln_mean = mean.ln();
    // ln(k!) by summation: k is a count of seats, bounded by the tournament.
    let ln_fact: f64 = (2..=k).map(|i| (i as f64).ln()).sum();
    let mut ln_term = -mean + k as f64 * ln_mean - ln_fact;
    let mut sum = 0.0;
    let mut i = k;
    loop {
        let term = ln_term.exp();
        sum += term;
        i += 1;
        ln_term += ln_mean - (i as f64).ln();
        if (i as f64) > mean && term < sum * 1e-17 {
            break;
        }
        if i > k + 100_000 {
            break;
        }
    }
    sum.min(1.0)
}

#[cfg(test)]
mod tests;
