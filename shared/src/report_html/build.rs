//! The per-match parts of the report page, kept incrementally (O(players²) per result): the
//! head-to-head counts, faults by bot and kind, the latest matches, the numbers with a result
//! and the arrival time of every match (for the progress curve).

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use super::workers::WorkerTally;
use super::{
    FaultCount, HeadToHead, MatchLine, MatchSeat, Page, FAULT_LINKS, RECENT_MATCHES,
    TIMELINE_POINTS,
};
use crate::results::GameResult;

/// Accumulates what [`Page`] needs per match.
#[derive(Debug, Clone, Default)]
pub struct PageBuilder {
    names: Vec<String>,
    index: HashMap<String, usize>,
    ahead: Vec<Vec<u64>>,
    together: Vec<Vec<u64>>,
    /// (bot, kind) → (count, first matches).
    faults: BTreeMap<(String, String), (u64, Vec<u64>)>,
    recent: VecDeque<MatchLine>,
    numbers: BTreeSet<u64>,
    /// Match number → arrival (unix seconds); a later arrival of the same number wins.
    arrivals: BTreeMap<u64, f64>,
    workers: WorkerTally,
}

impl PageBuilder {
    /// Starts with the roster (the head-to-head's order; other names are added as met).
    pub fn new<S: AsRef<str>>(roster: &[S]) -> Self {
        let mut b = PageBuilder::default();
        for n in roster {
            b.slot(n.as_ref());
        }
        b
    }

    fn slot(&mut self, name: &str) -> usize {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        let i = self.names.len();
        self.names.push(name.to_string());
        self.index.insert(name.to_string(), i);
        for row in self.ahead.iter_mut().chain(self.together.iter_mut()) {
            row.push(0);
        }
        self.ahead.push(vec![0; i + 1]);
        self.together.push(vec![0; i + 1]);
        i
    }

    /// One scored match; `fault_kinds[seat]` names each fault of that seat (e.g. "timeout").
    pub fn add(&mut self, number: u64, game: &GameResult, fault_kinds: &[Vec<String>]) {
        let seats: Vec<usize> = game.names.iter().map(|n| self.slot(n)).collect();
        if game.valid_for_scoring {
            for (x, &a) in seats.iter().enumerate() {
                for (y, &b) in seats.iter().enumerate() {
                    if a == b || x == y {
                        continue;
                    }
                    self.together[a][b] += 1;
                    let (ra, rb) = (game.ranks.get(x), game.ranks.get(y));
                    if let (Some(ra), Some(rb)) = (ra, rb) {
                        self.ahead[a][b] += u64::from(ra < rb);
                    }
                }
            }
        }
        for (seat, kinds) in fault_kinds.iter().enumerate() {
            let Some(bot) = game.names.get(seat) else {
                continue;
            };
            for kind in kinds {
                let e = self.faults.entry((bot.clone(), kind.clone())).or_default();
                e.0 += 1;
                if e.1.len() < FAULT_LINKS && e.1.last() != Some(&number) {
                    e.1.push(number);
                }
            }
        }
        let line = MatchLine {
            number,
            size: game.size,
            valid: game.valid_for_scoring,
            seats: game
                .names
                .iter()
                .enumerate()
                .map(|(i, name)| MatchSeat {
                    name: name.clone(),
                    rank: game.ranks.get(i).copied().unwrap_or(0),
                    points: game.points.get(i).copied().unwrap_or(f64::NAN),
                    faults: fault_kinds.get(i).map_or(0, |k| k.len() as u64),
                })
                .collect(),
        };
        let faults = fault_kinds.iter().map(|k| k.len() as u64).sum();
        self.workers.faults(number, faults);
        self.recent.push_front(line);
        self.recent.truncate(RECENT_MATCHES);
        self.numbers.insert(number);
    }

    /// A worker's report of match `number` by `worker` (its speed signature, the seconds it
    /// spent; `ok` when it gave the result): one line of the workers table.
    pub fn played(
        &mut self,
        number: u64,
        worker: &str,
        speed: Option<f64>,
        seconds: f64,
        ok: bool,
    ) {
        self.workers.played(number, worker, speed, seconds, ok);
    }

    /// Match `number` (a result or a failure) arrived at `unix_seconds`.
    pub fn arrived(&mut self, number: u64, unix_seconds: f64) {
        self.arrivals.insert(number, unix_seconds);
    }

    /// Whether the arrival of `number` is known.
    pub fn has_arrival(&self, number: u64) -> bool {
        self.arrivals.contains_key(&number)
    }

    /// Matches done against time, oldest first, at most [`TIMELINE_POINTS`] points (evenly
    /// spaced in arrivals, the last one always kept).
    pub fn timeline(&self) -> Vec<(f64, u64)> {
        let mut times: Vec<f64> = self.arrivals.values().copied().collect();
        times.sort_by(f64::total_cmp);
        let n = times.len();
        if n == 0 {
            return Vec::new();
        }
        let step = n.div_ceil(TIMELINE_POINTS).max(1);
        let mut out: Vec<(f64, u64)> = (0..n)
            .step_by(step)
            .map(|i| (times[i], i as u64 + 1))
            .collect();
        if out.last().map(|p| p.1) != Some(n as u64) {
            out.push((times[n - 1], n as u64));
        }
        out
    }

    /// Fills the per-match parts of `page`.
    pub fn fill(&self, page: &mut Page) {
        page.head_to_head = HeadToHead {
            names: self.names.clone(),
            ahead: self.ahead.clone(),
            together: self.together.clone(),
        };
        page.faults = self
            .faults
            .iter()
            .map(|((bot, kind), (count, matches))| FaultCount {
                bot: bot.clone(),
                kind: kind.clone(),
                count: *count,
                matches: matches.clone(),
            })
            .collect();
        page.recent = self.recent.iter().cloned().collect();
        page.numbers = self.numbers.iter().copied().collect();
        page.timeline = self.timeline();
        page.workers = self.workers.lines();
    }
}
