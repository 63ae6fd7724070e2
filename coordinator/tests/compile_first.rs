//! `farm run` compiles every entrant before the tournament (as the reference run.py does): a
//! source that does not compile stops the run before any match with the compiler's message
//! naming the bot and leaves no output folder; `--allow-compile-failures` plays it (eliminated
//! at turn 0) and every view says so at the top; a host that cannot compile and a program that
//! is not executable are refused as such; a good roster is unaffected. Real `farm`, real g++,
//! real bots; tiny runs (size 2, one seed).

mod common;

use std::path::{Path, PathBuf};

use common::{farm, run};
use coordinator::run::checkpoint;
use coordinator::run::outputs::Live;

const BASE: &str = "Base=bots/bomberman/baseline.cpp";
const RANDOM: &str = "Random=bots/bomberman/random.cpp";
/// A marker the compiler's message must quote back.
const MARKER: &str = "undeclared_farm_symbol";

fn broken_source(dir: &Path) -> PathBuf {
    let path = dir.join("broken.cpp");
    std::fs::write(&path, format!("int main() {{ return {MARKER}; }}\n")).unwrap();
    path
}

fn run_args(bots: &[String], out: &Path, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = vec!["run".into(), "--bots".into()];
    a.extend(bots.iter().cloned());
    a.extend(
        [
            "--anchor",
            "Base",
            "--sizes",
            "2",
            "--seeds",
            "1",
            "--seed",
            "7",
            "--workers",
            "2",
            "--output",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    a.push(out.display().to_string());
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The run's views rebuilt in-process from its log, as the coordinator keeps them.
fn live_of(dir: &Path, names: &[&str]) -> Live {
    let identity = read_json(&dir.join("identity.json"));
    let sizes: Vec<i64> = identity["sizes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    let mut live = Live::new(
        names.iter().map(|s| s.to_string()).collect(),
        sizes,
        "Base".to_string(),
    );
    // The run's own log: every row is inside its schedule, whatever that schedule's length.
    let rec = checkpoint::recover(&dir.join(checkpoint::LOG_NAME), u64::MAX).unwrap();
    for row in &rec.rows {
        live.add(row);
    }
    let views = tempfile::tempdir().unwrap();
    let failures = "compile_failures.json";
    if dir.join(failures).is_file() {
        std::fs::copy(dir.join(failures), views.path().join(failures)).unwrap();
    }
    live.write_report(views.path()).unwrap();
    live
}

#[test]
fn a_source_that_does_not_compile_stops_the_run_before_any_match() {
    let tmp = tempfile::tempdir().unwrap();
    let broken = broken_source(tmp.path());
    let out = tmp.path().join("o");
    let bots = vec![BASE.to_string(), format!("Broken={}", broken.display())];
    let (code, stdout, err) = run(farm().args(run_args(&bots, &out, &[])));
    assert_ne!(code, 0, "accepted\nstdout:\n{stdout}\nstderr:\n{err}");
    assert!(
        err.contains(&format!(
            "bot \"Broken\" ({}) does not compile:",
            broken.display()
        )),
        "{err}"
    );
    assert!(err.contains(MARKER) && err.contains("error"), "{err}");
    assert!(err.contains("--allow-compile-failures"), "{err}");
    assert!(!err.contains("Base"), "blames a good bot: {err}");
    // Nothing was written: no results, no replays, not even the folder (a fresh run may use it).
    assert!(
        !out.exists(),
        "the refused run left {} behind",
        out.display()
    );

    // The same refusal when the bot breaks between planning and running.
    let good = tmp.path().join("good.cpp");
    std::fs::copy(common::repo().join("bots/bomberman/random.cpp"), &good).unwrap();
    let bots = vec![BASE.to_string(), format!("Broken={}", good.display())];
    let (code, _, err) = run(farm().args(run_args(&bots, &out, &["--plan-only"])));
    assert_eq!(code, 0, "{err}");
    let planned: Vec<_> = std::fs::read_dir(&out).unwrap().collect();
    std::fs::copy(&broken, &good).unwrap();
    let (code, _, err) = run(farm().args(run_args(&bots, &out, &["--resume"])));
    assert_ne!(code, 0);
    assert!(
        err.contains("bot \"Broken\"") && err.contains(MARKER),
        "{err}"
    );
    assert!(!out.join(checkpoint::LOG_NAME).exists());
    assert!(!out.join("replays").exists());
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), planned.len());
}

#[test]
fn a_program_that_is_not_executable_or_a_host_that_cannot_compile_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    let plain = tmp.path().join("plain-bot");
    std::fs::write(&plain, "#!/bin/sh\necho hi\n").unwrap();
    let bots = vec![BASE.to_string(), format!("Plain={}", plain.display())];
    let (code, _, err) = run(farm().args(run_args(&bots, &out, &["--allow-compile-failures"])));
    assert_ne!(code, 0);
    assert!(
        err.contains("bot \"Plain\"") && err.contains("not an executable file"),
        "{err}"
    );
    assert!(!out.exists());

    // A compile cache that cannot be made: the host's problem, with what to do about it.
    let not_a_dir = tmp.path().join("file");
    std::fs::write(&not_a_dir, "").unwrap();
    let bots = vec![BASE.to_string(), RANDOM.to_string()];
    let (code, _, err) = run(farm().args(run_args(
        &bots,
        &out,
        &[
            "--allow-compile-failures",
            "--cache-dir",
            &not_a_dir.display().to_string(),
        ],
    )));
    assert_ne!(code, 0);
    assert!(
        err.contains("problem of the host, not of a bot") && err.contains("to fix:"),
        "{err}"
    );
    assert!(!out.exists());
}

