//! Ladder throughput on the embedded farm: challenges (two games each, as farm jobs) per second
//! through the real HTTP API of a real `farm ladder serve` (SQLite), with the training bots' code
//! as contestants. Ignored by default; run with
//! `cargo test --release -p coordinator --test ladder_bench -- --ignored --nocapture`
//! (LADDER_BENCH_CHALLENGES, LADDER_BENCH_CLIENTS, LADDER_BENCH_WORKERS to vary it).

mod ladder_support;

use std::time::Instant;

use ladder_support::{repo_root, Backend, Ladder, Opts};

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
#[ignore]
fn ladder_throughput() {
    let challenges = env("LADDER_BENCH_CHALLENGES", 60);
    let clients = env("LADDER_BENCH_CLIENTS", 4).max(1);
    let workers = env("LADDER_BENCH_WORKERS", 2);
    let l = Ladder::start(
        Backend::Sqlite,
        Opts {
            workers,
            ..Opts::default()
        },
    );
    let mut training: Vec<_> = std::fs::read_dir(repo_root().join("bots/qianwang"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "js"))
        .collect();
    training.sort();
    let mut players = Vec::new();
    for i in 0..clients * 2 {
        let (id, key) = l.player(&format!("bench-{i}"), true);
        let code = std::fs::read_to_string(&training[i % training.len()]).unwrap();
        l.publish(&key, &format!("{code}\n// bench {i}\n"));
        players.push((id, key));
    }
    let started = Instant::now();
    let per = challenges.div_ceil(clients);
    let plies = std::sync::atomic::AtomicU64::new(0);
    std::thread::scope(|s| {
        for c in 0..clients {
            let (l, players, plies) = (&l, &players, &plies);
            s.spawn(move || {
                let (_, key) = &players[2 * c];
                let (target, _) = players[2 * c + 1];
                for _ in 0..per {
                    let r = l.challenge(key, target);
                    assert_eq!(r.status, 200, "{}", r.text);
                    for g in r.json["matches"].as_array().unwrap() {
                        plies.fetch_add(
                            g["turns"].as_u64().unwrap(),
                            std::sync::atomic::Ordering::Relaxed,
                        );
                    }
                }
            });
        }
    });
    let secs = started.elapsed().as_secs_f64();
    let n = per * clients;
    let plies = plies.into_inner();
    println!(
        "ladder throughput: {n} challenges ({} games, {plies} plies) in {secs:.2} s = {:.2} challenges/s, {:.2} games/s ({workers} embedded workers, {clients} clients, SQLite)",
        2 * n,
        n as f64 / secs,
        2.0 * n as f64 / secs
    );
}
