//! `farm run --until-settled` end to end on the four bundled bots (one copy each): it stops
//! early at a unit boundary, results.json is a prefix of the full run's, the ranking is the
//! full run's (played in the same `--order rounds`), the stop is explained, a resume of the
//! stopped run plays nothing and decides the same, the flag and the order are part of the run's
//! identity, and on the cluster (real RabbitMQ, Redis and `farm worker`) it stops after the same
//! match with the same results.

mod cluster_support;
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

/// 8 4-player maps (every bot in every unit, 8 matches each) and 8 × 6 2-player pairs (2 matches
/// each): 8 × 8 + 8 × 12 = 160 matches. In `--order reference` the 4-player maps come first; in
/// `--order rounds` (the default with --until-settled) round k is the k-th 4-player map and
/// then the k-th map of each of the six pairs.
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
    let (code, out, err) = run(farm().args(args(&full, &["--order", "rounds"])));
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
            "--order",
            "reference",
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

/// (size, seed, sorted seats) of every entry of a schedule.json.
fn keys(schedule: &Value) -> Vec<(Value, Value, Vec<String>)> {
    (0..schedule["entries"].as_array().unwrap().len())
        .map(|i| unit_key(schedule, i))
        .collect()
}

#[test]
fn rounds_play_the_same_matches_with_every_size_in_the_first_round() {
    let tmp = tempfile::tempdir().unwrap();
    let (reference, rounds) = (tmp.path().join("reference"), tmp.path().join("rounds"));
    for (dir, extra) in [
        (&reference, vec!["--plan-only"]),
        (&rounds, vec!["--plan-only", "--until-settled"]),
    ] {
        let (code, out, err) = run(farm().args(args(dir, &extra)));
        assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    }
    let (a, b) = (
        json(&reference.join("schedule.json")),
        json(&rounds.join("schedule.json")),
    );
    assert_eq!(a["schedule_seed"], b["schedule_seed"]);
    let (ka, kb) = (keys(&a), keys(&b));
    assert_ne!(ka, kb, "--until-settled plays in rounds by default");
    let sorted = |e: &Value| {
        let mut v: Vec<String> = e["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.to_string())
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        sorted(&a),
        sorted(&b),
        "the same 160 matches, seats and all"
    );
    // Round 0: the first 4-player map (8 matches), then the first map of each of the 6 pairs.
    let sizes: Vec<u64> = (0..20)
        .map(|i| b["entries"][i]["size"].as_u64().unwrap())
        .collect();
    assert_eq!(
        sizes,
        [[4u64; 8].as_slice(), [2u64; 12].as_slice()].concat()
    );
    assert_eq!(kb[0], ka[0], "the first map of the first size leads both");
    assert_eq!(kb[8], ka[64], "then the first pair on its first map");
    // The order is part of the identity: resuming a rounds folder in the reference order is
    // refused and names what differs.
    let (code, _, err) = run(farm().args(args(
        &rounds,
        &[
            "--plan-only",
            "--until-settled",
            "--order",
            "reference",
            "--resume",
        ],
    )));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("resume rejected") && err.contains("schedule"),
        "{err}"
    );
    // --order is for expanded schedules only.
    let (code, _, err) = run(farm().args([
        "run",
        "--formal",
        "--order",
        "rounds",
        "--output",
        &tmp.path().join("formal").display().to_string(),
    ]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--order"), "{err}");
}

#[test]
fn on_the_cluster_it_stops_where_the_embedded_run_stops() {
    let Some(_serial) = cluster_support::setup() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let embedded = tmp.path().join("embedded");
    let (code, out, err) = run(farm().args(args(&embedded, &["--until-settled"])));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    let want = results_without_timing(&embedded);
    let played = want.as_array().unwrap().len();
    assert!(played < 160, "the embedded run stopped early");

    let f = cluster_support::Farm::new("settled", 13);
    let _worker = f.worker("w1", 2);
    let redis = f.redis_url();
    let cluster = [
        "--until-settled",
        "--broker",
        cluster_support::BROKER,
        "--redis",
        &redis,
    ];
    let (code, out, err) = run(farm()
        .args(args(&f.output(), &cluster))
        .env("FARM_KEY", cluster_support::KEY));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    assert!(err.contains("RabbitMQ"), "it ran on the cluster:\n{err}");
    assert_eq!(
        results_without_timing(&f.output()),
        want,
        "the cluster run stops after the same match with the same results"
    );
    let stopped = json(&f.output().join("stopped.json"));
    assert_eq!(stopped["matches_played"], played as u64, "{stopped}");
    assert_eq!(ranking(&f.output()), ranking(&embedded));
    // The helpers find the tournament's queue name in the coordinator's log.
    std::fs::write(f.dir.path().join("coordinator.err"), &err).unwrap();
    f.assert_queues_gone();
}
