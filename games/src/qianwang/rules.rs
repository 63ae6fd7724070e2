//! The pure rule functions a bot's `Rules` API mirrors: legal moves in a fixed order, applying one
//! step with its captures, and judging a position. See the module doc of `qianwang` for the exact
//! reading of "exactly three in a row".

use super::board::{on_board, Board, Move, Side, SIZE};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Consecutive moves without a capture after which the game is decided by material.
pub const NO_CAPTURE_LIMIT: u32 = 20;

/// Why a move (or pass) was refused. Every message names the side, points and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum IllegalMove {
    #[error("{side}: move {mv}: point {point:?} is off the 4x4 board (x and y must be 0..=3)")]
    OffBoard {
        side: Side,
        mv: Move,
        point: [u8; 2],
    },
    #[error("{side}: move {mv}: there is no {side} piece at {from:?} (found {found})")]
    NotOwnPiece {
        side: Side,
        mv: Move,
        from: [u8; 2],
        found: &'static str,
    },
    #[error("{side}: move {mv}: {to:?} is not one orthogonal step from {from:?}")]
    NotAdjacent {
        side: Side,
        mv: Move,
        from: [u8; 2],
        to: [u8; 2],
    },
    #[error("{side}: move {mv}: destination {to:?} is occupied by {occupant}")]
    Occupied {
        side: Side,
        mv: Move,
        to: [u8; 2],
        occupant: Side,
    },
    #[error("{side}: passed but has {legal} legal move(s); a pass is only allowed with none")]
    PassWithLegalMoves { side: Side, legal: usize },
    #[error("{side}: ply recorded {used} thinking points, more than the {limit} allowed per move")]
    TooManyPoints { side: Side, used: u32, limit: u32 },
    #[error("{side}: it is {to_move}'s turn")]
    NotYourTurn { side: Side, to_move: Side },
    #[error("the game is already over; no more plies can be played")]
    GameOver,
}

/// The result of [`apply`]: the new board and the captured points (0, 1 or 2), in the order
/// row (horizontal line of the destination) first, then column.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Applied {
    pub board: Board,
    pub captured: Vec<[u8; 2]>,
}

/// How a finished game ends, as [`judge`] reports it. JSON: lowercase words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// A side has at most one piece left and loses.
    Eliminated,
    /// 20 consecutive moves without a capture: decided by piece count.
    Material,
    /// Both sides passed in a row: decided by piece count.
    Stalemate,
    /// A bot returned a move that is not legal (it loses).
    Illegal,
    /// A bot threw an exception or its code could not load (it loses). A returned value that
    /// is not a legal move, malformed ones included, is [`EndReason::Illegal`].
    Error,
    /// A bot hit a runtime limit: wall clock, thinking points or memory (it loses).
    Runtime,
}

impl EndReason {
    /// The JSON word: `"eliminated"`, `"material"`, ...
    pub fn as_str(self) -> &'static str {
        match self {
            EndReason::Eliminated => "eliminated",
            EndReason::Material => "material",
            EndReason::Stalemate => "stalemate",
            EndReason::Illegal => "illegal",
            EndReason::Error => "error",
            EndReason::Runtime => "runtime",
        }
    }

    /// Whether this reason is a bot fault (illegal, error, runtime) rather than a rules ending.
    pub fn is_fault(self) -> bool {
        matches!(
            self,
            EndReason::Illegal | EndReason::Error | EndReason::Runtime
        )
    }
}

impl std::fmt::Display for EndReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What [`judge`] returns for a finished position: `winner: None` is a draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    pub winner: Option<Side>,
    pub reason: EndReason,
}

const STEPS: [(i8, i8); 4] = [(-1, 0), (1, 0), (0, -1), (0, 1)];

fn step(p: [u8; 2], d: (i8, i8)) -> Option<[u8; 2]> {
    let x = p[0] as i8 + d.0;
    let y = p[1] as i8 + d.1;
    if (0..SIZE as i8).contains(&x) && (0..SIZE as i8).contains(&y) {
        Some([x as u8, y as u8])
    } else {
        None
    }
}

/// Every legal move of `side`, in a fixed order: pieces column-major (x ascending, then y
/// ascending), and for each piece the destinations left (x−1), right (x+1), down (y−1), up (y+1).
/// Empty exactly when `side` must pass.
pub fn legal_moves(board: &Board, side: Side) -> Vec<Move> {
    let mut out = Vec::new();
    for from in board.pieces(side) {
        for d in STEPS {
            if let Some(to) = step(from, d) {
                if board.get(to[0], to[1]).is_none() {
                    out.push(Move { from, to });
                }
            }
        }
    }
    out
}

