//! Phase 4 and 5: rays, walls, boxes, chains, the start-of-phase layout, flame lifetimes.

mod common;
use common::*;
use games::bomberman::*;
use std::collections::BTreeSet;

/// The cells burning with the given owner after the last explosion.
fn burning(g: &Game, owner: usize) -> BTreeSet<(u16, u16)> {
    g.flame_sources()
        .iter()
        .filter(|f| f.owner == owner)
        .map(|f| (f.x, f.y))
        .collect()
}

fn owners_at(g: &Game, x: u16, y: u16) -> Vec<usize> {
    g.flame_sources()
        .iter()
        .filter(|f| (f.x, f.y) == (x, y))
        .map(|f| f.owner)
        .collect()
}

fn cells(list: &[(u16, u16)]) -> BTreeSet<(u16, u16)> {
    list.iter().copied().collect()
}

/// Player 0 drops a bomb where it stands on turn 0, walks `escape`, then everyone waits until
/// the bomb has gone off (turn 4).
fn drop_and_run(text: &str, escape: &[&str]) -> Game {
    let mut g = board(text);
    let n = g.params().players;
    let rest = " S0".repeat(n - 1);
    g.step(&inputs(&format!("{}{rest}", escape[0].replace('0', "1"))));
    for e in &escape[1..] {
        g.step(&inputs(&format!("{e}{rest}")));
    }
    while g.turn() < 5 {
        g.step(&stay(n));
    }
    g
}

#[test]
fn rays_reach_range_cells_in_four_directions() {
    let text = "\
###########
#.........#
#.........#
#.........#
#.........#
#....0....#
#.........#
#.........#
#.........#
#........1#
###########
";
    // 0 at (5,5) bombs and goes (6,5) -> (6,6) -> (6,7)? (6,6) is off the cross: safe.
    let g = drop_and_run(text, &["R0", "D0"]);
    assert!(g.is_alive(0));
    let mut want = vec![(5, 5)];
    for k in 1..=3 {
        want.extend([(5 - k, 5), (5 + k, 5), (5, 5 - k), (5, 5 + k)]);
    }
    assert_eq!(burning(&g, 0), cells(&want));
    assert!(
        g.flame_sources().iter().all(|f| f.last_lethal == 5),
        "flames last on t and t+1"
    );
}

#[test]
fn walls_stop_rays_and_do_not_burn_boxes_burn_and_stop() {
    let text = "\
#########
#.......#
##......#
#.......#
#0.+....#
#.......#
#.......#
#......1#
#########
";
    // Bomb at (1,4): up (1,3), then the wall (1,2) stops. Right (2,4), the box (3,4) burns
    // and stops. Left: the outer wall. Down (1,5),(1,6),(1,7).
    let g = drop_and_run(text, &["U0", "R0"]);
    assert_eq!(pos(&g, 0), (2, 3));
    assert!(g.is_alive(0));
    assert_eq!(
        burning(&g, 0),
        cells(&[(1, 4), (1, 3), (2, 4), (3, 4), (1, 5), (1, 6), (1, 7)])
    );
    assert_eq!(g.tile(3, 4), Tile::Empty, "the box is gone");
    assert_eq!(g.tile(1, 2), Tile::Wall);
    assert_eq!(g.outcome().boxes_broken, vec![1, 0]);
}

#[test]
fn a_box_behind_a_box_survives() {
    let text = "\
#########
#.......#
#.......#
#.......#
#0++....#
#.......#
#.......#
#......1#
#########
";
    let g = drop_and_run(text, &["U0", "R0"]);
    assert_eq!(g.tile(2, 4), Tile::Empty);
    assert_eq!(g.tile(3, 4), Tile::Box, "the first box stopped the ray");
    assert_eq!(
        burning(&g, 0),
        cells(&[
            (1, 4),
            (1, 3),
            (1, 2),
            (1, 1),
            (2, 4),
            (1, 5),
            (1, 6),
            (1, 7)
        ])
    );
    assert_eq!(g.outcome().boxes_broken, vec![1, 0]);
}

/// Plays turns of "a b" for players 0 and 1, then waits until turn 5.
fn script(text: &str, turns: &[&str]) -> Game {
    let mut g = board(text);
    for t in turns {
        g.step(&inputs(t));
    }
    let n = g.params().players;
    while g.turn() < 5 {
        g.step(&stay(n));
    }
    g
}

#[test]
fn a_box_hit_by_two_rays_stops_both_and_counts_for_both_owners() {
    // Bombs at (1,4) and (5,4), box at (3,4) between them; both explode on turn 4.
    let text = "\
#########
#.......#
#.......#
#.......#
#0.+.1..#
#.......#
#.......#
#.......#
#########
";
    let g = script(text, &["U1 U1", "R0 R0"]);
    assert!(g.is_alive(0) && g.is_alive(1));
    assert_eq!(owners_at(&g, 3, 4), vec![0, 1]);
    assert_eq!(
        owners_at(&g, 2, 4),
        vec![0],
        "1's ray did not pass the box 0 also hit"
    );
    assert_eq!(
        owners_at(&g, 4, 4),
        vec![1],
        "0's ray did not pass the box 1 also hit"
    );
    assert_eq!(g.outcome().boxes_broken, vec![1, 1]);
}

const ROW11: &str = "\
###########
#0.1......#
#.........#
#.........#
#.........#
#.........#
#.........#
#.........#
#.........#
#.........#
###########
";

