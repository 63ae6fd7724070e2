//! Paired (map-unit) bootstrap intervals for the Bradley–Terry ratings. Matches played on the
//! same map (all its seat rotations) share the map's quirks, so they are not independent; the
//! Wald interval of [`crate::bt`] treats every comparison as independent and is too narrow
//! when maps matter. Here the results are grouped into units (a unit id per match, given by
//! the caller), units are drawn with replacement (a seeded [`Random`], so the same seed gives
//! the same intervals), the ratings are refitted on each resample exactly as [`bt::fit`] fits
//! them (equal weight per size, one virtual draw per pair, anchor at 0, 400·log10 scale), and
//! each bot gets the 2.5% and 97.5% percentiles of its refitted ratings beside the full-data
//! point estimate.
//!
//! Refits are cheap: each unit's games are reduced once to integer counts per (size, pair), a
//! resample only adds those counts times the unit's multiplicity, and the MM iteration starts
//! from the full-data strengths.

use crate::bt::{self, mm, outcome, unreached, BtError, BtFit, Pair, Players, TOLERANCE};
use crate::pyrandom::Random;
use crate::results::GameResult;
use std::collections::HashMap;
use std::hash::Hash;
use thiserror::Error;

/// Percentiles of the reported interval.
pub const LOWER_QUANTILE: f64 = 0.025;
/// Percentiles of the reported interval.
pub const UPPER_QUANTILE: f64 = 0.975;
/// How the interval is computed (text for reports).
pub const METHOD: &str = "paired bootstrap: map units resampled with replacement, BT refitted per resample, 2.5%/97.5% percentiles (linear interpolation)";

/// Why no bootstrap intervals can be given.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum BootstrapError {
    /// The full-data fit is refused (the same refusals as [`bt::fit`]).
    #[error(transparent)]
    Fit(#[from] BtError),
    #[error("对局数 {games} 与单元编号数 {units} 不一致")]
    UnitsLength { games: usize, units: usize },
    #[error("重抽样次数必须大于 0")]
    NoResamples,
    #[error("{resamples} 次重抽样都无法拟合（某人数没有对局或选手与基准不连通）")]
    NoUsableResample { resamples: usize },
}

/// Ratings with bootstrap intervals.
#[derive(Debug, Clone, PartialEq)]
pub struct BootstrapFit {
    /// The full-data fit (point estimates and Wald intervals), as [`bt::fit`] returns it.
    pub fit: BtFit,
    /// 2.5% / 97.5% percentile interval per player, roster order (the anchor's is [0, 0]).
    pub intervals: Vec<(String, [f64; 2])>,
    /// Standard deviation of each player's resampled ratings, roster order.
    pub spread: Vec<(String, f64)>,
    /// Units resampled (those with at least one counted game).
    pub units: usize,
    /// Resamples asked for.
    pub resamples: usize,
    /// Resamples that could be fitted (the others lacked a size or left a player unlinked
    /// to the anchor, or did not converge); the percentiles are over these.
    pub fitted: usize,
    pub seed: u64,
}

impl BootstrapFit {
    /// The bootstrap interval of `name`.
    pub fn interval(&self, name: &str) -> Option<[f64; 2]> {
        self.intervals.iter().find(|(n, _)| n == name).map(|r| r.1)
    }
}

/// One unit's games reduced to integer counts: games per size index, and per (size index,
/// cell a·n+b with a < b by roster index) the comparisons and half-wins of `a`.
struct UnitStats {
    games: Vec<(usize, u64)>,
    cells: Vec<(usize, usize, u64, u64)>,
}

/// The refitted ratings of every resample (see [`resample_ratings`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Resampled {
    /// The full-data fit, as [`bt::fit`] returns it.
    pub fit: BtFit,
    /// Player names, roster order (duplicates removed, as in the fit).
    pub names: Vec<String>,
    /// `draws[player][k]`: the rating of `player` in the k-th fitted resample (anchor 0).
    pub draws: Vec<Vec<f64>>,
    /// Units resampled (those with at least one counted game).
    pub units: usize,
    /// Resamples asked for (`draws[p].len()` may be fewer: some could not be fitted).
    pub resamples: usize,
}

impl Resampled {
    /// Resamples that could be fitted.
    pub fn fitted(&self) -> usize {
        self.draws.first().map_or(0, Vec::len)
    }
}

