//! The match clock end to end with real bot processes: a time bank (`--time-bank-ms`) covers a
//! few turns clearly past the limit that time a bot out without it, a bot that spends its bank
//! times out on the turn it runs out, `farm verify` accepts these replays and rejects doctored
//! ones, a non-default clock is part of a run's identity, and on the cluster the turn limit
//! reaches the worker in the job, with no FARM_TURN_MS in the worker's environment.
//!
//! The slow bots sleep (not compute) 3 s on chosen turns against a 1 s limit: three times the
//! limit, never near it, and the banks are sized with a second or more to spare either way.

mod cluster_support;
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{farm, lag_bot, run};
use games::bomberman::replay::turn_timing;
use serde_json::Value;

/// A JSON file, or a replay (gzipped as `farm play` writes it, or plain).
fn read_json(p: &Path) -> Value {
    common::replay_json(p)
}

/// `farm play` of `Lag` (seat 0) against the instant answerer; returns the replay JSON's path.
fn play(dir: &Path, tag: &str, lag: &Path, clock: &[&str]) -> PathBuf {
    let html = dir.join(format!("{tag}.html"));
    let (code, out, err) = run(farm()
        .args(["play", "--seed", "3", "--replay"])
        .arg(&html)
        .arg("--bots")
        .arg(format!("Lag={}", lag.display()))
        .arg("Quick=bots/test/answer.cpp")
        .args(clock));
    assert_eq!(code, 0, "{out}\n{err}");
    html.with_extension("json.gz")
}

fn faults(replay: &Value, seat: usize) -> Vec<(String, u64, String)> {
    replay["result"]["faults"][seat]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["kind"].as_str().unwrap().to_string(),
                f["turn"].as_u64().unwrap(),
                f["detail"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn verify(path: &Path) -> (i32, String, String) {
    run(farm().arg("verify").arg(path))
}

/// Write `replay` with its content digest recomputed (so only the clock check can object).
fn write_redigested(replay: &mut Value, path: &Path) {
    replay["digest"] = games::bomberman::replay::content_digest_of(replay).into();
    std::fs::write(path, serde_json::to_string(replay).unwrap()).unwrap();
}

#[test]
fn a_bank_covers_slow_turns_that_time_out_without_it() {
    let tmp = tempfile::tempdir().unwrap();
    // Three turns of three times the 1 s limit: 6 s past it in all, against a 10 s bank.
    let lag = lag_bot(tmp.path(), "lag3", &[(1, 3000), (2, 3000), (3, 3000)]);
    let banked = play(
        tmp.path(),
        "banked",
        &lag,
        &["--turn-ms", "1000", "--time-bank-ms", "10000"],
    );
    let r = read_json(&banked);
    assert_eq!(faults(&r, 0), vec![], "the bank covered every slow turn");
    assert_eq!(r["result"]["errors"][0], 0);
    assert!(
        r["result"]["turns"].as_u64().unwrap() > 3,
        "it played on past the slow turns"
    );
    let clock = &r["clock"];
    assert_eq!(
        (clock["turn_ms"].as_u64(), clock["bank_ms"].as_u64()),
        (Some(1000), Some(10000))
    );
    let lag_turns = clock["turns"][0].as_array().unwrap();
    let bank_after = |t: u64| {
        lag_turns.iter().find(|c| c["t"] == t).unwrap()["bank_us"]
            .as_u64()
            .unwrap()
    };
    // The host time its slow turns were credited (bursts of steal or interrupts in a turn's
    // last second, where a bot may sleep within its 1 s limit; see sandbox::hosttime).
    let per_turn = turn_timing::turn_entries(&r["result"]["timing"]["bot_0"]);
    let host = |t: u64| -> u64 {
        per_turn
            .iter()
            .find(|p| p.get("turn").and_then(Value::as_u64) == Some(t))
            .and_then(|p| p.get("late")?.get("host_us")?.as_u64())
            .unwrap_or(0)
    };
    // Each slow turn slept 3 s, so it drew ~2 s, less what the host was credited; the others
    // drew nothing.
    assert!(
        bank_after(1) <= 8_010_000 + host(1),
        "{} (host {})",
        bank_after(1),
        host(1)
    );
    let left = lag_turns.last().unwrap()["bank_us"].as_u64().unwrap();
    let hosts = host(1) + host(2) + host(3);
    assert!(
        left <= 4_010_000 + hosts && left > 0,
        "bank left {left} (host {hosts})"
    );
    assert_eq!(left, bank_after(3), "no draw after the slow turns");
    // The quick bot never drew on its bank.
    let quick = clock["turns"][1].as_array().unwrap();
    assert!(quick.iter().all(|c| c["bank_us"] == 10_000_000));
    let (code, out, err) = verify(&banked);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("OK") && out.contains("time bank: 10000 ms"),
        "{out}"
    );
    let (code, out, err) =
        run(farm()
            .arg("inspect")
            .arg(&banked)
            .args(["--turn", "2", "--context", "0"]));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("ms left]"), "inspect shows the bank: {out}");

    // Without a bank the same bot times out on its first slow turn, as it always did.
    let plain = play(tmp.path(), "plain", &lag, &["--turn-ms", "1000"]);
    let r = read_json(&plain);
    let f = faults(&r, 0);
    assert_eq!(
        f.iter()
            .map(|(k, t, _)| (k.as_str(), *t))
            .collect::<Vec<_>>(),
        vec![("timeout", 1)]
    );
    assert!(f[0].2.contains("within 1000 ms"), "{}", f[0].2);
    assert!(
        r.get("clock").is_none(),
        "no bank, no clock record: {}",
        r["clock"]
    );
    let (code, _, err) = verify(&plain);
    assert_eq!(code, 0, "{err}");

    // A doctored banked replay: a slow turn that used more than the bank could cover, yet an
    // answer is recorded.
    let mut doctored = read_json(&banked);
    let entry = doctored["clock"]["turns"][0]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|c| c["t"] == 2)
        .unwrap();
    entry["used_us"] = 20_000_000.into();
    let bad = tmp.path().join("doctored.json");
    write_redigested(&mut doctored, &bad);
    let (code, _, err) = verify(&bad);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("time bank does not add up")
            && err.contains("turn 2")
            && err.contains("should have timed out"),
        "{err}"
    );
}

