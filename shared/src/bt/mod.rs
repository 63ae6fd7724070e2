//! Bradley–Terry ratings exactly as the reference tournament fits them: every match size gets
//! the same total weight, each game is split into pairwise comparisons, one virtual draw is
//! added per observed pair, strengths come from the MM iteration and are shown as
//! 400·log10(strength / anchor strength). Adds a 95% interval per player (see the `ci` module).

mod ci;
mod incremental;
mod output;

pub use incremental::Incremental;
pub use output::{bt_json, BtFit, CI_METHOD, SCALE, SIZE_WEIGHT, SMOOTHING};

use crate::results::GameResult;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use thiserror::Error;

/// The reference's iteration cap.
pub const MAX_ITERATIONS: u32 = 20_000;
/// The reference's convergence test: max |log(new/old)| below this.
pub const TOLERANCE: f64 = 1e-11;

/// Why no ratings can be given (yet). Messages are Chinese, as the report is.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BtError {
    #[error("基准选手 {0} 不在参赛名单里，无法作为零分线")]
    AnchorNotPlayer(String),
    #[error("以下人数还没有任何有效对局：{0:?}")]
    NoValidGames(Vec<usize>),
    #[error("对局里出现了名单之外的选手：{0}")]
    UnknownPlayer(String),
    #[error("以下选手与基准之间还没有对局关系链：{0:?}")]
    NotConnected(Vec<String>),
    #[error("迭代 {0} 次仍未收敛，暂不给出实力值")]
    NoConvergence(u32),
    #[error("第 {row} 局数据不完整：{why}")]
    Malformed { row: usize, why: String },
}

/// Players by index, in first-appearance order of the roster (duplicates collapse, as the
/// reference's dicts do), with the string order used to orient pairs.
#[derive(Debug, Clone)]
pub(crate) struct Players {
    pub names: Vec<String>,
    pub index: HashMap<String, usize, BuildHasherDefault<Fnv>>,
    /// Position of each player in name order (pairs are oriented by comparing names).
    pub order: Vec<usize>,
    /// Length of the roster as given (with duplicates): the reference divides by it.
    pub roster_len: usize,
}

/// FNV-1a: name lookups dominate the batch fit, and roster names are short and trusted.
#[derive(Default)]
pub(crate) struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

impl Players {
    pub fn new<S: AsRef<str>>(roster: &[S]) -> Self {
        let mut names = Vec::new();
        let mut index: HashMap<String, usize, BuildHasherDefault<Fnv>> = HashMap::default();
        for n in roster {
            let n = n.as_ref();
            if !index.contains_key(n) {
                index.insert(n.to_string(), names.len());
                names.push(n.to_string());
            }
        }
        let mut by_name: Vec<usize> = (0..names.len()).collect();
        by_name.sort_by(|&x, &y| names[x].cmp(&names[y]));
        let mut order = vec![0; names.len()];
        for (pos, &p) in by_name.iter().enumerate() {
            order[p] = pos;
        }
        Players {
            names,
            index,
            order,
            roster_len: roster.len(),
        }
    }
}

/// One aggregated comparison: `a` sorts before `b` by name; `g` weighted games, `w` weighted
/// wins of `a` (before the virtual draw).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pair {
    pub a: usize,
    pub b: usize,
    pub g: f64,
    pub w: f64,
}

/// Outcome of seat i against seat j: 1 win, 0.5 draw, 0 loss (lower rank is better).
pub(crate) fn outcome(ri: i64, rj: i64) -> f64 {
    if ri < rj {
        1.0
    } else if ri == rj {
        0.5
    } else {
        0.0
    }
}

/// Fits ratings from match results exactly as the reference `fit(rows, names, sizes, anchor)`.
/// Only games whose size is in `sizes` and that are valid for scoring count.
pub fn fit<S: AsRef<str>>(
    games: &[GameResult],
    roster: &[S],
    sizes: &[usize],
    anchor: &str,
) -> Result<BtFit, BtError> {
    fit_with_tolerance(games, roster, sizes, anchor, TOLERANCE)
}

