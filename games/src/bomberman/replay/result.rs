//! The result object of a match (inside the replay, printed by `farm play`, stored by
//! tournaments): exact and floating scores, ranks, counters and faults per player; and the
//! compact form a tournament's result rows keep (per-bot timing summed up, not turn by turn).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use shared::Fault;

use super::turn_timing::turn_entries;
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
    /// Per-bot wall/CPU totals and per-turn times from the worker; not re-simulable, so not
    /// verified. Result rows keep only its [`timing_summary`].
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

/// The per-turn timing members a summary adds up: (member of a `per_turn` entry, whether the
/// summary also keeps its maximum and mean).
const SUMMED: [(&str, bool); 3] = [("wall_us", true), ("cpu_us", true), ("waited_us", false)];

/// A bot-by-bot summary of the worker's timing (`bot_<seat>` -> object): every member but the
/// per-turn list, with `turns`, `deadline_misses`, the totals `wall_us`, `cpu_us`, `waited_us`
/// and `max_wall_us`, `max_cpu_us`, `mean_wall_us`, `mean_cpu_us` (integer microseconds)
/// re-derived from that list (in either of its forms, [`super::turn_timing`]). This is what a tournament's result rows keep; the per-turn list
/// stays in the replay. Anything that is not an object of objects is kept as it is.
pub fn timing_summary(timing: &Value) -> Value {
    let Some(bots) = timing.as_object() else {
        return timing.clone();
    };
    let mut out = serde_json::Map::new();
    for (bot, t) in bots {
        out.insert(bot.clone(), bot_summary(t));
    }
    Value::Object(out)
}

fn bot_summary(t: &Value) -> Value {
    let Some(o) = t.as_object() else {
        return t.clone();
    };
    let mut s = o.clone();
    match s.shift_remove("per_turn") {
        Some(Value::Array(_) | Value::Object(_)) => {}
        _ => return Value::Object(s),
    }
    let turns = turn_entries(t);
    let n = turns.len() as u64;
    s.insert("turns".into(), n.into());
    for (member, max_and_mean) in SUMMED {
        let values = turns
            .iter()
            .filter_map(|x| x.get(member).and_then(Value::as_u64));
        let (total, max) = values.fold((0u64, 0u64), |(t, m), v| (t.saturating_add(v), m.max(v)));
        s.insert(member.into(), total.into());
        if max_and_mean {
            s.insert(format!("max_{member}"), max.into());
            s.insert(
                format!("mean_{member}"),
                total.checked_div(n).unwrap_or(0).into(),
            );
        }
    }
    let misses = turns
        .iter()
        .filter(|x| x.get("met").and_then(Value::as_bool) == Some(false))
        .count() as u64;
    s.insert("deadline_misses".into(), misses.into());
    Value::Object(s)
}

impl MatchResult {
    /// The result as a tournament's result row keeps it: every member as in the replay, but
    /// `timing` reduced to its [`timing_summary`] (the per-turn timing lives only in the replay).
    pub fn row_json(&self) -> Value {
        let mut v = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Some(t) = v.get_mut("timing") {
            *t = timing_summary(t);
        }
        v
    }
}
