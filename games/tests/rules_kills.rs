//! Phase 5 eliminations and kill shares: split among distinct owners, self-kills, one share per
//! owner however many of its flames cover the cell.

mod common;
use common::*;
use games::bomberman::*;
use num_rational::Ratio;

const THREE: &str = "\
#######
#.....#
#.....#
#0.2.1#
#.....#
#.....#
#######
";

/// 0 and 1 bomb (1,3) and (5,3) on turn 0 and step off the lines; 2 waits between them.
fn crossfire(victim_moves: &str) -> Game {
    let mut g = board(THREE);
    g.step(&inputs("U1 U1 S0"));
    g.step(&inputs(&format!("R0 L0 {victim_moves}")));
    while g.turn() < 5 {
        g.step(&inputs("S0 S0 S0"));
    }
    g
}

#[test]
fn a_kill_is_split_among_the_distinct_owners() {
    let g = crossfire("S0");
    assert!(g.is_alive(0) && g.is_alive(1));
    assert_eq!(g.death_turn(2), 4);
    assert_eq!(g.kill_share(0), Ratio::new(1, 2));
    assert_eq!(g.kill_share(1), Ratio::new(1, 2));
    assert!(g.turn_text().contains("S 0 -1 1 2\n"));
}

#[test]
fn a_death_outside_the_fire_gives_no_share() {
    let g = crossfire("D0"); // 2 goes to (3,4): off row 3, off columns 1 and 5
    assert!(g.is_alive(2));
    assert_eq!(g.kill_share(0), Ratio::from_integer(0));
}

#[test]
fn dying_in_ones_own_fire_gives_nobody_a_share() {
    let mut g = board(THREE);
    g.step(&inputs("S1 S0 D0")); // 2 leaves 0's row
    for _ in 0..4 {
        g.step(&inputs("S0 S0 S0"));
    }
    assert_eq!(g.death_turn(0), 4);
    assert!(g.is_alive(1) && g.is_alive(2));
    assert!((0..3).all(|p| g.kill_share(p) == Ratio::from_integer(0)));
}

#[test]
fn the_victim_is_removed_from_the_killers() {
    // 0 stands on its own bomb while 1's fire also reaches it: 1 gets the whole kill.
    let text = "\
#######
#.....#
#.....#
#0.1..#
#.....#
#.....#
#######
";
    let mut g = board(text);
    g.step(&inputs("S1 R1"));
    g.step(&inputs("S0 U0"));
    g.step(&inputs("S0 R0"));
    g.step(&inputs("S0 S0"));
    g.step(&inputs("S0 S0"));
    assert_eq!(g.death_turn(0), 4);
    assert!(g.is_alive(1));
    assert_eq!(g.kill_share(1), Ratio::from_integer(1));
}

#[test]
fn two_flames_of_one_owner_give_one_share() {
    // 0's bombs at (1,3) and (3,3) explode together (chain); both cover (2,3), where 1 stands.
    let text = "\
#######
#.....#
#.....#
#0....#
#.....#
#.1...#
#######
";
    let mut g = board(text);
    g.step(&inputs("R1 S0")); // bomb A (1,3)@4; 0 -> (2,3)
    g.step(&inputs("R0 S0")); // 0 -> (3,3)
    g.step(&inputs("U1 U0")); // bomb B (3,3)@6; 0 -> (3,2); 1 -> (2,4)
    g.step(&inputs("R0 U0")); // 0 -> (4,2); 1 -> (2,3)
    g.step(&inputs("S0 S0")); // turn 4: A explodes and sets off B
    assert!(g.bombs().is_empty());
    let here: Vec<_> = g
        .flame_sources()
        .into_iter()
        .filter(|f| (f.x, f.y) == (2, 3))
        .collect();
    assert_eq!(here.len(), 1, "one source per (cell, owner): {here:?}");
    assert_eq!(g.death_turn(1), 4);
    assert!(g.is_alive(0));
    assert_eq!(g.kill_share(0), Ratio::from_integer(1));
}
