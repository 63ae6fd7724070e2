//! The note a run that stopped early carries in its views (汇总.md's first line, bt.json's
//! `stopped`): why it stopped and how much of the schedule was played, made from the stop
//! rule's [`Stopped`] (live, or read back from stopped.json by `farm report`).

use serde::Serialize;

use crate::run::checkpoint::AHEAD_NAME;
use crate::run::stop::Stopped;

/// Why a run stopped before its schedule ended, and how much of it was played.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct StopNote {
    /// Why, in words a user reads (e.g. "every adjacent pair separated at 95%").
    pub reason: String,
    /// Matches with a result (or failed for good) when the run stopped.
    pub matches_played: u64,
    /// Matches in the full schedule.
    pub matches_scheduled: u64,
    /// Matches that were in flight at the stop and were cancelled (not played).
    pub cancelled: u64,
}

impl StopNote {
    /// The views' note of an early stop (also rebuilt from stopped.json by `farm report`).
    pub fn of(stopped: &Stopped) -> StopNote {
        let mut reason = stopped.reason.clone();
        if stopped.kept_ahead > 0 {
            reason.push_str(&format!(
                "; {} results that arrived ahead of the cut are kept in {}, not counted",
                stopped.kept_ahead, AHEAD_NAME
            ));
        }
        StopNote {
            reason,
            matches_played: stopped.matches_played,
            matches_scheduled: stopped.matches_scheduled,
            cancelled: stopped.cancelled,
        }
    }

    /// The line at the top of 汇总.md.
    pub fn markdown(&self) -> String {
        format!(
            "> **Stopped early: {}; {} of {} scheduled matches played ({} in flight cancelled).**\n\n",
            self.reason.replace('\n', " "),
            self.matches_played,
            self.matches_scheduled,
            self.cancelled
        )
    }
}
