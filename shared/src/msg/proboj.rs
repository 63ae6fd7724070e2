//! The proboj part of a job: one game of a games.json list with the runner's config and every
//! file of its package (its players are commands of the package, not seats).

use serde::{Deserialize, Serialize};

use super::{JobPayload, PackageFile, ProgramRef};

/// One proboj game for a remote worker: the runner's config and the game's entry (both as the
/// JSON the user wrote, paths relative to the package root), and every file of the package.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbojJob {
    /// The digest of the package's file list (its MANIFEST): what the worker checks `files`
    /// against.
    pub manifest_digest: String,
    /// config.json with `game_root` relative to the package root.
    pub config_json: String,
    /// The games.json entry of this game.
    pub game_json: String,
    /// Files laid out under the package root before the game starts.
    pub files: Vec<PackageFile>,
    /// Stop players while the server is not waiting on them (the CPU-fair scheme).
    pub fair: bool,
    /// End the game when the server is silent this long (milliseconds; None: never).
    pub server_timeout_ms: Option<u64>,
}

impl JobPayload for ProbojJob {
    fn files(&self) -> Vec<ProgramRef> {
        self.files.iter().map(PackageFile::program).collect()
    }

    /// The players its games.json entry names (0 when the entry does not parse: the worker
    /// refuses such a game when it plays it).
    fn players(&self) -> Option<usize> {
        let entry = serde_json::from_str::<serde_json::Value>(&self.game_json).ok();
        Some(entry.and_then(|v| v["players"].as_array().map(Vec::len)).unwrap_or(0))
    }
}
