//! The compact form of a match's data file for the viewer index (`replays/NNNNN.js`): only what
//! the rules cannot derive — meta, the initial board and players, the recorded moves, the
//! faults and the result — from which the index page re-plays every frame with its own copy of
//! the engine (`viewer_sim.js`). The frames are most of a data file and all of them follow from
//! the moves, so the folder of a tournament shrinks by most of its data files.
//!
//! [`to_sim_form`] is tried first by `index_pack::pack_for_index`, which keeps it only when
//! [`from_sim_form`] (the same re-play with this engine) gives back exactly the viewer data;
//! anything else (an `error`, a frame the moves do not explain) keeps the packed-frames form.
//! A match's data file is written from [`sim_form_of`], the same document built straight from
//! the replay without building the frames twice to compare them.

use serde_json::{json, Value};
use shared::FaultKind;

use super::map::Map;
use super::params::Params;
use super::replay::{meta_json, play_frames, played_turns, Replay, TurnFault, TurnRecord};
use super::Action;
use super::VERSION;

/// The member that marks the compact form and holds the rule constants the meta lacks.
pub const SIM: &str = "sim";

/// The viewer data in compact form, if it has the shape `viewer_data` gives (no `error`):
/// `{"meta", "initial", "result", "sim": {fuse, range, capacity, flame_turns}, "moves",
/// "faults"}`, where `moves` is one character per player per frame (frame-major): the move
/// letter (`U` `D` `L` `R` `S`), lowercase when the player asked for a bomb, `.` for no action
/// (dead, or a fault), and `faults` lists `[frame, player, kind, detail]` in the order of the
/// frames' fault events. Whether it re-plays to the same data is [`from_sim_form`]'s to say.
pub fn to_sim_form(data: &Value) -> Option<Value> {
    let o = data.as_object()?;
    if o.contains_key("error") || o.len() != 4 || o.contains_key(SIM) {
        return None;
    }
    let (meta, initial, result) = (o.get("meta")?, o.get("initial")?, o.get("result")?);
    let frames = o.get("frames")?.as_array()?;
    let n = usize::try_from(meta.get("players")?.as_u64()?).ok()?;
    let params = Params::for_players(n).ok()?;
    let mut moves = String::with_capacity(frames.len() * n);
    let mut faults = Vec::new();
    for (i, f) in frames.iter().enumerate() {
        let actions = f.get("actions")?.as_array()?;
        if actions.len() != n {
            return None;
        }
        for a in actions {
            moves.push(move_char(a)?);
        }
        for e in f.get("events")?.as_array()? {
            if e.get("type").and_then(Value::as_str) == Some("fault") {
                faults.push(json!([i, e.get("player")?, e.get("kind")?, e.get("detail")?]));
            }
        }
    }
    Some(compact(meta, initial, result, &params, moves, faults))
}

/// The compact form's document, members in the order the page and the tests expect.
fn compact(
    meta: &Value,
    initial: &Value,
    result: &Value,
    rules: &Params,
    moves: String,
    faults: Vec<Value>,
) -> Value {
    json!({
        "meta": meta, "initial": initial, "result": result,
        SIM: {"fuse": rules.fuse, "range": rules.range, "capacity": rules.capacity,
              "flame_turns": rules.flame_turns},
        "moves": moves, "faults": faults,
    })
}

/// The compact form of a replay's viewer data (with `result` as its result), built straight
/// from the replay: what [`to_sim_form`] gives of [`viewer_data`](super::replay::viewer_data)
/// when [`from_sim_form`] gives that data back, without building a frame (the frames are most of
/// the cost of writing a match's data file). None where the round trip would not hold: another
/// rules version, a turn that does not play, or a setup (board, spawns, rule constants) that the
/// compact form does not rebuild exactly; the caller then packs the frames.
///
/// Why it is the same: the frames are a function of the setup and, per turn, of each player's
/// action as parsed (none for a faulted or silent player) and the turn's faults in order, which
/// is what `moves` and `faults` keep; the setup is checked by rebuilding it as the page does.
/// `games::viewer_sim` holds it to the full round trip on every game it plays.
pub fn sim_form_of(replay: &Replay, result: &Value) -> Option<Value> {
    if replay.version != VERSION {
        return None;
    }
    let (params, map, initial, turns) = played_turns(replay)?;
    let n = params.players;
    let rules = Params::for_players(n).ok()?;
    let mut moves = String::with_capacity(turns.len() * n);
    let mut faults = Vec::new();
    for (i, rec) in turns.iter().enumerate() {
        for p in 0..n {
            let faulted = rec.faults.iter().any(|f| f.player == p);
            let action = rec.actions.get(p)?.as_deref().and_then(Action::from_compact);
            moves.push(match (faulted, action) {
                (false, Some(a)) if a.bomb => a.mv.letter().to_ascii_lowercase(),
                (false, Some(a)) => a.mv.letter(),
                _ => '.',
            });
        }
        for f in &rec.faults {
            faults.push(json!([i, f.player, f.kind.as_str(), f.detail]));
        }
    }
    let sim = compact(&meta_json(replay), &initial, result, &rules, moves, faults);
    (setup_of(&sim)? == (params, map)).then_some(sim)
}

