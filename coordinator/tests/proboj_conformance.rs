//! `farm proboj` against the official proboj runner: the fixture game in `proboj_fixture/`
//! (stock layout: `./server` in the start folder, `"game_root": "."`, players started as
//! contestants write them, `../players/x/player.py` relative to the game folder and a
//! `#!/bin/env python` script) replays recorded server sessions; `expected/` holds what the
//! official runner (Go, `runner/` v23.1004, built from source, see `record.sh`) left for them:
//! every answer (in the server's log), every log line, the observer stream and score.json.
//! farm must leave the same, with its own extra `[proboj] ...` lines allowed in the logs.
//! `hra` and `hra2`: a crashing player, fractional scores, the observer stream, odd headers, the
//! environment (`PATH`, locale and `PWD`, nothing else); `hra3`: PAUSE of a paused player and
//! RESUME of a running one (ERROR), READs and a write while a player runs with its stdout and
//! stdin closed (ERROR, then DIED once it exited), a read timeout (DIED, and the official
//! runner's log lines for it), KILL of a paused player, and a player writing into its own
//! folder (it reads its writes back within the game); `hra4`: a player whose program was never
//! built (it cannot start: DIED to TO PLAYER and READ, OK to PAUSE, RESUME and KILL, and the
//! official runner's log lines), beside a config player no game uses whose program is missing
//! too (the stock foyer config's `windows`).

mod proboj_support;

use std::path::Path;
use std::process::{Command, Output};

use proboj_support::conformance::{assert_as_official, fixture_copy, fixture_copy_into};
use proboj_support::show;

/// The environment the official runner was recorded with, and a farm variable players must
/// not see.
/// Bounded: a runner that leaves a command unanswered (as farm once did with `READ PLAYER`
/// without a name) hangs the recorded server, which waits for every answer.
fn run_farm(dir: &Path, extra: &[&str]) -> Output {
    run_farm_games(dir, "games.json", extra)
}

fn run_farm_games(dir: &Path, games: &str, extra: &[&str]) -> Output {
    Command::new("timeout")
        .args(["-s", "INT", "120"])
        .arg(env!("CARGO_BIN_EXE_farm"))
        .current_dir(dir)
        .args(["proboj", "config.json", games])
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
    for game in ["hra", "hra2", "hra3", "hra4"] {
        assert_as_official(dir.path(), game);
    }
    // The summary keeps the exact fractions (score.json holds the official runner's integers).
    let summary = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert!(summary.contains("| echo | 777.666 | 4 |"), "{summary}");
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

/// The writer player (`players/writer`, its state file beside its script) in two games, twice
/// per game under two names: each process, in each game, starts from the folder as the
/// organiser left it and sees only its own writes (the official runner, running players in
/// place, would answer `seen 1` to `writer2` and `seen 3` and more in the second game); the
/// organiser's folder is unchanged. Not recorded: farm's deliberate difference.
#[test]
fn writers_see_only_their_own_writes_in_a_private_copy_per_game() {
    let dir = fixture_copy();
    let out = run_farm_games(dir.path(), "games_writers.json", &["-c", "2"]);
    assert!(out.status.success(), "{}", show(&out));
    for game in ["w1", "w2"] {
        let log = proboj_support::gunzip(&dir.path().join(game).join("logs/__server.gz"));
        let answers: Vec<&str> = log
            .lines()
            .filter(|l| l.starts_with("READ PLAYER"))
            .collect();
        assert_eq!(
            answers,
            [
                "READ PLAYER writer -> OK | seen 0",
                "READ PLAYER writer2 -> OK | seen 0",
                "READ PLAYER writer -> OK | seen 1",
            ],
            "{game}:\n{log}"
        );
    }
    let folder = dir.path().join("players/writer");
    let left: Vec<_> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["player.py"], "the organiser's folder changed");
}

/// A script argument means the file it names from the game folder, as under the official
/// runner (which passes arguments as written and runs every process there):
/// `../players/echo/player.py` is the fixture's echo even when the start folder's parent holds
/// a `players/echo/player.py` too (a decoy here, which farm once ran: it resolved arguments
/// against the start folder first).
#[test]
fn a_script_argument_names_the_file_it_names_from_the_game_folder() {
    let top = tempfile::tempdir().unwrap();
    let start = top.path().join("start");
    fixture_copy_into(&start);
    let decoy = top.path().join("players/echo");
    std::fs::create_dir_all(&decoy).unwrap();
    std::fs::write(
        decoy.join("player.py"),
        "import sys\nfor line in sys.stdin:\n    if line.strip() == '.':\n        print('decoy\\n.', flush=True)\n",
    )
    .unwrap();
    Command::new("chmod")
        .args(["-R", "a+rX"])
        .arg(top.path())
        .status()
        .unwrap();
    let games = r#"[{"gamefolder": "hra2", "players": ["echo", "crash"], "args": "noenv"}]"#;
    std::fs::write(start.join("games.json"), games).unwrap();
    let out = run_farm(&start, &[]);
    assert!(out.status.success(), "{}", show(&out));
    assert_as_official(&start, "hra2");
}
