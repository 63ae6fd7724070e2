//! Phase 1: expired flames, protocol faults, and the shrinking arena (players, bombs, boxes and
//! flames on the new walls); game end conditions.

mod common;
use common::*;
use games::bomberman::*;
use num_rational::Ratio;

#[test]
fn shrink_turns_and_layers_follow_the_schedule() {
    let p = Params::for_players(2).unwrap();
    assert_eq!(p.shrink_layer(149), None);
    assert_eq!(p.shrink_layer(150), Some(1));
    assert_eq!(p.shrink_layer(151), None);
    assert_eq!(p.shrink_layer(170), Some(2));
    assert_eq!(p.shrink_layer(190), Some(3));
    let p = Params::for_players(10).unwrap();
    assert_eq!(p.shrink_layer(350), Some(1));
    assert_eq!(p.shrink_layer(375), Some(2));
    assert_eq!(p.shrink_layer(374), None);
}

const NINE: &str = "\
#########
#0......#
#.......#
#...+...#
#.......#
#.......#
#.......#
#......1#
#########
";

fn early_shrink(text: &str) -> Game {
    board_with(text, |p| {
        p.first_shrink = 5;
        p.shrink_interval = 3;
    })
}

#[test]
fn a_shrink_walls_in_one_layer_per_step() {
    let mut g = early_shrink(NINE);
    // Both walk inward out of layer 1 before turn 5, then wait in layer 3 (the centre ring).
    for t in ["D0 U0", "R0 L0", "D0 U0", "R0 L0", "S0 S0"] {
        g.step(&inputs(t));
    }
    assert_eq!((pos(&g, 0), pos(&g, 1)), ((3, 3), (5, 5)));
    assert_eq!(g.tile(1, 1), Tile::Empty, "no shrink before turn 5");
    g.step(&inputs("S0 S0")); // turn 5: layer 1
    let wall_ring = |g: &Game, layer: usize| {
        (layer..9 - layer).all(|i| {
            [(i, layer), (i, 8 - layer), (layer, i), (8 - layer, i)]
                .iter()
                .all(|&(x, y)| g.tile(x, y) == Tile::Wall)
        })
    };
    assert!(wall_ring(&g, 1), "layer 1 after turn 5");
    assert!(!wall_ring(&g, 2));
    g.step(&inputs("S0 S0")); // 6
    g.step(&inputs("S0 S0")); // 7
    assert!(!wall_ring(&g, 2));
    g.step(&inputs("S0 S0")); // 8: layer 2
    assert!(wall_ring(&g, 2));
    assert!(g.is_alive(0) && g.is_alive(1));
    assert_eq!(g.tile(4, 3), Tile::Box, "layer 3 untouched so far");
    g.step(&inputs("S0 S0")); // 9
    g.step(&inputs("S0 S0")); // 10
    g.step(&inputs("R0 L0")); // 11: layer 3 takes both players, even moving inward
    assert_eq!((g.death_turn(0), g.death_turn(1)), (11, 11));
    assert_eq!(
        (pos(&g, 0), pos(&g, 1)),
        ((3, 3), (5, 5)),
        "no move on the turn they die"
    );
    assert_eq!(g.tile(4, 3), Tile::Wall, "the box became wall");
    assert!(g.is_over());
    assert!((0..2).all(|p| g.kill_share(p) == Ratio::from_integer(0)));
}

#[test]
fn bombs_on_new_walls_vanish_without_exploding_and_free_capacity() {
    let mut g = early_shrink(NINE);
    let mut ev = Vec::new();
    g.step(&inputs("D0 S0")); // (1,2)
    g.step(&inputs("D0 S0")); // (1,3)
    g.step(&inputs("R1 S0")); // turn 2: bomb at (1,3) due on 6; 0 -> (2,3)
    g.step(&inputs("R0 S0")); // (3,3)
    g.step(&inputs("R0 S0")); // (4,3)? box: blocked, stays (3,3)
    g.step_with_events(&inputs("S0 U0"), &mut ev); // turn 5: shrink layer 1 takes the bomb
    assert!(ev.contains(&Event::Shrink { layer: 1 }));
    assert!(ev.contains(&Event::BombRemoved {
        owner: 0,
        x: 1,
        y: 3
    }));
    assert!(g.bombs().is_empty());
    assert_eq!(g.death_turn(1), 5, "1 stayed in layer 1");
    // Game over (one left); replay the same with 1 escaping to see the bomb never explodes.
    let mut g = early_shrink(NINE);
    for t in [
        "D0 U0", "D0 L0", "R1 U0", "R0 L0", "S0 S0", "S1 S0", "S0 S0",
    ] {
        g.step(&inputs(t));
    }
    assert!(g.is_alive(0) && g.is_alive(1));
    assert_eq!(
        g.outcome().bombs_placed,
        vec![2, 0],
        "capacity came back after the removal"
    );
    assert_eq!(g.bombs().len(), 1);
    assert!(
        g.flame_sources().is_empty(),
        "the removed bomb never exploded"
    );
}

