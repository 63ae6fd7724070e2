//! The match loop: the engine passes when a side has no legal move, otherwise the side's bot is
//! asked (and loaded first, on its first turn); any fault ends the match through
//! `Game::forfeit`, so the record always re-plays with `games::qianwang::verify`.

use games::qianwang::{self as qw, Forfeit, Game, MatchRecord, Player, Side};

use super::bot::JsBot;
use super::{in_match_thread, BotSource, Limits, LoadError};

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
pub fn play_match(black: &BotSource, red: &BotSource, seed: u64, limits: &Limits) -> MatchRecord {
    play_entrants(
        &Entrant::from_source(black),
        &Entrant::from_source(red),
        seed,
        limits,
    )
}

/// [`play_match`] for seats that may hold unloadable programs.
pub fn play_entrants(black: &Entrant, red: &Entrant, seed: u64, limits: &Limits) -> MatchRecord {
    in_match_thread(|| run(black, red, seed, limits)).0
}

/// The host, not a bot, ended the match (see the module docs of `qianwang`): do not score it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("qianwang host failure: {0}")]
pub struct HostFailure(pub String);

/// [`play_entrants`], but a match the host spoiled is an `Err`, not a record blaming a bot.
pub fn try_play_entrants(
    black: &Entrant,
    red: &Entrant,
    seed: u64,
    limits: &Limits,
) -> Result<MatchRecord, HostFailure> {
    match in_match_thread(|| run(black, red, seed, limits)) {
        (_, Some(why)) => Err(HostFailure(why)),
        (record, None) => Ok(record),
    }
}

/// A side's bot, loaded when it first has to move (one that cannot load forfeits the game).
enum BotState {
    NotLoaded,
    Loaded(Box<JsBot>),
}

/// The record, and why the host spoiled it (if it did).
fn run(
    black: &Entrant,
    red: &Entrant,
    seed: u64,
    limits: &Limits,
) -> (MatchRecord, Option<String>) {
    let mut host_failure = None;
    let mut game = Game::new();
    let entrants = [black, red];
    let mut seats = [BotState::NotLoaded, BotState::NotLoaded];
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
        let slot = &mut seats[side.index()];
        if let BotState::NotLoaded = slot {
            match load(entrants[side.index()], side, seed, limits) {
                Ok(bot) => *slot = BotState::Loaded(Box::new(bot)),
                Err((fault, detail, host)) => {
                    if host {
                        host_failure = Some(format!("{side}: {detail}"));
                    }
                    forfeit(&mut game, fault, detail);
                    break;
                }
            }
        }
        let BotState::Loaded(bot) = slot else { break };
        match bot.turn(&game, &legal) {
            Err(f) => forfeit(&mut game, f.fault, f.detail),
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

/// The bot, or (fault, detail, whether the host is to blame).
fn load(
    e: &Entrant,
    side: Side,
    seed: u64,
    limits: &Limits,
) -> Result<JsBot, (Forfeit, String, bool)> {
    let code = e.code.as_ref().map_err(|why| {
        (
            Forfeit::Error,
            format!("the program cannot be loaded: {why}"),
            false,
        )
    })?;
    JsBot::load(code, side, seed, limits).map_err(|err| {
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