#[test]
fn allowed_compile_failures_play_and_every_view_says_so_at_the_top() {
    let tmp = tempfile::tempdir().unwrap();
    let broken = broken_source(tmp.path());
    let out = tmp.path().join("o");
    let bots = vec![
        BASE.to_string(),
        RANDOM.to_string(),
        format!("Broken={}", broken.display()),
    ];
    let args = run_args(&bots, &out, &["--allow-compile-failures"]);
    let (code, stdout, err) = run(farm().args(&args));
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{err}");
    assert!(
        err.contains("warning: --allow-compile-failures") && err.contains(MARKER),
        "{err}"
    );
    assert!(
        stdout.contains("note: --allow-compile-failures: Broken did not compile"),
        "{stdout}"
    );

    let report = std::fs::read_to_string(out.join("汇总.md")).unwrap();
    let top: String = report.lines().take(3).collect::<Vec<_>>().join("\n");
    assert!(
        top.contains("--allow-compile-failures") && top.contains("Broken"),
        "not at the top:\n{report}"
    );
    let bt = read_json(&out.join("bt.json"));
    assert_eq!(bt["did_not_compile"], serde_json::json!(["Broken"]));
    let failures = read_json(&out.join("compile_failures.json"));
    assert_eq!(failures[0]["name"], "Broken");
    assert!(failures[0]["message"].as_str().unwrap().contains(MARKER));
    let identity = read_json(&out.join("identity.json"));
    assert_eq!(identity["scoring_code"]["did_not_compile"], "[\"Broken\"]");

    // Today's behaviour: Broken plays, is eliminated at turn 0, and its matches do not count.
    let results = read_json(&out.join("results.json"));
    let rows = results.as_array().unwrap();
    assert!(!rows.is_empty());
    for row in rows {
        let r = &row["result"];
        let with_broken = r["names"].as_array().unwrap().iter().any(|n| n == "Broken");
        assert_eq!(r["valid_for_scoring"], !with_broken, "{r}");
    }
    let live = live_of(&out, &["Base", "Random", "Broken"]);
    assert_eq!(live.verdict(), None, "Base vs Random games count");

    // Resuming needs the same setting: without the flag it is refused and says why.
    let no_flag = run_args(&bots, &out, &["--resume"]);
    let (code, _, err) = run(farm().args(&no_flag));
    assert_ne!(code, 0);
    assert!(err.contains("add the flag again to resume"), "{err}");
    let mut again = args.clone();
    again.push("--resume".into());
    let (code, _, err) = run(farm().args(&again));
    assert_eq!(code, 0, "{err}");
    // Now fixed: the saved matches were played without it, so the resume is refused.
    std::fs::copy(common::repo().join("bots/bomberman/random.cpp"), &broken).unwrap();
    let (code, _, err) = run(farm().args(&again));
    assert_ne!(code, 0);
    assert!(err.contains("resume rejected"), "{err}");
}

#[test]
fn a_run_where_no_game_counts_has_a_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    let broken = broken_source(tmp.path());
    let out = tmp.path().join("o");
    let bots = vec![BASE.to_string(), format!("Broken={}", broken.display())];
    let (code, stdout, err) =
        run(farm().args(run_args(&bots, &out, &["--allow-compile-failures"])));
    assert!(out.join("汇总.md").is_file(), "{code}\n{stdout}\n{err}");
    let live = live_of(&out, &["Base", "Broken"]);
    let why = live.verdict().expect("every game is invalid: a verdict");
    assert!(
        why.contains("none of the 2 games counts") && why.contains("Broken"),
        "{why}"
    );
}

/// Once `drive` (run/execute.rs) exits non-zero on `Live::verdict`, this holds.
#[test]
fn a_run_where_no_game_counts_exits_non_zero() {
    let tmp = tempfile::tempdir().unwrap();
    let broken = broken_source(tmp.path());
    let out = tmp.path().join("o");
    let bots = vec![BASE.to_string(), format!("Broken={}", broken.display())];
    let (code, _, err) = run(farm().args(run_args(&bots, &out, &["--allow-compile-failures"])));
    assert_ne!(code, 0);
    assert!(err.contains("none of the 2 games counts"), "{err}");
}

#[test]
fn a_good_roster_is_unaffected_by_the_check_and_the_flag() {
    let tmp = tempfile::tempdir().unwrap();
    let bots = vec![BASE.to_string(), RANDOM.to_string()];
    let plain = tmp.path().join("plain");
    let flagged = tmp.path().join("flagged");
    for (out, extra) in [
        (&plain, vec![]),
        (&flagged, vec!["--allow-compile-failures"]),
    ] {
        let (code, stdout, err) = run(farm().args(run_args(&bots, out, &extra)));
        assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{err}");
        assert!(
            !stdout.contains("note:") && !err.contains("--allow-compile-failures:"),
            "{err}"
        );
        assert!(!out.join("compile_failures.json").exists());
        let report = std::fs::read_to_string(out.join("汇总.md")).unwrap();
        assert!(!report.contains("compile"), "{report}");
        assert!(read_json(&out.join("bt.json"))
            .get("did_not_compile")
            .is_none());
    }
    // The flag alone changes no result, so it is not part of the identity.
    assert_eq!(
        read_json(&plain.join("identity.json")),
        read_json(&flagged.join("identity.json"))
    );
    assert_eq!(
        common::results_without_timing(&plain),
        common::results_without_timing(&flagged)
    );
}
