//! The HTML viewer's input: meta data, the initial board and one frame per turn (actions, landed
//! positions, board, players, bombs, flames, events, status), all derived by re-simulation.

use serde_json::{json, Value};

use super::verify::{check_setup, turn_inputs};
use super::{Replay, TurnRecord};
use crate::bomberman::events::{DeathCause, Event};
use crate::bomberman::game::{Game, GameError};
use crate::bomberman::map::Map;
use crate::bomberman::params::Params;

/// Players as the viewer draws them.
fn players_json(game: &Game) -> Value {
    let n = game.params().players;
    (0..n)
        .map(|p| {
            let (x, y) = game.position(p);
            json!({"x": x, "y": y, "alive": game.is_alive(p)})
        })
        .collect()
}

/// Flame sources grouped per cell (row-major).
pub(super) fn flames_json(game: &Game) -> Value {
    let mut out: Vec<Value> = Vec::new();
    let mut cur: Option<(u16, u16, u32, Vec<usize>)> = None;
    for f in game.flame_sources() {
        match &mut cur {
            Some((x, y, until, owners)) if *x == f.x && *y == f.y => {
                *until = (*until).max(f.last_lethal);
                owners.push(f.owner);
            }
            _ => {
                if let Some((x, y, until, owners)) = cur.take() {
                    out.push(json!({"x": x, "y": y, "until": until, "owners": owners}));
                }
                cur = Some((f.x, f.y, f.last_lethal, vec![f.owner]));
            }
        }
    }
    if let Some((x, y, until, owners)) = cur {
        out.push(json!({"x": x, "y": y, "until": until, "owners": owners}));
    }
    Value::Array(out)
}

/// The viewer's `meta` member of a replay.
pub(crate) fn meta_json(replay: &Replay) -> Value {
    json!({
        "version": replay.version, "seed": replay.seed, "players": replay.players,
        "names": replay.names, "side": replay.params.side, "turn_limit": replay.params.turn_limit,
        "first_shrink": replay.params.first_shrink, "shrink_interval": replay.params.shrink_interval,
    })
}

/// The viewer's `initial` member: the board and players of a game before its first turn.
pub(crate) fn initial_json(game: &Game) -> Value {
    json!({"board": game.board_rows(), "players": players_json(game)})
}

/// The viewer's data for a (verified) replay. A replay that cannot be re-simulated gives
/// `{"error": ...}` with the frames up to the problem.
pub fn viewer_data(replay: &Replay) -> Value {
    let meta = meta_json(replay);
    let result = replay.result_json();
    let (map, params) = match check_setup(replay) {
        Ok(v) => v,
        Err(e) => return json!({"meta": meta, "error": e.to_string(), "result": result}),
    };
    let (initial, frames, error) = match play_frames(params, &map, &replay.turns) {
        Ok(v) => v,
        Err(e) => return json!({"meta": meta, "error": e.to_string(), "result": result}),
    };
    let mut out = json!({"meta": meta, "initial": initial, "frames": frames, "result": result});
    if let (Some(e), Some(o)) = (error, out.as_object_mut()) {
        o.insert("error".into(), Value::String(e));
    }
    out
}

/// The viewer's `initial` member and its frames for `turns` played from `map` with `params`
/// (until the game is over), and why the frames stop early if a turn cannot be played. Shared
/// by [`viewer_data`] and the index's compact form (`index_sim`), which re-plays the turns its
/// data file keeps.
pub(crate) fn play_frames(
    params: Params,
    map: &Map,
    turns: &[TurnRecord],
) -> Result<(Value, Vec<Value>, Option<String>), GameError> {
    let mut game = Game::new(params, map)?;
    let initial = initial_json(&game);
    let mut frames = Vec::with_capacity(turns.len());
    let mut events = Vec::new();
    for rec in turns {
        if game.is_over() {
            break;
        }
        let inputs = match turn_inputs(rec, &game) {
            Ok(i) => i,
            Err(e) => return Ok((initial, frames, Some(format!("turn {}: {e}", rec.t)))),
        };
        let t = game.turn();
        let n = params.players;
        let alive_before: Vec<bool> = (0..n).map(|p| game.is_alive(p)).collect();
        events.clear();
        game.step_with_events(&inputs, &mut events);
        frames.push(frame_json(&game, rec, t, &alive_before, &events));
    }
    Ok((initial, frames, None))
}

/// What [`viewer_data`] is made of when it has no `error`, without its frames: the setup, the
/// `initial` member and the turns that make a frame each (those played before the game is
/// over); None where `viewer_data` would give an `error`. It plays the same turns as
/// [`play_frames`] and builds no frame, for the index's compact form (`index_sim`).
pub(crate) fn played_turns(replay: &Replay) -> Option<(Params, Map, Value, &[TurnRecord])> {
    let (map, params) = check_setup(replay).ok()?;
    let mut game = Game::new(params, &map).ok()?;
    let initial = initial_json(&game);
    let mut played = 0;
    let mut events = Vec::new();
    for rec in &replay.turns {
        if game.is_over() {
            break;
        }
        let inputs = turn_inputs(rec, &game).ok()?;
        events.clear();
        game.step_with_events(&inputs, &mut events);
        played += 1;
    }
    Some((params, map, initial, replay.turns.get(..played)?))
}

/// One frame: the state after turn `t` (played from `rec`) with what happened in it.
fn frame_json(game: &Game, rec: &TurnRecord, t: u32, alive_before: &[bool], events: &[Event]) -> Value {
    let n = game.params().players;
    let actions: Vec<Value> = (0..n)
        .map(|p| {
            if let Some(f) = rec.faults.iter().find(|f| f.player == p) {
                json!({"fault": f.kind.as_str(), "detail": f.detail})
            } else {
                match rec.actions[p]
                    .as_deref()
                    .and_then(crate::bomberman::Action::from_compact)
                {
                    Some(a) => json!({"move": a.mv.letter().to_string(), "bomb": a.bomb}),
                    None => Value::Null,
                }
            }
        })
        .collect();
    let left_early = |p: usize| {
        events.iter().any(|e| {
            matches!(e, Event::Death { player, cause: DeathCause::Fault | DeathCause::Shrink, .. } if *player == p)
        })
    };
    let landed: Vec<Value> = (0..n)
        .map(|p| {
            if alive_before[p] && !left_early(p) {
                let (x, y) = game.position(p);
                json!([x, y])
            } else {
                Value::Null
            }
        })
        .collect();
    let mut ev: Vec<Value> = rec
        .faults
        .iter()
        .map(|f| json!({"type": "fault", "player": f.player, "kind": f.kind.as_str(), "detail": f.detail}))
        .collect();
    ev.extend(events.iter().map(Event::to_json));
    let bombs: Vec<Value> = game
        .bombs()
        .iter()
        .map(|b| json!({"owner": b.owner, "x": b.x, "y": b.y, "explode_at": b.explode_at}))
        .collect();
    let status: Vec<Value> = (0..n)
        .map(|p| json!({"death_turn": game.death_turn(p), "kill_share": game.kill_share(p).to_string()}))
        .collect();
    json!({
        "t": t, "actions": actions, "landed": landed, "board": game.board_rows(),
        "players": players_json(game), "bombs": bombs, "flames": flames_json(game),
        "events": ev, "status": status,
    })
}