/// The ratings of each of `resamples` map-unit resamples, refitted as [`bt::fit`] fits; the
/// common core of [`bootstrap`] and of the settled-ranking rule ([`crate::settle`]). Same
/// arguments and refusals as [`bootstrap`], except that an all-unfittable set of resamples is
/// returned (with no draws) rather than refused.
pub fn resample_ratings<S: AsRef<str>, U: Hash + Eq>(
    games: &[GameResult],
    units: &[U],
    roster: &[S],
    sizes: &[usize],
    anchor: &str,
    resamples: usize,
    seed: u64,
) -> Result<Resampled, BootstrapError> {
    if games.len() != units.len() {
        return Err(BootstrapError::UnitsLength {
            games: games.len(),
            units: units.len(),
        });
    }
    if resamples == 0 {
        return Err(BootstrapError::NoResamples);
    }
    // The full fit also validates everything the reduction below relies on.
    let fit = bt::fit(games, roster, sizes, anchor)?;
    let players = Players::new(roster);
    let n = players.names.len();
    let anchor_ix = players.index[anchor];
    let stats = reduce(games, units, &players, sizes);

    let mut rng = Random::new(i128::from(seed));
    let mut draws: Vec<Vec<f64>> = vec![Vec::with_capacity(resamples); n];
    let mut multiplicity = vec![0u64; stats.len()];
    let mut scratch = Scratch::new(sizes.len(), n);
    let scale = 400.0 / std::f64::consts::LN_10;
    for _ in 0..resamples {
        multiplicity.iter_mut().for_each(|m| *m = 0);
        for _ in 0..stats.len() {
            multiplicity[rng.randbelow(stats.len() as u64) as usize] += 1;
        }
        let Some(strength) = scratch.refit(
            &stats,
            &multiplicity,
            &players,
            sizes,
            anchor_ix,
            &fit.strengths,
            TOLERANCE,
        ) else {
            continue;
        };
        let origin = strength[anchor_ix].ln();
        for (i, d) in draws.iter_mut().enumerate() {
            d.push(if i == anchor_ix {
                0.0
            } else {
                scale * (strength[i].ln() - origin)
            });
        }
    }
    Ok(Resampled {
        fit,
        names: players.names.clone(),
        draws,
        units: stats.len(),
        resamples,
    })
}

/// Bootstrap intervals for every rating. `units[i]` is the unit (map) of `games[i]`; only the
/// games [`bt::fit`] counts (valid, of a listed size) matter, and units without such games are
/// not resampled. `resamples` refits are drawn from `Random::new(seed)`.
pub fn bootstrap<S: AsRef<str>, U: Hash + Eq>(
    games: &[GameResult],
    units: &[U],
    roster: &[S],
    sizes: &[usize],
    anchor: &str,
    resamples: usize,
    seed: u64,
) -> Result<BootstrapFit, BootstrapError> {
    let Resampled {
        fit,
        names,
        draws,
        units,
        resamples,
    } = resample_ratings(games, units, roster, sizes, anchor, resamples, seed)?;
    let fitted = draws.first().map_or(0, Vec::len);
    if fitted == 0 {
        return Err(BootstrapError::NoUsableResample { resamples });
    }
    let n = names.len();
    let mut intervals = Vec::with_capacity(n);
    let mut spread = Vec::with_capacity(n);
    for (name, mut d) in names.iter().zip(draws) {
        let mean = d.iter().sum::<f64>() / d.len() as f64;
        let var = d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (d.len().max(2) - 1) as f64;
        d.sort_by(f64::total_cmp);
        intervals.push((
            name.clone(),
            [
                percentile(&d, LOWER_QUANTILE),
                percentile(&d, UPPER_QUANTILE),
            ],
        ));
        spread.push((name.clone(), var.sqrt()));
    }
    Ok(BootstrapFit {
        fit,
        intervals,
        spread,
        units,
        resamples,
        fitted,
        seed,
    })
}

