//! The compact form of a match's data file for the viewer index (`replays/NNNNN.js`): only what
//! the rules cannot derive — meta, the initial board and players, the recorded moves, the
//! faults and the result — from which the index page re-plays every frame with its own copy of
//! the engine (`viewer_sim.js`). The frames are most of a data file and all of them follow from
//! the moves, so the folder of a tournament shrinks by most of its data files.
//!
//! [`to_sim_form`] is tried first by `index_pack::pack_for_index`, which keeps it only when
//! [`from_sim_form`] (the same re-play with this engine) gives back exactly the viewer data;
//! anything else (an `error`, a frame the moves do not explain) keeps the packed-frames form.

use serde_json::{json, Value};
use shared::FaultKind;

use super::map::Map;
use super::params::Params;
use super::replay::{play_frames, TurnFault, TurnRecord};
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
    Some(json!({
        "meta": meta, "initial": initial, "result": result,
        SIM: {"fuse": params.fuse, "range": params.range, "capacity": params.capacity,
              "flame_turns": params.flame_turns},
        "moves": moves, "faults": faults,
    }))
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
    let (meta, initial, result) = (o.get("meta")?, o.get("initial")?, o.get("result")?);
    if meta.get("version")?.as_str()? != VERSION {
        return None;
    }
    let rules = o.get(SIM)?;
    let num = |v: &Value, k: &str| -> Option<u32> { u32::try_from(v.get(k)?.as_u64()?).ok() };
    let n = usize::try_from(meta.get("players")?.as_u64()?).ok()?;
    let params = Params {
        players: n,
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
    let map = Map::from_rows(&rows, &spawns).ok()?;
    let turns = turn_records(o.get("moves")?.as_str()?, o.get("faults")?, n)?;
    let (initial, frames, error) = play_frames(params, &map, &turns).ok()?;
    if error.is_some() || frames.len() != turns.len() {
        return None;
    }
    Some(json!({"meta": meta, "initial": initial, "frames": frames, "result": result}))
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
