//! Benchmark (ignored by default; `cargo test -p coordinator --release --test proboj_bench --
//! --ignored --nocapture`, FARM_BENCH_ROUNDS=N to change the 20,000 rounds per game,
//! FARM_BENCH_PIN=1 to run everything on CPU 0: on an idle VM a wake-up on another vCPU costs
//! ~100 us, which then dominates both the baseline and the runner): the runner's cost per round trip (one TO PLAYER + one READ PLAYER)
//! with an instant C server and an instant C player, against a direct pipe ping-pong between
//! two processes. Prints figures; asserts only that the games ran.

mod proboj_support;

use proboj_support::{scores, show, Setup};
use serde_json::json;

fn cc(src: &str, out: &std::path::Path) {
    let src = proboj_support::repo_root()
        .join("bots/proboj/bench")
        .join(src);
    let st = std::process::Command::new("cc")
        .args(["-O2", "-o"])
        .arg(out)
        .arg(&src)
        .status()
        .unwrap();
    assert!(st.success(), "cc {}", src.display());
}

#[test]
#[ignore]
fn round_trip_overhead() {
    if std::env::var("FARM_BENCH_PIN").as_deref() == Ok("1") {
        // SAFETY: a zeroed cpu_set_t with one CPU set, for this process (inherited by children).
        let rc = unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(0, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
        };
        assert_eq!(rc, 0, "sched_setaffinity");
        println!("pinned to CPU 0 (with every process it starts)");
    }
    let s = Setup::new();
    let bin = s.dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    cc("server.c", &bin.join("server"));
    cc("player.c", &bin.join("player"));
    cc("pingpong.c", &bin.join("pingpong"));
    let rounds: u64 = std::env::var("FARM_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(20_000);
    let repeats = 5;
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let direct: Vec<f64> = (0..repeats)
        .map(|_| {
            let out = std::process::Command::new(bin.join("pingpong"))
                .arg(rounds.to_string())
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            text.split_whitespace()
                .next()
                .unwrap()
                .parse::<f64>()
                .unwrap()
                / 1000.0
        })
        .collect();
    let base = median(direct);
    println!("baseline (direct pipe ping-pong, no runner): {base:.1} us per exchange (median of {repeats})");
    for (mode, fair) in [
        ("off", false),
        ("off", true),
        ("auto", false),
        ("auto", true),
    ] {
        let cfg = s.config(
            json!({"p": {"command": format!("{}/player --tag {}", bin.display(), s.tag), "language": "c"}}),
            json!({"server": bin.join("server").to_string_lossy(), "timeout": {"c": 10}}),
        );
        let mut runs = Vec::new();
        for i in 0..repeats {
            let folder = format!("{mode}-{fair}-{i}");
            let games = json!([{"gamefolder": folder, "players": ["p"], "args": format!("rounds={rounds}")}]);
            let mut args = vec!["--sandbox", mode];
            if !fair {
                args.push("--no-fair");
            }
            let out = s.run(&cfg, &games, &args);
            assert!(out.status.success(), "{}", show(&out));
            let ns = scores(&s.game(&folder))["p"].as_i64().unwrap();
            runs.push(ns as f64 / 1000.0);
        }
        let us = median(runs);
        println!(
            "sandbox {mode}, fair {fair}: {us:.1} us per TO+READ round trip (server side, median of {repeats}); runner overhead {:.1} us over the direct exchange",
            us - base
        );
    }
}