/// Per-unit integer statistics of the counted games, units in first-appearance order.
fn reduce<U: Hash + Eq>(
    games: &[GameResult],
    units: &[U],
    players: &Players,
    sizes: &[usize],
) -> Vec<UnitStats> {
    let n = players.names.len();
    let mut of_unit: HashMap<&U, usize> = HashMap::new();
    // Dense per-unit scratch keyed by (size index, cell), merged into sparse lists at the end.
    let mut raw: Vec<HashMap<(usize, usize), [u64; 2]>> = Vec::new();
    let mut counts: Vec<Vec<u64>> = Vec::new();
    for (g, u) in games.iter().zip(units) {
        // A repeated size shares its first position's count, as in the batch fit.
        let Some(si) = sizes.iter().position(|&s| s == g.size) else {
            continue;
        };
        if !g.valid_for_scoring {
            continue;
        }
        let ui = *of_unit.entry(u).or_insert_with(|| {
            raw.push(HashMap::new());
            counts.push(vec![0; sizes.len()]);
            raw.len() - 1
        });
        counts[ui][si] += 1;
        let s = g.size;
        let seat: Vec<usize> = g.names[..s]
            .iter()
            .map(|name| players.index[name.as_str()])
            .collect();
        for i in 0..s {
            for j in i + 1..s {
                let half = (outcome(g.ranks[i], g.ranks[j]) * 2.0) as u64;
                let (a, b, half) = if seat[i] < seat[j] {
                    (seat[i], seat[j], half)
                } else {
                    (seat[j], seat[i], 2 - half)
                };
                let cell = raw[ui].entry((si, a * n + b)).or_insert([0, 0]);
                cell[0] += 1;
                cell[1] += half;
            }
        }
    }
    raw.into_iter()
        .zip(counts)
        .map(|(cells, c)| {
            let mut cells: Vec<(usize, usize, u64, u64)> = cells
                .into_iter()
                .map(|((si, k), [g, h])| (si, k, g, h))
                .collect();
            cells.sort_unstable();
            UnitStats {
                games: c.into_iter().enumerate().filter(|&(_, c)| c > 0).collect(),
                cells,
            }
        })
        .collect()
}

/// Reusable buffers for the refits: games per size index, [comparisons, half-wins] per
/// (size index, cell), and the weighted pairs.
struct Scratch {
    size_games: Vec<u64>,
    cells: Vec<[u64; 2]>,
    pairs: Vec<Pair>,
}

impl Scratch {
    fn new(sizes: usize, n: usize) -> Self {
        Scratch {
            size_games: vec![0; sizes],
            cells: vec![[0, 0]; sizes * n * n],
            pairs: Vec::with_capacity(n * n.saturating_sub(1) / 2),
        }
    }

    /// The BT strengths when unit `u` is taken `multiplicity[u]` times, or None where the
    /// reference would refuse (a size without games, a player not linked to the anchor, no
    /// convergence). The MM iteration starts from `start`.
    #[allow(clippy::too_many_arguments)]
    fn refit(
        &mut self,
        stats: &[UnitStats],
        multiplicity: &[u64],
        players: &Players,
        sizes: &[usize],
        anchor: usize,
        start: &[f64],
        tolerance: f64,
    ) -> Option<Vec<f64>> {
        let n = players.names.len();
        let Scratch {
            size_games,
            cells,
            pairs,
        } = self;
        size_games.iter_mut().for_each(|c| *c = 0);
        cells.iter_mut().for_each(|c| *c = [0, 0]);
        for (unit, &m) in stats.iter().zip(multiplicity) {
            if m == 0 {
                continue;
            }
            for &(si, c) in &unit.games {
                size_games[si] += m * c;
            }
            for &(si, k, g, h) in &unit.cells {
                let cell = &mut cells[si * n * n + k];
                cell[0] += m * g;
                cell[1] += m * h;
            }
        }
        // Counts live at a size's first position, so a repeated size reads that one.
        let count_of = |s: usize| sizes.iter().position(|&x| x == s).map(|i| size_games[i]);
        if sizes.iter().any(|&s| count_of(s) == Some(0)) {
            return None;
        }
        let total: u64 = size_games.iter().sum();
        let weights: Vec<f64> = sizes
            .iter()
            .zip(size_games.iter())
            .map(|(&s, &c)| {
                if c == 0 {
                    0.0
                } else {
                    total as f64 / ((sizes.len() as u64 * c) as f64 * ((s * (s - 1)) as f64 / 2.0))
                }
            })
            .collect();
        pairs.clear();
        for a in 0..n {
            for b in a + 1..n {
                let k = a * n + b;
                let (mut g, mut w, mut seen) = (0.0, 0.0, false);
                for (si, weight) in weights.iter().enumerate() {
                    let [c, h] = cells[si * n * n + k];
                    if c > 0 {
                        seen = true;
                        g += weight * c as f64;
                        w += weight * (h as f64 / 2.0);
                    }
                }
                if seen {
                    // One virtual draw per observed pair.
                    pairs.push(Pair {
                        a,
                        b,
                        g: g + 1.0,
                        w: w + 0.5,
                    });
                }
            }
        }
        if !unreached(players, pairs, anchor).is_empty() {
            return None;
        }
        mm(players, pairs, start.to_vec(), tolerance)
            .ok()
            .map(|(s, _)| s)
    }
}