#[test]
fn flames_on_new_walls_are_removed() {
    let text = "\
#########
#.......#
#.0.....#
#...+...#
#.......#
#.......#
#.....1.#
#.......#
#########
";
    let mut g = early_shrink(text);
    // 0's bomb at (2,2) explodes on turn 4; its flames (lethal through 5) reach layer 1.
    for t in ["R1 S0", "D0 S0", "S0 S0", "S0 S0", "S0 S0"] {
        g.step(&inputs(t));
    }
    assert!(g.flame_sources().iter().any(|f| (f.x, f.y) == (1, 2)));
    assert!(g.flame_sources().iter().any(|f| (f.x, f.y) == (2, 1)));
    g.step(&inputs("S0 S0")); // turn 5: layer 1 becomes wall
    assert!(g.is_alive(0) && g.is_alive(1));
    let left = g.flame_sources();
    assert!(
        left.iter()
            .all(|f| (2..=6).contains(&f.x) && (2..=6).contains(&f.y)),
        "{left:?}"
    );
    assert!(
        left.iter().any(|f| (f.x, f.y) == (3, 2)),
        "inner flames stay"
    );
    assert!(!g.turn_text().contains("F 1 2 "));
}

#[test]
fn a_protocol_fault_kills_in_phase_one_without_a_share() {
    let mut g = board(NINE);
    let mut ev = Vec::new();
    g.step_with_events(
        &[
            Input::Fault,
            Input::Act(Action {
                mv: Move::Up,
                bomb: true,
            }),
        ],
        &mut ev,
    );
    assert_eq!(g.death_turn(0), 0);
    assert_eq!(
        ev[0],
        Event::Death {
            player: 0,
            cause: DeathCause::Fault,
            killers: vec![],
            share: Ratio::from_integer(0)
        }
    );
    assert!(g.is_over());
    assert_eq!(g.turn(), 1, "the turn is still played in full");
    assert_eq!(g.bombs().len(), 1, "the other player's turn went on");
}

#[test]
fn the_last_survivor_still_faces_the_turns_explosions() {
    // Turn 4 is a shrink turn: 1 dies in the new wall (phase 1), which leaves 0 alone, but 0
    // still dies in its own blast (phase 5). Nobody survives; both died on turn 4: a tie.
    let text = "\
#########
#.......#
#.0.....#
#.......#
#.......#
#.......#
#.......#
#......1#
#########
";
    let mut g = board_with(text, |p| {
        p.first_shrink = 4;
        p.shrink_interval = 3;
    });
    g.step(&inputs("S1 S0")); // bomb (2,2) due on 4; 0 stays on it
    for _ in 0..4 {
        g.step(&inputs("S0 S0"));
    }
    assert_eq!(g.death_turn(1), 4, "shrink, phase 1");
    assert_eq!(g.death_turn(0), 4, "own blast, phase 5 of the same turn");
    assert_eq!(g.alive_count(), 0);
    assert!(g.is_over());
    let o = g.outcome();
    assert_eq!(
        o.survival,
        vec![Ratio::new(1, 2), Ratio::new(1, 2)],
        "same turn: a tie"
    );
    assert_eq!(o.ranks, vec![1, 1]);
}

#[test]
fn the_game_ends_at_the_turn_limit_with_survivors_tied() {
    let mut g = board_with(NINE, |p| p.turn_limit = 7);
    wait(&mut g, 6);
    assert!(!g.is_over());
    g.step(&stay(2));
    assert!(g.is_over());
    let o = g.outcome();
    assert_eq!(o.turns, 7);
    assert_eq!(o.death_turns, vec![-1, -1]);
    assert_eq!(o.points, vec![Ratio::new(1, 2), Ratio::new(1, 2)]);
    let before = g.digest();
    g.step(&stay(2));
    assert_eq!(
        g.digest(),
        before,
        "stepping a finished game changes nothing"
    );
}
