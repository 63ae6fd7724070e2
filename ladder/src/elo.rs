//! The ladder's Elo rating, kept per bot beside RP (the guide counts scored challenges toward
//! "段位/战绩/ELO"). Pure: [`update`] takes both ratings and the challenge's game results and
//! returns the change; the service stores it in the same transaction that settles RP, and only
//! for scored challenges (practice challenges past the per-pair limit change neither).
//!
//! Standard Elo: the expected score of A against B is `E = 1 / (1 + 10^((Rb − Ra) / 400))`, and
//! A's rating moves by `K · (S − E)`, B's by the opposite (zero-sum).
//!
//! **What a challenge counts as.** The ladder is two-player only: a challenge is two games, one
//! with each colour. RP settles on the combined result (`combine`: win, draw or loss), which
//! throws away the margin (win+win and win+draw are both a "win"). Elo instead takes the
//! challenge as a two-game match and scores it by its game points, `S = points / 2` with win 1,
//! draw ½, loss 0, so `S ∈ {0, ¼, ½, ¾, 1}`. That is the usual Elo treatment of a match of n
//! games against one opponent (one expectation per game, ratings fixed during the match), and it
//! is exactly two per-game updates of `K/2` each made with the ratings from before the challenge.
//! Since both games of a challenge are played with the ratings of the moment, one update per
//! challenge (rather than two sequential per-game updates) also keeps the order of the two games
//! out of the result.
//!
//! Ratings are whole numbers: the change is rounded once (half away from zero) and applied as
//! `+Δ` to A and `−Δ` to B, so the sum of all ratings stays `INITIAL · bots` exactly. There is no
//! floor; a rating may go below zero in principle (after thousands of losses).

use games::qianwang::ladder::PlayerResult;

/// The rating every bot starts with (and existing bots get when the column is added).
pub const INITIAL: i64 = 1500;

/// Points a whole challenge (two games) can move a rating at most: `K · |S − E| < K`. 32 is the
/// classic K for players with few games; challenges are scarce (10 scored per code-hash pair),
/// so a responsive rating suits the ladder better than FIDE's slow 10–20.
pub const K: f64 = 32.0;

/// A's expected score (0..1) against B.
pub fn expected(a: i64, b: i64) -> f64 {
    1.0 / (1.0 + 10f64.powf((b - a) as f64 / 400.0))
}

/// A's score over one challenge's two games (A's view of each): points / 2.
pub fn score(first: PlayerResult, second: PlayerResult) -> f64 {
    (first.half_points() + second.half_points()) as f64 / 4.0
}

/// The Elo change of one scored challenge: A (rating `a`) against B (rating `b`) with A's
/// challenge score `s` (see [`score`]). A gains the returned Δ, B loses it.
pub fn delta(a: i64, b: i64, s: f64) -> i64 {
    (K * (s - expected(a, b))).round() as i64
}

/// Both ratings after one scored challenge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Update {
    /// A's change; B's is `-a_delta`.
    pub a_delta: i64,
    pub a: i64,
    pub b: i64,
}

/// Settles one scored challenge between A (`a`) and B (`b`), A's games being `first` and
/// `second` (A's view).
pub fn update(a: i64, b: i64, first: PlayerResult, second: PlayerResult) -> Update {
    let d = delta(a, b, score(first, second));
    Update {
        a_delta: d,
        a: a + d,
        b: b - d,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use PlayerResult::{Draw, Loss, Win};

    #[test]
    fn expected_scores_follow_the_logistic_curve() {
        assert!((expected(1500, 1500) - 0.5).abs() < 1e-12);
        // 400 points apart: 10 to 1.
        assert!((expected(1900, 1500) - 10.0 / 11.0).abs() < 1e-12);
        assert!((expected(1500, 1900) - 1.0 / 11.0).abs() < 1e-12);
        // 200 apart: 1 / (1 + 10^-0.5) = 0.759746...
        assert!((expected(1600, 1400) - 0.759_746_926_6).abs() < 1e-9);
        for (a, b) in [(1500, 1500), (1713, 1288), (0, 2400)] {
            assert!((expected(a, b) + expected(b, a) - 1.0).abs() < 1e-12);
        }
    }

    #[test]
    fn challenge_scores_are_game_points_over_two() {
        assert_eq!(score(Win, Win), 1.0);
        assert_eq!(score(Win, Draw), 0.75);
        assert_eq!(score(Win, Loss), 0.5);
        assert_eq!(score(Draw, Draw), 0.5);
        assert_eq!(score(Loss, Draw), 0.25);
        assert_eq!(score(Loss, Loss), 0.0);
    }

    #[test]
    fn known_updates() {
        // Equal ratings: a clean sweep is worth K/2 = 16, win+draw 8, a split nothing.
        assert_eq!(
            update(1500, 1500, Win, Win),
            Update {
                a_delta: 16,
                a: 1516,
                b: 1484
            }
        );
        assert_eq!(update(1500, 1500, Draw, Win).a_delta, 8);
        assert_eq!(update(1500, 1500, Loss, Win).a_delta, 0);
        assert_eq!(update(1500, 1500, Loss, Loss).a_delta, -16);
        // 1516 vs 1484 (after one sweep): E = 0.546; another sweep 32 · 0.454 = 14.53 -> 15.
        assert_eq!(
            update(1516, 1484, Win, Win),
            Update {
                a_delta: 15,
                a: 1531,
                b: 1469
            }
        );
        // The favourite (200 up) only draws: 32 · (0.5 − 0.7597) = −8.31 -> −8.
        assert_eq!(
            update(1600, 1400, Draw, Draw),
            Update {
                a_delta: -8,
                a: 1592,
                b: 1408
            }
        );
        // The underdog sweeps: 32 · (1 − 0.2403) = 24.31 -> 24.
        assert_eq!(update(1400, 1600, Win, Win).a_delta, 24);
        // 400 up and winning: 32 · (1 − 10/11) = 2.91 -> 3.
        assert_eq!(update(1900, 1500, Win, Win).a_delta, 3);
    }

    #[test]
    fn updates_are_zero_sum_and_antisymmetric() {
        let all = [Win, Draw, Loss];
        for (a, b) in [(1500, 1500), (1531, 1469), (1200, 1850), (2400, 900)] {
            for x in all {
                for y in all {
                    let u = update(a, b, x, y);
                    assert_eq!(u.a + u.b, a + b);
                    let v = update(b, a, x.flip(), y.flip());
                    assert_eq!(v.a_delta, -u.a_delta, "{a} {b} {x:?} {y:?}");
                    assert!(u.a_delta.abs() <= K as i64);
                }
            }
        }
    }
}
