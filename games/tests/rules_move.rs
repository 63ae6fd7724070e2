//! Phase 3, simultaneous movement: terrain, bombs, same-target stops, propagation, swaps,
//! cycles and following.

mod common;
use common::*;
use games::bomberman::*;

#[test]
fn directions_follow_the_coordinate_system() {
    let mut g = board("#######\n#.....#\n#.....#\n#..0..#\n#.....#\n#....1#\n#######\n");
    for (mv, want) in [
        ("U0", (3, 2)),
        ("D0", (3, 3)),
        ("L0", (2, 3)),
        ("R0", (3, 3)),
        ("S0", (3, 3)),
    ] {
        g.step(&inputs(&format!("{mv} S0")));
        assert_eq!(pos(&g, 0), want, "after {mv}");
    }
}

#[test]
fn walls_and_boxes_block() {
    let mut g = board("#######\n#0+...#\n#.....#\n#.....#\n#.....#\n#....1#\n#######\n");
    let mut ev = Vec::new();
    g.step_with_events(&inputs("U0 R0"), &mut ev);
    assert_eq!(pos(&g, 0), (1, 1));
    assert_eq!(pos(&g, 1), (5, 5));
    assert_eq!(
        ev,
        vec![Event::Blocked { player: 0 }, Event::Blocked { player: 1 }]
    );
    g.step(&inputs("R0 S0"));
    assert_eq!(pos(&g, 0), (1, 1), "a box blocks");
}

#[test]
fn leave_a_bomb_but_never_step_back_onto_it() {
    let mut g = board("#######\n#0....#\n#.....#\n#.....#\n#.....#\n#....1#\n#######\n");
    g.step(&inputs("S1 S0"));
    assert_eq!(pos(&g, 0), (1, 1), "waiting on one's own fresh bomb");
    g.step(&inputs("R0 S0"));
    assert_eq!(pos(&g, 0), (2, 1), "leaving it");
    g.step(&inputs("L0 S0"));
    assert_eq!(pos(&g, 0), (2, 1), "the bomb blocks the way back");
}

#[test]
fn a_bomb_placed_this_turn_blocks_others_at_once() {
    let mut g = board("#######\n#01...#\n#.....#\n#.....#\n#.....#\n#.....#\n#######\n");
    g.step(&inputs("R0 R1"));
    assert_eq!(pos(&g, 1), (3, 1), "the placer leaves");
    assert_eq!(pos(&g, 0), (1, 1), "the new bomb blocks the follower");
}

#[test]
fn same_target_all_stay() {
    let mut g = board("#######\n#0.1..#\n#.....#\n#.....#\n#.....#\n#.....#\n#######\n");
    g.step(&inputs("R0 L0"));
    assert_eq!((pos(&g, 0), pos(&g, 1)), ((1, 1), (3, 1)));
}

#[test]
fn moving_onto_a_waiter_fails_for_both() {
    let mut g = board("#######\n#01...#\n#.....#\n#.....#\n#.....#\n#.....#\n#######\n");
    g.step(&inputs("R0 S0"));
    assert_eq!((pos(&g, 0), pos(&g, 1)), ((1, 1), (2, 1)));
}

#[test]
fn a_terrain_blocked_player_counts_as_waiting() {
    // 2 runs into the wall and stays; 1 wanted 2's cell: same target, stays; 0 follows 1: stays.
    let mut g = board("#####\n#012#\n#...#\n#...#\n#####\n");
    g.step(&inputs("R0 R0 R0"));
    assert_eq!(
        (pos(&g, 0), pos(&g, 1), pos(&g, 2)),
        ((1, 1), (2, 1), (3, 1))
    );
}

#[test]
fn stops_propagate_along_a_chain() {
    // 2 and 3 collide on (3,2) and stay; 1 wanted 2's cell, 0 wanted 1's: all stay.
    let mut g = board("#######\n#012..#\n#.....#\n#..3..#\n#.....#\n#.....#\n#######\n");
    g.step(&inputs("R0 R0 D0 U0"));
    assert_eq!(
        (pos(&g, 0), pos(&g, 1), pos(&g, 2), pos(&g, 3)),
        ((1, 1), (2, 1), (3, 1), (3, 3))
    );
}

#[test]
fn following_a_leaving_player_works() {
    let mut g = board("#######\n#012..#\n#.....#\n#.....#\n#.....#\n#.....#\n#######\n");
    g.step(&inputs("R0 R0 R0"));
    assert_eq!(
        (pos(&g, 0), pos(&g, 1), pos(&g, 2)),
        ((2, 1), (3, 1), (4, 1))
    );
}

#[test]
fn two_players_swap() {
    let mut g = board("#######\n#01...#\n#.....#\n#.....#\n#.....#\n#.....#\n#######\n");
    g.step(&inputs("R0 L0"));
    assert_eq!((pos(&g, 0), pos(&g, 1)), ((2, 1), (1, 1)));
}

#[test]
fn four_players_rotate_in_a_cycle() {
    // The grid is bipartite, so every cycle of moves has even length; 4 is the shortest ring.
    let mut g = board("######\n#01..#\n#32..#\n#....#\n#....#\n######\n");
    g.step(&inputs("R0 D0 L0 U0"));
    assert_eq!(
        (pos(&g, 0), pos(&g, 1), pos(&g, 2), pos(&g, 3)),
        ((2, 1), (2, 2), (1, 2), (1, 1))
    );
}

#[test]
fn a_cycle_with_one_blocked_member_does_not_turn() {
    let mut g = board("######\n#01..#\n#32..#\n#....#\n#....#\n######\n");
    g.step(&inputs("R0 D0 L0 S0"));
    assert_eq!(
        (pos(&g, 0), pos(&g, 1), pos(&g, 2), pos(&g, 3)),
        ((1, 1), (2, 1), (2, 2), (1, 2))
    );
}

#[test]
fn six_players_rotate_in_a_ring() {
    let mut g = board("#######\n#012..#\n#543..#\n#.....#\n#.....#\n#.....#\n#######\n");
    g.step(&inputs("R0 R0 D0 L0 L0 U0"));
    let got: Vec<_> = (0..6).map(|p| pos(&g, p)).collect();
    assert_eq!(got, vec![(2, 1), (3, 1), (3, 2), (2, 2), (1, 2), (1, 1)]);
}

#[test]
fn dead_players_occupy_nothing() {
    let mut g = board("#######\n#012..#\n#.....#\n#.....#\n#.....#\n#.....#\n#######\n");
    g.step(&[
        Input::Act(Action {
            mv: Move::Right,
            bomb: false,
        }),
        Input::Fault,
        Input::Act(Action::STAY),
    ]);
    assert_eq!(
        pos(&g, 0),
        (2, 1),
        "moved onto the cell of a player who died in phase 1"
    );
}
