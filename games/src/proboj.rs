//! The proboj family's result as the farm carries it: the referee is an external server program,
//! so a game cannot be re-simulated; what a worker sends back is the game's folder as a bundle,
//! and [`check`] holds it to its job (the same game folder, the same players, only safe relative
//! paths) before anything is written.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The version of the proboj runner protocol a worker must speak exactly.
/// 2: scores are numbers with fractions (a worker of version 1 refused them).
pub const VERSION: &str = "matchfarm-proboj/2";

/// A file of a finished game folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BundleFile {
    /// Relative to the game folder, `/`-separated.
    pub path: String,
    /// The bytes, base64.
    pub data: String,
}

/// What a worker sends back for a proboj game: the outcome and the game folder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GameBundle {
    pub gamefolder: String,
    pub players: Vec<String>,
    /// The exact scores of the last SCORES (`383.333`; score.json holds what the official
    /// runner stores, 383).
    pub scores: Option<Vec<(String, f64)>>,
    /// "end", "server-exited", "interrupted" or `"failed: <why>"`.
    pub ending: String,
    pub warnings: Vec<String>,
    pub commands: u64,
    pub files: Vec<BundleFile>,
}

/// The part of a games.json entry a bundle is held to.
#[derive(Debug, Deserialize)]
struct GameEntry {
    gamefolder: String,
    players: Vec<String>,
}

/// Why a bundle does not belong to its job.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BundleError {
    #[error("the job's games.json entry does not parse: {0}")]
    Entry(String),
    #[error("the bundle does not parse: {0}")]
    Json(String),
    #[error("the bundle is the folder of {found:?}, the job is game {expected:?}")]
    Folder { expected: String, found: String },
    #[error("the bundle lists players {found:?}, the game has {expected:?}")]
    Players {
        expected: Vec<String>,
        found: Vec<String>,
    },
    #[error("unsafe path in the bundle: {0}")]
    Path(String),
}

/// What a report of a proboj game is accepted as: its bundle.
pub type Record = GameBundle;

/// Hold a report's bundle to its job's games.json entry (the referee is the game's own server:
/// the bundle is held to its game, not re-run).
pub fn accept(
    job: &shared::msg::ProbojJob,
    text: &str,
    holder: &crate::accept::Holder,
) -> Result<GameBundle, crate::accept::AcceptError> {
    check(&job.game_json, text).map_err(|e| holder.invalid(e.to_string()))
}

/// Read a bundle and hold it to the games.json entry of its job.
pub fn check(game_json: &str, bundle_json: &str) -> Result<GameBundle, BundleError> {
    let entry: GameEntry =
        serde_json::from_str(game_json).map_err(|e| BundleError::Entry(e.to_string()))?;
    let b: GameBundle =
        serde_json::from_str(bundle_json).map_err(|e| BundleError::Json(e.to_string()))?;
    if b.gamefolder != entry.gamefolder {
        return Err(BundleError::Folder {
            expected: entry.gamefolder,
            found: b.gamefolder,
        });
    }
    shared::manifest::check_path(&b.gamefolder).map_err(|e| BundleError::Path(e.to_string()))?;
    if b.players != entry.players {
        return Err(BundleError::Players {
            expected: entry.players,
            found: b.players,
        });
    }
    for f in &b.files {
        shared::manifest::check_path(&f.path).map_err(|e| BundleError::Path(e.to_string()))?;
    }
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundle(folder: &str, players: &[&str], score: &str, path: &str) -> String {
        serde_json::to_string(&GameBundle {
            gamefolder: folder.into(),
            players: players.iter().map(|s| s.to_string()).collect(),
            scores: Some(vec![(score.into(), 3.0)]),
            ending: "end".into(),
            warnings: Vec::new(),
            commands: 4,
            files: vec![BundleFile {
                path: path.into(),
                data: String::new(),
            }],
        })
        .unwrap()
    }

    #[test]
    fn a_bundle_is_held_to_its_game() {
        let game = r#"{"gamefolder":"g1","players":["a","b"]}"#;
        check(game, &bundle("g1", &["a", "b"], "a", "logs/a.log")).unwrap();
        assert!(matches!(
            check(game, &bundle("g2", &["a", "b"], "a", "x")),
            Err(BundleError::Folder { .. })
        ));
        assert!(matches!(
            check(game, &bundle("g1", &["b", "a"], "a", "x")),
            Err(BundleError::Players { .. })
        ));
        // Scores name the server's processes (`a_0`, `a_1` with two processes per player).
        check(game, &bundle("g1", &["a", "b"], "a_1", "x")).unwrap();
        assert!(matches!(
            check(game, &bundle("g1", &["a", "b"], "a", "../x")),
            Err(BundleError::Path(_))
        ));
        assert!(matches!(check(game, "{"), Err(BundleError::Json(_))));
    }
}
