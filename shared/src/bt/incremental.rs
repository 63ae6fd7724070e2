//! Live Bradley–Terry: per-size pair statistics updated per result in O(size²) and a refit that
//! warm-starts from the previous strengths. Size weights depend on the running game counts, so
//! the raw per-size counts are kept (exact integers) and weighted only when fitting; the result
//! equals the batch [`super::fit`] over the same results up to float rounding and the stopping rule.

use super::{outcome, solve_and_report, BtError, BtFit, Pair, Players};
use crate::results::GameResult;

/// Incremental BT state for one roster, size list and anchor.
#[derive(Debug, Clone)]
pub struct Incremental {
    players: Players,
    anchor: String,
    sizes: Vec<usize>,
    /// Valid games per entry of `sizes`.
    counts: Vec<u64>,
    /// Indices into `sizes` in the order sizes first appeared among valid games.
    count_order: Vec<usize>,
    /// Per size: for each oriented pair (a before b by name) at `a*n+b`, [games, half-wins of a].
    stats: Vec<Vec<[u64; 2]>>,
    /// Oriented pairs in order of first observation (the batch fit's aggregation order).
    pair_order: Vec<(usize, usize)>,
    seen: Vec<bool>,
    total: u64,
    pushed: usize,
    unknown: Option<String>,
    malformed: Option<(usize, String)>,
    last: Option<Vec<f64>>,
    tolerance: f64,
}

impl Incremental {
    /// Empty state for a roster (slot order), the tournament's sizes and its anchor.
    pub fn new<S: AsRef<str>>(roster: &[S], sizes: &[usize], anchor: &str) -> Self {
        let players = Players::new(roster);
        let n = players.names.len();
        Incremental {
            players,
            anchor: anchor.to_string(),
            sizes: sizes.to_vec(),
            counts: vec![0; sizes.len()],
            count_order: Vec::new(),
            stats: vec![vec![[0, 0]; n * n]; sizes.len()],
            pair_order: Vec::new(),
            seen: vec![false; n * n],
            total: 0,
            pushed: 0,
            unknown: None,
            malformed: None,
            last: None,
            tolerance: super::TOLERANCE,
        }
    }

    /// Stopping threshold for later refits (default: the reference's 1e-11). A smaller value
    /// lands closer to the exact optimum at the cost of a few iterations.
    pub fn set_tolerance(&mut self, tolerance: f64) {
        self.tolerance = tolerance;
    }

    /// Results seen so far (all of them, counted or not).
    pub fn results_seen(&self) -> usize {
        self.pushed
    }

    /// Valid games of the tournament's sizes counted so far.
    pub fn valid_games(&self) -> u64 {
        self.total
    }

    /// Adds one result (in schedule order). Games that do not count are only tallied; a game
    /// naming an unknown player or with short seat lists makes later fits fail, as batch does.
    pub fn push(&mut self, game: &GameResult) {
        self.pushed += 1;
        let Some(si) = self.sizes.iter().position(|&s| s == game.size) else {
            return;
        };
        if !game.valid_for_scoring {
            return;
        }
        if self.counts[si] == 0 && !self.count_order.contains(&si) {
            self.count_order.push(si);
        }
        self.counts[si] += 1;
        self.total += 1;
        let s = game.size;
        if game.names.len() < s || game.ranks.len() < s {
            if self.malformed.is_none() {
                let why = format!(
                    "{s} 人局只有 {} 个名字、{} 个名次",
                    game.names.len(),
                    game.ranks.len()
                );
                self.malformed = Some((self.pushed, why));
            }
            return;
        }
        let mut seat = [0usize; 16];
        let mut seat_vec;
        let seat: &mut [usize] = if s <= 16 {
            &mut seat[..s]
        } else {
            seat_vec = vec![0; s];
            &mut seat_vec
        };
        for (k, name) in game.names[..s].iter().enumerate() {
            match self.players.index.get(name.as_str()) {
                Some(&i) => seat[k] = i,
                None => {
                    if self.unknown.is_none() {
                        self.unknown = Some(name.clone());
                    }
                    return;
                }
            }
        }
        let n = self.players.names.len();
        let stats = &mut self.stats[si];
        for i in 0..s {
            for j in i + 1..s {
                let (mut a, mut b) = (seat[i], seat[j]);
                let mut half = (outcome(game.ranks[i], game.ranks[j]) * 2.0) as u64;
                if self.players.order[a] > self.players.order[b] {
                    std::mem::swap(&mut a, &mut b);
                    half = 2 - half;
                }
                let k = a * n + b;
                if !self.seen[k] {
                    self.seen[k] = true;
                    self.pair_order.push((a, b));
                }
                stats[k][0] += 1;
                stats[k][1] += half;
            }
        }
    }

