//! The bomberman part of a job: the map seed, the referee package a worker must hold and the
//! clock the match is played under.

use serde::{Deserialize, Serialize};

use super::JobPayload;

/// A bomberman match: the map seed, the referee package and the clock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BombermanJob {
    pub seed: u64,
    /// sha256 over the referee package's MANIFEST (what the worker must be able to satisfy).
    pub manifest_digest: String,
    /// The tournament's clock (None: the rules' clock).
    pub clock: Option<BombermanClock>,
}

impl JobPayload for BombermanJob {
    fn seed(&self) -> Option<u64> {
        Some(self.seed)
    }

    fn referee_package(&self) -> Option<&str> {
        Some(&self.manifest_digest)
    }
}

/// The clock a bomberman match is played under: it travels in the job so that every worker
/// plays a tournament's matches alike, whatever its own environment says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BombermanClock {
    /// Answer limit of every turn after turn 0, milliseconds (turn 0 gets at least the rules'
    /// start-up allowance).
    pub turn_ms: u64,
    /// Each bot's time bank for the match, milliseconds (0: none).
    pub time_bank_ms: u64,
    /// Both limits are stated for a host of this speed (reference bot-turns per second, the
    /// workers' self-test signature): each worker plays them scaled by reference / its own
    /// speed and records the scaling in the replay. None: played as stated.
    pub reference_speed: Option<u32>,
}
