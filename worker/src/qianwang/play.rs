//! The match loop: the engine passes when a side has no legal move, otherwise the side's bot is
//! asked (and loaded first, on its first turn) in the match's sandboxed JavaScript child
//! ([`JsChild`], started at the first load); any fault ends the match through `Game::forfeit`,
//! so the record always re-plays with `games::qianwang::verify`.

use games::qianwang::{self as qw, Forfeit, Game, MatchRecord, Player, Side};

use super::remote::{JsChild, JsHost, TurnError};
use super::{BotSource, Limits, LoadError};

/// A seat of a match: the name and code hash for the record, and the code, or why there is none
/// that can run (such a bot loses as `error` at its first turn).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entrant {
    pub name: String,
    pub code_sha256: String,
    pub code: Result<String, LoadError>,
}

impl Entrant {
    /// A seat from source text (hash of its UTF-8 bytes).
    pub fn from_source(src: &BotSource) -> Entrant {
        Entrant {
            name: src.name.clone(),
            code_sha256: shared::manifest::sha256_hex(src.code.as_bytes()),
            code: Ok(src.code.clone()),
        }
    }

    /// A seat from a program file's bytes; bytes that are not UTF-8 make a seat that loses.
    pub fn from_bytes(name: impl Into<String>, bytes: Vec<u8>) -> Entrant {
        let code_sha256 = shared::manifest::sha256_hex(&bytes);
        let code = String::from_utf8(bytes).map_err(|e| {
            LoadError::NotUtf8(format!(
                "invalid byte sequence at byte {}",
                e.utf8_error().valid_up_to()
            ))
        });
        Entrant {
            name: name.into(),
            code_sha256,
            code,
        }
    }
}

/// Plays one match between two JavaScript bots. Never panics on bot code: every bot failure is
/// an outcome (`illegal`, `error`, `runtime`).
pub fn play_match(
    host: &JsHost,
    black: &BotSource,
    red: &BotSource,
    seed: u64,
    limits: &Limits,
) -> MatchRecord {
    play_entrants(
        host,
        &Entrant::from_source(black),
        &Entrant::from_source(red),
        seed,
        limits,
    )
}

/// [`play_match`] for seats that may hold unloadable programs.
pub fn play_entrants(
    host: &JsHost,
    black: &Entrant,
    red: &Entrant,
    seed: u64,
    limits: &Limits,
) -> MatchRecord {
    run(host, black, red, seed, limits).0
}

/// The host, not a bot, ended the match (see the module docs of `qianwang`): do not score it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("qianwang host failure: {0}")]
pub struct HostFailure(pub String);

/// [`play_entrants`], but a match the host spoiled is an `Err`, not a record blaming a bot.
pub fn try_play_entrants(
    host: &JsHost,
    black: &Entrant,
    red: &Entrant,
    seed: u64,
    limits: &Limits,
) -> Result<MatchRecord, HostFailure> {
    match run(host, black, red, seed, limits) {
        (_, Some(why)) => Err(HostFailure(why)),
        (record, None) => Ok(record),
    }
}

/// The record, and why the host spoiled it (if it did).
fn run(
    host: &JsHost,
    black: &Entrant,
    red: &Entrant,
    seed: u64,
    limits: &Limits,
) -> (MatchRecord, Option<String>) {
    let mut host_failure = None;
    let mut game = Game::new();
    let entrants = [black, red];
    let mut child: Option<JsChild> = None;
    let mut loaded = [false, false];
    while !game.is_over() {
        let side = game.to_move();
        let legal = game.legal_moves();
        if legal.is_empty() {
            if let Err(e) = game.play(None) {
                tracing::error!("qianwang: the engine refused a pass it offered: {e}");
                break;
            }
            continue;
        }
        if !loaded[side.index()] {
            match load(host, &mut child, entrants[side.index()], side, seed, limits) {
                Ok(()) => loaded[side.index()] = true,
                Err((fault, detail, by_host)) => {
                    if by_host {
                        host_failure = Some(format!("{side}: {detail}"));
                    }
                    forfeit(&mut game, fault, detail);
                    break;
                }
            }
        }
        let Some(js) = child.as_mut() else { break };
        match js.turn(&game, limits.move_ms) {
            Err(TurnError::Bot(f)) => forfeit(&mut game, f.fault, f.detail),
            Err(TurnError::Host(why)) => {
                host_failure = Some(format!("{side}: {why}"));
                forfeit(&mut game, Forfeit::Error, why);
            }
            Ok((mv, points)) if legal.contains(&mv) => {
                if let Err(e) = game.play_with_points(Some(mv), points) {
                    forfeit(&mut game, Forfeit::Illegal, e.to_string());
                }
            }
            Ok((mv, _)) => {
                let why = match qw::check_move(game.board(), side, &mv) {
                    Err(e) => e.to_string(),
                    Ok(()) => format!("{side}: move {mv} is not among the legal moves"),
                };
                forfeit(&mut game, Forfeit::Illegal, format!("illegal move: {why}"));
            }
        }
    }
    let outcome = match game.outcome() {
        Some(o) => o,
        None => {
            // Only reachable if the engine refused its own pass (logged above).
            host_failure = Some("the referee could not continue its own game".into());
            let fault = Forfeit::Error;
            forfeit(
                &mut game,
                fault,
                "the referee could not continue".to_string(),
            );
            game.outcome().unwrap_or(qw::Outcome {
                winner: None,
                reason: qw::EndReason::Error,
                runtime: None,
                detail: "the referee could not continue".into(),
                turn: game.turn_number(),
            })
        }
    };
    let record = MatchRecord {
        version: qw::VERSION.to_string(),
        seed,
        black: player(black),
        red: player(red),
        plies: game.history().to_vec(),
        outcome,
    };
    (record, host_failure)
}

fn player(e: &Entrant) -> Player {
    Player {
        name: e.name.clone(),
        code_sha256: e.code_sha256.clone(),
    }
}

/// Loads the side's bot in the match's child (started on the first load), or says (fault,
/// detail, whether the host is to blame).
fn load(
    host: &JsHost,
    child: &mut Option<JsChild>,
    e: &Entrant,
    side: Side,
    seed: u64,
    limits: &Limits,
) -> Result<(), (Forfeit, String, bool)> {
    let code = e.code.as_ref().map_err(|why| {
        (
            Forfeit::Error,
            format!("the program cannot be loaded: {why}"),
            false,
        )
    })?;
    load_code(host, child, code, side, seed, limits).map_err(|err| {
        (
            err.fault(),
            format!("the program cannot be loaded: {err}"),
            err.is_host(),
        )
    })
}

fn forfeit(game: &mut Game, fault: Forfeit, detail: String) {
    if let Err(e) = game.forfeit(fault, detail) {
        tracing::error!("qianwang: forfeit on a finished game: {e}");
    }
}

/// Loads `code` as `side`'s bot in `child`, starting the child first if there is none.
pub(crate) fn load_code(
    host: &JsHost,
    child: &mut Option<JsChild>,
    code: &str,
    side: Side,
    seed: u64,
    limits: &Limits,
) -> Result<(), LoadError> {
    if let Some(offset) = code.find('\0') {
        return Err(LoadError::NulByte { offset });
    }
    let js = match child {
        Some(js) => js,
        None => child.insert(JsChild::start(host)?),
    };
    js.load(side, code, seed, limits)
}
