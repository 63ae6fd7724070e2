//! BT and live-report benchmarks (a plain bench binary; `cargo bench -p shared --bench bt`).
//! 1. Batch fit on the 8,930-game, 10-player, sizes 2..10 set that tools/reference/time_bt.py
//!    times for bt.py (same data file), median of many runs.
//! 2. Incremental ingest per result at 10k and 100k synthetic results: `Incremental::push` +
//!    `Tally::push` alone, and with a warm refit + report render every 25 results.

use shared::bt::{self, Incremental};
use shared::pyrandom::Random;
use shared::report::Tally;
use shared::results::GameResult;
use std::hint::black_box;
use std::time::{Duration, Instant};

fn load() -> (Vec<String>, Vec<usize>, String, Vec<GameResult>) {
    let v: serde_json::Value =
        serde_json::from_str(include_str!("data/bt-8930.json")).expect("bench data");
    let roster: Vec<String> = serde_json::from_value(v["roster"].clone()).expect("roster");
    let sizes: Vec<usize> = serde_json::from_value(v["sizes"].clone()).expect("sizes");
    let anchor = v["anchor"].as_str().expect("anchor").to_string();
    let games = v["games"]
        .as_array()
        .expect("games")
        .iter()
        .map(|g| {
            let g = g.as_array().expect("row");
            let n = g[0].as_u64().expect("size") as usize;
            GameResult {
                size: n,
                valid_for_scoring: g[1].as_u64() == Some(1),
                names: g[2..2 + n]
                    .iter()
                    .map(|x| x.as_str().expect("name").to_string())
                    .collect(),
                ranks: g[2 + n..2 + 2 * n]
                    .iter()
                    .map(|x| x.as_i64().expect("rank"))
                    .collect(),
                survival_points: vec![0.0; n],
                kill_points: vec![0.0; n],
                points: vec![0.0; n],
                errors: vec![0; n],
            }
        })
        .collect();
    (roster, sizes, anchor, games)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// "min / median" in milliseconds (the minimum is the least disturbed by other load).
fn ms(v: Vec<Duration>) -> String {
    let min = v.iter().min().copied().unwrap_or_default();
    format!(
        "{:.3} ms min / {:.3} ms median",
        min.as_secs_f64() * 1e3,
        median(v).as_secs_f64() * 1e3
    )
}

fn synthetic(count: usize, roster: &[String], sizes: &[usize]) -> Vec<GameResult> {
    let mut rng = Random::new(2026);
    (0..count)
        .map(|i| {
            let n = sizes[i % sizes.len()];
            let seats = rng.sample(roster.len() as u64, n as u64).expect("sample");
            let points: Vec<f64> = (0..n).map(|_| rng.randbelow(5) as f64).collect();
            let ranks = points
                .iter()
                .map(|p| 1 + points.iter().filter(|q| *q > p).count() as i64)
                .collect();
            GameResult {
                size: n,
                valid_for_scoring: rng.random() > 0.02,
                names: seats.iter().map(|&s| roster[s as usize].clone()).collect(),
                ranks,
                survival_points: points.clone(),
                kill_points: vec![0.0; n],
                points,
                errors: vec![0; n],
            }
        })
        .collect()
}

fn ingest(
    games: &[GameResult],
    roster: &[String],
    sizes: &[usize],
    anchor: &str,
    refit_every: Option<usize>,
    render: bool,
) -> Duration {
    let mut inc = Incremental::new(roster, sizes, anchor);
    let mut tally = Tally::new(roster, sizes);
    let t = Instant::now();
    for (i, g) in games.iter().enumerate() {
        inc.push(g);
        tally.push(g);
        if let Some(k) = refit_every {
            if (i + 1) % k == 0 {
                let fit = inc.fit();
                if render {
                    black_box(tally.render(Some(&fit)));
                } else {
                    black_box(fit.ok());
                }
            }
        }
    }
    let e = t.elapsed();
    black_box(inc.fit_exact().ok());
    e
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (roster, sizes, anchor, games) = load();
    let reference = bt::fit(&games, &roster, &sizes, &anchor).expect("fit");
    println!(
        "data: {} games, {} players, sizes {:?}; {} iterations; Bot0 {:.12}",
        games.len(),
        roster.len(),
        sizes,
        reference.iterations,
        reference.rating("Bot0").unwrap_or(f64::NAN)
    );

    let runs = if quick { 20 } else { 200 };
    let times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            black_box(bt::fit(black_box(&games), &roster, &sizes, &anchor).ok());
            t.elapsed()
        })
        .collect();
    println!("batch bt::fit, 8930 games: {} of {runs}", ms(times));

    let mut inc = Incremental::new(&roster, &sizes, &anchor);
    games.iter().for_each(|g| inc.push(g));
    let times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            black_box(inc.fit_exact().ok());
            t.elapsed()
        })
        .collect();
    println!(
        "Incremental::fit_exact (cold MM from pair stats), 8930 games: {}",
        ms(times)
    );
    let times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            black_box(inc.fit().ok());
            t.elapsed()
        })
        .collect();
    println!(
        "Incremental::fit (warm, no new results), 8930 games: {}",
        ms(times)
    );

    let full = games.clone();
    let times: Vec<Duration> = (0..runs.min(50))
        .map(|_| {
            let t = Instant::now();
            let fit = bt::fit(&full, &roster, &sizes, &anchor);
            black_box(shared::report::render(&full, &roster, &sizes, Some(&fit)));
            t.elapsed()
        })
        .collect();
    println!(
        "report::render + bt::fit from scratch, 8930 games: {}",
        ms(times)
    );

    for count in [10_000usize, 100_000] {
        let set = synthetic(count, &roster, &sizes);
        let reps = if quick { 1 } else { 5 };
        let best = |every, render| {
            (0..reps)
                .map(|_| ingest(&set, &roster, &sizes, &anchor, every, render))
                .min()
                .unwrap_or_default()
        };
        let per = |d: Duration| {
            (
                d.as_secs_f64() * 1e6 / count as f64,
                count as f64 / d.as_secs_f64(),
            )
        };
        let (push, push_rate) = per(best(None, false));
        let (refit, refit_rate) = per(best(Some(1), false));
        let (live, live_rate) = per(best(Some(25), true));
        println!("ingest {count} results (min of {reps}):");
        println!(
            "  Incremental::push + Tally::push: {push:.3} µs/result ({push_rate:.0} results/s)"
        );
        println!("  + warm Incremental::fit after every result: {refit:.3} µs/result ({refit_rate:.0} results/s)");
        println!("  + warm fit and 汇总.md render every 25 results: {live:.3} µs/result ({live_rate:.0} results/s)");
    }
}
