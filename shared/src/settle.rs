//! When a tournament or a two-bot test may stop early: the pure decisions behind
//! `farm run --until-settled` and `farm sprt`.
//!
//! A tournament is played in *units*: a maximal run of consecutive schedule entries with the
//! same size, map seed and set of seats (one map with all its seat rotations, as
//! [`crate::schedule::make_schedule`] lays them out). After each whole unit, [`settled`] asks
//! whether every adjacent pair of the current Bradley–Terry ranking is separated: refitted on
//! map-unit resamples ([`crate::bootstrap::resample_ratings`]), the higher bot of each pair must
//! stay strictly above the lower one in at least `confidence` of the resamples asked for (a
//! resample that cannot be fitted counts against). The ranking judged is the one bt.json
//! reports (every size of the tournament, weighted as bt.py weighs them), so nothing is settled
//! before each size has a counted game. The decision waits for [`MIN_UNITS`] units, so that the
//! bootstrap is never asked to speak for two or three maps.
//!
//! A two-bot test is played in pairs (one map, both seat orders); [`SprtRun`] adds each pair's
//! two game scores ([`game_score`]) to a pentanomial and stops at an SPRT bound or at the pair
//! cap. The simulations in `shared/tests/settle.rs` and `shared/tests/sprt_stats.rs` run these
//! very functions.

use crate::bootstrap::{resample_ratings, BootstrapError};
use crate::results::GameResult;
use crate::schedule::ScheduleEntry;
use crate::sprt::{GameScore, Pentanomial, Sprt, SprtStatus, Verdict};

/// Resamples per decision of [`settled`] when the caller has no reason to choose another.
pub const RESAMPLES: usize = 200;
/// Fewest units with counted games before [`settled`] may say "settled".
pub const MIN_UNITS: usize = 10;

/// Unit number of every schedule entry (0, 0, 1, 1, 1, ...): consecutive entries with the same
/// size, seed and set of slots share a unit.
pub fn unit_ids(schedule: &[ScheduleEntry]) -> Vec<u32> {
    let key = |e: &ScheduleEntry| {
        let mut s = e.slots.clone();
        s.sort_unstable();
        (e.size, e.seed, s)
    };
    let mut ids = Vec::with_capacity(schedule.len());
    let mut id = 0u32;
    for (i, e) in schedule.iter().enumerate() {
        if i > 0 && key(&schedule[i - 1]) != key(e) {
            id += 1;
        }
        ids.push(id);
    }
    ids
}

/// True for the entries that end a unit (the last of their run).
pub fn unit_ends(schedule: &[ScheduleEntry]) -> Vec<bool> {
    let ids = unit_ids(schedule);
    (0..ids.len())
        .map(|i| i + 1 == ids.len() || ids[i + 1] != ids[i])
        .collect()
}

/// The schedule's whole units regrouped into *rounds*, the play order that lets a tournament
/// settle early (`farm run --order rounds`). Round `k` holds, for each size in the order the
/// schedule first names it, every unit on that size's `k`-th map seed (maps counted in order of
/// first appearance), in their schedule order. With [`crate::schedule::make_schedule`]'s
/// layout (size by size, then seat group by seat group, then map by map) round `k` is a whole
/// round-robin of every seat group of every size on fresh maps, so the ranking that bt.json
/// judges can be fitted after the first round instead of after the whole first size. A
/// permutation of whole units: the matches and each map's seat rotations are those of the
/// schedule given.
pub fn in_rounds(schedule: &[ScheduleEntry]) -> Vec<ScheduleEntry> {
    let ids = unit_ids(schedule);
    let mut sizes: Vec<usize> = Vec::new();
    let mut seeds: Vec<Vec<u64>> = Vec::new();
    // (round, size rank, first entry, end) of every unit, in schedule order.
    let mut units: Vec<(usize, usize, usize, usize)> = Vec::new();
    let mut start = 0;
    for i in 0..schedule.len() {
        if i + 1 < schedule.len() && ids[i + 1] == ids[i] {
            continue;
        }
        let e = &schedule[start];
        let rank = match sizes.iter().position(|&s| s == e.size) {
            Some(r) => r,
            None => {
                sizes.push(e.size);
                seeds.push(Vec::new());
                sizes.len() - 1
            }
        };
        let round = match seeds[rank].iter().position(|&s| s == e.seed) {
            Some(k) => k,
            None => {
                seeds[rank].push(e.seed);
                seeds[rank].len() - 1
            }
        };
        units.push((round, rank, start, i + 1));
        start = i + 1;
    }
    units.sort_by_key(|&(round, rank, _, _)| (round, rank)); // stable: schedule order within
    units
        .iter()
        .flat_map(|&(_, _, from, to)| schedule[from..to].iter().cloned())
        .collect()
}

