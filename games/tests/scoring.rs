//! Exact scoring: survival points with ties, kill points, ranks, and the rules' 5-player example.

use games::bomberman::outcome::{ranks, survival_points};
use num_rational::Ratio;

fn r(n: i64, d: i64) -> Ratio<i64> {
    Ratio::new(n, d)
}

#[test]
fn survival_counts_opponents_outlived_with_half_points_for_ties() {
    // 4 players: 0 survives, 1 and 2 die together on 10, 3 dies on 3.
    let s = survival_points(&[-1, 10, 10, 3]);
    assert_eq!(s, vec![r(3, 1), r(3, 2), r(3, 2), r(0, 1)]);
    // Two survivors at the end tie with each other and beat every dead player.
    let s = survival_points(&[-1, 0, -1]);
    assert_eq!(s, vec![r(3, 2), r(0, 1), r(3, 2)]);
    // Everybody dies on the same turn.
    assert_eq!(survival_points(&[7, 7, 7]), vec![r(1, 1); 3]);
}

#[test]
fn the_five_player_example_of_the_rules() {
    // 0: last survivor, no kill. 1: second in survival, three sole kills.
    let death_turns = [-1, 40, 30, 20, 10];
    let s = survival_points(&death_turns);
    assert_eq!(s[0], r(4, 1));
    assert_eq!(s[1], r(3, 1));
    let kills = [r(0, 1), r(3, 1), r(1, 1), r(0, 1), r(0, 1)];
    let points: Vec<Ratio<i64>> = s.iter().zip(&kills).map(|(s, k)| s + k / 2).collect();
    assert_eq!(points[1], r(9, 2));
    assert_eq!(points[0], r(4, 1));
    assert_eq!(
        ranks(&points),
        vec![2, 1, 3, 4, 5],
        "the last survivor is not first"
    );
}

#[test]
fn ranks_tie_on_exactly_equal_points_only() {
    let p = [r(3, 2), r(3, 2), r(1, 3), r(2, 6), r(4, 1)];
    assert_eq!(ranks(&p), vec![2, 2, 4, 4, 1]);
    // 1/3 + 1/6 vs 1/2: exact arithmetic, no float rounding.
    let a = r(1, 3) + r(1, 6);
    assert_eq!(ranks(&[a, r(1, 2)]), vec![1, 1]);
}
