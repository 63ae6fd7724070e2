//! 钳王 (qianwang) JavaScript bots: each bot runs in its own embedded QuickJS runtime (no file,
//! network, timer or clock; memory limit; wall-clock interrupt) against the pure rules of
//! `games::qianwang`, and a whole match becomes a verifiable [`MatchRecord`](games::qianwang::MatchRecord).
//!
//! # Where the code runs
//!
//! Never in the worker's own process: the two runtimes of a match live in one child process
//! (`farm __js-bot`, [`serve_child`]), started in the sandbox like any bot (the worker's
//! [`JsHost`]: its program and `SandboxConfig`), which the worker talks to over pipes
//! (`wire`: length-prefixed JSON frames) and kills when a load or turn runs past its limit plus
//! a short grace (`remote::KILL_GRACE`). An interrupt handler stops ordinary code at the limit;
//! only the kill stops code stuck in a QuickJS built-in that never checks for interrupts
//! (`Array.prototype.reverse.call({ length: 2 ** 53 - 1 })`), and that is the bot's timeout
//! like any other. The child is started at the match's first load and ends with the match.
//!
//! # What a bot sees (GUIDE.md 代码契约)
//!
//! `module.exports = function onTurn(me, opponent, game)` (or `module.exports.onTurn = ...`).
//! * `me` / `opponent`: `{ side: 'black'|'red', pieces: [[x,y],...], capturedCount }`.
//! * `game`: `{ board, turnNumber, noCaptureMoves, legalMoves, history, random }` with
//!   `board[x][y]` column-major (`null | 'black' | 'red'`), `legalMoves` an array of
//!   `{from:[x,y], to:[x,y]}`, `history` the plies so far as `{side, from, to, captured, pass}`
//!   (`pass: true` with `from`/`to` null for an automatic pass), and `random()` a float in
//!   [0, 1) seeded by the match seed, the side and the turn (`Math.random` is the same generator).
//! * `Rules`: `legalMoves(board, side)`, `apply(board, side, move) -> {board, captured}` (one
//!   thinking point each, 100 per move), `judge(board, ncm) -> null | {winner, reason}`,
//!   `clone(board)`, `other(side)`, `remaining()`. They call the Rust engine; bad arguments throw
//!   a `TypeError`, an illegal move given to `apply` a `RangeError`.
//! * Nothing else from a host: no `require`, `process`, `setTimeout`, `std`, `os`,
//!   `performance`; `Date` is frozen at 2026-01-01 (`Date.now()` never changes); `console.*`
//!   exist and print nothing. Globals persist between the bot's turns of one match.
//!
//! # Faults (each loses on the spot, [`Game::forfeit`](games::qianwang::Game::forfeit))
//!
//! | what the bot did | reason / runtime subtype |
//! |---|---|
//! | returned a move not among the legal moves, or a malformed value | `illegal` |
//! | threw (or code that fails to load: syntax, no onTurn, throws at load) | `error` |
//! | called `Rules.apply` with no points left (even if it caught the exception) | `runtime` / `points_exhausted` |
//! | ran past the move (or load) wall-clock limit | `runtime` / `timeout` |
//! | went over the memory limit | `runtime` / `memory` |
//!
//! A bot is loaded right before its first turn, so a load failure is a fault at that turn.
//! Not a fault of any bot (the host's; [`try_play_entrants`] returns it as a [`HostFailure`],
//! a farm job fails as infrastructure): the engine cannot even be created
//! ([`LoadError::EngineStart`]), or the referee cannot continue its own game.
//! Passes are played by the engine without calling the bot.
//!
//! # API
//!
//! ```text
//! struct BotSource { name: String, code: String }
//! struct Limits { move_ms: u64 (2000), memory_bytes: usize (64 MiB), load_ms: u64 (2000) }
//! struct JsHost { program: PathBuf, sandbox: SandboxConfig }   // JsHost::this_program(cfg)
//! fn check_code(host: &JsHost, code: &str, limits: &Limits) -> Result<(), LoadError>
//! fn play_match(host, black: &BotSource, red: &BotSource, seed: u64, limits) -> MatchRecord
//! struct Entrant { name, code_sha256, code: Result<String, LoadError> }   // Err = cannot load (why)
//! Entrant::from_source(&BotSource) / Entrant::from_bytes(name, bytes)
//! fn play_entrants(host, black: &Entrant, red: &Entrant, seed: u64, limits) -> MatchRecord
//! fn try_play_entrants(..same..) -> Result<MatchRecord, HostFailure>   // host failures apart
//! fn serve_child() -> i32   // the child's side, for `farm __js-bot`
//! ```

mod alloc;
mod api;
mod bot;
mod child;
mod convert;
mod play;
mod remote;
mod wire;

use games::qianwang::{Forfeit, RuntimeKind, Side};
use serde::{Deserialize, Serialize};
use thiserror::Error;

pub use child::serve_child;
pub use play::{play_entrants, play_match, try_play_entrants, Entrant, HostFailure};
pub use remote::{JsHost, CHILD_SUBCOMMAND, KILL_GRACE};

/// One bot's program: its name (for the record) and its JavaScript source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BotSource {
    pub name: String,
    pub code: String,
}

impl BotSource {
    pub fn new(name: impl Into<String>, code: impl Into<String>) -> BotSource {
        BotSource {
            name: name.into(),
            code: code.into(),
        }
    }
}

