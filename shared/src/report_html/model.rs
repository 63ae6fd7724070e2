//! The report page's model: the plain numbers [`super::render`] draws, embedded as they are
//! in the page's JSON blob.

use serde::Serialize;

/// How a game scores a match, for the per-size table's wording and columns: Bomberman's
/// survival and kill points (the reference report's table), or a win, a draw and a loss
/// (1, ½, 0: 钳王). The numbers behind both are the same sums; only the wording differs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scoring {
    #[default]
    SurvivalKill,
    WinDrawLoss,
}

impl Scoring {
    /// True for the default (a page's model leaves it out, so a Bomberman page is unchanged).
    pub fn is_default(&self) -> bool {
        *self == Scoring::default()
    }
}

/// Everything the page shows.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Page {
    /// The run's name (its output folder's name).
    pub title: String,
    pub anchor: String,
    pub roster: Vec<String>,
    pub sizes: Vec<usize>,
    pub matches_scheduled: u64,
    /// Matches with a result or failed for good.
    pub matches_done: u64,
    /// Matches with a result.
    pub games: u64,
    /// Results that do not count for scoring.
    pub games_invalid: u64,
    pub ratings: Ratings,
    pub per_size: Vec<SizeRow>,
    /// How the per-size table is worded (left out for Bomberman's, the default).
    #[serde(skip_serializing_if = "Scoring::is_default")]
    pub scoring: Scoring,
    pub head_to_head: HeadToHead,
    pub faults: Vec<FaultCount>,
    /// Matches and faults per worker (empty without a played-by record).
    pub workers: Vec<WorkerLine>,
    /// Matches that failed for good (infrastructure): number and why.
    pub failed: Vec<(u64, String)>,
    /// The latest [`super::RECENT_MATCHES`] results, newest first.
    pub recent: Vec<MatchLine>,
    /// Every match with a result, schedule order (for the links).
    pub numbers: Vec<u64>,
    /// Progress over time: `(unix seconds, matches done)`, oldest first, thinned.
    pub timeline: Vec<(f64, u64)>,
    pub stop: Option<StopInfo>,
    pub rule: Option<RuleState>,
    /// Bots that did not compile and played anyway (--allow-compile-failures).
    pub not_compiled: Vec<String>,
    /// Workers the run quarantined, with the evidence.
    pub quarantined: Vec<crate::quarantine::Evidence>,
}

/// The Bradley–Terry table.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Ratings {
    /// Best first; empty when there is no fit.
    pub rows: Vec<RatingRow>,
    /// Why there is no fit (yet).
    pub unavailable: Option<String>,
    pub bootstrap: Option<BootInfo>,
    /// Why there are no bootstrap intervals.
    pub bootstrap_unavailable: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RatingRow {
    pub name: String,
    pub rating: f64,
    /// Wald 95% interval.
    pub wald: [f64; 2],
    /// Paired map bootstrap 95% interval.
    pub bootstrap: Option<[f64; 2]>,
}

/// How the bootstrap intervals were computed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BootInfo {
    pub units: usize,
    pub resamples: usize,
    pub fitted: usize,
    pub seed: u64,
    /// Results it was computed on (fewer than `games` in a live refresh).
    pub games_used: u64,
}

/// One row of the per-size table (as in 汇总.md).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SizeRow {
    pub size: usize,
    pub name: String,
    pub games: u64,
    pub survival: f64,
    pub kill: f64,
    pub points: f64,
    /// Percent of games won alone.
    pub sole_first: f64,
    /// Percent of games first, ties included.
    pub first: f64,
    pub faulty: u64,
}

/// Pairwise finishing order in the valid games: `ahead[i][j]` games where `names[i]` ranked
/// strictly better than `names[j]`, `together[i][j]` valid games with both seated.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct HeadToHead {
    pub names: Vec<String>,
    pub ahead: Vec<Vec<u64>>,
    pub together: Vec<Vec<u64>>,
}

/// One worker's line of the workers table.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct WorkerLine {
    pub worker: String,
    /// Its speed signature (reference bot-turns per second); None: it sent none.
    pub speed: Option<f64>,
    /// Matches whose result it gave.
    pub matches: u64,
    /// Bot faults in those matches.
    pub bot_faults: u64,
    /// Its reports that gave no result (the host's trouble, retried elsewhere).
    pub failed: u64,
    /// Seconds it spent on matches.
    pub seconds: f64,
}

/// Faults of one kind by one bot.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FaultCount {
    pub bot: String,
    pub kind: String,
    pub count: u64,
    /// The first [`super::FAULT_LINKS`] matches with such a fault.
    pub matches: Vec<u64>,
}

/// One match as the recent list shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MatchLine {
    pub number: u64,
    pub size: usize,
    pub valid: bool,
    pub seats: Vec<MatchSeat>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MatchSeat {
    pub name: String,
    pub rank: i64,
    pub points: f64,
    pub faults: u64,
}

/// Why a run stopped before its schedule ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StopInfo {
    pub reason: String,
    pub matches_played: u64,
    pub matches_scheduled: u64,
    pub cancelled: u64,
}

/// The state of the rule that may end the run early.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "rule", rename_all = "snake_case")]
pub enum RuleState {
    /// `farm sprt`.
    Sprt {
        new: String,
        base: String,
        elo0: f64,
        elo1: f64,
        alpha: f64,
        beta: f64,
        max_pairs: u64,
        pairs: u64,
        void_pairs: u64,
        /// [LL, LD, DD+WL, WD, WW].
        pentanomial: [u64; 5],
        llr: f64,
        lower: f64,
        upper: f64,
        elo: f64,
        elo_ci95: [f64; 2],
        /// "H1 accepted", "H0 accepted", "inconclusive" or "running".
        verdict: String,
    },
    /// `farm run --until-settled`: the settings, and per adjacent pair of the ranking
    /// whether the page's bootstrap intervals are apart (the rule decides on its own
    /// resamples at unit ends; this is the picture, the stop line is the decision).
    UntilSettled {
        confidence: f64,
        max_matches: Option<u64>,
        adjacent: Vec<(String, String, bool)>,
    },
}
