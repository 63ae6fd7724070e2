//! 钳王 (qianwang), the 4×4 capture game of `seeds/qianwang/GUIDE.md`, as a pure deterministic
//! state machine: board, legal moves, captures, endings, match records and their verification,
//! and the ladder's RP/tier math ([`ladder`]).
//!
//! # Rules as implemented
//!
//! * Board `cells[x][y]` (column-major, like the JS `game.board[x][y]`), (0,0) bottom-left,
//!   (3,3) top-right. Black starts on (0,3) (1,3) (2,3) (3,3) (0,2) (3,2); red on (0,0) (1,0)
//!   (2,0) (3,0) (0,1) (3,1). Black moves first.
//! * A move is one orthogonal step of an own piece to an empty point.
//! * Captures: only the moved piece's row and its column are examined, on the board right after
//!   the step. On each of those two lines take the *maximal run* of occupied points containing the
//!   moved piece (bounded by an empty point or the edge). The line captures exactly when that run
//!   has length exactly 3 and reads mover, mover, opponent (either direction): the moved piece and
//!   an adjacent own piece, then one opponent piece at the end of the run. That opponent piece is
//!   removed. Consequences on a 4-point line:
//!   - a full line (run of 4, e.g. `B B R R` or `B B R .` extended to `B B R B`) never captures;
//!   - `B R B` (opponent in the middle) is not "two own in a row" and does not capture;
//!   - `B R R` (the mover has one piece, the opponent two) does not capture: walking into a
//!     sandwich is safe, only the mover captures;
//!   - a run of 3 not containing the moved piece cannot exist on a 4-point line together with it,
//!     so "the line" and "the run through the moved piece" agree.
//!
//!   Both lines may capture (at most 2 per move); captures are listed row first, then column. No
//!   chains: removing pieces triggers nothing further.
//! * A side with no legal move passes (the engine does it; `Game::play(None)`), which is refused
//!   while a legal move exists. Passes are plies (they advance the turn) but are not "moves" for
//!   the no-capture counter: they neither count nor reset it.
//! * Endings, checked after every ply, in this order: a side with ≤ 1 piece loses (`eliminated`);
//!   20 consecutive moves without a capture → material (`material`); both sides passing in a row →
//!   material (`stalemate`). Material: more pieces wins (ahead by one is enough), equal is a draw.
//!   From the initial position a stalemate cannot occur (there are always ≥ 4 empty points, so one
//!   side can move), but the rule is implemented and tested on hand-made positions.
//! * Bot faults (illegal move, exception, runtime limit) lose on the spot: [`Game::forfeit`].
//!
//! # API
//!
//! ```text
//! const VERSION: &str = "matchfarm-qianwang/1";   const POINTS_PER_MOVE: u32 = 100;
//! const NO_CAPTURE_LIMIT: u32 = 20;              const SIZE: u8 = 4;
//! enum Side { Black, Red }                        // JSON "black"/"red"; other(), as_str(), index()
//! struct Board                                    // JSON [[cell;4];4] indexed [x][y], cell null|"black"|"red"
//!   Board::initial() / empty() / from_cells(cells) / cells() / get(x,y) -> Option<Side>
//!   set(x,y,Option<Side>) / count(side) -> u32 / pieces(side) -> Vec<[u8;2]> / to_ascii()
//! fn on_board([u8;2]) -> bool
//! struct Move { pub from: [u8;2], pub to: [u8;2] }      // JSON {"from":[x,y],"to":[x,y]}
//! fn legal_moves(&Board, Side) -> Vec<Move>             // pieces x-major then y; left,right,down,up
//! fn check_move(&Board, Side, &Move) -> Result<(), IllegalMove>
//! fn apply(&Board, Side, &Move) -> Result<Applied, IllegalMove>   // Applied { board, captured }
//! fn captures_at(&Board, mover: Side, at: [u8;2]) -> Vec<[u8;2]>
//! fn judge(&Board, no_capture_moves: u32) -> Option<Verdict>       // Verdict { winner: Option<Side>, reason }
//! fn material_winner(&Board) -> Option<Side>
//! enum EndReason { Eliminated, Material, Stalemate, Illegal, Error, Runtime }  // JSON lowercase
//! enum RuntimeKind { Timeout, PointsExhausted, Memory }  // JSON "timeout"|"points_exhausted"|"memory"
//! enum Forfeit { Illegal, Error, Runtime(RuntimeKind) }
//! struct Outcome { winner: Option<Side>, reason, runtime: Option<RuntimeKind>, detail: String, turn: u32 }
//! struct Ply { side, mv: Option<Move> /* JSON "move", null = pass */, captured, points_used: u32 }
//! struct Game                                      // private fields, accessors:
//!   Game::new() / from_position(board, to_move) / board() / to_move() / turn_number() (1-based,
//!   next ply) / no_capture_moves() / passes_in_a_row() / history() / captured_by(side) /
//!   outcome() -> Option<Outcome> / is_over() / legal_moves()
//!   play(Option<Move>) -> Result<PlyOutcome, IllegalMove>        // PlyOutcome { ply, outcome }
//!   play_with_points(Option<Move>, points_used) -> Result<PlyOutcome, IllegalMove>
//!   forfeit(Forfeit, detail) -> Result<Outcome, IllegalMove>       // side to move loses now
//! struct Player { name, code_sha256 }
//! struct MatchRecord { version, seed: u64, black: Player, red: Player, plies: Vec<Ply>, outcome }
//!   to_json() / to_json_pretty() / from_json(&str) -> Result<_, RecordError> / replay() -> Result<Game, VerifyError>
//! fn verify(&MatchRecord) -> Result<(), VerifyError>   // VerifyError::ply_index() = first bad ply
//! fn summarize(&Outcome) -> String
//! mod ladder: Major{Bronze..King}, Minor{III,II,I}, Tier{major,minor}, tier_of(rp), PlayerResult,
//!   PlayerResult::of(&Outcome, Side), combine(a, b), rp_delta(mine: Major, opp: Major, PlayerResult)
//!   -> i32, apply_rp(rp, delta) -> u32, settle(a_rp, b_rp, result_a) -> Settlement
//! ```

mod board;
mod game;
pub mod ladder;
mod record;
mod rules;
pub mod viewer;

pub use board::{on_board, Board, Move, Side, INITIAL_BLACK, INITIAL_RED, SIZE};
pub use game::{Forfeit, Game, Outcome, Ply, PlyOutcome, RuntimeKind, POINTS_PER_MOVE};
/// What a report of this game is accepted as, and how ([`crate::accept::seated`]).
pub type Record = MatchRecord;
pub use crate::accept::seated as accept;

pub use record::{summarize, verify, MatchRecord, Player, PlyMismatch, RecordError, VerifyError};
pub use rules::{
    apply, captures_at, check_move, judge, legal_moves, material_winner, Applied, EndReason,
    IllegalMove, Verdict, NO_CAPTURE_LIMIT,
};

/// The referee version of this engine, stored in every record and farm job.
pub const VERSION: &str = "matchfarm-qianwang/1";
