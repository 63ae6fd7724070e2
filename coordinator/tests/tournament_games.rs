//! The tournament engine plays every game: `farm run --game qianwang` and `farm sprt --game
//! qianwang` end to end with the bundled 钳王 training bots (JavaScript, each match in the
//! sandboxed engine child): a rated tournament with both intervals whose every replay
//! re-verifies on `--resume`, an SPRT that accepts H1 for the search bot against the random one
//! and never for a bot against a renamed copy of itself (a pair is one seed with both colours),
//! a SIGKILLed test resumed to the same counts, the same test on the cluster, and refusals that
//! say what is wrong; and `--game nim` with the Nim bots (C++ sources, faults counted).

mod cluster_support;
mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const SEARCH: &str = "Search=bots/qianwang/search.js";
const GREEDY: &str = "Greedy=bots/qianwang/greedy.js";
const RANDOM: &str = "Random=bots/qianwang/random.js";

/// `farm` without the Bomberman clock a cluster scenario puts in the environment.
fn farm() -> Command {
    let mut c = common::farm();
    c.env_remove("FARM_TURN_MS");
    c
}

fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// A random bot that burns CPU in every turn and plays exactly as `random.js` (its draws are
/// the seeded `game.random`, reseeded each turn): slow enough to kill a test mid-way.
fn slow_random(dir: &Path) -> String {
    let path = dir.join("slow-random.js");
    std::fs::write(
        &path,
        "module.exports = function onTurn(me, opponent, game) {\n\
         \x20 let x = 0;\n\
         \x20 for (let i = 0; i < 400000; i++) { x = (x + i) % 7; }\n\
         \x20 const moves = game.legalMoves;\n\
         \x20 return moves[Math.floor(game.random() * moves.length)];\n\
         };\n",
    )
    .unwrap();
    format!("Random={}", path.display())
}

fn sprt_args(new: &str, base: &str, out: &Path, extra: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = ["sprt", "--game", "qianwang", "--new", new, "--base", base]
        .iter()
        .chain(extra)
        .map(|s| s.to_string())
        .collect();
    v.extend(["--output".to_string(), out.display().to_string()]);
    v
}

/// What must be equal between two runs of one test.
fn key(v: &Value) -> Value {
    serde_json::json!({
        "verdict": v["verdict"], "counts": v["pentanomial"]["counts"], "llr": v["llr"],
        "pairs_played": v["pairs_played"], "elo": v["elo"],
    })
}

#[test]
fn a_rated_tournament_of_the_training_bots_verifies_every_game_on_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("ladder");
    let args: Vec<String> = [
        "run",
        "--game",
        "qianwang",
        "--bots",
        SEARCH,
        GREEDY,
        RANDOM,
        "Search#2=bots/qianwang/search.js",
        "--anchor",
        "Random",
        "--seeds",
        "4",
        "--seed",
        "9",
        "--workers",
        "2",
        "--output",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([out.display().to_string()])
    .collect();
    let (code, stdout, err) = common::run(farm().args(&args));
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{err}");
    // 6 pairs of bots × 4 seeds × both colours.
    let results = json(&out.join("results.json"));
    assert_eq!(results.as_array().unwrap().len(), 48);
    let bt = json(&out.join("bt.json"));
    let rating = |name: &str| {
        bt["ratings"][name]
            .as_f64()
            .unwrap_or_else(|| panic!("{name} in {bt:#}"))
    };
    assert_eq!(rating("Random"), 0.0, "the anchor");
    assert!(
        rating("Search") > rating("Greedy") && rating("Greedy") > rating("Random"),
        "{bt:#}"
    );
    assert!(
        (rating("Search") - rating("Search#2")).abs() < 1e-6,
        "a renamed copy rates alike: {bt:#}"
    );
    assert!(bt["ci95"]["Search"].is_array(), "Wald intervals: {bt:#}");
    assert!(
        bt["bootstrap"]["ci95"]["Search"].is_array(),
        "bootstrap intervals: {bt:#}"
    );
    let summary = std::fs::read_to_string(out.join("汇总.md")).unwrap();
    assert!(summary.contains("胜 1 分，和 0.5 分，负 0 分"), "{summary}");
    assert!(
        !summary.contains("生存分"),
        "no Bomberman wording:\n{summary}"
    );
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        page.contains("a win 1, a draw 0.5"),
        "report.html worded for 钳王"
    );
    assert!(stdout.contains("Search#2"), "{stdout}");

    // Resuming re-verifies every saved game (nothing to play); a changed record is refused.
    let mut resume = args.clone();
    resume.push("--resume".into());
    let (code, _, err) = common::run(farm().args(&resume));
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        json(&out.join("results.json")),
        results,
        "the resume changed nothing"
    );
    let replay = out.join("replays/00005.json.gz");
    let text = common::replay_text(&replay);
    let mut record: Value = serde_json::from_str(&text).unwrap();
    let plies = record["plies"].as_array_mut().unwrap();
    plies.truncate(plies.len() - 1);
    std::fs::write(&replay, record.to_string()).unwrap();
    let (code, _, err) = common::run(farm().args(&resume));
    assert_ne!(code, 0, "a changed record must stop the resume");
    assert!(err.contains("saved match 5"), "names the match: {err}");

    // `farm report` rebuilds the same views from the log, and the viewer index: a missing data
    // file (7), or one older than its record (5, just restored), is written again from the
    // re-verified record.
    std::fs::write(&replay, text).unwrap();
    std::fs::remove_file(out.join("replays/00007.js")).unwrap();
    let (code, stdout, err) = common::run(farm().args(["report", out.to_str().unwrap()]));
    assert_eq!(code, 0, "{err}");
    assert!(stdout.contains("48 of 48 matches"), "{stdout}");
    assert!(
        stdout.contains("(48 of 48 matches openable); 2 replays verified"),
        "{stdout}"
    );
    assert!(out.join("replays/00007.js").is_file());
}