/// How firmly one adjacent pair of the ranking is ordered.
#[derive(Debug, Clone, PartialEq)]
pub struct Separation {
    pub higher: String,
    pub lower: String,
    /// Share of the resamples asked for in which `higher` rates strictly above `lower`.
    pub share: f64,
}

/// The settled-ranking decision for some results.
#[derive(Debug, Clone, PartialEq)]
pub struct Settled {
    /// The full-data BT ranking, best first (ties keep roster order).
    pub ranking: Vec<(String, f64)>,
    /// One per adjacent pair of `ranking`.
    pub separations: Vec<Separation>,
    /// Units with counted games.
    pub units: usize,
    /// Every separation reaches the confidence and there are at least [`MIN_UNITS`] units.
    pub settled: bool,
}

impl Settled {
    /// The least separated pair, if any.
    pub fn weakest(&self) -> Option<&Separation> {
        self.separations
            .iter()
            .min_by(|a, b| a.share.total_cmp(&b.share))
    }
}

/// Whether the ranking of `games` (unit `units[i]` for `games[i]`) is settled at `confidence`.
/// `sizes` are the tournament's sizes. `Err` when the ratings cannot be fitted yet (a size
/// without a counted game, a bot not linked to the anchor): not settled.
#[allow(clippy::too_many_arguments)]
pub fn settled<S: AsRef<str>>(
    games: &[GameResult],
    units: &[u32],
    roster: &[S],
    sizes: &[usize],
    anchor: &str,
    confidence: f64,
    resamples: usize,
    seed: u64,
) -> Result<Settled, BootstrapError> {
    let r = resample_ratings(games, units, roster, sizes, anchor, resamples, seed)?;
    let ranking: Vec<(String, f64)> = r
        .fit
        .ranked()
        .into_iter()
        .map(|(n, v)| (n.to_string(), v))
        .collect();
    let index = |name: &str| r.names.iter().position(|n| n == name);
    let mut separations = Vec::with_capacity(ranking.len().saturating_sub(1));
    for w in ranking.windows(2) {
        let (hi, lo) = (index(&w[0].0), index(&w[1].0));
        let above = match (hi, lo) {
            (Some(h), Some(l)) => r.draws[h]
                .iter()
                .zip(&r.draws[l])
                .filter(|(a, b)| a > b)
                .count(),
            _ => 0,
        };
        separations.push(Separation {
            higher: w[0].0.clone(),
            lower: w[1].0.clone(),
            share: above as f64 / resamples as f64,
        });
    }
    let settled = r.units >= MIN_UNITS && separations.iter().all(|s| s.share >= confidence);
    Ok(Settled {
        ranking,
        separations,
        units: r.units,
        settled,
    })
}

/// The score of `bot` in a 2-player game: win, draw or loss by rank (lower is better, equal
/// is a draw), as Bradley–Terry and the report's Tally read a 2-player result. `None` when the
/// game does not count for scoring, is not a 2-player game, or `bot` is not seated in it.
pub fn game_score(game: &GameResult, bot: &str) -> Option<GameScore> {
    if !game.valid_for_scoring || game.size != 2 || game.names.len() != 2 || game.ranks.len() != 2 {
        return None;
    }
    let me = game.names.iter().position(|n| n == bot)?;
    let (mine, theirs) = (game.ranks[me], game.ranks[1 - me]);
    Some(if mine < theirs {
        GameScore::Win
    } else if mine == theirs {
        GameScore::Draw
    } else {
        GameScore::Loss
    })
}

/// Why a sequential test ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SprtEnd {
    /// The LLR crossed a bound: H1 or H0 accepted.
    Bound(Verdict),
    /// The pair cap was reached with the LLR between the bounds.
    MaxPairs,
}

/// A running SPRT on pairs with a pair cap: the stop rule of `farm sprt`.
#[derive(Debug, Clone, PartialEq)]
pub struct SprtRun {
    pub test: Sprt,
    /// Stop after this many pairs (counted or void) at the latest.
    pub max_pairs: u64,
    /// The counted pairs.
    pub counts: Pentanomial,
    /// Pairs that could not be scored (a game that does not count for scoring).
    pub void_pairs: u64,
    /// Set once the test has ended; further pairs are not added.
    pub end: Option<SprtEnd>,
}