/// Per-bot limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// Wall clock for one `onTurn` call, in milliseconds.
    pub move_ms: u64,
    /// The bot's whole JS heap, in bytes (at least 1 MiB is applied; 0 never means unlimited).
    pub memory_bytes: usize,
    /// Wall clock for running the code once at load, in milliseconds.
    pub load_ms: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            move_ms: 2000,
            memory_bytes: 64 * 1024 * 1024,
            load_ms: 2000,
        }
    }
}

/// Why a program cannot be loaded as a bot.
#[derive(Debug, Clone, PartialEq, Eq, Error, Serialize, Deserialize)]
pub enum LoadError {
    #[error("syntax error{}: {message}", at(*line, *column))]
    Syntax {
        line: Option<u32>,
        column: Option<u32>,
        message: String,
    },
    #[error("the code threw while loading: {message}")]
    Threw { message: String },
    #[error(
        "the code does not export onTurn: {found}; write `module.exports = function onTurn(me, opponent, game) {{ ... }}`"
    )]
    NoOnTurn { found: String },
    #[error("loading did not finish within {ms} ms (an endless loop at the top level?)")]
    Timeout { ms: u64 },
    #[error("loading went over the memory limit of {limit_bytes} bytes")]
    Memory { limit_bytes: usize },
    #[error("the code contains a NUL character at byte {offset}")]
    NulByte { offset: usize },
    #[error("the code is not valid UTF-8: {0}")]
    NotUtf8(String),
    /// The engine failed while running the code in an unexpected way (the bot's, as a load
    /// error of its code).
    #[error("the JavaScript engine failed on the code: {0}")]
    Engine(String),
    /// The engine itself could not be created before any bot code ran: the host's problem
    /// ([`LoadError::is_host`]), never a fault of the bot.
    #[error("the JavaScript engine could not start: {0}")]
    EngineStart(String),
}

fn at(line: Option<u32>, column: Option<u32>) -> String {
    match (line, column) {
        (Some(l), Some(c)) => format!(" at line {l}, column {c}"),
        (Some(l), None) => format!(" at line {l}"),
        _ => String::new(),
    }
}

impl LoadError {
    /// True when the host, not the code, failed (the engine could not be created).
    pub fn is_host(&self) -> bool {
        matches!(self, LoadError::EngineStart(_))
    }

    /// The fault a load failure is in a match (it loses at the bot's first turn).
    pub fn fault(&self) -> Forfeit {
        match self {
            LoadError::Timeout { .. } => Forfeit::Runtime(RuntimeKind::Timeout),
            LoadError::Memory { .. } => Forfeit::Runtime(RuntimeKind::Memory),
            _ => Forfeit::Error,
        }
    }
}

/// Loads `code` as a bot would be loaded (as black, seed 0, in a child of `host`): it must
/// parse, run within the load time and memory limits, and export `onTurn`. Does not play a move.
pub fn check_code(host: &JsHost, code: &str, limits: &Limits) -> Result<(), LoadError> {
    play::load_code(host, &mut None, code, Side::Black, 0, limits)
}

/// The stack of the thread a match (or a load check) runs on; the JS stack limit is below it.
const MATCH_THREAD_STACK: usize = 16 * 1024 * 1024;

/// Runs `f` on a thread with a known, large stack (QuickJS's stack limit is set below it), so
/// deep recursion in bot code is an exception and never overflows the caller's stack.
fn in_match_thread<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    let slot = std::sync::Mutex::new(Some(f));
    let take = || slot.lock().ok().and_then(|mut g| g.take());
    std::thread::scope(|s| {
        let spawned = std::thread::Builder::new()
            .name("qianwang-js".into())
            .stack_size(MATCH_THREAD_STACK)
            .spawn_scoped(s, || take().map(|f| f()));
        let ran = match spawned {
            Ok(handle) => match handle.join() {
                Ok(v) => v,
                Err(panic) => std::panic::resume_unwind(panic),
            },
            Err(e) => {
                tracing::warn!("no thread for a qianwang match ({e}); running it on this one");
                None
            }
        };
        match ran {
            Some(v) => v,
            None => match take() {
                Some(f) => f(),
                None => unreachable!("the match closure runs exactly once"),
            },
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every load failure: the fault it is in a match, and whether the host is to blame.
    #[test]
    fn load_errors_are_the_bots_except_an_engine_that_cannot_start() {
        let table: Vec<(LoadError, Forfeit, bool)> = vec![
            (
                LoadError::Syntax {
                    line: Some(1),
                    column: None,
                    message: "x".into(),
                },
                Forfeit::Error,
                false,
            ),
            (
                LoadError::Threw {
                    message: "x".into(),
                },
                Forfeit::Error,
                false,
            ),
            (
                LoadError::NoOnTurn { found: "x".into() },
                Forfeit::Error,
                false,
            ),
            (
                LoadError::Timeout { ms: 1 },
                Forfeit::Runtime(RuntimeKind::Timeout),
                false,
            ),
            (
                LoadError::Memory { limit_bytes: 1 },
                Forfeit::Runtime(RuntimeKind::Memory),
                false,
            ),
            (LoadError::NulByte { offset: 0 }, Forfeit::Error, false),
            (LoadError::NotUtf8("x".into()), Forfeit::Error, false),
            (LoadError::Engine("x".into()), Forfeit::Error, false),
            (LoadError::EngineStart("x".into()), Forfeit::Error, true),
        ];
        for (e, fault, host) in table {
            assert_eq!((e.fault(), e.is_host()), (fault, host), "{e:?}");
        }
    }
}
