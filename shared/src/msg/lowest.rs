//! The lowest-unique part of a job (the three-seat test game, `games::lowest`): its seed and
//! each answer's limit.

use serde::{Deserialize, Serialize};

use super::JobPayload;

/// A lowest-unique game: its seed (the number of rounds) and each answer's limit in
/// milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LowestJob {
    pub seed: u64,
    pub turn_ms: u64,
}

impl JobPayload for LowestJob {
    fn seed(&self) -> Option<u64> {
        Some(self.seed)
    }
}