#[test]
fn a_bot_out_of_bank_times_out_on_the_turn_it_runs_out() {
    let tmp = tempfile::tempdir().unwrap();
    // 3 s on each of turns 1..5 against a 1 s limit and a 5 s bank: turn 1 leaves ~3 s, turn 2
    // ~1 s, and turn 3 (2 s allowed, 3 s needed) times out.
    let slow: Vec<(u32, u64)> = (1..=5).map(|t| (t, 3000)).collect();
    let lag = lag_bot(tmp.path(), "lag5", &slow);
    let path = play(
        tmp.path(),
        "spent",
        &lag,
        &["--turn-ms", "1000", "--time-bank-ms", "5000"],
    );
    let r = read_json(&path);
    let f = faults(&r, 0);
    assert_eq!(
        f.iter()
            .map(|(k, t, _)| (k.as_str(), *t))
            .collect::<Vec<_>>(),
        vec![("timeout", 3)],
        "{f:?}"
    );
    assert!(f[0].2.contains("time bank"), "{}", f[0].2);
    let turns = r["clock"]["turns"][0].as_array().unwrap();
    let last = turns.last().unwrap();
    assert_eq!(
        (last["t"].as_u64(), last["bank_us"].as_u64()),
        (Some(3), Some(0))
    );
    let (code, _, err) = verify(&path);
    assert_eq!(code, 0, "{err}");

    // A doctored replay: the timed-out turn claims less time than the bank still covered.
    let mut doctored = r.clone();
    let entry = doctored["clock"]["turns"][0]
        .as_array_mut()
        .unwrap()
        .last_mut()
        .unwrap();
    entry["used_us"] = 1_200_000.into();
    let bad = tmp.path().join("doctored.json");
    write_redigested(&mut doctored, &bad);
    let (code, _, err) = verify(&bad);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("time bank does not add up")
            && err.contains("turn 3")
            && err.contains("covered it"),
        "{err}"
    );

    // A doctored balance is named too.
    let mut doctored = r.clone();
    doctored["clock"]["turns"][0][1]["bank_us"] = 5_000_000.into();
    write_redigested(&mut doctored, &bad);
    let (code, _, err) = verify(&bad);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("time bank is recorded as 5000000"), "{err}");
}

