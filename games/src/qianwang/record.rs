//! The match record (replay): players, seed, every ply and the outcome, with JSON (de)serialization
//! and [`verify`], which re-plays the record through the rules and names the first ply that differs.

use super::board::Side;
use super::game::{Game, Outcome, Ply, POINTS_PER_MOVE};
use super::rules::IllegalMove;
use super::VERSION;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// One seat: the bot's name and the SHA-256 (lowercase hex) of its code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Player {
    pub name: String,
    pub code_sha256: String,
}

/// A whole match: what `play_match` returns and the ladder stores and shows.
/// `plies` holds only plies that were played (a faulting bot's answer is not a ply; the fault is
/// in `outcome`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MatchRecord {
    pub version: String,
    pub seed: u64,
    pub black: Player,
    pub red: Player,
    pub plies: Vec<Ply>,
    pub outcome: Outcome,
}

/// A record that could not be read.
#[derive(Debug, Error)]
pub enum RecordError {
    #[error("match record JSON is malformed at line {line}, column {column}: {source}")]
    Json {
        line: usize,
        column: usize,
        #[source]
        source: serde_json::Error,
    },
}

/// What is wrong with one ply of a record.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PlyMismatch {
    #[error("recorded side {found}, but it is {expected}'s turn")]
    WrongSide { expected: Side, found: Side },
    #[error("not legal: {0}")]
    Illegal(IllegalMove),
    #[error("recorded captures {recorded:?}, the rules capture {replayed:?}")]
    Captured {
        recorded: Vec<[u8; 2]>,
        replayed: Vec<[u8; 2]>,
    },
    #[error("recorded {used} thinking points, more than {limit}")]
    TooManyPoints { used: u32, limit: u32 },
    #[error("a pass recorded {used} thinking points (a pass never runs the bot)")]
    PassWithPoints { used: u32 },
    #[error("the game had already ended before this ply")]
    AfterEnd,
}

/// Why a record does not re-play to itself.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum VerifyError {
    #[error("record version {found:?} is not {expected:?}")]
    Version { found: String, expected: String },
    #[error("ply {index} (turn {turn}, 0-based index in plies): {what}")]
    Ply {
        index: usize,
        turn: u32,
        what: PlyMismatch,
    },
    #[error("outcome: the record says {recorded}, but re-playing gives {replayed}")]
    Outcome { recorded: String, replayed: String },
}

impl VerifyError {
    /// The 0-based index (in `plies`) of the first ply that differs, if a ply is to blame.
    pub fn ply_index(&self) -> Option<usize> {
        match self {
            VerifyError::Ply { index, .. } => Some(*index),
            _ => None,
        }
    }
}

impl MatchRecord {
    /// Compact JSON.
    pub fn to_json(&self) -> String {
        // Only strings, numbers, arrays and string-keyed objects: serialization cannot fail.
        serde_json::to_string(self).expect("MatchRecord serializes to JSON")
    }

    /// Indented JSON (for files people read).
    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).expect("MatchRecord serializes to JSON")
    }

    /// Parses a record; the error names the line and column.
    pub fn from_json(text: &str) -> Result<MatchRecord, RecordError> {
        serde_json::from_str(text).map_err(|source| RecordError::Json {
            line: source.line(),
            column: source.column(),
            source,
        })
    }

    /// Re-plays the plies through the rules and returns the game after the last one (does not
    /// check the outcome; [`verify`] does).
    pub fn replay(&self) -> Result<Game, VerifyError> {
        let mut game = Game::new();
        for (index, ply) in self.plies.iter().enumerate() {
            let turn = game.turn_number();
            let err = |what| VerifyError::Ply { index, turn, what };
            if game.is_over() {
                return Err(err(PlyMismatch::AfterEnd));
            }
            if ply.side != game.to_move() {
                return Err(err(PlyMismatch::WrongSide {
                    expected: game.to_move(),
                    found: ply.side,
                }));
            }
            if ply.points_used > POINTS_PER_MOVE {
                return Err(err(PlyMismatch::TooManyPoints {
                    used: ply.points_used,
                    limit: POINTS_PER_MOVE,
                }));
            }
            if ply.mv.is_none() && ply.points_used != 0 {
                return Err(err(PlyMismatch::PassWithPoints {
                    used: ply.points_used,
                }));
            }
            let played = game
                .play_with_points(ply.mv, ply.points_used)
                .map_err(|e| err(PlyMismatch::Illegal(e)))?;
            if played.ply.captured != ply.captured {
                return Err(err(PlyMismatch::Captured {
                    recorded: ply.captured.clone(),
                    replayed: played.ply.captured,
                }));
            }
        }
        Ok(game)
    }
}

/// One line describing an outcome, for messages: e.g. `black wins by material at turn 41`.
pub fn summarize(o: &Outcome) -> String {
    let reason = match o.runtime {
        Some(k) => format!("runtime ({})", k.as_str()),
        None => o.reason.as_str().to_string(),
    };
    match o.winner {
        Some(w) => format!("{w} wins by {reason} at turn {}", o.turn),
        None => format!("draw by {reason} at turn {}", o.turn),
    }
}

/// Re-plays `record` and checks every ply (side, legality, captures, points) and the outcome
/// (winner, reason, runtime subtype, turn; not `detail`). A rules ending must come exactly after
/// the last ply; a fault ending must name the side to move after the last ply as the loser.
pub fn verify(record: &MatchRecord) -> Result<(), VerifyError> {
    if record.version != VERSION {
        return Err(VerifyError::Version {
            found: record.version.clone(),
            expected: VERSION.to_string(),
        });
    }
    let game = record.replay()?;
    let recorded = &record.outcome;
    let expected: Option<Outcome> = match game.outcome() {
        Some(o) => Some(o),
        None if recorded.reason.is_fault() => Some(Outcome {
            winner: Some(game.to_move().other()),
            reason: recorded.reason,
            runtime: recorded.runtime,
            detail: String::new(),
            turn: game.turn_number(),
        }),
        None => None,
    };
    let runtime_ok = recorded.runtime.is_some() == (recorded.reason == super::EndReason::Runtime);
    match expected {
        Some(e)
            if runtime_ok
                && e.winner == recorded.winner
                && e.reason == recorded.reason
                && e.runtime == recorded.runtime
                && e.turn == recorded.turn =>
        {
            Ok(())
        }
        Some(e) => Err(VerifyError::Outcome {
            recorded: summarize(recorded),
            replayed: if runtime_ok {
                summarize(&e)
            } else {
                format!(
                    "{} (runtime subtype present exactly when reason is runtime)",
                    summarize(&e)
                )
            },
        }),
        None => Err(VerifyError::Outcome {
            recorded: summarize(recorded),
            replayed: format!(
                "a game still running at turn {} ({} to move)",
                game.turn_number(),
                game.to_move()
            ),
        }),
    }
}

/// Held to its job like every seat game's record (`accept::seated`).
impl crate::seated::SeatedRecord for MatchRecord {
    fn decode(text: &str) -> Result<Self, crate::seated::Refusal> {
        MatchRecord::from_json(text).map_err(Into::into)
    }

    fn verify(&self) -> Result<(), crate::seated::Refusal> {
        verify(self).map_err(Into::into)
    }

    fn seed(&self) -> u64 {
        self.seed
    }

    fn seats(&self) -> Vec<(&str, &str)> {
        [&self.black, &self.red]
            .into_iter()
            .map(|p| (p.name.as_str(), p.code_sha256.as_str()))
            .collect()
    }
}
