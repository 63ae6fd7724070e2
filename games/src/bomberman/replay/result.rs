//! The result object of a match (inside the replay, printed by `farm play`, stored by
//! tournaments): exact and floating scores, ranks, counters and faults per player.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use shared::Fault;

use super::MapSource;
use crate::bomberman::outcome::Outcome;

/// A finished match's result, index = seat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatchResult {
    pub version: String,
    pub seed: u64,
    pub players: usize,
    pub map_source: MapSource,
    pub names: Vec<String>,
    /// `bot_<seat>` -> sha256 hex.
    pub hashes: BTreeMap<String, String>,
    pub ranks: Vec<u32>,
    pub points: Vec<f64>,
    /// Exact points, e.g. "9/2".
    pub points_exact: Vec<String>,
    pub survival_points: Vec<f64>,
    pub kill_points: Vec<f64>,
    /// Exact kill shares, e.g. "1/2" ("0" for none).
    pub kill_shares: Vec<String>,
    /// Fault count per player.
    pub errors: Vec<u32>,
    /// -1 = survived.
    pub death_turns: Vec<i32>,
    pub turns: u32,
    /// False iff some bot had a start_failure or compile_failure fault.
    pub valid_for_scoring: bool,
    pub bombs_placed: Vec<u32>,
    pub boxes_broken: Vec<u32>,
    pub faults: Vec<Vec<Fault>>,
    /// Per-bot wall/CPU totals from the worker; not re-simulable, so not verified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing: Option<Value>,
}

fn to_f64(r: &num_rational::Ratio<i64>) -> f64 {
    *r.numer() as f64 / *r.denom() as f64
}

/// The result of a match from its meta data, the engine's outcome and the recorded faults.
pub fn build_result(
    seed: u64,
    names: &[String],
    hashes: &BTreeMap<String, String>,
    map_source: MapSource,
    outcome: &Outcome,
    faults: &[Vec<Fault>],
) -> MatchResult {
    let valid = !faults.iter().flatten().any(|f| f.kind.is_start_failure());
    MatchResult {
        version: crate::bomberman::VERSION.to_string(),
        seed,
        players: outcome.points.len(),
        map_source,
        names: names.to_vec(),
        hashes: hashes.clone(),
        ranks: outcome.ranks.clone(),
        points: outcome.points.iter().map(to_f64).collect(),
        points_exact: outcome.points.iter().map(|p| p.to_string()).collect(),
        survival_points: outcome.survival.iter().map(to_f64).collect(),
        kill_points: outcome.kill_points.iter().map(to_f64).collect(),
        kill_shares: outcome.kill_shares.iter().map(|k| k.to_string()).collect(),
        errors: faults.iter().map(|f| f.len() as u32).collect(),
        death_turns: outcome.death_turns.clone(),
        turns: outcome.turns,
        valid_for_scoring: valid,
        bombs_placed: outcome.bombs_placed.clone(),
        boxes_broken: outcome.boxes_broken.clone(),
        faults: faults.to_vec(),
        timing: None,
    }
}