#[test]
fn search_is_accepted_better_than_random_and_a_killed_test_resumes_to_the_same_counts() {
    let tmp = tempfile::tempdir().unwrap();
    let slow = slow_random(tmp.path());
    let h1 = [
        "--elo0",
        "0",
        "--elo1",
        "150",
        "--seed",
        "3",
        "--max-pairs",
        "40",
        "--workers",
        "1",
    ];
    let clean = tmp.path().join("clean");
    let (code, stdout, err) = common::run(farm().args(sprt_args(SEARCH, &slow, &clean, &h1)));
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{err}");
    let v = json(&clean.join("sprt.json"));
    assert_eq!(v["verdict"], "H1 accepted", "{v:#}");
    let pairs = v["pairs_played"].as_u64().unwrap();
    assert!((3..40).contains(&pairs), "{v:#}");

    let killed = tmp.path().join("killed");
    let mut child = farm()
        .args(sprt_args(SEARCH, &slow, &killed, &h1))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let lines = |d: &Path| {
        std::fs::read_to_string(d.join("results.jsonl")).map_or(0, |t| t.lines().count())
    };
    let until = Instant::now() + Duration::from_secs(300);
    while lines(&killed) < 3 && Instant::now() < until && child.try_wait().unwrap().is_none() {
        std::thread::sleep(Duration::from_millis(5));
    }
    let was_running = child.try_wait().unwrap().is_none();
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(was_running, "the test ended before it could be killed");
    assert!(
        !killed.join("sprt.json").exists(),
        "killed before the verdict"
    );
    let mut resume = sprt_args(SEARCH, &slow, &killed, &h1);
    resume.push("--resume".into());
    let (code, _, err) = common::run(farm().args(&resume));
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        key(&json(&killed.join("sprt.json"))),
        key(&v),
        "resumed test differs"
    );
}

#[test]
fn a_bot_against_a_renamed_copy_of_itself_is_never_accepted_better() {
    let tmp = tempfile::tempdir().unwrap();
    for (bot, seed) in [
        ("bots/qianwang/greedy.js", "5"),
        ("bots/qianwang/random.js", "6"),
    ] {
        let out = tmp.path().join(seed);
        let (new, base) = (format!("Me={bot}"), format!("Copy={bot}"));
        let extra = [
            "--elo0",
            "0",
            "--elo1",
            "50",
            "--seed",
            seed,
            "--max-pairs",
            "30",
        ];
        let (code, stdout, err) = common::run(farm().args(sprt_args(&new, &base, &out, &extra)));
        assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{err}");
        let v = json(&out.join("sprt.json"));
        assert_ne!(v["verdict"], "H1 accepted", "{v:#}");
        // Both colours on one seed: each pair is one win each, or two draws.
        let counts = v["pentanomial"]["counts"].as_array().unwrap();
        let even = counts[2].as_u64().unwrap();
        assert_eq!(
            even,
            v["pairs_counted"].as_u64().unwrap(),
            "every pair even: {v:#}"
        );
    }
}

#[test]
fn refusals_name_what_is_wrong_and_write_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("x");
    let o = out.to_str().unwrap();
    let broken = tmp.path().join("broken.js");
    std::fs::write(&broken, "module.exports = function onTurn(me, { ;\n").unwrap();
    let broken = format!("Broken={}", broken.display());
    let base = [
        "run", "--game", "qianwang", "--anchor", "Random", "--output", o,
    ];
    for (extra, needle) in [
        (vec!["--bots", SEARCH, RANDOM, "--sizes", "3"], "--sizes 2"),
        (
            vec!["--bots", SEARCH, RANDOM, "--turn-ms", "100"],
            "--turn-ms",
        ),
        (vec!["--bots", &broken, RANDOM], "\"Broken\""),
        (vec!["--formal"], "--formal"),
    ] {
        let mut args: Vec<&str> = base.to_vec();
        args.extend(&extra);
        let (code, _, err) = common::run(farm().args(&args));
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!out.exists(), "{args:?}: nothing written");
    }
}

