//! `farm run --until-settled` end to end on the four bundled bots (one copy each): it stops
//! early at a unit boundary, results.json is a prefix of the full run's, the ranking is the
//! full run's, the stop is explained, a resume of the stopped run plays nothing and decides the
//! same, and the flag is part of the run's identity.

mod common;

use std::path::Path;

use common::{farm, results_without_timing, run};
use serde_json::Value;

const BOTS: [&str; 4] = [
    "Search=bots/bomberman/search.cpp",
    "Base=bots/bomberman/baseline.cpp",
    "Greedy=bots/bomberman/greedy.cpp",
    "Random=bots/bomberman/random.cpp",
];

/// 4-player maps first (every bot in every unit), then the 2-player pairs: 8 × 8 + 8 × 12 =
/// 160 matches.
fn args(out: &Path, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = vec!["run".into(), "--bots".into()];
    a.extend(BOTS.iter().map(|s| s.to_string()));
    for s in [
        "--anchor",
        "Base",
        "--sizes",
        "4",
        "2",
        "--seeds",
        "8",
        "--seed",
        "3",
        "--workers",
        "2",
        "--output",
    ] {
        a.push(s.into());
    }
    a.push(out.display().to_string());
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Bot names best first, from bt.json.
fn ranking(dir: &Path) -> Vec<String> {
    let bt = json(&dir.join("bt.json"));
    let mut v: Vec<(String, f64)> = bt["ratings"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, r)| (k.clone(), r.as_f64().unwrap()))
        .collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1));
    v.into_iter().map(|(k, _)| k).collect()
}

/// (size, seed, sorted seats) of schedule.json's entry `i` (0-based): a unit's key.
fn unit_key(schedule: &Value, i: usize) -> (Value, Value, Vec<String>) {
    let e = &schedule["entries"][i];
    let mut seats: Vec<String> = e["roster"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.to_string())
        .collect();
    seats.sort();
    (e["size"].clone(), e["seed"].clone(), seats)
}

#[test]
fn stops_at_a_unit_boundary_with_the_full_runs_ranking() {
    let tmp = tempfile::tempdir().unwrap();
    let full = tmp.path().join("full");
    let (code, out, err) = run(farm().args(args(&full, &[])));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    assert!(
        !full.join("stopped.json").exists(),
        "a run without the flag never stops early"
    );
    let full_results = results_without_timing(&full);
    let total = full_results.as_array().unwrap().len();
    assert_eq!(total, 160);

    let settled = tmp.path().join("settled");
    let (code, out, err) = run(farm().args(args(&settled, &["--until-settled"])));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    let results = results_without_timing(&settled);
    let played = results.as_array().unwrap().len();
    eprintln!("--until-settled played {played} of {total} matches\n{out}");
    assert!(played < total, "it stopped early");
    assert_eq!(
        results.as_array().unwrap()[..],
        full_results.as_array().unwrap()[..played],
        "results.json is a prefix of the full run's"
    );
    let schedule = json(&settled.join("schedule.json"));
    assert_ne!(
        unit_key(&schedule, played - 1),
        unit_key(&schedule, played),
        "the cut falls between two units"
    );
    assert_eq!(
        ranking(&settled),
        ranking(&full),
        "same ranking as the full run"
    );
    let stopped = json(&settled.join("stopped.json"));
    assert_eq!(stopped["matches_played"], played as u64);
    assert_eq!(stopped["matches_scheduled"], total as u64);
    assert!(
        stopped["reason"].as_str().unwrap().contains("settled"),
        "{stopped}"
    );
    assert!(out.contains("stopped early"), "{out}");
    let report = std::fs::read_to_string(settled.join("汇总.md")).unwrap();
    assert!(
        report.contains("Stopped early"),
        "汇总.md says why:\n{report}"
    );
    let bt = json(&settled.join("bt.json"));
    assert_eq!(bt["stopped"]["matches_played"], played as u64, "{bt}");
    let identity = std::fs::read_to_string(settled.join("identity.json")).unwrap();
    assert!(identity.contains("until_settled"), "{identity}");
    let plain = std::fs::read_to_string(full.join("identity.json")).unwrap();
    assert!(
        !plain.contains("until_settled"),
        "recorded only with the flag"
    );

    // A resume of the stopped run plays nothing and stops at the same match.
    let (code, out, err) = run(farm().args(args(&settled, &["--until-settled", "--resume"])));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    assert_eq!(results_without_timing(&settled), results);
    assert_eq!(
        json(&settled.join("stopped.json"))["matches_played"],
        played as u64
    );
    // Without the flag (or with another confidence) the resume is refused.
    for extra in [
        vec!["--resume"],
        vec!["--resume", "--until-settled", "--confidence", "0.9"],
    ] {
        let (code, _, err) = run(farm().args(args(&settled, &extra)));
        assert_eq!(code, 2, "{extra:?}: {err}");
        assert!(err.contains("resume rejected"), "{extra:?}: {err}");
    }
}

#[test]
fn max_matches_stops_at_the_last_whole_unit_within_it() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("capped");
    // Units of the 4-player part are 8 matches long: 20 allows two whole units.
    let (code, out, err) = run(farm().args(args(
        &out_dir,
        &[
            "--until-settled",
            "--confidence",
            "0.999",
            "--max-matches",
            "20",
        ],
    )));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    let results = results_without_timing(&out_dir);
    assert_eq!(results.as_array().unwrap().len(), 16);
    let stopped = json(&out_dir.join("stopped.json"));
    assert_eq!(stopped["matches_played"], 16);
    assert!(
        stopped["reason"]
            .as_str()
            .unwrap()
            .contains("--max-matches 20"),
        "{stopped}"
    );
    let (code, _, err) = run(farm().args(args(
        &tmp.path().join("tiny"),
        &["--until-settled", "--max-matches", "5"],
    )));
    assert_eq!(code, 2);
    assert!(
        err.contains("smaller than the schedule's first unit"),
        "{err}"
    );
}
