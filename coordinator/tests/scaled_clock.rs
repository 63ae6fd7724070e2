//! A clock scaled to each worker's speed (`--scale-clock`, issue 25 §1), end to end with real
//! bot processes: the tournament states its limits for a reference speed, the worker plays them
//! times reference / its own measured speed, every replay records the scaling (with the speed
//! the worker reported beside the results in played-by.jsonl), `farm verify` re-derives the
//! limits from it, and the scaling is part of the run's identity.
//!
//! The limits are chosen so that the host's real speed (a few hundred reference turns per
//! second here) cannot matter: 20 ms stated for a reference of 200,000 plays as seconds on any
//! host slower than 10,000, and the slow bot sleeps 300 ms on turn 1 (fifteen times the stated
//! limit, a tenth of any scaled one).

mod common;

use std::path::Path;

use common::{farm, lag_bot, replay_json, run};
use serde_json::Value;

const REFERENCE: u64 = 200_000;
const STATED_MS: u64 = 20;

fn run_args(lag: &Path, out: &Path, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = ["run", "--bots"].iter().map(|s| s.to_string()).collect();
    a.push(format!("Lag={}", lag.display()));
    a.extend(
        [
            "Quick=bots/test/answer.cpp",
            "--anchor",
            "Quick",
            "--sizes",
            "2",
            "--seeds",
            "1",
            "--seed",
            "9",
            "--workers",
            "1",
            "--turn-ms",
            "20",
            "--output",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    a.push(out.display().to_string());
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn faults_of(replay: &Value, name: &str) -> Vec<Value> {
    let seat = replay["result"]["names"]
        .as_array()
        .unwrap()
        .iter()
        .position(|n| n == name)
        .unwrap();
    replay["result"]["faults"][seat].as_array().unwrap().clone()
}

#[test]
fn a_scaled_clock_is_played_recorded_verified_and_part_of_the_identity() {
    let tmp = tempfile::tempdir().unwrap();
    let lag = lag_bot(tmp.path(), "lag300", &[(1, 300)]);

    // Unscaled, the stated 20 ms times the slow bot out on turn 1 (the control).
    let plain = tmp.path().join("plain");
    let (code, _, err) = run(farm().args(run_args(&lag, &plain, &[])));
    assert_eq!(code, 0, "{err}");
    let rp = replay_json(&plain.join("replays/00001.json.gz"));
    let f = faults_of(&rp, "Lag");
    assert!(
        f.iter().any(|f| f["kind"] == "timeout" && f["turn"] == 1),
        "unscaled, the 300 ms turn times out: {f:?}"
    );
    assert!(rp.get("scaling").is_none(), "{}", rp["scaling"]);

    // Scaled: the same limit, and a 10 ms bank (so that the replay records the limits played,
    // which verification holds to the scaling), stated for a host of speed 200,000.
    let out = tmp.path().join("scaled");
    let scale = REFERENCE.to_string();
    let scaled = |extra: &[&str]| {
        let mut a = vec!["--time-bank-ms", "10", "--scale-clock", &scale];
        a.extend_from_slice(extra);
        run_args(&lag, &out, &a)
    };
    let (code, _, err) = run(farm().args(scaled(&[])));
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("scaled to its own speed"), "{err}");
    let played_by: Vec<Value> = std::fs::read_to_string(out.join("played-by.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(played_by.len(), 2, "{played_by:?}");
    for (n, row) in played_by.iter().enumerate() {
        let speed = row["speed"].as_f64().expect("the embedded worker's speed");
        let path = out.join(format!(
            "replays/{:05}.json.gz",
            row["number"].as_u64().unwrap()
        ));
        let rp = replay_json(&path);
        let s = &rp["scaling"];
        assert_eq!(s["reference_speed"].as_u64(), Some(REFERENCE), "{s}");
        assert_eq!(s["stated"]["turn_ms"].as_u64(), Some(STATED_MS), "{s}");
        assert_eq!(s["stated"]["bank_ms"].as_u64(), Some(10), "{s}");
        let played_ms = |stated: u64| (stated as f64 * REFERENCE as f64 / speed).ceil() as u64;
        let c = &rp["clock"];
        assert_eq!(
            (c["turn_ms"].as_u64(), c["bank_ms"].as_u64()),
            (Some(played_ms(STATED_MS)), Some(played_ms(10))),
            "the limits played are the stated ones scaled to speed {speed}"
        );
        assert_eq!(s["speed"].as_f64(), Some(speed), "match {n}: {s}");
        assert!(
            faults_of(&rp, "Lag").is_empty(),
            "the scaled clock ({} ms) covers 300 ms: {}",
            played_ms(STATED_MS),
            rp["result"]["faults"]
        );
        let (code, stdout, err) = run(farm().arg("verify").arg(&path));
        assert_eq!(code, 0, "{err}");
        assert!(
            stdout.contains("scaled clock: 20 ms + 10 ms bank stated for speed 200000"),
            "{stdout}"
        );

        // A replay claiming another host speed, or another reference, than the limits it
        // records were scaled for (with its digest recomputed, so only the scaling check can
        // object) is refused. (Without a bank nothing in a replay depends on the turn limit
        // but its timeouts' wording; the coordinator holds the scaling to the job and to the
        // speed the worker reported either way.)
        let mut doctored = rp.clone();
        doctored["scaling"]["speed"] = (speed * 2.0).into();
        doctored["digest"] = games::bomberman::replay::content_digest_of(&doctored).into();
        let bad = tmp.path().join(format!("doctored{n}.json"));
        std::fs::write(&bad, serde_json::to_string(&doctored).unwrap()).unwrap();
        let (code, _, err) = run(farm().arg("verify").arg(&bad));
        assert_eq!(code, 1, "a doctored speed verified: {err}");
        assert!(err.contains("scaled clock does not add up"), "{err}");
        doctored["scaling"]["speed"] = speed.into();
        doctored["scaling"]["reference_speed"] = (REFERENCE / 2).into();
        doctored["digest"] = games::bomberman::replay::content_digest_of(&doctored).into();
        std::fs::write(&bad, serde_json::to_string(&doctored).unwrap()).unwrap();
        let (code, _, err) = run(farm().arg("verify").arg(&bad));
        assert_eq!(code, 1, "a doctored reference verified: {err}");
    }

    // Part of the identity: a resume without it, or with another reference, is refused.
    let id: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("identity.json")).unwrap()).unwrap();
    assert_eq!(
        id["scoring_code"]["clock"],
        "turn_ms=20 time_bank_ms=10 reference_speed=200000"
    );
    for extra in [
        vec!["--resume", "--time-bank-ms", "10"],
        vec![
            "--resume",
            "--time-bank-ms",
            "10",
            "--scale-clock",
            "100000",
        ],
    ] {
        let (code, _, err) = run(farm().args(run_args(&lag, &out, &extra)));
        assert_ne!(code, 0, "{extra:?} accepted");
        assert!(
            err.contains("resume rejected") && err.contains("clock"),
            "{extra:?}: {err}"
        );
    }
    let (code, _, err) = run(farm().args(scaled(&["--resume"])));
    assert_eq!(code, 0, "the same clock resumes: {err}");

    // A reference speed of 0 is refused up front with a clear message.
    let (code, _, err) = run(farm().args(run_args(
        &lag,
        &tmp.path().join("zero"),
        &["--scale-clock", "0"],
    )));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--scale-clock"), "{err}");
}