/// [`fit`] with another stopping threshold (e.g. 1e-13 to land closer to the exact optimum
/// than the reference's 1e-11 does); same refusals, same iteration cap.
pub fn fit_with_tolerance<S: AsRef<str>>(
    games: &[GameResult],
    roster: &[S],
    sizes: &[usize],
    anchor: &str,
    tolerance: f64,
) -> Result<BtFit, BtError> {
    let players = Players::new(roster);
    if !players.index.contains_key(anchor) {
        return Err(BtError::AnchorNotPlayer(anchor.to_string()));
    }
    let (pairs, counts) = comparisons(games, &players, sizes)?;
    let start = vec![1.0; players.names.len()];
    solve_and_report(&players, &pairs, counts, anchor, start, tolerance)
}

/// Valid games per size, in the order sizes first appear.
pub(crate) type SizeCounts = Vec<(usize, u64)>;

/// Size weighting and pair aggregation in the reference's order (games in order, seats i<j).
fn comparisons(
    games: &[GameResult],
    players: &Players,
    sizes: &[usize],
) -> Result<(Vec<Pair>, SizeCounts), BtError> {
    let valid: Vec<(usize, &GameResult)> = games
        .iter()
        .enumerate()
        .filter(|(_, g)| sizes.contains(&g.size) && g.valid_for_scoring)
        .collect();
    let mut counts: Vec<(usize, u64)> = Vec::new();
    for (_, g) in &valid {
        match counts.iter_mut().find(|(s, _)| *s == g.size) {
            Some(c) => c.1 += 1,
            None => counts.push((g.size, 1)),
        }
    }
    let count_of = |s: usize| counts.iter().find(|(x, _)| *x == s).map_or(0, |c| c.1);
    let missing: Vec<usize> = sizes
        .iter()
        .copied()
        .filter(|&s| count_of(s) == 0)
        .collect();
    if !missing.is_empty() {
        return Err(BtError::NoValidGames(missing));
    }
    let n = players.names.len();
    // (weighted games, weighted wins of the first, seen) per ordered cell.
    let mut acc = vec![(0.0f64, 0.0f64, false); n * n];
    let mut first_seen: Vec<usize> = Vec::new();
    let total = valid.len() as f64;
    let weights: Vec<(usize, f64)> = counts
        .iter()
        .map(|&(s, c)| {
            (
                s,
                total / ((sizes.len() as u64 * c) as f64 * ((s * (s - 1)) as f64 / 2.0)),
            )
        })
        .collect();
    let mut seat = Vec::new();
    for &(row, g) in &valid {
        let s = g.size;
        if g.names.len() < s || g.ranks.len() < s {
            return Err(BtError::Malformed {
                row: row + 1,
                why: format!(
                    "{s} 人局只有 {} 个名字、{} 个名次",
                    g.names.len(),
                    g.ranks.len()
                ),
            });
        }
        let weight = match weights.iter().find(|(x, _)| *x == s) {
            Some(&(_, w)) => w,
            None => continue,
        };
        seat.clear();
        for name in &g.names[..s] {
            match players.index.get(name.as_str()) {
                Some(&i) => seat.push(players.order[i]),
                None => return Err(BtError::UnknownPlayer(name.clone())),
            }
        }
        // Seats as name-order positions: pairs are oriented by name, accumulated per cell.
        let ranks = &g.ranks[..s];
        for i in 0..s {
            let (pi, ri) = (seat[i], ranks[i]);
            for (&pj, &rj) in seat[i + 1..s].iter().zip(&ranks[i + 1..s]) {
                // Branch-free (ranks are unpredictable): orient, then 1 / 0.5 / 0 for the first.
                let swap = pi > pj;
                let k = if swap { pj * n + pi } else { pi * n + pj };
                let (ra, rb) = if swap { (rj, ri) } else { (ri, rj) };
                let win = 0.5 * f64::from(u8::from(ra < rb) + u8::from(ra <= rb));
                let cell = &mut acc[k];
                if !cell.2 {
                    cell.2 = true;
                    first_seen.push(k);
                }
                cell.0 += weight;
                cell.1 += weight * win;
            }
        }
    }
    // Back from name-order positions to roster indices, pairs in first-observation order.
    let mut by_order = vec![0; n];
    for (p, &o) in players.order.iter().enumerate() {
        by_order[o] = p;
    }
    let pairs = first_seen
        .iter()
        .map(|&k| {
            let (g, w, _) = acc[k];
            Pair {
                a: by_order[k / n],
                b: by_order[k % n],
                g,
                w,
            }
        })
        .collect();
    Ok((pairs, counts))
}

