//! The settled-ranking rule of `farm run --until-settled` (shared::settle::settled): on fixed
//! data, and by simulation of tournaments with known strengths, where a run stopped by the rule
//! must not rank two bots in the wrong order more often than its confidence allows.

use shared::pyrandom::Random;
use shared::results::GameResult;
use shared::schedule::make_schedule;
use shared::settle::{settled, unit_ends, unit_ids, MIN_UNITS};

fn game(names: [&str; 2], ranks: [i64; 2]) -> GameResult {
    GameResult {
        size: 2,
        valid_for_scoring: true,
        names: names.iter().map(|n| n.to_string()).collect(),
        ranks: ranks.to_vec(),
        survival_points: vec![0.0; 2],
        kill_points: vec![0.0; 2],
        points: vec![0.0; 2],
        errors: vec![0; 2],
    }
}

/// `units` maps per pair of bots, both seat orders, the first bot of `order` winning the share
/// `wins[k]` of its maps against the next (the rest are losses), A-B, B-C, A-C in turn.
fn fixed(units_per_pair: u32, win_maps: [u32; 3]) -> (Vec<GameResult>, Vec<u32>) {
    let pairs = [("A", "B"), ("B", "C"), ("A", "C")];
    let (mut games, mut units) = (Vec::new(), Vec::new());
    let mut unit = 0;
    for (k, (x, y)) in pairs.iter().enumerate() {
        for m in 0..units_per_pair {
            let x_wins = m < win_maps[k];
            let r = if x_wins { [1, 2] } else { [2, 1] };
            games.push(game([x, y], r));
            games.push(game([y, x], [r[1], r[0]]));
            units.push(unit);
            units.push(unit);
            unit += 1;
        }
    }
    (games, units)
}

#[test]
fn a_clear_ranking_is_settled_and_a_close_one_is_not() {
    let roster = ["A", "B", "C"];
    // A beats B on 10 of 12 maps, B beats C on 10 of 12, A beats C on 11 of 12.
    let (games, units) = fixed(12, [10, 10, 11]);
    let s = settled(&games, &units, &roster, &[2], "C", 0.95, 200, 1).unwrap();
    let order: Vec<&str> = s.ranking.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(order, ["A", "B", "C"]);
    assert_eq!(s.units, 36);
    assert_eq!(s.separations.len(), 2);
    assert!(s.settled, "{s:?}");
    assert!(s.separations.iter().all(|p| p.share >= 0.95), "{s:?}");

    // A and B even (6 of 12): that pair is not separated, so nothing is settled.
    let (games, units) = fixed(12, [6, 10, 11]);
    let s = settled(&games, &units, &roster, &[2], "C", 0.95, 200, 1).unwrap();
    assert!(!s.settled, "{s:?}");
    let weakest = s.weakest().unwrap();
    assert_eq!(
        [weakest.higher.as_str(), weakest.lower.as_str()].map(|n| n == "C"),
        [false, false],
        "the weak pair is A/B: {s:?}"
    );
    assert!(weakest.share < 0.95 && weakest.share > 0.0, "{s:?}");

    // The same decision for the same seed; a confidence of 1 is never reached by a pair
    // that lost a map.
    let again = settled(&games, &units, &roster, &[2], "C", 0.95, 200, 1).unwrap();
    assert_eq!(again, s);
    let (games, units) = fixed(12, [10, 10, 11]);
    let strict = settled(&games, &units, &roster, &[2], "C", 0.999_999, 200, 1).unwrap();
    assert!(!strict.settled, "{strict:?}");
}

#[test]
fn too_few_units_are_never_settled() {
    let roster = ["A", "B", "C"];
    // Three maps per pair, every one won by the better bot: perfectly ordered, but 9 units.
    let (games, units) = fixed(3, [3, 3, 3]);
    let s = settled(&games, &units, &roster, &[2], "C", 0.95, 200, 1).unwrap();
    assert_eq!(s.units, 9);
    assert!(9 < MIN_UNITS && !s.settled, "{s:?}");
    let (games, units) = fixed(4, [4, 4, 4]);
    let s = settled(&games, &units, &roster, &[2], "C", 0.95, 200, 1).unwrap();
    assert!(s.units >= MIN_UNITS && s.settled, "{s:?}");
}

#[test]
fn unplayed_sizes_and_unlinked_bots_leave_it_unsettled() {
    let roster = ["A", "B", "C"];
    let (games, units) = fixed(12, [10, 10, 11]);
    // Size 3 has no game yet: bt.json has no ranking, so there is nothing to settle.
    assert!(settled(&games, &units, &roster, &[2, 3], "C", 0.95, 200, 1).is_err());
    // Only A-B played: C is not linked to anything, no ranking yet.
    assert!(settled(&games[..24], &units[..24], &roster, &[2], "C", 0.95, 200, 1).is_err());
}

