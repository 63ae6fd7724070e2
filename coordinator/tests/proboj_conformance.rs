//! `farm proboj` against the official proboj runner: the fixture game in `proboj_fixture/`
//! (stock layout: `./server` in the start folder, `"game_root": "."`, players started as
//! contestants write them, `../players/x/player.py` relative to the game folder and a
//! `#!/bin/env python` script) replays recorded server sessions; `expected/` holds what the
//! official runner (Go, `runner/` v23.1004, built from source, see `record.sh`) left for them:
//! every answer (in the server's log), every log line, the observer stream and score.json.
//! farm must leave the same, with its own extra `[proboj] ...` lines allowed in the logs.

mod proboj_support;

use std::path::Path;
use std::process::{Command, Output};

use proboj_support::conformance::{assert_as_official, fixture_copy};
use proboj_support::show;

/// The environment the official runner was recorded with, and a farm variable players must
/// not see.
/// Bounded: a runner that leaves a command unanswered (as farm once did with `READ PLAYER`
/// without a name) hangs the recorded server, which waits for every answer.
fn run_farm(dir: &Path, extra: &[&str]) -> Output {
    Command::new("timeout")
        .args(["-s", "INT", "120"])
        .arg(env!("CARGO_BIN_EXE_farm"))
        .current_dir(dir)
        .args(["proboj", "config.json", "games.json"])
        .args(extra)
        .env_clear()
        .env(
            "PATH",
            format!(
                "{}/bin:/usr/local/bin:/usr/bin:/bin:/opt/probe",
                dir.display()
            ),
        )
        .env("LANG", "C.UTF-8")
        .env("FARM_LOG", "warn")
        .env("FARM_PROBE_SECRET", "must-not-leak")
        .output()
        .unwrap()
}

fn conforms(extra: &[&str]) {
    let dir = fixture_copy();
    let out = run_farm(dir.path(), extra);
    assert!(out.status.success(), "{}", show(&out));
    for game in ["hra", "hra2"] {
        assert_as_official(dir.path(), game);
    }
    // The summary keeps the exact fractions (score.json holds the official runner's integers).
    let summary = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert!(summary.contains("| echo | 766.666 | 2 |"), "{summary}");
    assert!(summary.contains("| crash | -25.4 | 2 |"), "{summary}");
}

#[test]
fn recorded_sessions_answer_and_leave_files_as_the_official_runner() {
    conforms(&[]);
}

#[test]
fn recorded_sessions_conform_without_fair_mode_too() {
    conforms(&["--no-fair"]);
}
