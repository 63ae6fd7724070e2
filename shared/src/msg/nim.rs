//! The Nim part of a job: its heaps' seed and each answer's limit.

use serde::{Deserialize, Serialize};

use super::JobPayload;

/// A game of Nim, the farm's smallest game (the template of the game boundary, see
/// `docs/adding-a-game.md`): its heaps' seed and each answer's limit in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct NimJob {
    pub seed: u64,
    pub turn_ms: u64,
}

impl JobPayload for NimJob {
    fn seed(&self) -> Option<u64> {
        Some(self.seed)
    }
}
