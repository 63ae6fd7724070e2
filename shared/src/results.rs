//! One finished match as the tournament's scoring sees it (the `result` member of a
//! `results.json` row, reduced to what ratings and reports read), with a checked conversion from
//! the JSON the referee writes.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use thiserror::Error;

/// The scored outcome of one match, seats in roster order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GameResult {
    /// Number of seats (the schedule entry's size).
    pub size: usize,
    /// False when the match does not count (e.g. a bot could not be started).
    pub valid_for_scoring: bool,
    pub names: Vec<String>,
    /// 1 = first; equal ranks are ties.
    pub ranks: Vec<i64>,
    #[serde(default)]
    pub survival_points: Vec<f64>,
    #[serde(default)]
    pub kill_points: Vec<f64>,
    #[serde(default)]
    pub points: Vec<f64>,
    /// Fault count per seat.
    #[serde(default)]
    pub errors: Vec<i64>,
}

/// A [`GameResult`] whose per-seat lists do not match its size.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ShapeError {
    #[error("size {size} but {names} names and {ranks} ranks")]
    Seats {
        size: usize,
        names: usize,
        ranks: usize,
    },
    #[error("size {size} but {len} entries in `{what}`")]
    List {
        size: usize,
        len: usize,
        what: &'static str,
    },
}

/// A `results.json` row that cannot be read as a scored match.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("result row {row}: {why}")]
pub struct RowError {
    /// 1-based position in the results list.
    pub row: usize,
    pub why: String,
}

impl GameResult {
    /// Reads a `results.json` row (`{match, size, result: {...}}`); `row` (1-based) only
    /// names the row in errors. Per-seat lists must have one entry per seat.
    pub fn from_results_row(value: &Value, row: usize) -> Result<Self, RowError> {
        let err = |why: String| RowError { row, why };
        let size = value
            .get("size")
            .and_then(Value::as_u64)
            .ok_or_else(|| err("`size` is missing or not a non-negative integer".into()))?
            as usize;
        let result = value
            .get("result")
            .ok_or_else(|| err("`result` is missing".into()))?;
        let mut game: GameResult = serde_json::from_value(with_size(result, size))
            .map_err(|e| err(format!("`result` is malformed: {e}")))?;
        game.size = size;
        game.check().map_err(|e| err(e.to_string()))?;
        Ok(game)
    }

    /// Checks that every per-seat list has `size` entries (optional lists may be empty).
    pub fn check(&self) -> Result<(), ShapeError> {
        let n = self.size;
        if self.names.len() != n || self.ranks.len() != n {
            return Err(ShapeError::Seats {
                size: n,
                names: self.names.len(),
                ranks: self.ranks.len(),
            });
        }
        for (what, len) in [
            ("survival_points", self.survival_points.len()),
            ("kill_points", self.kill_points.len()),
            ("points", self.points.len()),
            ("errors", self.errors.len()),
        ] {
            if len != n && len != 0 {
                return Err(ShapeError::List { size: n, len, what });
            }
        }
        Ok(())
    }
}

fn with_size(result: &Value, size: usize) -> Value {
    let mut v = result.clone();
    if let Value::Object(m) = &mut v {
        m.insert("size".into(), Value::from(size));
    }
    v
}