    /// Fits the ratings of everything pushed so far, starting from the last fit's strengths
    /// (the live table). It stops by the reference's rule, so it can differ from a cold batch
    /// fit by as much as that fit's own distance from the optimum (typically ~1e-9 rating
    /// points; more for very slowly converging data); with [`Self::set_tolerance`] lowered both
    /// land on the optimum. Refusals are the batch fit's (anchor, sizes without valid games,
    /// unknown players, players not connected to the anchor, no convergence).
    pub fn fit(&mut self) -> Result<BtFit, BtError> {
        let start = self.last.clone();
        let tolerance = self.tolerance;
        self.fit_from(start, tolerance)
    }

    /// Fits from the reference's cold start (all strengths 1) with its stopping rule: the same
    /// iterations as the batch [`super::fit`] over the same results, for the final `bt.json`.
    /// Only the pair sums differ (summed per size rather than per game), by float rounding.
    pub fn fit_exact(&mut self) -> Result<BtFit, BtError> {
        self.fit_from(None, super::TOLERANCE)
    }

    fn fit_from(&mut self, start: Option<Vec<f64>>, tolerance: f64) -> Result<BtFit, BtError> {
        if !self.players.index.contains_key(&self.anchor) {
            return Err(BtError::AnchorNotPlayer(self.anchor.clone()));
        }
        // Counts live at a size's first position (a repeated size shares them, as in batch).
        let count_of = |s: usize| {
            self.sizes
                .iter()
                .position(|&x| x == s)
                .map_or(0, |i| self.counts[i])
        };
        let missing: Vec<usize> = self
            .sizes
            .iter()
            .copied()
            .filter(|&s| count_of(s) == 0)
            .collect();
        if !missing.is_empty() {
            return Err(BtError::NoValidGames(missing));
        }
        if let Some((row, why)) = &self.malformed {
            return Err(BtError::Malformed {
                row: *row,
                why: why.clone(),
            });
        }
        if let Some(name) = &self.unknown {
            return Err(BtError::UnknownPlayer(name.clone()));
        }
        let n = self.players.names.len();
        let total = self.total as f64;
        let weights: Vec<f64> = self
            .sizes
            .iter()
            .zip(&self.counts)
            .map(|(&s, &c)| {
                total / ((self.sizes.len() as u64 * c) as f64 * ((s * (s - 1)) as f64 / 2.0))
            })
            .collect();
        let pairs: Vec<Pair> = self
            .pair_order
            .iter()
            .map(|&(a, b)| {
                let (mut g, mut w) = (0.0, 0.0);
                for (stats, weight) in self.stats.iter().zip(&weights) {
                    let [c, h] = stats[a * n + b];
                    if c > 0 {
                        g += weight * c as f64;
                        w += weight * (h as f64 / 2.0);
                    }
                }
                Pair { a, b, g, w }
            })
            .collect();
        let counts = self
            .count_order
            .iter()
            .map(|&si| (self.sizes[si], self.counts[si]))
            .collect();
        let start = start
            .filter(|s| s.len() == n)
            .unwrap_or_else(|| vec![1.0; n]);
        let fit = solve_and_report(
            &self.players,
            &pairs,
            counts,
            &self.anchor,
            start,
            tolerance,
        )?;
        self.last = Some(fit.strengths.clone());
        Ok(fit)
    }
}