#[test]
fn chain_reactions_stop_the_ray_and_keep_owners() {
    let mut g = board(ROW11);
    g.step(&inputs("D1 S0")); // t0: 0's bomb (1,1) explodes on 4; 0 -> (1,2)
    g.step(&inputs("D0 S1")); // t1: 1's bomb (3,1) explodes on 5; 0 -> (1,3)
    g.step(&inputs("R0 D0")); // t2: 0 -> (2,3); 1 -> (3,2)
    g.step(&inputs("S0 R0")); // t3: 1 -> (4,2)
    let mut ev = Vec::new();
    g.step_with_events(&inputs("S0 S0"), &mut ev); // t4
    assert!(g.is_alive(0) && g.is_alive(1));
    assert!(ev.contains(&Event::Explosion {
        owner: 0,
        x: 1,
        y: 1,
        chained: false
    }));
    assert!(ev.contains(&Event::Explosion {
        owner: 1,
        x: 3,
        y: 1,
        chained: true
    }));
    assert!(g.bombs().is_empty());
    assert_eq!(owners_at(&g, 2, 1), vec![0, 1]);
    assert_eq!(
        owners_at(&g, 3, 1),
        vec![0, 1],
        "the chained bomb's cell burns for both"
    );
    assert_eq!(
        owners_at(&g, 4, 1),
        vec![1],
        "0's ray stopped at the chained bomb"
    );
    assert_eq!(
        owners_at(&g, 6, 1),
        vec![1],
        "the chained bomb burns with its own owner"
    );
    assert_eq!(owners_at(&g, 3, 4), vec![1]);
    assert_eq!(owners_at(&g, 1, 4), vec![0]);
}

#[test]
fn a_bomb_exploding_in_the_same_phase_still_stops_other_rays() {
    let mut g = board(ROW11);
    g.step(&inputs("D1 D1")); // both explode on 4; 0 -> (1,2), 1 -> (3,2)
    g.step(&inputs("D0 D0")); // (1,3), (3,3)
    g.step(&inputs("R0 R0")); // (2,3), (4,3)
    let mut ev = Vec::new();
    g.step_with_events(&inputs("S0 S0"), &mut ev);
    g.step_with_events(&inputs("S0 S0"), &mut ev);
    assert!(ev.contains(&Event::Explosion {
        owner: 0,
        x: 1,
        y: 1,
        chained: false
    }));
    assert!(ev.contains(&Event::Explosion {
        owner: 1,
        x: 3,
        y: 1,
        chained: false
    }));
    assert!(g.is_alive(0) && g.is_alive(1));
    assert_eq!(owners_at(&g, 2, 1), vec![0, 1]);
    assert_eq!(owners_at(&g, 4, 1), vec![1], "0's ray ends at 1's bomb");
    assert_eq!(owners_at(&g, 1, 1), vec![0, 1], "1's ray ends at 0's bomb");
}

const CROSS11: &str = "\
###########
#.........#
#.........#
#.........#
#.........#
#....0...1#
#.........#
#.........#
#.........#
#.........#
###########
";

/// 0 bombs (5,5) on turn 0 (explodes on 4, flames lethal on 4 and 5) and steps off to (6,4).
fn cross_game() -> Game {
    let mut g = board(CROSS11);
    g.step(&inputs("U1 S0"));
    g.step(&inputs("R0 S0"));
    g.step(&inputs("S0 S0"));
    g.step(&inputs("S0 S0"));
    g.step(&inputs("S0 S0")); // turn 4: explosion, (2..8, 5) and (5, 2..8) burn
    assert!(g.is_alive(0) && g.is_alive(1));
    g
}

#[test]
fn flames_are_lethal_on_the_next_turn_too() {
    let mut g = cross_game();
    let text = g.turn_text();
    assert!(text.contains("FLAMES 13\n"), "{text}");
    assert!(text.contains("F 8 5 5\n"));
    assert!(text.contains("O 8 5 0 5\n"));
    g.step(&inputs("S0 L0")); // turn 5: 1 walks into (8,5)
    assert!(!g.is_alive(1));
    assert_eq!(g.death_turn(1), 5);
    assert_eq!(
        g.kill_share(0),
        num_rational::Ratio::from_integer(1),
        "the old flame kept its source"
    );
}

#[test]
fn flames_are_gone_two_turns_after_the_explosion() {
    let mut g = cross_game();
    g.step(&inputs("S0 S0")); // turn 5
    let text = g.turn_text();
    assert!(
        text.contains("FLAMES 0\n") && text.contains("SOURCES 0\n"),
        "{text}"
    );
    g.step(&inputs("S0 L0")); // turn 6: (8,5) is safe again
    assert!(g.is_alive(1));
    assert_eq!(pos(&g, 1), (8, 5));
    assert!(g.flame_sources().is_empty());
}

#[test]
fn the_owner_of_an_old_flame_scores_even_when_dead() {
    let mut g = cross_game();
    // Turn 5: 0 faults (dies in phase 1); 1 walks into 0's flame and dies in phase 5.
    g.step(&[
        Input::Fault,
        Input::Act(Action {
            mv: Move::Left,
            bomb: false,
        }),
    ]);
    assert_eq!((g.death_turn(0), g.death_turn(1)), (5, 5));
    assert_eq!(g.kill_share(0), num_rational::Ratio::from_integer(1));
    assert!(g.is_over(), "nobody is left");
    let o = g.outcome();
    let half = num_rational::Ratio::new(1, 2);
    assert_eq!(o.survival, vec![half, half], "same death turn: tied");
    assert_eq!(o.points, vec![num_rational::Ratio::from_integer(1), half]);
    assert_eq!(o.ranks, vec![1, 2]);
}