#[test]
fn on_the_cluster_the_same_seed_gives_the_same_verdict_and_results() {
    let Some(_serial) = cluster_support::setup() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let h1 = [
        "--elo0",
        "0",
        "--elo1",
        "150",
        "--seed",
        "3",
        "--max-pairs",
        "40",
    ];
    let embedded = tmp.path().join("embedded");
    let (code, stdout, err) = common::run(farm().args(sprt_args(SEARCH, RANDOM, &embedded, &h1)));
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{err}");
    let want = json(&embedded.join("sprt.json"));

    let f = cluster_support::Farm::new("qianwang", 14);
    let _worker = f.worker("w1", 2);
    let mut args = sprt_args(SEARCH, RANDOM, &f.output(), &h1);
    args.extend([
        "--broker".into(),
        cluster_support::BROKER.into(),
        "--redis".into(),
        f.redis_url(),
    ]);
    let (code, stdout, err) = common::run(farm().args(&args).env("FARM_KEY", cluster_support::KEY));
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{err}");
    assert!(err.contains("RabbitMQ"), "it ran on the cluster:\n{err}");
    assert_eq!(
        key(&json(&f.output().join("sprt.json"))),
        key(&want),
        "cluster differs from embedded"
    );
    assert_eq!(
        common::results_without_timing(&f.output()),
        common::results_without_timing(&embedded),
        "the same games"
    );
    std::fs::write(f.dir.path().join("coordinator.err"), &err).unwrap();
    f.assert_queues_gone();
}

#[test]
fn nim_is_rated_and_tested_by_the_same_engine_faults_included() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("nim");
    let (code, stdout, err) = common::run(farm().args([
        "run",
        "--game",
        "nim",
        "--bots",
        "Xor=bots/nim/xor.cpp",
        "First=bots/nim/first.cpp",
        "Cheat=bots/nim/cheat.cpp",
        "--anchor",
        "First",
        "--seeds",
        "4",
        "--seed",
        "2",
        "--output",
        out.to_str().unwrap(),
    ]));
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{err}");
    let bt = json(&out.join("bt.json"));
    let rating = |name: &str| bt["ratings"][name].as_f64().unwrap();
    assert!(rating("Xor") > 0.0 && rating("Cheat") < 0.0, "{bt:#}");
    // The cheat's illegal move is its fault, in every game it played (3 pairs x 2 seats... x 4).
    let summary = std::fs::read_to_string(out.join("汇总.md")).unwrap();
    assert!(
        summary.contains("|2|Cheat|16|0.000|0.0%|0.0%|16|"),
        "{summary}"
    );
    let (code, stdout, _) = common::run(farm().args(["verify", out.to_str().unwrap()]));
    assert_eq!(code, 0);
    assert!(stdout.contains("24 of 24 replays"), "{stdout}");

    let sprt = tmp.path().join("sprt");
    let extra = [
        "--elo0",
        "0",
        "--elo1",
        "100",
        "--seed",
        "4",
        "--max-pairs",
        "60",
    ];
    let args = [
        "sprt",
        "--game",
        "nim",
        "--new",
        "Xor=bots/nim/xor.cpp",
        "--base",
        "First=bots/nim/first.cpp",
    ];
    let (code, stdout, err) = common::run(
        farm()
            .args(args.iter().chain(&extra))
            .args(["--output", sprt.to_str().unwrap()]),
    );
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{err}");
    assert_eq!(json(&sprt.join("sprt.json"))["verdict"], "H1 accepted");
}

#[test]
fn until_settled_stops_a_qianwang_tournament_at_a_whole_pair() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("settled");
    let mut args: Vec<String> = [
        "run",
        "--game",
        "qianwang",
        "--bots",
        SEARCH,
        GREEDY,
        RANDOM,
        "--anchor",
        "Random",
        "--seeds",
        "40",
        "--seed",
        "1",
        "--until-settled",
        "--workers",
        "2",
        "--output",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(out.display().to_string());
    let (code, stdout, err) = common::run(farm().args(&args));
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{err}");
    let stopped = json(&out.join("stopped.json"));
    let after = stopped["after"].as_u64().unwrap();
    assert!(
        after < 240,
        "settled before the end of the schedule: {stopped:#}"
    );
    assert_eq!(
        after % 2,
        0,
        "a pair is one seed with both colours, never cut: {stopped:#}"
    );
    assert_eq!(
        json(&out.join("results.json")).as_array().unwrap().len() as u64,
        after
    );
    let bt = json(&out.join("bt.json"));
    let r = |n: &str| bt["ratings"][n].as_f64().unwrap();
    assert!(
        r("Search") > r("Greedy") && r("Greedy") > r("Random"),
        "{bt:#}"
    );
    assert!(
        stdout.contains("stopped early: ranking settled"),
        "{stdout}"
    );
}
