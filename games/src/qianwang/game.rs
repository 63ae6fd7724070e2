//! The game as a state machine: whose turn, the no-capture counter, passes, history and the
//! ending (rules endings, or a bot fault reported by the runtime through [`Game::forfeit`]).

use super::board::{Board, Move, Side};
use super::rules::{self, EndReason, IllegalMove};
use serde::{Deserialize, Serialize};

/// Thinking points a bot may spend per move (each `Rules.apply` costs one).
pub const POINTS_PER_MOVE: u32 = 100;

/// Which runtime limit a bot hit (the subtype when the reason is `runtime`). JSON: snake_case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RuntimeKind {
    /// The per-move wall clock ran out.
    Timeout,
    /// `Rules.apply` was called with no thinking points left.
    PointsExhausted,
    /// The bot went over its memory limit.
    Memory,
}

impl RuntimeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RuntimeKind::Timeout => "timeout",
            RuntimeKind::PointsExhausted => "points_exhausted",
            RuntimeKind::Memory => "memory",
        }
    }
}

/// A bot fault that loses the game on the spot for the side to move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Forfeit {
    /// Returned a move that is not legal.
    Illegal,
    /// Threw an exception (or its code could not load).
    Error,
    /// Hit a runtime limit.
    Runtime(RuntimeKind),
}

impl Forfeit {
    pub fn reason(self) -> EndReason {
        match self {
            Forfeit::Illegal => EndReason::Illegal,
            Forfeit::Error => EndReason::Error,
            Forfeit::Runtime(_) => EndReason::Runtime,
        }
    }

    pub fn runtime(self) -> Option<RuntimeKind> {
        match self {
            Forfeit::Runtime(k) => Some(k),
            _ => None,
        }
    }
}

/// How a game ended. `winner: None` is a draw. `turn` is the number of the ply that ended it (for
/// a fault: the turn the faulting side was to play). `runtime` is set exactly when reason is
/// `runtime`. `detail` is human-readable and not checked by `verify`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    pub winner: Option<Side>,
    pub reason: EndReason,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<RuntimeKind>,
    #[serde(default)]
    pub detail: String,
    pub turn: u32,
}

/// One ply of the history: a step, or a pass (`move: null`, only when no legal move exists).
/// JSON: `{"side":"black","move":{"from":[x,y],"to":[x,y]}|null,"captured":[[x,y]],"points_used":n}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ply {
    pub side: Side,
    #[serde(rename = "move")]
    pub mv: Option<Move>,
    #[serde(default)]
    pub captured: Vec<[u8; 2]>,
    #[serde(default)]
    pub points_used: u32,
}

/// What [`Game::play`] reports: the ply as recorded, and the outcome if that ply ended the game.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlyOutcome {
    pub ply: Ply,
    pub outcome: Option<Outcome>,
}

/// A game in progress. Read it through the accessors; change it only with `play` / `forfeit`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Game {
    board: Board,
    to_move: Side,
    turn_number: u32,
    no_capture_moves: u32,
    passes_in_a_row: u32,
    history: Vec<Ply>,
    captured_by: [u32; 2],
    outcome: Option<Outcome>,
}

impl Default for Game {
    fn default() -> Self {
        Game::new()
    }
}

impl Game {
    /// The guide's starting position, black to move, turn 1.
    pub fn new() -> Game {
        Game::from_position(Board::initial(), Side::Black)
    }

    /// A game from any position (analysis and tests). If the position is already decided by
    /// elimination, the game starts over with `turn` 0.
    pub fn from_position(board: Board, to_move: Side) -> Game {
        let outcome = rules::judge(&board, 0).map(|v| Outcome {
            winner: v.winner,
            reason: v.reason,
            runtime: None,
            detail: describe(v.reason, &board),
            turn: 0,
        });
        Game {
            board,
            to_move,
            turn_number: 1,
            no_capture_moves: 0,
            passes_in_a_row: 0,
            history: Vec::new(),
            captured_by: [0, 0],
            outcome,
        }
    }