/// One player's action of a frame as one character of `moves`.
fn move_char(a: &Value) -> Option<char> {
    if a.is_null() || a.get("fault").is_some() {
        return Some('.');
    }
    let letter = a.get("move")?.as_str()?;
    let c = match letter.as_bytes() {
        [c @ (b'U' | b'D' | b'L' | b'R' | b'S')] => char::from(*c),
        _ => return None,
    };
    match a.get("bomb")?.as_bool()? {
        true => Some(c.to_ascii_lowercase()),
        false => Some(c),
    }
}

/// The viewer data of a compact form, by re-playing its moves with this engine (what the index
/// page does in JavaScript); None if it is not one or does not re-play (a bad move, a game
/// that ends before its moves do).
pub fn from_sim_form(sim: &Value) -> Option<Value> {
    let o = sim.as_object()?;
    let (meta, result) = (o.get("meta")?, o.get("result")?);
    if meta.get("version")?.as_str()? != VERSION {
        return None;
    }
    let (params, map) = setup_of(sim)?;
    let n = params.players;
    let turns = turn_records(o.get("moves")?.as_str()?, o.get("faults")?, n)?;
    let (initial, frames, error) = play_frames(params, &map, &turns).ok()?;
    if error.is_some() || frames.len() != turns.len() {
        return None;
    }
    Some(json!({"meta": meta, "initial": initial, "frames": frames, "result": result}))
}

/// The rules and the map a compact form re-plays with, rebuilt from its meta, `initial` and
/// `sim` members as the page does.
fn setup_of(sim: &Value) -> Option<(Params, Map)> {
    let (meta, initial, rules) = (sim.get("meta")?, sim.get("initial")?, sim.get(SIM)?);
    let num = |v: &Value, k: &str| -> Option<u32> { u32::try_from(v.get(k)?.as_u64()?).ok() };
    let params = Params {
        players: usize::try_from(meta.get("players")?.as_u64()?).ok()?,
        side: usize::try_from(meta.get("side")?.as_u64()?).ok()?,
        turn_limit: num(meta, "turn_limit")?,
        first_shrink: num(meta, "first_shrink")?,
        shrink_interval: num(meta, "shrink_interval")?,
        fuse: num(rules, "fuse")?,
        range: num(rules, "range")?,
        capacity: num(rules, "capacity")?,
        flame_turns: num(rules, "flame_turns")?,
    };
    let rows: Vec<String> = serde_json::from_value(initial.get("board")?.clone()).ok()?;
    let spawns = initial
        .get("players")?
        .as_array()?
        .iter()
        .map(|p| Some((num(p, "x")? as u16, num(p, "y")? as u16)))
        .collect::<Option<Vec<_>>>()?;
    Some((params, Map::from_rows(&rows, &spawns).ok()?))
}

/// The turn records `moves` and `faults` stand for (digests are not needed to re-play).
fn turn_records(moves: &str, faults: &Value, n: usize) -> Option<Vec<TurnRecord>> {
    #[allow(clippy::manual_is_multiple_of)] // keeps the workspace MSRV (1.85)
    let whole_frames = n > 0 && moves.len() % n == 0;
    if !whole_frames || !moves.is_ascii() {
        return None;
    }
    let mut turns: Vec<TurnRecord> = moves
        .as_bytes()
        .chunks(n)
        .enumerate()
        .map(|(t, chunk)| TurnRecord {
            t: t as u32,
            actions: chunk.iter().map(|&c| compact_action(c)).collect(),
            faults: Vec::new(),
            digest: String::new(),
        })
        .collect();
    for f in faults.as_array()? {
        let t = usize::try_from(f.get(0)?.as_u64()?).ok()?;
        let kind: FaultKind = serde_json::from_value(f.get(2)?.clone()).ok()?;
        let rec = turns.get_mut(t)?;
        rec.faults.push(TurnFault {
            player: usize::try_from(f.get(1)?.as_u64()?).ok()?,
            kind,
            turn: t as u32,
            detail: f.get(3)?.as_str()?.to_string(),
        });
    }
    Some(turns)
}

/// The replay's compact action ("U1") of one `moves` character; None for `.` (or anything
/// else, which re-plays as no action and so fails the round trip).
fn compact_action(c: u8) -> Option<String> {
    let bomb = c.is_ascii_lowercase();
    let m = c.to_ascii_uppercase();
    matches!(m, b'U' | b'D' | b'L' | b'R' | b'S').then(|| format!("{}{}", char::from(m), u8::from(bomb)))
}
