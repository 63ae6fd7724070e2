//! Helpers shared by the integration tests: games on hand-made boards and compact input lists.
#![allow(dead_code)]

use games::bomberman::{parse_map, Action, Game, Input, Map, Move, Params};

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