/// The q-quantile of sorted values by linear interpolation between order statistics (numpy's
/// default): position q·(m−1).
fn percentile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    let frac = pos - lo as f64;
    sorted[lo] + frac * (sorted[hi] - sorted[lo])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(names: &[&str], ranks: &[i64]) -> GameResult {
        let s = names.len();
        GameResult {
            size: s,
            valid_for_scoring: true,
            names: names.iter().map(|n| n.to_string()).collect(),
            ranks: ranks.to_vec(),
            survival_points: vec![0.0; s],
            kill_points: vec![0.0; s],
            points: vec![0.0; s],
            errors: vec![0; s],
        }
    }

    /// A resample's refit equals the batch fit of the expanded game list (each unit's games
    /// repeated by its multiplicity), to 1e-9 rating points when both converge tightly.
    #[test]
    fn refit_equals_the_batch_fit_of_the_resample() {
        let roster = ["B", "A", "C", "D"];
        let sizes = [2, 3];
        let mut games = Vec::new();
        let mut units = Vec::new();
        let mut rng = Random::new(5);
        for u in 0..40u32 {
            let s = 2 + (u as usize % 2);
            let mut pool: Vec<&str> = roster.to_vec();
            for i in 0..s {
                let j = i + rng.randbelow((pool.len() - i) as u64) as usize;
                pool.swap(i, j);
            }
            for rot in 0..s {
                let names: Vec<&str> = (0..s).map(|k| pool[(k + rot) % s]).collect();
                let ranks: Vec<i64> = (0..s).map(|_| 1 + rng.randbelow(3) as i64).collect();
                games.push(game(&names, &ranks));
                units.push(u);
            }
        }
        // An invalid game and a game of another size are ignored by both.
        let mut bad = game(&["A", "B"], &[1, 2]);
        bad.valid_for_scoring = false;
        games.push(bad);
        units.push(0);
        games.push(game(&["A", "B", "C", "D"], &[1, 2, 3, 4]));
        units.push(1);

        let players = Players::new(&roster);
        let stats = reduce(&games, &units, &players, &sizes);
        assert_eq!(stats.len(), 40);
        let multiplicity: Vec<u64> = (0..40).map(|u| [0, 1, 2, 3, 1][u % 5]).collect();
        let mut expanded = Vec::new();
        for (g, &u) in games.iter().zip(&units) {
            for _ in 0..multiplicity[u as usize] {
                expanded.push(g.clone());
            }
        }
        let tol = 1e-14;
        let batch = bt::fit_with_tolerance(&expanded, &roster, &sizes, "A", tol).unwrap();
        let anchor = players.index["A"];
        let strength = Scratch::new(sizes.len(), 4)
            .refit(
                &stats,
                &multiplicity,
                &players,
                &sizes,
                anchor,
                &[1.0; 4],
                tol,
            )
            .unwrap();
        let scale = 400.0 / std::f64::consts::LN_10;
        for (i, (name, rating)) in batch.ratings.iter().enumerate() {
            let ours = scale * (strength[i].ln() - strength[anchor].ln());
            assert!((ours - rating).abs() < 1e-9, "{name}: {ours} vs {rating}");
        }
    }

    #[test]
    fn percentiles_interpolate() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(percentile(&v, 0.0), 1.0);
        assert_eq!(percentile(&v, 1.0), 5.0);
        assert_eq!(percentile(&v, 0.5), 3.0);
        assert!((percentile(&v, 0.025) - 1.1).abs() < 1e-12);
        assert_eq!(percentile(&[7.0], 0.975), 7.0);
    }
}
