//! The generalized sequential probability ratio test (GSPRT) on game pairs, as fishtest,
//! OpenBench and fastchess run it: each pair (one map, both seat orders) scores 0, ½, 1, 1½ or
//! 2 points for the tested bot, the pairs are counted in five buckets (a pentanomial), and the
//! log-likelihood ratio of "Elo = elo1" against "Elo = elo0" (logistic Elo) is the one of
//! Michel Van den Bergh's `LLRcalc.LLR_logistic`: empty buckets get 1e-3 pseudo-counts, the
//! frequencies are projected onto each hypothesis by the constrained maximum-likelihood
//! estimate (a secular equation), and the LLR is N·Σ p̂ᵢ·ln(p₁ᵢ/p₀ᵢ). Pairs are the unit
//! because the two games of a pair are correlated (same map); counting them as independent
//! games would misstate the variance. Also the Elo estimate with a 95% interval of fishtest's
//! `stat_util.get_elo`, computed from the same counts. Pure functions over counts.

use thiserror::Error;

/// Two-sided 95% normal quantile, Φ⁻¹(0.975).
pub const Z95: f64 = 1.959_963_984_540_054;
/// Pseudo-count given to an empty bucket before any statistic is computed (fishtest's
/// `regularize`).
pub const REGULARIZATION: f64 = 1e-3;

/// Invalid test parameters or pair scores.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum SprtError {
    #[error("错误率必须在 0 与 1 之间且 α+β<1：α={alpha}, β={beta}")]
    BadErrorRates { alpha: f64, beta: f64 },
    #[error("Elo 假设必须是有限数且 elo0 < elo1：elo0={elo0}, elo1={elo1}")]
    BadHypotheses { elo0: f64, elo1: f64 },
    #[error("一对对局的得分只能是 0、0.5、1、1.5 或 2（以半分计 0..=4），收到 {0} 个半分")]
    BadPairScore(u32),
    #[error("和棋率必须在 0 与 1 之间，且与 Elo {elo} 相容（胜负概率不能为负）：{draw_ratio}")]
    BadDrawRatio { elo: f64, draw_ratio: f64 },
}

/// One game's result for the tested bot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GameScore {
    Loss,
    Draw,
    Win,
}

impl GameScore {
    /// Half points: 0, 1 or 2.
    pub fn half_points(self) -> u32 {
        match self {
            GameScore::Loss => 0,
            GameScore::Draw => 1,
            GameScore::Win => 2,
        }
    }
}

/// Pair counts by the tested bot's points in the pair: `[LL, LD, DD+WL, WD, WW]`, i.e. index
/// = half points scored in the pair (0..=4). The order of the two games does not matter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Pentanomial {
    pub counts: [u64; 5],
}

impl Pentanomial {
    /// Counts `[LL, LD, DD+WL, WD, WW]`.
    pub fn new(counts: [u64; 5]) -> Self {
        Pentanomial { counts }
    }

    /// Adds one pair from its two games (either seat order first).
    pub fn add(&mut self, first: GameScore, second: GameScore) {
        self.counts[(first.half_points() + second.half_points()) as usize] += 1;
    }

    /// Adds one pair from the half points it scored (0..=4).
    pub fn add_half_points(&mut self, half_points: u32) -> Result<(), SprtError> {
        let slot = self
            .counts
            .get_mut(half_points as usize)
            .ok_or(SprtError::BadPairScore(half_points))?;
        *slot += 1;
        Ok(())
    }

