//! Helpers shared by the integration tests: games on hand-made boards and compact input lists.
#![allow(dead_code)]

use games::bomberman::{generate_map, parse_map, Action, Game, Input, Map, Move, Params};

/// A game on a hand-made board, with the params of its player count and its own side.
pub fn board(text: &str) -> Game {
    let map = parse_map(text).unwrap();
    Game::new(Params::for_map(&map).unwrap(), &map).unwrap()
}

/// Same, with a different turn limit / shrink schedule.
pub fn board_with(text: &str, f: impl FnOnce(&mut Params)) -> Game {
    let map = parse_map(text).unwrap();
    let mut p = Params::for_map(&map).unwrap();
    f(&mut p);
    Game::new(p, &map).unwrap()
}

pub fn map(text: &str) -> Map {
    parse_map(text).unwrap()
}

/// Inputs from words: "U1" = up with a bomb, "S0" = stay, "F" = protocol fault.
pub fn inputs(words: &str) -> Vec<Input> {
    words
        .split_whitespace()
        .map(|w| {
            if w == "F" {
                Input::Fault
            } else {
                Input::Act(Action::from_compact(w).unwrap())
            }
        })
        .collect()
}

pub fn stay(n: usize) -> Vec<Input> {
    vec![
        Input::Act(Action {
            mv: Move::Stay,
            bomb: false
        });
        n
    ]
}

/// Plays `turns` turns of everyone staying.
pub fn wait(g: &mut Game, turns: u32) {
    let n = g.params().players;
    for _ in 0..turns {
        g.step(&stay(n));
    }
}

pub fn pos(g: &Game, p: usize) -> (u16, u16) {
    g.position(p)
}

use games::bomberman::replay::{MapSource, MatchMeta, Recorder, Replay, TurnInput};
use shared::{Fault, FaultKind};
use std::collections::BTreeMap;

/// A small deterministic generator for scripted bots.
pub struct Script(pub u64);

impl Script {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// A random action: uniform move, a bomb with probability 1/`bomb_one_in`.
    pub fn action(&mut self, bomb_one_in: u64) -> Action {
        let r = self.next();
        Action {
            mv: Move::ALL[(r % 5) as usize],
            bomb: (r >> 8).is_multiple_of(bomb_one_in),
        }
    }
}

/// A planned fault: (player, turn, kind).
pub type PlannedFault = (usize, u32, FaultKind);

pub fn meta(seed: u64, n: usize, source: MapSource) -> MatchMeta {
    MatchMeta {
        seed,
        names: (0..n).map(|i| format!("bot{i}")).collect(),
        hashes: (0..n)
            .map(|i| (format!("bot_{i}"), format!("{i:064x}")))
            .collect::<BTreeMap<_, _>>(),
        map_source: source,
    }
}

/// Plays a whole match with scripted bots on `map` (faults as planned) and records it.
pub fn record_on(
    seed: u64,
    map: &Map,
    source: MapSource,
    params: Params,
    script_seed: u64,
    faults: &[PlannedFault],
) -> (Replay, Game) {
    let n = params.players;
    let mut game = Game::new(params, map).unwrap();
    let mut rec = Recorder::new(meta(seed, n, source), params, map);
    let mut s = Script(script_seed | 1);
    while !game.is_over() {
        let t = game.turn();
        let turn: Vec<TurnInput> = (0..n)
            .map(|p| {
                let a = s.action(6);
                if !game.is_alive(p) {
                    TurnInput::NotAsked
                } else if let Some(&(_, _, kind)) = faults.iter().find(|f| f.0 == p && f.1 == t) {
                    TurnInput::Fault(Fault {
                        kind,
                        turn: t,
                        detail: format!("{kind} of bot{p}"),
                    })
                } else {
                    TurnInput::Act(a)
                }
            })
            .collect();
        let inputs: Vec<Input> = turn.iter().map(TurnInput::to_input).collect();
        game.step(&inputs);
        rec.record(t, &turn, game.digest());
    }
    let tails = (0..n).map(|p| format!("stderr of bot{p}\n")).collect();
    let timing = serde_json::json!({"bot_0": {"wall_ms": 12}});
    (rec.finish(&game, tails, Some(timing)), game)
}

/// A recorded match on the generated map of (seed, n).
pub fn record(seed: u64, n: usize, script_seed: u64, faults: &[PlannedFault]) -> (Replay, Game) {
    let map = generate_map(seed, n).unwrap();
    let params = Params::for_players(n).unwrap();
    record_on(
        seed,
        &map,
        MapSource::Generated,
        params,
        script_seed,
        faults,
    )
}
