//! Property tests: schedule invariants, sampling invariants, incremental BT equal to batch on
//! random tournaments, and the report tally equal to a one-shot render.

use proptest::prelude::*;
use shared::bt::{self, Incremental};
use shared::pyrandom::Random;
use shared::report::{render, Tally};
use shared::results::GameResult;
use shared::schedule::make_schedule;

fn binom(n: usize, k: usize) -> usize {
    (0..k).fold(1, |acc, i| acc * (n - i) / (i + 1))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn schedule_shape(n in 2usize..8, seeds in 1i64..4, seed in any::<i64>(), mask in 1u32..512) {
        let sizes: Vec<i64> = (2..=n.min(10) as i64).filter(|s| mask & (1 << (s - 2)) != 0).collect();
        prop_assume!(!sizes.is_empty());
        let entries = make_schedule(n, &sizes, seeds, seed.into()).unwrap();
        let expected: usize = sizes.iter().map(|&s| {
            let s = s as usize;
            binom(n, s) * seeds as usize * if s <= 2 { 1 } else { 2 } * s
        }).sum();
        prop_assert_eq!(entries.len(), expected);
        for e in &entries {
            prop_assert_eq!(e.slots.len(), e.size);
            let mut sorted = e.slots.clone();
            sorted.sort();
            sorted.dedup();
            prop_assert_eq!(sorted.len(), e.size);
            prop_assert!(e.slots.iter().all(|&s| s < n));
            prop_assert!((1..1u64 << 31).contains(&e.seed));
        }
    }

    #[test]
    fn sample_is_distinct_and_in_range(seed in any::<i64>(), n in 1u64..5000, frac in 0.0f64..1.0) {
        let k = ((n as f64) * frac) as u64;
        let got = Random::new(seed.into()).sample(n, k).unwrap();
        prop_assert_eq!(got.len() as u64, k);
        let mut s = got.clone();
        s.sort();
        s.dedup();
        prop_assert_eq!(s.len() as u64, k);
        prop_assert!(got.iter().all(|&x| x < n));
    }

    #[test]
    fn incremental_equals_batch(seed in any::<u32>(), players in 3usize..7, count in 20usize..120) {
        let roster: Vec<String> = (0..players).map(|i| format!("p{}", (i * 7) % players)).collect();
        let sizes: Vec<usize> = (2..=players.min(4)).collect();
        let mut rng = Random::new(seed.into());
        let games: Vec<GameResult> = (0..count).map(|i| {
            let n = sizes[i % sizes.len()];
            let seats = rng.sample(players as u64, n as u64).unwrap();
            let ranks: Vec<i64> = (0..n).map(|_| 1 + rng.randbelow(n as u64) as i64).collect();
            GameResult {
                size: n,
                valid_for_scoring: rng.random() > 0.1,
                names: seats.iter().map(|&s| roster[s as usize].clone()).collect(),
                ranks,
                survival_points: (0..n).map(|_| rng.randbelow(4) as f64).collect(),
                kill_points: (0..n).map(|_| rng.random()).collect(),
                points: (0..n).map(|_| rng.random() * 3.0).collect(),
                errors: (0..n).map(|_| rng.randbelow(2) as i64).collect(),
            }
        }).collect();
        let anchor = roster[0].clone();
        let batch = bt::fit(&games, &roster, &sizes, &anchor);
        let mut inc = Incremental::new(&roster, &sizes, &anchor);
        let mut tally = Tally::new(&roster, &sizes);
        for g in &games {
            inc.push(g);
            tally.push(g);
        }
        let exact = inc.fit_exact();
        match (&batch, &exact) {
            (Ok(b), Ok(e)) => {
                prop_assert_eq!(b.iterations, e.iterations);
                for ((_, x), (_, y)) in b.ratings.iter().zip(&e.ratings) {
                    prop_assert!((x - y).abs() <= 1e-9, "{} vs {}", x, y);
                }
            }
            (Err(a), Err(b)) => prop_assert_eq!(a, b),
            _ => prop_assert!(false, "batch {:?} vs incremental {:?}", batch, exact),
        }
        prop_assert_eq!(tally.render(Some(&batch)), render(&games, &roster, &sizes, Some(&batch)));
    }
}
