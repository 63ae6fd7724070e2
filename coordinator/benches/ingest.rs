//! Ingest cost of the coordinator per result: checkpoint (ordered append, group-commit fsync
//! every BATCH results, as the dispatcher does for the results that are ready together) + live
//! statistics + incremental Bradley–Terry + 汇总.md every 25 results, on synthetic 10-player
//! results, at 10k and 100k results. Run: `cargo bench -p coordinator --bench ingest [BATCH]`.
//! Compare with tools/reference/time_evaluate_checkpoint.py (the reference's rewrite-per-game).

use std::time::Instant;

use coordinator::run::checkpoint::{Log, Row};
use coordinator::run::outputs::Live;

fn synthetic(n: u64, names: &[String], state: &mut u64) -> Row {
    let size = [2usize, 5, 10][(n % 3) as usize];
    let mut seats: Vec<usize> = (0..names.len()).collect();
    let mut next = || {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    };
    for i in (1..seats.len()).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        seats.swap(i, j);
    }
    let seats = &seats[..size];
    let ranks: Vec<u64> = (0..size).map(|_| 1 + next() % size as u64).collect();
    let result = serde_json::json!({
        "version": "matchfarm-bomberman/0.5-public-state",
        "seed": n, "players": size, "map_source": "generated",
        "names": seats.iter().map(|&s| names[s].clone()).collect::<Vec<_>>(),
        "hashes": {},
        "ranks": ranks,
        "points": vec![1.0; size], "points_exact": vec!["1"; size],
        "survival_points": vec![1.0; size], "kill_points": vec![0.0; size],
        "kill_shares": vec!["0"; size], "errors": vec![0; size],
        "death_turns": vec![-1; size], "turns": 100, "valid_for_scoring": true,
        "bombs_placed": vec![3; size], "boxes_broken": vec![2; size],
        "faults": vec![Vec::<u8>::new(); size],
    });
    Row {
        number: n,
        size: size as u32,
        result: Some(result),
        failed: None,
    }
}

fn main() {
    let batch: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(256);
    println!("fsync every {batch} results");
    let names: Vec<String> = (0..10).map(|i| format!("bot{i}")).collect();
    for total in [10_000u64, 100_000] {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut log = Log::open(&dir.path().join("results.jsonl"), 0, &[]).expect("log");
        let mut live = Live::new(names.clone(), vec![2, 5, 10], "bot0".into());
        let mut state = 0x9e3779b97f4a7c15u64;
        let rows: Vec<Row> = (1..=total)
            .map(|n| synthetic(n, &names, &mut state))
            .collect();
        let started = Instant::now();
        let mut last_10k = Instant::now();
        let mut per_10k = Vec::new();
        for (i, row) in rows.into_iter().enumerate() {
            for r in log.push(row).expect("push") {
                live.add(&r);
            }
            if (i + 1) % batch == 0 {
                log.sync().expect("sync");
            }
            if (i + 1) % 25 == 0 {
                let dir = dir.path();
                live.write_report(dir).expect("report");
            }
            if (i + 1) % 10_000 == 0 {
                per_10k.push(last_10k.elapsed().as_secs_f64() / 10_000.0 * 1e6);
                last_10k = Instant::now();
            }
        }
        log.sync().expect("sync");
        let secs = started.elapsed().as_secs_f64();
        println!(
            "{total} results: {:.3} s, {:.0} results/s, {:.1} us/result; per-10k-block us/result: {:?}",
            secs,
            total as f64 / secs,
            secs / total as f64 * 1e6,
            per_10k.iter().map(|v| format!("{v:.1}")).collect::<Vec<_>>()
        );
    }
}