#[test]
fn a_non_default_clock_is_part_of_the_run_identity() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("plan");
    let args = |dir: &Path, extra: &[&str]| -> Vec<String> {
        let mut a: Vec<String> = [
            "run",
            "--bots",
            "A=bots/test/answer.cpp",
            "B=bots/test/answer.cpp",
            "--anchor",
            "A",
            "--sizes",
            "2",
            "--seeds",
            "1",
            "--seed",
            "5",
            "--plan-only",
            "--output",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        a.push(dir.display().to_string());
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    // The rules' clock (no FARM_TURN_MS anywhere) leaves identity.json as it always was.
    let rules = tmp.path().join("rules");
    let (code, _, err) = run(farm().env_remove("FARM_TURN_MS").args(args(&rules, &[])));
    assert_eq!(code, 0, "{err}");
    let id = read_json(&rules.join("identity.json"));
    assert!(
        id["scoring_code"].get("clock").is_none(),
        "{}",
        id["scoring_code"]
    );

    // FARM_TURN_MS=1000 (set by `farm()`) and a bank: recorded.
    let (code, _, err) = run(farm().args(args(&out, &["--time-bank-ms", "5000"])));
    assert_eq!(code, 0, "{err}");
    let id = read_json(&out.join("identity.json"));
    assert_eq!(
        id["scoring_code"]["clock"],
        "turn_ms=1000 time_bank_ms=5000"
    );

    // A resume with another bank, or another turn limit, is refused and says what changed.
    for extra in [
        vec!["--resume", "--time-bank-ms", "6000"],
        vec!["--resume", "--time-bank-ms", "5000", "--turn-ms", "2000"],
        vec!["--resume"],
    ] {
        let (code, _, err) = run(farm().args(args(&out, &extra)));
        assert_ne!(code, 0, "{extra:?} accepted");
        assert!(
            err.contains("resume rejected") && err.contains("clock"),
            "{extra:?}: {err}"
        );
    }
    let (code, _, err) = run(farm().args(args(&out, &["--resume", "--time-bank-ms", "5000"])));
    assert_eq!(code, 0, "the same clock resumes: {err}");
}

/// One worker process of this test's cluster, with no FARM_TURN_MS in its environment.
fn worker(farm_: &cluster_support::Farm) -> std::process::Child {
    let log = farm_.dir.path().join("worker.log");
    Command::new(cluster_support::farm())
        .current_dir(cluster_support::root())
        .args(["worker", "--broker", cluster_support::BROKER, "--redis"])
        .arg(farm_.redis_url())
        .args(["--slots", "2", "--id", "bank-w1", "--scratch"])
        .arg(farm_.dir.path().join("scratch"))
        .env_remove("FARM_TURN_MS")
        .env("FARM_KEY", cluster_support::KEY)
        .env("FARM_LOG", "warn")
        .stdout(std::fs::File::create(&log).unwrap())
        .stderr(std::fs::File::create(log.with_extension("err")).unwrap())
        .spawn()
        .unwrap()
}

#[test]
fn on_the_cluster_the_turn_limit_travels_in_the_job() {
    let up = |a: &str| {
        std::net::TcpStream::connect_timeout(&a.parse().unwrap(), Duration::from_secs(2)).is_ok()
    };
    if !up("127.0.0.1:5672") || !up("127.0.0.1:6379") {
        assert!(
            std::env::var("FARM_REQUIRE_BROKER").as_deref() != Ok("1"),
            "FARM_REQUIRE_BROKER=1 but RabbitMQ or Redis is not reachable"
        );
        eprintln!("skipped: RabbitMQ at 127.0.0.1:5672 or Redis at 127.0.0.1:6379 not reachable");
        return;
    }
    // One scenario at a time on the shared broker and Redis: nextest's `shared-services`
    // test group (.config/nextest.toml).
    let f = cluster_support::Farm::new("bank", 12);
    // 300 ms on turn 1 (past the rules' 50 ms, well within 1 s) and 3 s on turn 2 (past 1 s).
    let lag = lag_bot(f.dir.path(), "lag12", &[(1, 300), (2, 3000)]);
    let mut w = worker(&f);
    let out = f.output();
    let status = Command::new(cluster_support::farm())
        .current_dir(cluster_support::root())
        .args(["run", "--bots"])
        .arg(format!("Lag={}", lag.display()))
        .arg("Quick=bots/test/answer.cpp")
        .args([
            "--anchor", "Quick", "--sizes", "2", "--seeds", "1", "--seed", "9",
        ])
        .args(["--workers", "1", "--turn-ms", "1000", "--broker"])
        .arg(cluster_support::BROKER)
        .arg("--redis")
        .arg(f.redis_url())
        .arg("--output")
        .arg(&out)
        .env_remove("FARM_TURN_MS")
        .env("FARM_KEY", cluster_support::KEY)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(f.dir.path().join("coordinator.err")).unwrap())
        .status()
        .unwrap();
    let _ = w.kill();
    let _ = w.wait();
    let err = std::fs::read_to_string(f.dir.path().join("coordinator.err")).unwrap_or_default();
    assert!(status.success(), "{err}");
    let results = cluster_support::results(&out);
    assert!(!results.is_empty());
    for row in &results {
        let r = &row["result"];
        let seat = r["names"]
            .as_array()
            .unwrap()
            .iter()
            .position(|n| n == "Lag")
            .unwrap();
        let f: Vec<(String, u64, String)> = faults(&serde_json::json!({ "result": r }), seat);
        assert_eq!(
            f.iter()
                .map(|(k, t, _)| (k.as_str(), *t))
                .collect::<Vec<_>>(),
            vec![("timeout", 2)],
            "the job's 1000 ms limit let turn 1 pass and cut turn 2: {f:?}"
        );
        assert!(f[0].2.contains("within 1000 ms"), "{}", f[0].2);
    }
}
