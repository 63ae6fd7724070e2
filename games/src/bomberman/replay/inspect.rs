//! `farm inspect`: a text view of turns T-K..T+K of a replay: the full board with players, bombs
//! and flames drawn, player, bomb, flame and status lines, and each turn's answers (with the
//! time charged and the bank left, when the match had a time bank), faults and events.

use std::fmt::Write;

use thiserror::Error;

use super::verify::{check_setup, turn_inputs};
use super::Replay;
use crate::bomberman::events::Event;
use crate::bomberman::game::Game;

/// Why a replay could not be inspected at that turn.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum InspectError {
    #[error("turn {turn} is not in this replay, which has turns 0..={last}")]
    TurnOutOfRange { turn: u32, last: usize },
    #[error("the replay cannot be re-simulated: {0}")]
    Replay(String),
}

/// The board at the start of the current turn with players (digits), bombs (`@`) and lethal
/// flames (`*`) drawn over the tiles, with x/y rulers.
fn draw_board(game: &Game, out: &mut String) {
    let s = game.side();
    let t = game.turn();
    let mut grid: Vec<Vec<char>> = game
        .board_rows()
        .iter()
        .map(|r| r.chars().collect())
        .collect();
    for f in game.flame_sources() {
        if f.last_lethal >= t {
            grid[f.y as usize][f.x as usize] = '*';
        }
    }
    for b in game.bombs() {
        grid[b.y as usize][b.x as usize] = '@';
    }
    for p in 0..game.params().players {
        if game.is_alive(p) {
            let (x, y) = game.position(p);
            grid[y as usize][x as usize] = char::from_digit((p % 10) as u32, 10).unwrap_or('?');
        }
    }
    let ruler: String = (0..s)
        .map(|x| char::from_digit((x % 10) as u32, 10).unwrap_or('?'))
        .collect();
    let _ = writeln!(out, "     {ruler}");
    for (y, row) in grid.iter().enumerate() {
        let _ = writeln!(out, "  {y:>2} {}", row.iter().collect::<String>());
    }
    let _ = writeln!(
        out,
        "  (digits: living players, @: bomb, *: lethal flame, +: box, #: wall)"
    );
}

fn describe_state(game: &Game, names: &[String], out: &mut String) {
    let t = game.turn();
    let _ = writeln!(out, "-- state at the start of turn {t} --");
    draw_board(game, out);
    for (p, name) in names.iter().enumerate() {
        let (x, y) = game.position(p);
        let state = if game.is_alive(p) {
            "alive".to_string()
        } else {
            format!("dead since turn {}", game.death_turn(p))
        };
        let _ = writeln!(
            out,
            "  P{p} {name:<12} at ({x},{y}) {state}, kill share {}",
            game.kill_share(p)
        );
    }
    if game.bombs().is_empty() {
        let _ = writeln!(out, "  bombs: none");
    }
    for b in game.bombs() {
        let _ = writeln!(
            out,
            "  bomb of P{} at ({},{}) explodes on turn {}",
            b.owner, b.x, b.y, b.explode_at
        );
    }
    let flames: Vec<String> = game
        .flame_sources()
        .iter()
        .filter(|f| f.last_lethal >= t)
        .map(|f| format!("({},{}) P{} until {}", f.x, f.y, f.owner, f.last_lethal))
        .collect();
    let _ = writeln!(
        out,
        "  flames: {}",
        if flames.is_empty() {
            "none".into()
        } else {
            flames.join(", ")
        }
    );
}