/// One simulated tournament: `strengths` (Elo) for bots Bot0..; the reference 2-player
/// schedule of `seeds` maps per pair; each map gives one of its two bots an edge of
/// `map_edge` Elo in both seat orders (maps matter, so games of a unit are correlated), and
/// each game is drawn with probability 0.1, else won by the BT probability. After each whole
/// unit the rule decides; returns (stopped at match n, ranking then) or None (never settled).
fn simulate(
    strengths: &[f64],
    seeds: i64,
    seed: i128,
    map_edge: f64,
) -> Option<(usize, Vec<usize>)> {
    let roster: Vec<String> = (0..strengths.len()).map(|i| format!("Bot{i}")).collect();
    let schedule = make_schedule(strengths.len(), &[2], seeds, seed).unwrap();
    let ids = unit_ids(&schedule);
    let ends = unit_ends(&schedule);
    let mut rng = Random::new(seed ^ 0x5eed);
    let (mut games, mut units) = (Vec::new(), Vec::new());
    let mut edge = (0usize, 0.0f64);
    for (i, e) in schedule.iter().enumerate() {
        if i == 0 || ids[i] != ids[i - 1] {
            // A new map: which of its two bots it favours, and by how much.
            let who = e.slots[rng.randbelow(2) as usize];
            edge = (who, map_edge * rng.random());
        }
        let (a, b) = (e.slots[0], e.slots[1]);
        let bonus = |x: usize| if x == edge.0 { edge.1 } else { 0.0 };
        let diff = strengths[a] + bonus(a) - strengths[b] - bonus(b);
        let p_a = 1.0 / (1.0 + 10f64.powf(-diff / 400.0));
        let u = rng.random();
        let ranks = if u < 0.1 {
            [1, 1]
        } else if rng.random() < p_a {
            [1, 2]
        } else {
            [2, 1]
        };
        games.push(game([&roster[a], &roster[b]], ranks));
        units.push(ids[i]);
        if !ends[i] || (ids[i] as usize + 1) < MIN_UNITS {
            continue;
        }
        if let Ok(s) = settled(
            &games,
            &units,
            &roster,
            &[2],
            "Bot0",
            0.95,
            200,
            i as u64 + 1,
        ) {
            if s.settled {
                let order = s
                    .ranking
                    .iter()
                    .map(|(n, _)| roster.iter().position(|r| r == n).unwrap())
                    .collect();
                return Some((i + 1, order));
            }
        }
    }
    None
}

/// Whether `order` (best first) puts some bot above a truly stronger one.
fn misordered(order: &[usize], strengths: &[f64]) -> bool {
    order.windows(2).any(|w| strengths[w[0]] < strengths[w[1]])
}

/// Tournaments of four bots 100 Elo apart, 16 maps per pair (192 matches), maps favouring one
/// side by up to 100 Elo: over 200 runs, the share of runs that stop with two bots in the wrong
/// order stays within 1 − confidence (5%) plus three binomial standard errors (+4.6 points).
/// At least a quarter of the runs must stop early (the rule is not vacuous).
#[test]
fn stopped_runs_rank_wrongly_at_most_as_often_as_the_confidence_allows() {
    let strengths = [0.0, 100.0, 200.0, 300.0];
    let runs = 200;
    let (mut stopped, mut wrong, mut played) = (0u32, 0u32, 0usize);
    for r in 0..runs {
        if let Some((n, order)) = simulate(&strengths, 16, 1000 + r as i128, 100.0) {
            stopped += 1;
            played += n;
            wrong += u32::from(misordered(&order, &strengths));
        }
    }
    let rate = f64::from(wrong) / f64::from(runs);
    let tolerance = 3.0 * (0.05f64 * 0.95 / f64::from(runs)).sqrt();
    eprintln!(
        "{stopped} of {runs} runs stopped early, after {:.1} of 192 matches on average; {wrong} ranked two bots wrongly ({rate:.3}; limit {:.3})",
        played as f64 / f64::from(stopped.max(1)),
        0.05 + tolerance
    );
    assert!(rate <= 0.05 + tolerance, "wrong-order rate {rate}");
    assert!(
        stopped >= runs / 4,
        "only {stopped} of {runs} runs stopped early"
    );
}

/// Equal bots are never "settled" in a way that matters: no order is right, so the rule must
/// rarely stop at all (at most 1 − confidence plus the same tolerance).
#[test]
fn equal_bots_rarely_settle() {
    let strengths = [0.0, 0.0, 0.0];
    let runs = 200;
    let stopped = (0..runs)
        .filter(|r| simulate(&strengths, 20, 5000 + *r as i128, 100.0).is_some())
        .count();
    let rate = stopped as f64 / runs as f64;
    let tolerance = 3.0 * (0.05f64 * 0.95 / runs as f64).sqrt();
    eprintln!("equal bots: {stopped} of {runs} runs settled");
    assert!(
        rate <= 0.05 + tolerance,
        "equal bots settled in {rate} of runs"
    );
}
