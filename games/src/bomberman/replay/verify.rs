//! Replay verification: re-generate the map, re-simulate every turn against its recorded state
//! digest, re-derive the result field by field, and check the content digest, with an error that
//! names exactly what differs and where.

use serde_json::Value;
use thiserror::Error;

use super::{build_result, content_digest_of, MapSource, Replay, TurnRecord, REPLAY_FORMAT};
use crate::bomberman::action::{Action, Input};
use crate::bomberman::clock::{self, Answered};
use crate::bomberman::game::Game;
use crate::bomberman::map::Map;
use crate::bomberman::mapgen::generate_map;
use crate::bomberman::params::Params;
use crate::bomberman::VERSION;

/// Why a replay document was rejected.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum VerifyError {
    #[error("the replay is truncated: the JSON ends early at line {line}, column {column}")]
    Truncated { line: usize, column: usize },
    #[error("the replay is not valid JSON at line {line}, column {column}: {reason}")]
    NotJson {
        line: usize,
        column: usize,
        reason: String,
    },
    #[error("this is not a Bomberman replay: format is {found}, expected {expected:?}")]
    WrongFormat {
        found: String,
        expected: &'static str,
    },
    #[error("replay version {found} cannot be checked by this engine, which is {expected:?}")]
    WrongVersion {
        found: String,
        expected: &'static str,
    },
    #[error("the replay does not have the expected fields: {reason}")]
    Malformed { reason: String },
    #[error("the replay is inconsistent: {what}")]
    Inconsistent { what: String },
    #[error("params.{field} is {stored} but {players} players on this map need {expected}")]
    ParamsDiffer {
        field: &'static str,
        stored: String,
        expected: String,
        players: usize,
    },
    #[error("the stored map is not a valid board: {reason}")]
    BadMap { reason: String },
    #[error(
        "the stored map differs from the one seed {seed} generates for {players} players: {detail}"
    )]
    MapDiffers {
        seed: u64,
        players: usize,
        detail: String,
    },
    #[error("turn {turn}: {reason}")]
    BadTurn { turn: usize, reason: String },
    #[error("turn {turn} is the first whose state differs: re-simulated digest {computed}, recorded {stored}")]
    TurnDigest {
        turn: u32,
        stored: String,
        computed: String,
    },
    #[error("the game is over after {turns} turns but the replay records {recorded}")]
    ExtraTurns { turns: u32, recorded: usize },
    #[error("the replay ends after {turns} turns but the game is not over")]
    Unfinished { turns: usize },
    #[error("result.{field} differs: the replay says {stored}, re-simulation gives {computed}")]
    ResultDiffers {
        field: String,
        stored: String,
        computed: String,
    },
    #[error("the time bank does not add up: {reason}")]
    Clock { reason: String },
    #[error("the scaled clock does not add up: {reason}")]
    Scaling { reason: String },
    #[error("the time bank does not add up: {0}")]
    Bank(#[from] clock::ClockError),
    #[error("content digest mismatch: the replay says {stored}, its content hashes to {computed}")]
    DigestMismatch { stored: String, computed: String },
}

fn json_error(e: serde_json::Error) -> VerifyError {
    let (line, column) = (e.line(), e.column());
    if e.classify() == serde_json::error::Category::Eof {
        VerifyError::Truncated { line, column }
    } else {
        let text = e.to_string();
        let suffix = format!(" at line {line} column {column}");
        let reason = text.strip_suffix(&suffix).unwrap_or(&text).to_string();
        VerifyError::NotJson {
            line,
            column,
            reason,
        }
    }
}

/// Checks a replay document end to end and returns it parsed.
pub fn verify(json: &str) -> Result<Replay, VerifyError> {
    let value: Value = serde_json::from_str(json).map_err(json_error)?;
    let field = |k: &str| {
        value
            .get(k)
            .map(|v| v.to_string())
            .unwrap_or_else(|| "missing".into())
    };
    if value.get("format").and_then(Value::as_str) != Some(REPLAY_FORMAT) {
        return Err(VerifyError::WrongFormat {
            found: field("format"),
            expected: REPLAY_FORMAT,
        });
    }
    if value.get("version").and_then(Value::as_str) != Some(VERSION) {
        return Err(VerifyError::WrongVersion {
            found: field("version"),
            expected: VERSION,
        });
    }
    let computed = content_digest_of(&value);
    let replay: Replay = serde_json::from_value(value).map_err(|e| VerifyError::Malformed {
        reason: e.to_string(),
    })?;
    let (map, params) = check_setup(&replay)?;
    let game = resimulate(&replay, &map, params)?;
    check_result(&replay, &game)?;
    check_scaling(&replay)?;
    check_clock(&replay)?;
    if computed != replay.digest {
        return Err(VerifyError::DigestMismatch {
            stored: replay.digest.clone(),
            computed,
        });
    }
    Ok(replay)
}

