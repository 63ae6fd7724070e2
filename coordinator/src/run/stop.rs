//! Stop rules for the one dispatch loop ([`super::execute::drive`]): something consulted after
//! each row checkpointed in schedule order (the rows of a resume too, replayed first) that may
//! say "stop with this row as the last one". The loop then publishes nothing more, cancels what
//! is still in flight (acknowledged, not logged), and writes the outputs of a run cut there, so
//! `results.json` stays a prefix of the schedule. A rule only ever stops at the end of a unit
//! (see [`shared::settle::unit_ends`]), so a cut never splits a map's seat rotations.
//!
//! Two rules: [`UntilSettled`] (`farm run --until-settled`) here, and the SPRT of `farm sprt`
//! in [`crate::sprt`]. The decisions themselves are pure functions in `shared::settle`.

use anyhow::{bail, Result};
use serde::Serialize;

use shared::results::GameResult;
use shared::schedule::ScheduleEntry;
use shared::settle::{self, Settled};

use super::checkpoint::Row;

/// What the dispatch loop asks of a stop rule.
pub trait StopRule {
    /// One row checkpointed in schedule order. `Some(reason)` stops the run with this row as
    /// its last one (rules say so only at the end of a unit).
    fn observe(&mut self, row: &Row) -> Option<String>;
    /// No match numbered above this is ever published (e.g. the last whole unit within
    /// --max-matches); `None`: the whole schedule.
    fn limit(&self) -> Option<u64> {
        None
    }
    /// A short state for the progress line ("LLR 1.20 in [-2.94, 2.94]").
    fn status(&self) -> Option<String> {
        None
    }
}

/// How a run that a stop rule ended early was cut.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct Stopped {
    pub reason: String,
    /// The last match in the log (the cut).
    pub after: u64,
    pub matches_played: u64,
    pub matches_scheduled: u64,
    /// Jobs in flight at the stop whose reports were acknowledged and dropped.
    pub cancelled: u64,
    /// Results that arrived ahead of the cut: kept in results.ahead.jsonl, not counted.
    pub kept_ahead: u64,
    /// Numbers of the matches cancelled or kept ahead (past the cut, not counted).
    #[serde(skip)]
    pub cut_numbers: Vec<u64>,
}

/// File in the output folder describing an early stop (written only when a run stopped early).
pub const STOPPED_NAME: &str = "stopped.json";

/// The scored game of a checkpointed row (None for a failed match or an unusable result).
pub fn game_of(row: &Row) -> Option<GameResult> {
    let result = row.result.as_ref()?;
    let value = serde_json::json!({"match": row.number, "size": row.size, "result": result});
    GameResult::from_results_row(&value, row.number as usize).ok()
}

/// The settings of `farm run --until-settled`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SettleSettings {
    pub confidence: f64,
    pub max_matches: Option<u64>,
}

impl SettleSettings {
    /// identity.json's `scoring_code` entry (a resume must use the same settings).
    pub fn identity_value(&self) -> String {
        serde_json::json!({
            "confidence": self.confidence,
            "max_matches": self.max_matches,
            "resamples": settle::RESAMPLES,
            "min_units": settle::MIN_UNITS,
        })
        .to_string()
    }
}

/// Key of identity.json's `scoring_code` for --until-settled (present only with the flag).
pub const UNTIL_SETTLED: &str = "until_settled";
/// Key of identity.json's `scoring_code` holding the test's parameters.
pub const SPRT_IDENTITY: &str = "sprt";

/// `--until-settled`: after each whole unit, stop when every adjacent pair of the BT ranking
/// is separated at the confidence by the map-unit bootstrap; or at the last whole unit within
/// `--max-matches`.
pub struct UntilSettled {
    settings: SettleSettings,
    ends: Vec<bool>,
    ids: Vec<u32>,
    roster: Vec<String>,
    sizes: Vec<usize>,
    anchor: String,
    games: Vec<GameResult>,
    units: Vec<u32>,
    cut: Option<u64>,
    last: Option<Settled>,
}

impl UntilSettled {
    pub fn new(
        settings: SettleSettings,
        schedule: &[ScheduleEntry],
        roster: Vec<String>,
        sizes: &[i64],
        anchor: String,
    ) -> Result<Self> {
        if !(settings.confidence > 0.0 && settings.confidence < 1.0) {
            bail!(
                "--confidence must be between 0 and 1 (exclusive), got {}",
                settings.confidence
            );
        }
        let ends = settle::unit_ends(schedule);
        let cut = match settings.max_matches {
            None => None,
            Some(max) => {
                let last_end = ends
                    .iter()
                    .enumerate()
                    .take(usize::try_from(max).unwrap_or(usize::MAX))
                    .filter(|(_, &e)| e)
                    .map(|(i, _)| i as u64 + 1)
                    .next_back();
                match last_end {
                    Some(n) => Some(n),
                    None => bail!(
                        "--max-matches {max} is smaller than the schedule's first unit ({} matches: one map with all its seat rotations); nothing could be played",
                        ends.iter().position(|&e| e).map_or(0, |i| i + 1)
                    ),
                }
            }
        };
        Ok(UntilSettled {
            settings,
            ids: settle::unit_ids(schedule),
            ends,
            roster,
            sizes: sizes.iter().map(|&s| s as usize).collect(),
            anchor,
            games: Vec::new(),
            units: Vec::new(),
            cut,
            last: None,
        })
    }
}

impl StopRule for UntilSettled {
    fn observe(&mut self, row: &Row) -> Option<String> {
        let i = row.number.checked_sub(1)? as usize;
        if let Some(g) = game_of(row) {
            self.games.push(g);
            self.units
                .push(self.ids.get(i).copied().unwrap_or(u32::MAX));
        }
        if !self.ends.get(i).copied().unwrap_or(false) {
            return None;
        }
        // Deterministic per cut, so a resume decides exactly as the first run did.
        let decision = settle::settled(
            &self.games,
            &self.units,
            &self.roster,
            &self.sizes,
            &self.anchor,
            self.settings.confidence,
            settle::RESAMPLES,
            row.number,
        );
        if let Ok(s) = decision {
            let settled = s.settled;
            let weakest = s
                .weakest()
                .map(|w| format!("{} > {} in {:.1}%", w.higher, w.lower, 100.0 * w.share))
                .unwrap_or_default();
            self.last = Some(s);
            if settled {
                return Some(format!(
                    "ranking settled at {:.1}% confidence after match {} (weakest adjacent pair: {weakest} of {} map-unit bootstrap resamples)",
                    100.0 * self.settings.confidence,
                    row.number,
                    settle::RESAMPLES
                ));
            }
        }
        if self.cut == Some(row.number) && (row.number as usize) < self.ends.len() {
            return Some(format!(
                "--max-matches {}: the last whole unit within it ends at match {}; ranking not settled",
                self.settings.max_matches.unwrap_or(0),
                row.number
            ));
        }
        None
    }

    fn limit(&self) -> Option<u64> {
        self.cut
    }

    fn status(&self) -> Option<String> {
        let w = self.last.as_ref()?.weakest()?;
        Some(format!(
            "weakest pair {}>{} {:.0}% (need {:.0}%)",
            w.higher,
            w.lower,
            100.0 * w.share,
            100.0 * self.settings.confidence
        ))
    }
}