/// Checks that `mv` is a legal step for `side` on `board`, without applying it.
pub fn check_move(board: &Board, side: Side, mv: &Move) -> Result<(), IllegalMove> {
    for point in [mv.from, mv.to] {
        if !on_board(point) {
            return Err(IllegalMove::OffBoard {
                side,
                mv: *mv,
                point,
            });
        }
    }
    let [fx, fy] = mv.from;
    let [tx, ty] = mv.to;
    match board.get(fx, fy) {
        Some(s) if s == side => {}
        other => {
            return Err(IllegalMove::NotOwnPiece {
                side,
                mv: *mv,
                from: mv.from,
                found: match other {
                    None => "an empty point",
                    Some(_) => "an opponent piece",
                },
            })
        }
    }
    if fx.abs_diff(tx) + fy.abs_diff(ty) != 1 {
        return Err(IllegalMove::NotAdjacent {
            side,
            mv: *mv,
            from: mv.from,
            to: mv.to,
        });
    }
    if let Some(occupant) = board.get(tx, ty) {
        return Err(IllegalMove::Occupied {
            side,
            mv: *mv,
            to: mv.to,
            occupant,
        });
    }
    Ok(())
}

/// The capture on one line through the moved piece, if any. `line` lists the line's 4 points in
/// order and `at` is the moved piece's index in it.
fn capture_on_line(board: &Board, mover: Side, line: &[[u8; 2]; 4], at: usize) -> Option<[u8; 2]> {
    let occupied = |i: usize| board.get(line[i][0], line[i][1]).is_some();
    let mut lo = at;
    while lo > 0 && occupied(lo - 1) {
        lo -= 1;
    }
    let mut hi = at;
    while hi + 1 < line.len() && occupied(hi + 1) {
        hi += 1;
    }
    if hi - lo + 1 != 3 {
        return None;
    }
    let side_at = |i: usize| board.get(line[i][0], line[i][1]);
    let opp = mover.other();
    // mover, mover, opponent — the opponent at one end, the two own pieces adjacent.
    if side_at(lo) == Some(opp) && side_at(lo + 1) == Some(mover) && side_at(hi) == Some(mover) {
        return Some(line[lo]);
    }
    if side_at(hi) == Some(opp) && side_at(lo) == Some(mover) && side_at(lo + 1) == Some(mover) {
        return Some(line[hi]);
    }
    None
}

/// The points `mover` captures on `board`, where `board` already shows the moved piece at `at`
/// (captured pieces not yet removed). Row first, then column; at most two.
pub fn captures_at(board: &Board, mover: Side, at: [u8; 2]) -> Vec<[u8; 2]> {
    let [x, y] = at;
    let row: [[u8; 2]; 4] = [[0, y], [1, y], [2, y], [3, y]];
    let col: [[u8; 2]; 4] = [[x, 0], [x, 1], [x, 2], [x, 3]];
    let mut out = Vec::new();
    if let Some(p) = capture_on_line(board, mover, &row, x as usize) {
        out.push(p);
    }
    if let Some(p) = capture_on_line(board, mover, &col, y as usize) {
        out.push(p);
    }
    out
}

/// Plays `mv` for `side` on `board`: moves the piece, then removes what it captures (only on the
/// destination's row and column, evaluated on the board right after the step, no chains).
pub fn apply(board: &Board, side: Side, mv: &Move) -> Result<Applied, IllegalMove> {
    check_move(board, side, mv)?;
    let mut next = *board;
    next.set(mv.from[0], mv.from[1], None);
    next.set(mv.to[0], mv.to[1], Some(side));
    let captured = captures_at(&next, side, mv.to);
    for p in &captured {
        next.set(p[0], p[1], None);
    }
    Ok(Applied {
        board: next,
        captured,
    })
}

/// The side with more pieces, or `None` when the counts are equal (a draw by material).
pub fn material_winner(board: &Board) -> Option<Side> {
    let b = board.count(Side::Black);
    let r = board.count(Side::Red);
    match b.cmp(&r) {
        std::cmp::Ordering::Greater => Some(Side::Black),
        std::cmp::Ordering::Less => Some(Side::Red),
        std::cmp::Ordering::Equal => None,
    }
}

/// Judges a position given the count of consecutive moves without a capture (`ncm`). `None`: the
/// game goes on. A side with ≤ 1 piece loses (eliminated; both ≤ 1, only possible on a hand-made
/// board, is a draw); otherwise `ncm >= 20` decides by material. Stalemate (two passes in a row)
/// is history, not position: [`super::Game`] applies it.
pub fn judge(board: &Board, no_capture_moves: u32) -> Option<Verdict> {
    let b = board.count(Side::Black);
    let r = board.count(Side::Red);
    if b <= 1 || r <= 1 {
        let winner = match (b <= 1, r <= 1) {
            (true, true) => None,
            (true, false) => Some(Side::Red),
            _ => Some(Side::Black),
        };
        return Some(Verdict {
            winner,
            reason: EndReason::Eliminated,
        });
    }
    if no_capture_moves >= NO_CAPTURE_LIMIT {
        return Some(Verdict {
            winner: material_winner(board),
            reason: EndReason::Material,
        });
    }
    None
}