    pub fn board(&self) -> &Board {
        &self.board
    }
    pub fn to_move(&self) -> Side {
        self.to_move
    }
    /// 1-based number of the ply to be played next (passes count as plies).
    pub fn turn_number(&self) -> u32 {
        self.turn_number
    }
    /// Consecutive moves without a capture (passes neither count nor reset it).
    pub fn no_capture_moves(&self) -> u32 {
        self.no_capture_moves
    }
    pub fn passes_in_a_row(&self) -> u32 {
        self.passes_in_a_row
    }
    pub fn history(&self) -> &[Ply] {
        &self.history
    }
    /// How many opponent pieces `side` has captured (`capturedCount` in the JS API).
    pub fn captured_by(&self, side: Side) -> u32 {
        self.captured_by[side.index()]
    }
    /// The ending, once there is one.
    pub fn outcome(&self) -> Option<Outcome> {
        self.outcome.clone()
    }
    pub fn is_over(&self) -> bool {
        self.outcome.is_some()
    }
    /// The legal moves of the side to move (empty: it must pass). Order as [`rules::legal_moves`].
    pub fn legal_moves(&self) -> Vec<Move> {
        rules::legal_moves(&self.board, self.to_move)
    }

    /// Plays one ply for the side to move: `Some(move)`, or `None` to pass (allowed only when
    /// there is no legal move). Records 0 thinking points.
    pub fn play(&mut self, mv: Option<Move>) -> Result<PlyOutcome, IllegalMove> {
        self.play_with_points(mv, 0)
    }

    /// [`Game::play`], recording the thinking points the bot used (at most 100).
    pub fn play_with_points(
        &mut self,
        mv: Option<Move>,
        points_used: u32,
    ) -> Result<PlyOutcome, IllegalMove> {
        if self.outcome.is_some() {
            return Err(IllegalMove::GameOver);
        }
        let side = self.to_move;
        if points_used > POINTS_PER_MOVE {
            return Err(IllegalMove::TooManyPoints {
                side,
                used: points_used,
                limit: POINTS_PER_MOVE,
            });
        }
        let turn = self.turn_number;
        let (ply, verdict) = match mv {
            None => {
                let legal = self.legal_moves().len();
                if legal > 0 {
                    return Err(IllegalMove::PassWithLegalMoves { side, legal });
                }
                self.passes_in_a_row += 1;
                let verdict = if self.passes_in_a_row >= 2 {
                    Some((rules::material_winner(&self.board), EndReason::Stalemate))
                } else {
                    None
                };
                let ply = Ply {
                    side,
                    mv: None,
                    captured: Vec::new(),
                    points_used,
                };
                (ply, verdict)
            }
            Some(m) => {
                let applied = rules::apply(&self.board, side, &m)?;
                self.board = applied.board;
                self.passes_in_a_row = 0;
                if applied.captured.is_empty() {
                    self.no_capture_moves += 1;
                } else {
                    self.no_capture_moves = 0;
                    self.captured_by[side.index()] += applied.captured.len() as u32;
                }
                let verdict =
                    rules::judge(&self.board, self.no_capture_moves).map(|v| (v.winner, v.reason));
                let ply = Ply {
                    side,
                    mv: Some(m),
                    captured: applied.captured,
                    points_used,
                };
                (ply, verdict)
            }
        };
        self.history.push(ply.clone());
        self.turn_number += 1;
        self.to_move = side.other();
        self.outcome = verdict.map(|(winner, reason)| Outcome {
            winner,
            reason,
            runtime: None,
            detail: describe(reason, &self.board),
            turn,
        });
        Ok(PlyOutcome {
            ply,
            outcome: self.outcome.clone(),
        })
    }

    /// Ends the game because the side to move faulted (illegal move, exception, runtime limit):
    /// that side loses at the current turn. Errors with `GameOver` if the game already ended.
    pub fn forfeit(
        &mut self,
        fault: Forfeit,
        detail: impl Into<String>,
    ) -> Result<Outcome, IllegalMove> {
        if self.outcome.is_some() {
            return Err(IllegalMove::GameOver);
        }
        let outcome = Outcome {
            winner: Some(self.to_move.other()),
            reason: fault.reason(),
            runtime: fault.runtime(),
            detail: detail.into(),
            turn: self.turn_number,
        };
        self.outcome = Some(outcome.clone());
        Ok(outcome)
    }
}

/// The human-readable detail of a rules ending.
fn describe(reason: EndReason, board: &Board) -> String {
    let b = board.count(Side::Black);
    let r = board.count(Side::Red);
    match reason {
        EndReason::Eliminated => format!("eliminated: black {b} piece(s), red {r} piece(s)"),
        EndReason::Material => format!(
            "{} consecutive moves without a capture; material black {b}, red {r}",
            rules::NO_CAPTURE_LIMIT
        ),
        EndReason::Stalemate => format!("both sides passed in a row; material black {b}, red {r}"),
        other => other.as_str().to_string(),
    }
}
