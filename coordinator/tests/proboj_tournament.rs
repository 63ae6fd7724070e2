//! The tournament engine plays proboj: `farm run --game proboj` and `farm sprt --game proboj`
//! of the bundled example game (`bots/proboj`: a Python server, Python players), the players of
//! its config.json as entrants and the `args` of its games.json as maps. A rated tournament over
//! every map stops early with `--until-settled`, leaves each game's folder as the official runner
//! does (score.json equal to the result's points, the observer, the logs), resumes only over
//! records that still match, and gives the same results on the cluster; an SPRT accepts the
//! stronger player and never a player against a renamed copy; a SIGKILLed run resumes to the
//! results of an unbroken one; bad input is refused by name.

mod cluster_support;
mod common;

use std::io::Write;
use std::path::Path;

use serde_json::Value;

/// `farm` without the Bomberman clock the common helper (and a cluster scenario) sets.
fn farm() -> std::process::Command {
    let mut c = common::farm();
    c.env_remove("FARM_TURN_MS");
    c
}

fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// The settled tournament of the three example players over the three maps.
fn settled_run(out: &Path) -> Vec<String> {
    [
        "run",
        "--game",
        "proboj",
        "--workspace",
        "bots/proboj",
        "--bots",
        "one",
        "two",
        "three",
        "--anchor",
        "one",
        "--sizes",
        "2",
        "3",
        "--seeds",
        "4",
        "--seed",
        "11",
        "--until-settled",
        "--workers",
        "2",
        "--output",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([out.display().to_string()])
    .collect()
}

fn gzip_to(path: &Path, text: &str) {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(text.as_bytes()).unwrap();
    std::fs::write(path, gz.finish().unwrap()).unwrap();
}

#[test]
fn a_proboj_tournament_over_every_map_settles_and_resumes_only_over_matching_records() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let (code, stdout, err) = common::run(farm().args(settled_run(&out)));
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{err}");
    assert!(stdout.contains("stopped early"), "{stdout}");
    let rows = json(&out.join("results.json"));
    let rows = rows.as_array().unwrap();
    assert!(
        rows.len() < 144,
        "it stopped before the end: {}",
        rows.len()
    );
    let maps: std::collections::BTreeSet<&str> = rows
        .iter()
        .map(|r| r["result"]["map"].as_str().unwrap())
        .collect();
    assert_eq!(
        maps.into_iter().collect::<Vec<_>>(),
        ["rounds=2 mode=pause", "rounds=3", "rounds=5"],
        "every map of games.json is played"
    );
    for row in rows {
        let n = row["match"].as_u64().unwrap();
        let r = &row["result"];
        // The game folder as the official runner leaves it, its score.json the result's points.
        let folder = out.join("games").join(format!("{n:05}"));
        let score = json(&folder.join("score.json"));
        for (name, points) in r["names"]
            .as_array()
            .unwrap()
            .iter()
            .zip(r["points"].as_array().unwrap())
        {
            assert_eq!(
                score[name.as_str().unwrap()].as_f64(),
                points.as_f64(),
                "match {n}: {score}"
            );
        }
        assert!(
            folder.join("observer.gz").is_file(),
            "match {n}: its observer file"
        );
        assert!(
            folder.join("logs").join("__server.gz").is_file(),
            "match {n}: its server log"
        );
    }
    // The example players' strength is their --value: three > two > one.
    let bt = json(&out.join("bt.json"));
    let rating = |p: &str| {
        bt["ratings"][p]
            .as_f64()
            .unwrap_or_else(|| panic!("{bt:#}"))
    };
    assert!(
        rating("three") > rating("two") && rating("two") > rating("one"),
        "{bt:#}"
    );
    let summary = std::fs::read_to_string(out.join("汇总.md")).unwrap();
    assert!(summary.contains("three"), "{summary}");

    // farm verify reads a record and says it is not re-played.
    let replay = out.join("replays").join("00001.json.gz");
    let (code, stdout, err) = common::run(farm().arg("verify").arg(&replay));
    assert_eq!(code, 0, "{stdout}{err}");
    assert!(stdout.contains("not re-played"), "{stdout}");

    // A resume re-checks every record; a record that no longer matches its result is refused.
    let (code, stdout, err) = common::run(farm().args(settled_run(&out)).arg("--resume"));
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{err}");
    let text = common::replay_text(&replay);
    let tampered = text.replacen("\"scores\":[[\"", "\"scores\":[[\"x", 1);
    assert_ne!(tampered, text);
    gzip_to(&replay, &tampered);
    let (code, _, err) = common::run(farm().args(settled_run(&out)).arg("--resume"));
    assert_ne!(code, 0, "a changed record is refused: {err}");
    assert!(err.contains("saved match 1"), "{err}");
}