/// A scaled clock: the limits the match was played under (its clock record's, or no bank when
/// it has none) must be the stated clock scaled from the reference speed to the recorded one.
fn check_scaling(r: &Replay) -> Result<(), VerifyError> {
    let Some(s) = &r.scaling else { return Ok(()) };
    let bad = |reason: String| Err(VerifyError::Scaling { reason });
    let played = match s.played() {
        Ok(p) => p,
        Err(e) => return bad(e.to_string()),
    };
    let recorded = r.clock.as_ref().map(|c| c.spec());
    match recorded {
        Some(c) if c == played => Ok(()),
        None if played.bank_ms == 0 => Ok(()),
        _ => bad(format!(
            "a clock of {} ms + {} ms bank at reference speed {} on a host of speed {} plays as \
             {} ms + {} ms, but the replay records {}",
            s.stated.turn_ms,
            s.stated.bank_ms,
            s.reference_speed,
            s.speed,
            played.turn_ms,
            played.bank_ms,
            recorded.map_or("no time bank".to_string(), |c| format!(
                "{} ms + {} ms",
                c.turn_ms, c.bank_ms
            ))
        )),
    }
}

/// With a time bank: re-run every bot's bank over its recorded turns; a timeout the bank
/// covered, an answer the bank could not cover, a doctored balance or a missing entry fails.
fn check_clock(r: &Replay) -> Result<(), VerifyError> {
    let Some(c) = &r.clock else { return Ok(()) };
    let bad = |reason: String| Err(VerifyError::Clock { reason });
    if c.turns.len() != r.players {
        return bad(format!(
            "the clock lists {} players but the match has {}",
            c.turns.len(),
            r.players
        ));
    }
    if c.bank_ms == 0 || c.turn_ms == 0 {
        return bad(format!(
            "a clock record needs a turn limit and a bank (turn_ms {}, bank_ms {})",
            c.turn_ms, c.bank_ms
        ));
    }
    let spec = c.spec();
    for (p, turns) in c.turns.iter().enumerate() {
        let ended = |t: u32| -> Answered {
            let Some(rec) = r.turns.get(t as usize) else {
                return Answered::Nothing;
            };
            match rec.faults.iter().find(|f| f.player == p) {
                Some(f) if f.kind == shared::FaultKind::Timeout => Answered::Timeout,
                Some(_) => Answered::OtherFault,
                None if rec.actions.get(p).is_some_and(Option::is_some) => Answered::Action,
                None => Answered::Nothing,
            }
        };
        clock::check(&spec, p, turns, ended)?;
        let needed = r
            .turns
            .iter()
            .map(|rec| rec.t)
            .filter(|&t| matches!(ended(t), Answered::Action | Answered::Timeout));
        if let Some(t) = clock::first_missing(turns, needed) {
            return bad(format!(
                "turn {t}: player {p} answered or timed out but its clock has no entry for the turn"
            ));
        }
    }
    Ok(())
}

/// Player counts, params and map: returns the map and params to re-simulate with.
pub(super) fn check_setup(r: &Replay) -> Result<(Map, Params), VerifyError> {
    let n = r.players;
    let inconsistent = |what: String| Err(VerifyError::Inconsistent { what });
    if r.names.len() != n || r.map.spawns.len() != n || r.params.players != n {
        return inconsistent(format!(
            "players is {n} but there are {} names, {} spawns and params for {} players",
            r.names.len(),
            r.map.spawns.len(),
            r.params.players
        ));
    }
    let map = r.map().map_err(|e| VerifyError::BadMap {
        reason: e.to_string(),
    })?;
    let expected = match r.map.source {
        MapSource::Generated => Params::for_players(n),
        MapSource::File => Params::for_map(&map),
    }
    .map_err(|e| VerifyError::Inconsistent {
        what: e.to_string(),
    })?;
    let p = &r.params;
    let pairs: [(&'static str, u64, u64); 9] = [
        ("players", p.players as u64, expected.players as u64),
        ("side", p.side as u64, expected.side as u64),
        (
            "turn_limit",
            p.turn_limit.into(),
            expected.turn_limit.into(),
        ),
        (
            "first_shrink",
            p.first_shrink.into(),
            expected.first_shrink.into(),
        ),
        (
            "shrink_interval",
            p.shrink_interval.into(),
            expected.shrink_interval.into(),
        ),
        ("fuse", p.fuse.into(), expected.fuse.into()),
        ("range", p.range.into(), expected.range.into()),
        ("capacity", p.capacity.into(), expected.capacity.into()),
        (
            "flame_turns",
            p.flame_turns.into(),
            expected.flame_turns.into(),
        ),
    ];
    for (field, stored, want) in pairs {
        if stored != want {
            return Err(VerifyError::ParamsDiffer {
                field,
                stored: stored.to_string(),
                expected: want.to_string(),
                players: n,
            });
        }
    }
    if r.map.source == MapSource::Generated {
        let regen = generate_map(r.seed, n).map_err(|e| VerifyError::Inconsistent {
            what: e.to_string(),
        })?;
        let rows = regen.rows();
        let differs = |detail: String| {
            Err(VerifyError::MapDiffers {
                seed: r.seed,
                players: n,
                detail,
            })
        };
        if rows.len() != r.map.rows.len() {
            return differs(format!(
                "{} rows stored, {} generated",
                r.map.rows.len(),
                rows.len()
            ));
        }
        for (y, (a, b)) in r.map.rows.iter().zip(&rows).enumerate() {
            if a != b {
                return differs(format!("row {y} is {a:?} but regenerates as {b:?}"));
            }
        }
        if regen.spawns != map.spawns {
            return differs(format!(
                "spawns are {:?} but regenerate as {:?}",
                map.spawns, regen.spawns
            ));
        }
    }
    Ok((map, r.params))
}

/// Why one recorded turn cannot be replayed (its actions and faults do not fit the players).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TurnInputError {
    #[error("{actions} actions for {players} players")]
    ActionCount { actions: usize, players: usize },
    #[error("player {0} has both an action and a fault")]
    ActionAndFault(usize),
    #[error("player {player}'s action {action:?} is not like \"U1\"")]
    BadAction { player: usize, action: String },
    #[error("player {0} is alive but has neither an action nor a fault")]
    Silent(usize),
    #[error("a fault names player {player} of {players}")]
    FaultPlayer { player: usize, players: usize },
    #[error("player {player}'s fault says turn {turn}")]
    FaultTurn { player: usize, turn: u32 },
}

