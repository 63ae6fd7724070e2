//! Phase 2, bomb placement: where, when it explodes, eligibility, capacity, conflicts.

mod common;
use common::*;
use games::bomberman::*;

const OPEN7: &str = "\
#######
#0....#
#.....#
#.....#
#.....#
#....1#
#######
";

#[test]
fn bomb_goes_on_the_pre_move_cell_and_explodes_four_turns_later() {
    let mut g = board(OPEN7);
    g.step(&inputs("R1 S0"));
    assert_eq!(
        pos(&g, 0),
        (2, 1),
        "placing and moving in one turn is allowed"
    );
    assert_eq!(
        g.bombs(),
        &[Bomb {
            owner: 0,
            x: 1,
            y: 1,
            explode_at: 4
        }]
    );
    assert_eq!(g.outcome().bombs_placed, vec![1, 0]);
    g.step(&inputs("D0 S0"));
    g.step(&inputs("D0 S0"));
    g.step(&inputs("S0 S0"));
    assert_eq!(g.bombs().len(), 1, "still there after turn 3");
    g.step(&inputs("S0 S0"));
    assert!(g.bombs().is_empty(), "exploded in turn 4");
    assert!(g
        .flame_sources()
        .iter()
        .any(|f| (f.x, f.y) == (1, 1) && f.last_lethal == 5));
}

#[test]
fn capacity_counts_bombs_that_explode_later_in_the_same_turn() {
    let mut g = board(OPEN7);
    let mut ev = Vec::new();
    g.step(&inputs("R1 S0")); // bomb at (1,1), explodes on 4
    g.step(&inputs("R1 S0")); // bomb at (2,1), explodes on 5
    g.step_with_events(&inputs("R1 S0"), &mut ev); // third: over capacity
    assert!(ev.contains(&Event::BombFailed {
        player: 0,
        x: 3,
        y: 1,
        reason: BombFailure::Capacity
    }));
    assert_eq!(g.bombs().len(), 2);
    g.step(&inputs("D0 S0")); // (4,2)
    ev.clear();
    // Turn 4: the (1,1) bomb explodes in phase 4, but in phase 2 it still occupies capacity.
    g.step_with_events(&inputs("D1 S0"), &mut ev);
    assert!(ev.contains(&Event::BombFailed {
        player: 0,
        x: 4,
        y: 2,
        reason: BombFailure::Capacity
    }));
    assert!(g.bombs().is_empty(), "both exploded: (2,1) by chain");
    ev.clear();
    g.step_with_events(&inputs("S1 S0"), &mut ev);
    assert!(
        ev.contains(&Event::BombPlaced {
            player: 0,
            x: 4,
            y: 3
        }),
        "capacity is free again"
    );
    assert_eq!(
        g.outcome().bombs_placed,
        vec![3, 0],
        "only bombs actually placed count"
    );
}

#[test]
fn no_second_bomb_on_an_occupied_cell() {
    let mut g = board(OPEN7);
    let mut ev = Vec::new();
    g.step(&inputs("S1 S0"));
    g.step_with_events(&inputs("S1 S0"), &mut ev);
    assert_eq!(
        ev,
        vec![Event::BombFailed {
            player: 0,
            x: 1,
            y: 1,
            reason: BombFailure::Occupied
        }]
    );
    assert_eq!(g.bombs().len(), 1);
    assert_eq!(
        pos(&g, 0),
        (1, 1),
        "a player may stay on the bomb under them"
    );
}

/// Two players on one cell (only possible on hand-built maps).
fn shared_cell_game() -> Game {
    let mut m = map(OPEN7);
    m.spawns[1] = m.spawns[0];
    Game::new(Params::for_map(&m).unwrap(), &m).unwrap()
}

#[test]
fn two_eligible_requests_on_one_cell_both_fail_and_movement_is_unaffected() {
    let mut g = shared_cell_game();
    let mut ev = Vec::new();
    g.step_with_events(&inputs("R1 D1"), &mut ev);
    assert!(g.bombs().is_empty());
    assert_eq!(g.outcome().bombs_placed, vec![0, 0]);
    for p in 0..2 {
        assert!(ev.contains(&Event::BombFailed {
            player: p,
            x: 1,
            y: 1,
            reason: BombFailure::Conflict
        }));
    }
    assert_eq!(
        (pos(&g, 0), pos(&g, 1)),
        ((2, 1), (1, 2)),
        "a failed placement still moves"
    );
}

#[test]
fn an_ineligible_request_takes_no_part_in_a_conflict() {
    let mut g = shared_cell_game();
    // Player 1 faults: dead in phase 1, so its request is not eligible.
    g.step(&[
        Input::Act(Action {
            mv: Move::Stay,
            bomb: true,
        }),
        Input::Fault,
    ]);
    assert_eq!(
        g.bombs(),
        &[Bomb {
            owner: 0,
            x: 1,
            y: 1,
            explode_at: 4
        }]
    );
}

#[test]
fn dead_players_bombs_stay_and_keep_ticking() {
    let mut g = board("#######\n#0.2..#\n#.....#\n#.....#\n#.....#\n#....1#\n#######\n");
    g.step(&inputs("D1 S0 S0")); // 0's bomb at (1,1), due on 4
    let stay = Input::Act(Action::STAY);
    g.step(&[Input::Fault, stay, stay]); // 0 dies in phase 1 of turn 1
    assert!(!g.is_alive(0));
    assert_eq!(
        g.bombs(),
        &[Bomb {
            owner: 0,
            x: 1,
            y: 1,
            explode_at: 4
        }]
    );
    wait(&mut g, 3);
    assert!(g.bombs().is_empty(), "exploded on schedule");
    assert_eq!(
        g.death_turn(2),
        4,
        "2 stood two cells away on the bomb's row"
    );
    assert_eq!(
        g.kill_share(0),
        num_rational::Ratio::from_integer(1),
        "the dead owner scores"
    );
}