impl SprtRun {
    pub fn new(test: Sprt, max_pairs: u64) -> Self {
        SprtRun {
            test,
            max_pairs,
            counts: Pentanomial::default(),
            void_pairs: 0,
            end: None,
        }
    }

    /// Pairs seen (counted and void).
    pub fn pairs(&self) -> u64 {
        self.counts.pairs() + self.void_pairs
    }

    /// The test's state now.
    pub fn status(&self) -> SprtStatus {
        self.test.status(&self.counts)
    }

    /// Adds one pair (the tested bot's scores in its two games; `None` for a game that does
    /// not count, which voids the pair) and returns the end of the test if it ends here. Once
    /// ended, the run does not change any more.
    pub fn add_pair(
        &mut self,
        first: Option<GameScore>,
        second: Option<GameScore>,
    ) -> Option<SprtEnd> {
        if self.end.is_some() {
            return self.end;
        }
        match (first, second) {
            (Some(a), Some(b)) => self.counts.add(a, b),
            _ => self.void_pairs += 1,
        }
        let verdict = self.status().verdict;
        self.end = if verdict != Verdict::Continue {
            Some(SprtEnd::Bound(verdict))
        } else if self.pairs() >= self.max_pairs {
            Some(SprtEnd::MaxPairs)
        } else {
            None
        };
        self.end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(size: usize, seed: u64, slots: &[usize]) -> ScheduleEntry {
        ScheduleEntry {
            size,
            seed,
            slots: slots.to_vec(),
        }
    }

    #[test]
    fn units_are_maximal_runs_of_one_map_and_seat_set() {
        let s = [
            e(2, 5, &[0, 1]),
            e(2, 5, &[1, 0]),
            e(2, 6, &[0, 1]),
            e(2, 6, &[1, 0]),
            e(2, 6, &[0, 2]),
            e(3, 6, &[0, 1, 2]),
            e(3, 6, &[2, 0, 1]),
        ];
        assert_eq!(unit_ids(&s), [0, 0, 1, 1, 2, 3, 3]);
        assert_eq!(unit_ends(&s), [false, true, false, true, true, false, true]);
        assert!(unit_ids(&[]).is_empty());
    }

    #[test]
    fn rounds_take_the_kth_map_of_every_size_and_keep_units_whole() {
        // make_schedule's layout: size 3 (one group, maps 7 and 8), then size 2 (groups
        // {0,1} and {0,2}, maps 5 and 6).
        let s = [
            e(3, 7, &[0, 1, 2]),
            e(3, 7, &[1, 2, 0]),
            e(3, 8, &[0, 1, 2]),
            e(3, 8, &[1, 2, 0]),
            e(2, 5, &[0, 1]),
            e(2, 5, &[1, 0]),
            e(2, 6, &[0, 1]),
            e(2, 6, &[1, 0]),
            e(2, 5, &[0, 2]),
            e(2, 5, &[2, 0]),
            e(2, 6, &[0, 2]),
            e(2, 6, &[2, 0]),
        ];
        let r = in_rounds(&s);
        let order: Vec<(usize, u64, usize)> =
            r.iter().map(|e| (e.size, e.seed, e.slots[0])).collect();
        assert_eq!(
            order,
            [
                (3, 7, 0),
                (3, 7, 1),
                (2, 5, 0),
                (2, 5, 1),
                (2, 5, 0),
                (2, 5, 2),
                (3, 8, 0),
                (3, 8, 1),
                (2, 6, 0),
                (2, 6, 1),
                (2, 6, 0),
                (2, 6, 2),
            ]
        );
        assert_eq!(
            unit_ids(&r).last(),
            unit_ids(&s).last(),
            "no unit split or merged"
        );
        let (mut a, mut b) = (s.to_vec(), r.clone());
        a.sort_by(|x, y| (x.size, x.seed, &x.slots).cmp(&(y.size, y.seed, &y.slots)));
        b.sort_by(|x, y| (x.size, x.seed, &x.slots).cmp(&(y.size, y.seed, &y.slots)));
        assert_eq!(a, b, "the same matches");
        assert!(in_rounds(&[]).is_empty());
    }
}