/// The engine inputs of one recorded turn, checked against who is alive.
pub(super) fn turn_inputs(rec: &TurnRecord, game: &Game) -> Result<Vec<Input>, TurnInputError> {
    let n = game.params().players;
    if rec.actions.len() != n {
        return Err(TurnInputError::ActionCount {
            actions: rec.actions.len(),
            players: n,
        });
    }
    let mut inputs = Vec::with_capacity(n);
    for (p, a) in rec.actions.iter().enumerate() {
        let faulted = rec.faults.iter().any(|f| f.player == p);
        let input =
            match (a, faulted) {
                (Some(_), true) => return Err(TurnInputError::ActionAndFault(p)),
                (Some(s), false) => Input::Act(Action::from_compact(s).ok_or_else(|| {
                    TurnInputError::BadAction {
                        player: p,
                        action: s.clone(),
                    }
                })?),
                (None, true) => Input::Fault,
                (None, false) if game.is_alive(p) => return Err(TurnInputError::Silent(p)),
                (None, false) => Input::Fault,
            };
        inputs.push(input);
    }
    for f in &rec.faults {
        if f.player >= n {
            return Err(TurnInputError::FaultPlayer {
                player: f.player,
                players: n,
            });
        }
        if f.turn != rec.t {
            return Err(TurnInputError::FaultTurn {
                player: f.player,
                turn: f.turn,
            });
        }
    }
    Ok(inputs)
}

fn resimulate(r: &Replay, map: &Map, params: Params) -> Result<Game, VerifyError> {
    let mut game = Game::new(params, map).map_err(|e| VerifyError::BadMap {
        reason: e.to_string(),
    })?;
    for (i, rec) in r.turns.iter().enumerate() {
        if game.is_over() {
            return Err(VerifyError::ExtraTurns {
                turns: game.turn(),
                recorded: r.turns.len(),
            });
        }
        if rec.t as usize != i {
            let reason = format!("the record at position {i} says turn {}", rec.t);
            return Err(VerifyError::BadTurn { turn: i, reason });
        }
        let inputs = turn_inputs(rec, &game).map_err(|e| VerifyError::BadTurn {
            turn: i,
            reason: e.to_string(),
        })?;
        game.step(&inputs);
        let computed = format!("{:016x}", game.digest());
        if computed != rec.digest {
            return Err(VerifyError::TurnDigest {
                turn: rec.t,
                stored: rec.digest.clone(),
                computed,
            });
        }
    }
    if !game.is_over() {
        return Err(VerifyError::Unfinished {
            turns: r.turns.len(),
        });
    }
    Ok(game)
}

fn check_result(r: &Replay, game: &Game) -> Result<(), VerifyError> {
    let mut faults = vec![Vec::new(); r.players];
    for rec in &r.turns {
        for f in &rec.faults {
            faults[f.player].push(f.to_fault());
        }
    }
    let computed = build_result(
        r.seed,
        &r.names,
        &r.hashes,
        r.map.source,
        &game.outcome(),
        &faults,
    );
    let as_object = |m: &super::MatchResult| match serde_json::to_value(m) {
        Ok(Value::Object(o)) => o,
        _ => serde_json::Map::new(),
    };
    let stored = as_object(&r.result);
    let mut fresh = as_object(&computed);
    fresh.shift_remove("timing");
    for (k, v) in &fresh {
        if stored.get(k) != Some(v) {
            let s = stored
                .get(k)
                .map(|s| s.to_string())
                .unwrap_or_else(|| "missing".into());
            return Err(VerifyError::ResultDiffers {
                field: k.clone(),
                stored: s,
                computed: v.to_string(),
            });
        }
    }
    Ok(())
}