fn describe_event(e: &Event) -> String {
    match e {
        Event::BombPlaced { player, x, y } => format!("P{player} places a bomb at ({x},{y})"),
        Event::BombFailed {
            player,
            x,
            y,
            reason,
        } => {
            format!("P{player}'s bomb at ({x},{y}) fails ({})", reason.as_str())
        }
        Event::Blocked { player } => format!("P{player}'s move is blocked"),
        Event::Explosion {
            owner,
            x,
            y,
            chained,
        } => format!(
            "bomb of P{owner} at ({x},{y}) explodes{}",
            if *chained { " (set off by fire)" } else { "" }
        ),
        Event::BoxBroken { x, y, by } => format!("box at ({x},{y}) broken by {by:?}"),
        Event::Shrink { layer } => format!("the arena shrinks: layer {layer} becomes wall"),
        Event::BombRemoved { owner, x, y } => {
            format!("bomb of P{owner} at ({x},{y}) removed by the shrink")
        }
        Event::Death {
            player,
            cause,
            killers,
            share,
        } => format!(
            "P{player} dies ({}){}",
            cause.as_str(),
            if killers.is_empty() {
                String::new()
            } else {
                format!(", killers {killers:?} get {share} each")
            }
        ),
    }
}

/// Text view of turns `turn - context ..= turn + context` (clamped to the replay).
pub fn inspect(replay: &Replay, turn: u32, context: u32) -> Result<String, InspectError> {
    let last = replay.turns.len().saturating_sub(1);
    if replay.turns.is_empty() || turn as usize > last {
        return Err(InspectError::TurnOutOfRange { turn, last });
    }
    let (map, params) = check_setup(replay).map_err(|e| InspectError::Replay(e.to_string()))?;
    let mut game = Game::new(params, &map).map_err(|e| InspectError::Replay(e.to_string()))?;
    let from = turn.saturating_sub(context) as usize;
    let to = (turn as usize + context as usize).min(last);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "replay seed {} players {} ({}) turns {}; showing turns {from}..={to}",
        replay.seed,
        replay.players,
        replay.names.join(", "),
        replay.turns.len()
    );
    let mut events = Vec::new();
    for (i, rec) in replay.turns.iter().enumerate().take(to + 1) {
        let inputs =
            turn_inputs(rec, &game).map_err(|e| InspectError::Replay(format!("turn {i}: {e}")))?;
        if i < from {
            game.step(&inputs);
            continue;
        }
        let _ = writeln!(out, "\n===== turn {i} =====");
        describe_state(&game, &replay.names, &mut out);
        let _ = writeln!(out, "-- answers --");
        for p in 0..replay.players {
            let what = match (rec.faults.iter().find(|f| f.player == p), &rec.actions[p]) {
                (Some(f), _) => format!("FAULT {} on turn {}: {}", f.kind, f.turn, f.detail),
                (None, Some(a)) => a.clone(),
                (None, None) => "- (not asked: dead)".into(),
            };
            let clock = replay
                .clock
                .as_ref()
                .and_then(|c| c.turns.get(p)?.iter().find(|ct| ct.t as usize == i))
                .map(|ct| {
                    format!(
                        " [{:.1} ms, bank {:.1} ms left]",
                        ct.used_us as f64 / 1000.0,
                        ct.bank_us as f64 / 1000.0
                    )
                })
                .unwrap_or_default();
            let _ = writeln!(out, "  P{p}: {what}{clock}");
        }
        events.clear();
        game.step_with_events(&inputs, &mut events);
        let _ = writeln!(out, "-- during turn {i} --");
        if events.is_empty() {
            let _ = writeln!(out, "  nothing happened");
        }
        for e in &events {
            let _ = writeln!(out, "  {}", describe_event(e));
        }
        let landed: Vec<String> = (0..replay.players)
            .map(|p| {
                let (x, y) = game.position(p);
                format!(
                    "P{p} ({x},{y}){}",
                    if game.is_alive(p) { "" } else { " dead" }
                )
            })
            .collect();
        let _ = writeln!(out, "  after the turn: {}", landed.join(", "));
    }
    if to == last {
        // The re-simulated outcome (the stored result is what verify compares it with).
        let o = game.outcome();
        let _ = writeln!(out, "\n===== result after {} turns =====", o.turns);
        for (p, name) in replay.names.iter().enumerate() {
            let _ = writeln!(
                out,
                "  P{p} {name:<12} rank {} points {} (survival {}, kill share {}), died {}",
                o.ranks[p], o.points[p], o.survival[p], o.kill_shares[p], o.death_turns[p]
            );
        }
    }
    Ok(out)
}