    /// Pairs counted.
    pub fn pairs(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Games counted (two per pair).
    pub fn games(&self) -> u64 {
        2 * self.pairs()
    }

    /// The counts as floats with every empty bucket replaced by [`REGULARIZATION`].
    pub fn regularized(&self) -> [f64; 5] {
        self.counts
            .map(|c| if c == 0 { REGULARIZATION } else { c as f64 })
    }
}

impl std::ops::AddAssign for Pentanomial {
    fn add_assign(&mut self, other: Self) {
        for (a, b) in self.counts.iter_mut().zip(other.counts) {
            *a += b;
        }
    }
}

/// Expected score per game of a bot `elo` logistic Elo stronger: 1 / (1 + 10^(−elo/400)).
pub fn expected_score(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// Logistic Elo of a per-game expected score, with the score clamped to [0.001, 0.999]
/// (fishtest's `elo`), so a perfect or null score gives ±1200, not infinity.
pub fn logistic_elo(score: f64) -> f64 {
    let x = score.clamp(1e-3, 1.0 - 1e-3);
    -400.0 * (1.0 / x - 1.0).log10()
}

/// The pair score values of the five buckets on the [0, 1] scale: 0, ¼, ½, ¾, 1.
const VALUES: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];

/// Root of Σ pᵢ·aᵢ/(1 + x·aᵢ) = 0 for x in (−1/max a, −1/min a), where min a < 0 < max a.
/// The function decreases from +∞ to −∞ on that interval; Newton steps safeguarded by
/// bisection find the root to machine precision.
fn secular(p: &[f64; 5], a: &[f64; 5]) -> f64 {
    let (mut lo, mut hi) = (
        -1.0 / a.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        -1.0 / a.iter().copied().fold(f64::INFINITY, f64::min),
    );
    let mut x = 0.0f64;
    for _ in 0..200 {
        let (mut f, mut df) = (0.0, 0.0);
        for (&pi, &ai) in p.iter().zip(a) {
            let d = 1.0 + x * ai;
            f += pi * ai / d;
            df -= pi * ai * ai / (d * d);
        }
        if f == 0.0 {
            return x;
        }
        if f > 0.0 {
            lo = x;
        } else {
            hi = x;
        }
        let newton = x - f / df;
        let next = if newton > lo && newton < hi {
            newton
        } else {
            0.5 * (lo + hi)
        };
        if (next - x).abs() <= 4.0 * f64::EPSILON * x.abs().max(1e-300) || next == x {
            return next;
        }
        x = next;
    }
    x
}

/// The distribution closest (maximum likelihood) to the observed frequencies `p` whose mean
/// pair score (on [0, 1]) is `s`: pᵢ / (1 + x·(vᵢ − s)) with x from the secular equation.
fn mle_expected(p: &[f64; 5], s: f64) -> [f64; 5] {
    let a = VALUES.map(|v| v - s);
    let x = secular(p, &a);
    let mut out = [0.0; 5];
    for i in 0..5 {
        out[i] = p[i] / (1.0 + x * a[i]);
    }
    out
}

/// The generalized log-likelihood ratio of H1: Elo = `elo1` against H0: Elo = `elo0` (logistic
/// Elo, per game) for the pair counts, by fishtest's `LLR_logistic` method. Empty buckets are
/// regularized first, so the value is finite for any counts (≈0 with no pairs); `elo0` and
/// `elo1` must be finite ([`Sprt::new`] checks that).
pub fn llr(counts: &Pentanomial, elo0: f64, elo1: f64) -> f64 {
    let r = counts.regularized();
    let n: f64 = r.iter().sum();
    let p = r.map(|c| c / n);
    let p0 = mle_expected(&p, expected_score(elo0));
    let p1 = mle_expected(&p, expected_score(elo1));
    let mut per_pair = 0.0;
    for i in 0..5 {
        per_pair += p[i] * (p1[i].ln() - p0[i].ln());
    }
    n * per_pair
}

/// Wald's stopping bounds for error rates α (false H1) and β (false H0):
/// (ln(β/(1−α)), ln((1−β)/α)).
pub fn bounds(alpha: f64, beta: f64) -> (f64, f64) {
    ((beta / (1.0 - alpha)).ln(), ((1.0 - beta) / alpha).ln())
}

/// What the test says now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// The LLR rose above the upper bound: the bot is at least `elo1` better (fishtest
    /// "accepted").
    AcceptH1,
    /// The LLR fell below the lower bound: the bot is not `elo1` better (fishtest "rejected").
    AcceptH0,
    /// Keep playing.
    Continue,
}

/// The verdict for an LLR and bounds: strictly above `upper` → H1, strictly below `lower` →
/// H0, otherwise continue (fishtest's comparisons, without its overshoot correction).
pub fn verdict(llr: f64, (lower, upper): (f64, f64)) -> Verdict {
    if llr < lower {
        Verdict::AcceptH0
    } else if llr > upper {
        Verdict::AcceptH1
    } else {
        Verdict::Continue
    }
}

/// A configured test: hypotheses in logistic Elo per game and error rates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sprt {
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
}

/// The test's state for some counts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SprtStatus {
    pub llr: f64,
    pub lower: f64,
    pub upper: f64,
    pub verdict: Verdict,
}

impl Sprt {
    /// Checks the parameters: finite elo0 < elo1, 0 < α, β and α + β < 1.
    pub fn new(elo0: f64, elo1: f64, alpha: f64, beta: f64) -> Result<Self, SprtError> {
        let rate_ok = |r: f64| r > 0.0 && r < 1.0;
        if !(rate_ok(alpha) && rate_ok(beta) && alpha + beta < 1.0) {
            return Err(SprtError::BadErrorRates { alpha, beta });
        }
        if !(elo0.is_finite() && elo1.is_finite() && elo0 < elo1) {
            return Err(SprtError::BadHypotheses { elo0, elo1 });
        }
        Ok(Sprt {
            elo0,
            elo1,
            alpha,
            beta,
        })
    }

    /// `bounds(alpha, beta)`.
    pub fn bounds(&self) -> (f64, f64) {
        bounds(self.alpha, self.beta)
    }

    /// LLR, bounds and verdict for the counts so far.
    pub fn status(&self, counts: &Pentanomial) -> SprtStatus {
        let llr = llr(counts, self.elo0, self.elo1);
        let (lower, upper) = self.bounds();
        SprtStatus {
            llr,
            lower,
            upper,
            verdict: verdict(llr, (lower, upper)),
        }
    }
}

