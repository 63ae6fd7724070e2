//! The paired bootstrap of BT ratings on synthetic map-unit schedules: deterministic per seed,
//! intervals around the point estimate, symmetric for equal bots, narrower with more units;
//! and (ignored, for release timing) 1,000 resamples of an 8,930-match schedule.

use shared::bootstrap::{bootstrap, BootstrapError};
use shared::bt::{self, BtError};
use shared::pyrandom::Random;
use shared::results::GameResult;
use std::time::Instant;

/// A synthetic schedule: each unit is one map played at one size by a random set of bots, in
/// every seat rotation. A bot's result score is its strength plus a per-map affinity (shared by
/// the unit's rotations) plus per-game noise; ranks follow the scores (rounded, so some tie).
/// Returns the matches and their unit ids, `matches` long.
fn schedule(
    strengths: &[f64],
    sizes: &[usize],
    matches: usize,
    seed: i128,
) -> (Vec<String>, Vec<GameResult>, Vec<u32>) {
    let roster: Vec<String> = (0..strengths.len()).map(|i| format!("Bot{i}")).collect();
    let mut rng = Random::new(seed);
    let mut normal = move || {
        // Box–Muller from two uniforms (shared rng closure).
        let (u, v) = (1.0 - rng.random(), rng.random());
        (
            (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos(),
            rng.randbelow(1 << 30),
        )
    };
    let (mut games, mut units) = (Vec::new(), Vec::new());
    let mut unit = 0u32;
    while games.len() < matches {
        let (_, r) = normal();
        let size = sizes[r as usize % sizes.len()];
        // Choose `size` distinct bots by a partial shuffle.
        let mut pool: Vec<usize> = (0..strengths.len()).collect();
        for i in 0..size {
            let (_, r) = normal();
            let j = i + r as usize % (pool.len() - i);
            pool.swap(i, j);
        }
        let bots = &pool[..size];
        let affinity: Vec<f64> = bots.iter().map(|_| normal().0).collect();
        for rot in 0..size {
            if games.len() == matches {
                break;
            }
            let seats: Vec<usize> = (0..size).map(|k| (k + rot) % size).collect();
            let scores: Vec<i64> = seats
                .iter()
                .map(|&k| {
                    ((strengths[bots[k]] + affinity[k] + 0.7 * normal().0) * 2.0).round() as i64
                })
                .collect();
            let ranks: Vec<i64> = scores
                .iter()
                .map(|s| 1 + scores.iter().filter(|t| *t > s).count() as i64)
                .collect();
            games.push(GameResult {
                size,
                valid_for_scoring: true,
                names: seats.iter().map(|&k| roster[bots[k]].clone()).collect(),
                ranks,
                survival_points: vec![0.0; size],
                kill_points: vec![0.0; size],
                points: vec![0.0; size],
                errors: vec![0; size],
            });
            units.push(unit);
        }
        unit += 1;
    }
    (roster, games, units)
}

const SIZES: &[usize] = &[2, 3, 4];

#[test]
fn same_seed_same_intervals_other_seed_other_intervals() {
    let (roster, games, units) = schedule(&[0.0, 0.5, 1.0, -0.5, 0.2], SIZES, 400, 1);
    let a = bootstrap(&games, &units, &roster, SIZES, "Bot0", 200, 7).unwrap();
    let b = bootstrap(&games, &units, &roster, SIZES, "Bot0", 200, 7).unwrap();
    let c = bootstrap(&games, &units, &roster, SIZES, "Bot0", 200, 8).unwrap();
    assert_eq!(a, b);
    assert_ne!(a.intervals, c.intervals);
    assert_eq!(a.fitted, 200);
    assert_eq!(a.units, *units.last().unwrap() as usize + 1);
    // The point estimate is the plain fit.
    assert_eq!(a.fit, bt::fit(&games, &roster, SIZES, "Bot0").unwrap());
}

#[test]
fn intervals_contain_the_point_estimates() {
    let (roster, games, units) = schedule(&[0.0, 0.5, 1.0, -0.5, 0.2, 0.8], SIZES, 600, 2);
    let r = bootstrap(&games, &units, &roster, SIZES, "Bot0", 300, 3).unwrap();
    for ((name, rating), (iname, [lo, hi])) in r.fit.ratings.iter().zip(&r.intervals) {
        assert_eq!(name, iname);
        assert!(
            lo <= rating && rating <= hi,
            "{name}: {rating} outside [{lo}, {hi}]"
        );
        if name == "Bot0" {
            assert_eq!([*lo, *hi], [0.0, 0.0]);
        } else {
            assert!(hi - lo > 1.0, "{name}: degenerate [{lo}, {hi}]");
        }
    }
    // Stronger bots rate higher, and the ordering shows in the intervals too.
    let i1 = r.interval("Bot1").unwrap();
    let i3 = r.interval("Bot3").unwrap();
    assert!(i3[1] < i1[0], "Bot3 {i3:?} vs Bot1 {i1:?}");
}

#[test]
fn equal_bots_give_symmetric_nonzero_intervals() {
    let (roster, games, units) = schedule(&[0.0; 4], SIZES, 800, 4);
    let r = bootstrap(&games, &units, &roster, SIZES, "Bot0", 400, 5).unwrap();
    for (name, [lo, hi]) in r.intervals.iter().skip(1) {
        let rating = r.fit.rating(name).unwrap();
        let (below, above) = (rating - lo, hi - rating);
        assert!(hi - lo > 5.0, "{name}: [{lo}, {hi}]");
        // Symmetric-ish: neither side more than twice the other.
        assert!(
            below < 2.0 * above && above < 2.0 * below,
            "{name}: {below} / {above}"
        );
        assert!(
            *lo < 0.0 && *hi > 0.0,
            "{name}: [{lo}, {hi}] excludes the true 0"
        );
    }
}

#[test]
fn more_units_narrower_intervals() {
    let strengths = [0.0, 0.4, -0.3, 0.1];
    let width = |matches: usize| {
        let (roster, games, units) = schedule(&strengths, SIZES, matches, 6);
        let r = bootstrap(&games, &units, &roster, SIZES, "Bot0", 300, 9).unwrap();
        r.intervals
            .iter()
            .skip(1)
            .map(|(_, [lo, hi])| hi - lo)
            .sum::<f64>()
            / 3.0
    };
    let (small, large) = (width(300), width(1200));
    // Four times the units: about half the width; allow up to 0.7.
    assert!(
        large < 0.7 * small,
        "300 matches: {small}, 1200 matches: {large}"
    );
}

#[test]
fn refusals() {
    let (roster, games, units) = schedule(&[0.0, 0.3, 0.6, 0.1, -0.2], SIZES, 60, 10);
    assert_eq!(
        bootstrap(&games, &units[1..], &roster, SIZES, "Bot0", 10, 1),
        Err(BootstrapError::UnitsLength {
            games: 60,
            units: 59
        })
    );
    assert_eq!(
        bootstrap(&games, &units, &roster, SIZES, "Bot0", 0, 1),
        Err(BootstrapError::NoResamples)
    );
    assert_eq!(
        bootstrap(&games, &units, &roster, SIZES, "Nobody", 10, 1),
        Err(BootstrapError::Fit(BtError::AnchorNotPlayer(
            "Nobody".into()
        )))
    );
    // A size seen in only one unit is missing from some resamples: those are skipped.
    let mut g = games.clone();
    let mut u = units.clone();
    let extra = GameResult {
        size: 5,
        valid_for_scoring: true,
        names: (0..5).map(|i| format!("Bot{i}")).collect(),
        ranks: vec![1, 2, 3, 4, 5],
        survival_points: vec![0.0; 5],
        kill_points: vec![0.0; 5],
        points: vec![0.0; 5],
        errors: vec![0; 5],
    };
    g.push(extra);
    u.push(9_999);
    let sizes = [2, 3, 4, 5];
    let r = bootstrap(&g, &u, &roster, &sizes, "Bot0", 200, 2).unwrap();
    assert!(r.fitted < 200 && r.fitted > 0, "fitted {}", r.fitted);
}

/// `cargo test --release -p shared --test bootstrap -- --ignored --nocapture time_1000_resamples`
#[test]
#[ignore]
fn time_1000_resamples() {
    let strengths: Vec<f64> = (0..10).map(|i| i as f64 * 0.15 - 0.6).collect();
    let sizes: Vec<usize> = (2..=10).collect();
    let (roster, games, units) = schedule(&strengths, &sizes, 8_930, 11);
    let anchor = roster[9].clone();
    let t = Instant::now();
    let r = bootstrap(&games, &units, &roster, &sizes, &anchor, 1_000, 1).unwrap();
    let took = t.elapsed();
    println!(
        "bootstrap: {} matches in {} units, sizes 2..10, 10 bots, 1,000 resamples ({} fitted): {:.1} ms",
        games.len(),
        r.units,
        r.fitted,
        took.as_secs_f64() * 1e3
    );
    for ((name, rating), (_, [lo, hi])) in r.fit.ratings.iter().zip(&r.intervals) {
        let wald = r.fit.interval(name).unwrap();
        println!(
            "  {name}: {rating:8.2}  bootstrap [{lo:8.2}, {hi:8.2}]  wald [{:8.2}, {:8.2}]",
            wald[0], wald[1]
        );
    }
}