#[test]
fn sprt_accepts_the_stronger_player_and_never_a_renamed_copy() {
    let tmp = tempfile::tempdir().unwrap();
    let sprt = |new: &str, base: &str, workspace: &str, out: &Path| {
        let args = [
            "sprt",
            "--game",
            "proboj",
            "--workspace",
            workspace,
            "--new",
            new,
            "--base",
            base,
            "--elo0",
            "0",
            "--elo1",
            "150",
            "--seed",
            "3",
            "--max-pairs",
            "12",
            "--output",
        ];
        let (code, stdout, err) = common::run(farm().args(args).arg(out));
        assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{err}");
        json(&out.join("sprt.json"))
    };
    let v = sprt("three", "one", "bots/proboj", &tmp.path().join("better"));
    assert_eq!(v["verdict"], "H1 accepted", "{v:#}");

    // A workspace whose config has a second name for player one's command.
    let ws = tmp.path().join("copy");
    std::fs::create_dir(&ws).unwrap();
    let player = "python3 bots/proboj/players/python/player.py --value 1";
    let config = serde_json::json!({
        "server": "python3 bots/proboj/server.py",
        "players": {
            "me": {"command": player, "language": "python"},
            "copy": {"command": player, "language": "python"},
        },
        "timeout": {"python": 5},
        "game_root": "unused",
    });
    std::fs::write(ws.join("config.json"), config.to_string()).unwrap();
    std::fs::write(
        ws.join("games.json"),
        r#"[{"gamefolder": "a", "players": ["me", "copy"], "args": "rounds=3"},
            {"gamefolder": "b", "players": ["me", "copy"], "args": "rounds=4"}]"#,
    )
    .unwrap();
    let v = sprt(
        "me",
        "copy",
        ws.to_str().unwrap(),
        &tmp.path().join("copy-out"),
    );
    assert_ne!(v["verdict"], "H1 accepted", "{v:#}");
    let counts = v["pentanomial"]["counts"].as_array().unwrap();
    assert_eq!(
        counts[2].as_u64(),
        v["pairs_counted"].as_u64(),
        "every pair even: {v:#}"
    );
}

#[test]
fn refusals_name_what_is_wrong_and_write_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("x");
    let o = out.to_str().unwrap();
    let base = [
        "run", "--game", "proboj", "--anchor", "one", "--sizes", "2", "--output", o,
    ];
    for (extra, needle) in [
        (vec!["--bots", "one", "two"], "--workspace DIR"),
        (
            vec!["--workspace", "bots/proboj", "--bots", "one", "nobody"],
            "\"nobody\"",
        ),
        (
            vec!["--workspace", "bots/proboj", "--bots", "one=x.cpp", "two"],
            "by its name",
        ),
        (
            vec![
                "--workspace",
                "bots/proboj",
                "--bots",
                "one",
                "two",
                "--turn-ms",
                "100",
            ],
            "config.json's `timeout`",
        ),
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
fn on_the_cluster_a_settled_proboj_tournament_gives_the_same_results() {
    let Some(_serial) = cluster_support::setup() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let embedded = tmp.path().join("embedded");
    let (code, stdout, err) = common::run(farm().args(settled_run(&embedded)));
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{err}");

    let f = cluster_support::Farm::new("probojrun", 14);
    let _worker = f.worker("w1", 2);
    let mut args = settled_run(&f.output());
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
        common::results_without_timing(&f.output()),
        common::results_without_timing(&embedded),
        "the same games, cut at the same match"
    );
    let first = f.output().join("games").join("00001");
    assert_eq!(
        std::fs::read(first.join("score.json")).unwrap(),
        std::fs::read(embedded.join("games").join("00001").join("score.json")).unwrap(),
        "the worker's game folder comes back"
    );
    std::fs::write(f.dir.path().join("coordinator.err"), &err).unwrap();
    f.assert_queues_gone();
}

#[test]
fn a_killed_proboj_tournament_resumes_to_the_results_of_an_unbroken_one() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |out: &Path| -> Vec<String> {
        let mut v = settled_run(out);
        v.retain(|a| a != "--until-settled");
        if let Some(i) = v.iter().position(|a| a == "--seeds") {
            v[i + 1] = "6".into();
        }
        v
    };
    let whole = tmp.path().join("whole");
    let (code, stdout, err) = common::run(farm().args(run(&whole)));
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{err}");

    let killed = tmp.path().join("killed");
    let mut child = farm()
        .args(run(&killed))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let lines = |dir: &Path| {
        std::fs::read_to_string(dir.join("results.jsonl")).map_or(0, |t| t.lines().count())
    };
    let until = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while lines(&killed) < 10
        && std::time::Instant::now() < until
        && child.try_wait().unwrap().is_none()
    {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let was_running = child.try_wait().unwrap().is_none();
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(was_running, "the run ended before it could be killed");
    let (code, stdout, err) = common::run(farm().args(run(&killed)).arg("--resume"));
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{err}");
    assert_eq!(
        common::results_without_timing(&killed),
        common::results_without_timing(&whole),
        "the same games"
    );
    assert_eq!(
        std::fs::read_dir(killed.join("games")).unwrap().count(),
        std::fs::read_dir(whole.join("games")).unwrap().count(),
        "one game folder per match"
    );
}