/// Elo of the tested bot from pair counts (fishtest's `get_elo` on a pentanomial).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EloEstimate {
    /// Logistic Elo of the mean score per game.
    pub elo: f64,
    /// 95% interval: the Elo of the score's normal 95% interval ends (not symmetric).
    pub ci95: [f64; 2],
    /// Half the interval's width (fishtest's "±").
    pub plus_minus: f64,
    /// Mean score per game (pair points / 2), regularized counts.
    pub score: f64,
    /// Standard error of `score`, from the spread of the pair scores.
    pub score_se: f64,
    /// Likelihood of superiority: Φ((score − ½)/se).
    pub los: f64,
    /// Pairs counted (not regularized).
    pub pairs: u64,
}

/// The Elo estimate with its 95% interval: mean score per game from the (regularized) pair
/// counts, its standard error from the variance of the pair scores (so the pairing's
/// correlation is accounted for), and the logistic conversion of the score and of the
/// interval's ends.
pub fn elo_estimate(counts: &Pentanomial) -> EloEstimate {
    let r = counts.regularized();
    let n: f64 = r.iter().sum();
    let games = 2.0 * n;
    // Per-game score; pair points are i/2 for bucket i.
    let score = r
        .iter()
        .enumerate()
        .map(|(i, c)| c * i as f64 / 2.0)
        .sum::<f64>()
        / games;
    let pair_mean = 2.0 * score;
    // Per-game variance as fishtest states it: pair-point variance over two games.
    let var = r
        .iter()
        .enumerate()
        .map(|(i, c)| c * (i as f64 / 2.0 - pair_mean).powi(2))
        .sum::<f64>()
        / games;
    let score_se = var.sqrt() / games.sqrt();
    let lo = logistic_elo(score - Z95 * score_se);
    let hi = logistic_elo(score + Z95 * score_se);
    EloEstimate {
        elo: logistic_elo(score),
        ci95: [lo, hi],
        plus_minus: (hi - lo) / 2.0,
        score,
        score_se,
        los: normal_cdf((score - 0.5) / score_se),
        pairs: counts.pairs(),
    }
}

/// Φ(z), the standard normal distribution function, through [`erfc`].
fn normal_cdf(z: f64) -> f64 {
    if z.is_nan() {
        return f64::NAN;
    }
    0.5 * erfc(-z / std::f64::consts::SQRT_2)
}

/// Complementary error function: a 28-term Chebyshev fit in t = 2/(2+x) for x ≥ 0 (the one
/// in Numerical Recipes, 3rd ed., §6.2.2; about 1e-16 relative error), reflection for x < 0.
/// Checked against Python's `math.erfc` through the LOS fixtures.
fn erfc(x: f64) -> f64 {
    #[allow(clippy::excessive_precision, clippy::inconsistent_digit_grouping)]
    const COF: [f64; 28] = [
        -1.3026537197817094,
        6.419_697_923_564_902e-1,
        1.9476473204185836e-2,
        -9.561514786808631e-3,
        -9.46595344482036e-4,
        3.66839497852761e-4,
        4.2523324806907e-5,
        -2.0278578112534e-5,
        -1.624290004647e-6,
        1.303655835580e-6,
        1.5626441722e-8,
        -8.5238095915e-8,
        6.529054439e-9,
        5.059343495e-9,
        -9.91364156e-10,
        -2.27365122e-10,
        9.6467911e-11,
        2.394038e-12,
        -6.886027e-12,
        8.94487e-13,
        3.13092e-13,
        -1.12708e-13,
        3.81e-16,
        7.106e-15,
        -1.523e-15,
        -9.4e-17,
        1.21e-16,
        -2.8e-17,
    ];
    if x < 0.0 {
        return 2.0 - erfc(-x);
    }
    let t = 2.0 / (2.0 + x);
    let ty = 4.0 * t - 2.0;
    let (mut d, mut dd) = (0.0f64, 0.0f64);
    for &c in COF[1..].iter().rev() {
        let tmp = d;
        d = ty * d - dd + c;
        dd = tmp;
    }
    t * (-x * x + 0.5 * (COF[0] + ty * d) - dd).exp()
}

/// Pair probabilities `[LL, LD, DD+WL, WD, WW]` when each game is independent with expected
/// score `expected_score(elo)` and draw probability `draw_ratio` (win = s − d/2, loss =
/// 1 − s − d/2). For simulations and expected test lengths.
pub fn pentanomial_probabilities(elo: f64, draw_ratio: f64) -> Result<[f64; 5], SprtError> {
    let s = expected_score(elo);
    let (d, w) = (draw_ratio, s - draw_ratio / 2.0);
    let l = 1.0 - w - d;
    if !(0.0..1.0).contains(&d) || w < 0.0 || l < 0.0 || !elo.is_finite() {
        return Err(SprtError::BadDrawRatio { elo, draw_ratio });
    }
    Ok([l * l, 2.0 * l * d, d * d + 2.0 * w * l, 2.0 * w * d, w * w])
}
