//! The 钳王 part of a job: the seed of the game's draws (its two seats are the job's).

use serde::{Deserialize, Serialize};

use super::JobPayload;

/// A 钳王 match: the seed of the game's draws (`game.random`); two seats, black then red.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct QianwangJob {
    pub seed: u64,
}

impl JobPayload for QianwangJob {
    fn seed(&self) -> Option<u64> {
        Some(self.seed)
    }
}