/// Players not linked to the anchor through observed pairs (empty when all are).
pub(crate) fn unreached(players: &Players, pairs: &[Pair], anchor: usize) -> Vec<String> {
    let n = players.names.len();
    let mut adj = vec![Vec::new(); n];
    for p in pairs {
        adj[p.a].push(p.b);
        adj[p.b].push(p.a);
    }
    let mut seen = vec![false; n];
    seen[anchor] = true;
    let mut stack = vec![anchor];
    while let Some(x) = stack.pop() {
        for &y in &adj[x] {
            if !seen[y] {
                seen[y] = true;
                stack.push(y);
            }
        }
    }
    (0..n)
        .filter(|&i| !seen[i])
        .map(|i| players.names[i].clone())
        .collect()
}

/// The MM iteration from `start` strengths (the reference starts from all ones), with the
/// geometric-mean centring and the reference's stopping rule. Returns strengths and the number
/// of iterations run.
pub(crate) fn mm(
    players: &Players,
    games: &[Pair],
    start: Vec<f64>,
    tolerance: f64,
) -> Result<(Vec<f64>, u32), BtError> {
    let n = players.names.len();
    let mut wins = vec![0.0f64; n];
    for p in games {
        wins[p.a] += p.w;
        wins[p.b] += p.g - p.w;
    }
    let mut strength = start;
    let mut denom = vec![0.0f64; n];
    let mut updated = vec![0.0f64; n];
    for iteration in 0..MAX_ITERATIONS {
        denom.iter_mut().for_each(|d| *d = 0.0);
        for p in games {
            let v = p.g / (strength[p.a] + strength[p.b]);
            denom[p.a] += v;
            denom[p.b] += v;
        }
        let mut center = 0.0f64;
        for i in 0..n {
            updated[i] = wins[i] / denom[i];
            center += updated[i].ln();
        }
        center /= players.roster_len as f64;
        let mut delta = f64::NEG_INFINITY;
        for i in 0..n {
            updated[i] = (updated[i].ln() - center).exp();
            delta = delta.max((updated[i] / strength[i]).ln().abs());
        }
        std::mem::swap(&mut strength, &mut updated);
        if delta < tolerance {
            return Ok((strength, iteration + 1));
        }
    }
    Err(BtError::NoConvergence(MAX_ITERATIONS))
}

/// Adds the virtual draws, checks connectivity, runs MM and builds the output.
pub(crate) fn solve_and_report(
    players: &Players,
    pairs: &[Pair],
    counts: Vec<(usize, u64)>,
    anchor: &str,
    start: Vec<f64>,
    tolerance: f64,
) -> Result<BtFit, BtError> {
    let anchor_ix = players.index[anchor];
    let missing = unreached(players, pairs, anchor_ix);
    if !missing.is_empty() {
        return Err(BtError::NotConnected(missing));
    }
    let games: Vec<Pair> = pairs
        .iter()
        .map(|p| Pair {
            g: p.g + 1.0,
            w: p.w + 0.5,
            ..*p
        })
        .collect();
    let (strength, iterations) = mm(players, &games, start, tolerance)?;
    Ok(output::build(
        players, &games, &strength, anchor_ix, counts, iterations,
    ))
}
