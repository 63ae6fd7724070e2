//! `farm proboj` end to end with the example game in bots/proboj (real processes, real
//! sandbox): every protocol command, the game folder layout, logs, processes_per_player,
//! disable_gzip / disable_logs, -c 2, timeouts, a server without END, bad input, Ctrl-C.

mod proboj_support;

use std::time::{Duration, Instant};

use proboj_support::{gunzip, scores, show, Setup};
use serde_json::json;

/// Every command of the protocol over five games run two at a time; nothing survives END.
#[test]
fn every_command_two_games_at_once() {
    let s = Setup::new();
    let cfg = s.config(
        json!({"one": s.player("--value 1"), "two": s.player("--value 2"),
               "three": s.player("--value 3"), "forker": s.player("--value 1 --mode fork")}),
        json!({}),
    );
    let games = json!([
        {"gamefolder": "plain", "players": ["one", "two", "three"], "args": "rounds=3"},
        {"gamefolder": "pause", "players": ["one", "two"], "args": "rounds=2 mode=pause"},
        {"gamefolder": "kill", "players": ["one", "three"], "args": "rounds=3 mode=kill"},
        {"gamefolder": "bad", "players": ["two", "forker"], "args": "rounds=2 mode=badscores"},
        {"gamefolder": "unknown", "players": ["three", "one"], "args": "rounds=1 mode=unknown"},
    ]);
    let out = s.run(&cfg, &games, &["-c", "2"]);
    assert!(out.status.success(), "{}", show(&out));

    // Layout and scores.
    let plain = s.game("plain");
    assert_eq!(scores(&plain), json!({"one": 6, "two": 12, "three": 18}));
    for f in [
        "observer.gz",
        "logs/one.gz",
        "logs/two.gz",
        "logs/three.gz",
        "logs/__server.gz",
    ] {
        assert!(plain.join(f).is_file(), "{f} missing\n{}", show(&out));
    }
    let log = gunzip(&plain.join("logs/one.gz"));
    assert!(log.contains("[proboj] round 1 starts"), "{log}");
    assert!(
        log.contains("got ROUND 3"),
        "stderr of the player is logged: {log}"
    );
    assert!(log.contains("[proboj] process "), "exit line: {log}");
    let server_log = gunzip(&plain.join("logs/__server.gz"));
    assert!(
        server_log.contains("players ['one', 'two', 'three']"),
        "{server_log}"
    );
    assert!(
        server_log.contains("[proboj] process killed by signal 9"),
        "{server_log}"
    );
    let obs = gunzip(&plain.join("observer.gz"));
    assert!(obs.contains("round 3 one:6 two:12 three:18"), "{obs}");
    assert!(obs.contains("ANSWER SCORES OK"), "{obs}");

    // PAUSE / RESUME.
    let obs = gunzip(&s.game("pause").join("observer.gz"));
    assert!(obs.contains("ANSWER PAUSE PLAYER one OK"), "{obs}");
    assert!(obs.contains("ANSWER RESUME PLAYER one OK"), "{obs}");
    assert_eq!(scores(&s.game("pause")), json!({"one": 3, "two": 6}));

    // KILL, then READ of the killed player answers DIED; it scores only round 1.
    let obs = gunzip(&s.game("kill").join("observer.gz"));
    assert!(obs.contains("ANSWER KILL PLAYER three OK"), "{obs}");
    assert!(obs.contains("ANSWER READ PLAYER three DIED"), "{obs}");
    assert_eq!(scores(&s.game("kill")), json!({"one": 6, "three": 3}));

    // SCORES with a bad line answers ERROR; the good one after it is written.
    let obs = gunzip(&s.game("bad").join("observer.gz"));
    assert!(obs.contains("ANSWER SCORES ERROR"), "{obs}");
    assert_eq!(scores(&s.game("bad")), json!({"two": 6, "forker": 3}));

    // Unknown commands are logged and ignored; an unknown player answers ERROR.
    let obs = gunzip(&s.game("unknown").join("observer.gz"));
    assert!(obs.contains("ANSWER TO PLAYER nobody ERROR"), "{obs}");
    let server_log = gunzip(&s.game("unknown").join("logs/__server.gz"));
    assert!(
        server_log.contains("unknown command \"HELLO THERE\""),
        "{server_log}"
    );

    // Summary: totals and BT ratings anchored at the first config player.
    let summary = std::fs::read_to_string(s.root().join("summary.md")).unwrap();
    assert!(summary.contains("| three | 24 | 3 |"), "{summary}");
    assert!(summary.contains("Anchor (0): one"), "{summary}");

    // END with processes still running (the server sleeps, the forker's child setsid'd).
    assert_eq!(
        s.survivors(),
        Vec::<i32>::new(),
        "processes survived the games"
    );
}

/// processes_per_player: 2 with disable_gzip: the server sees P_0, P_1; logs are .txt.
#[test]
fn two_processes_per_player_plain_logs() {
    let s = Setup::new();
    let cfg = s.config(
        json!({"one": s.player("--value 1"), "two": s.player("--value 2")}),
        json!({"processes_per_player": 2, "disable_gzip": true}),
    );
    let games = json!([{"gamefolder": "g", "players": ["one", "two"], "args": "rounds=2"}]);
    let out = s.run(&cfg, &games, &[]);
    assert!(out.status.success(), "{}", show(&out));
    let g = s.game("g");
    assert_eq!(
        scores(&g),
        json!({"one_0": 3, "one_1": 3, "two_0": 6, "two_1": 6})
    );
    for n in ["one_0", "one_1", "two_0", "two_1", "__server"] {
        let log = std::fs::read_to_string(g.join(format!("logs/{n}.txt")))
            .unwrap_or_else(|e| panic!("{n}.txt: {e}\n{}", show(&out)));
        assert!(log.contains("[proboj] process "), "{n}: {log}");
        assert!(!g.join(format!("logs/{n}.gz")).exists());
    }
    let summary = std::fs::read_to_string(s.root().join("summary.md")).unwrap();
    assert!(summary.contains("| two | 12 | 1 |"), "{summary}");
}

/// disable_logs: no log files, but observer.gz and score.json as usual.
#[test]
fn disable_logs_writes_no_logs() {
    let s = Setup::new();
    let cfg = s.config(
        json!({"one": s.player("--value 1"), "two": s.player("--value 2 --mode flood")}),
        json!({"disable_logs": true}),
    );
    let games = json!([{"gamefolder": "g", "players": ["one", "two"], "args": "rounds=2"}]);
    let out = s.run(&cfg, &games, &[]);
    assert!(out.status.success(), "{}", show(&out));
    let g = s.game("g");
    let logs: Vec<_> = std::fs::read_dir(g.join("logs")).unwrap().collect();
    assert!(logs.is_empty(), "{logs:?}");
    assert!(g.join("observer.gz").is_file());
    assert_eq!(scores(&g), json!({"one": 3, "two": 6}));
}

/// A player that never answers is killed after its language's timeout and answers DIED; one
/// that floods stderr is logged up to the cap; one that crashes is DIED; the game goes on.
#[test]
fn slow_flooding_and_crashing_players() {
    let s = Setup::new();
    let mut slow = s.player("--mode slow");
    slow["language"] = json!("slow");
    let cfg = s.config(
        json!({"ok": s.player("--value 2"), "slow": slow,
               "flood": s.player("--mode flood"), "crash": s.player("--mode crash")}),
        json!({}),
    );
    let games = json!([{"gamefolder": "g", "players": ["ok", "slow", "flood", "crash"], "args": "rounds=3"}]);
    let t0 = Instant::now();
    let out = s.run(&cfg, &games, &[]);
    assert!(out.status.success(), "{}", show(&out));
    let g = s.game("g");
    assert_eq!(
        scores(&g),
        json!({"ok": 12, "slow": 0, "flood": 6, "crash": 1})
    );
    let obs = gunzip(&g.join("observer.gz"));
    assert!(obs.contains("ANSWER READ PLAYER slow DIED"), "{obs}");
    assert!(obs.contains("ANSWER READ PLAYER crash DIED"), "{obs}");
    let slow_log = gunzip(&g.join("logs/slow.gz"));
    assert!(slow_log.contains("did not answer within"), "{slow_log}");
    assert!(slow_log.contains("killed by signal 9"), "{slow_log}");
    let crash_log = gunzip(&g.join("logs/crash.gz"));
    assert!(crash_log.contains("exited with status 7"), "{crash_log}");
    let flood_log = gunzip(&g.join("logs/flood.gz"));
    assert!(
        flood_log.len() > 1 << 20,
        "flood logged: {}",
        flood_log.len()
    );
    // The slow player cost one timeout, not one per round.
    assert!(t0.elapsed() < Duration::from_secs(100));
    assert_eq!(s.survivors(), Vec::<i32>::new());
}

/// A server that exits without END: a warning, the game is torn down, the next game runs.
#[test]
fn server_exit_without_end_and_garbage() {
    let s = Setup::new();
    let cfg = s.config(
        json!({"one": s.player("--value 1"), "two": s.player("--value 2")}),
        json!({}),
    );
    let games = json!([
        {"gamefolder": "noend", "players": ["one", "two"], "args": "rounds=1 mode=noend"},
        {"gamefolder": "garbage", "players": ["one", "two"], "args": "rounds=1 mode=garbage"},
        {"gamefolder": "after", "players": ["one", "two"], "args": "rounds=1"},
    ]);
    let out = s.run(&cfg, &games, &[]);
    assert!(out.status.success(), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("game noend: server exited without END"),
        "{err}"
    );
    assert!(!s.game("noend").join("score.json").exists());
    let log = gunzip(&s.game("noend").join("logs/__server.gz"));
    assert!(log.contains("ended without END"), "{log}");
    assert!(
        log.contains("[proboj] process exited with status 0"),
        "{log}"
    );
    let log = gunzip(&s.game("garbage").join("logs/__server.gz"));
    assert!(
        log.contains("unknown command \"this is not a command\""),
        "{log}"
    );
    assert_eq!(scores(&s.game("garbage")), json!({"one": 1, "two": 2}));
    assert_eq!(scores(&s.game("after")), json!({"one": 1, "two": 2}));
    let summary = std::fs::read_to_string(s.root().join("summary.md")).unwrap();
    assert!(
        summary.contains("noend: server exited without END"),
        "{summary}"
    );
    assert_eq!(s.survivors(), Vec::<i32>::new());
}

/// Bad input files are named clearly and nothing runs.
#[test]
fn bad_input_is_named() {
    let s = Setup::new();
    let ok_players = json!({"one": s.player("")});
    let games = json!([{"gamefolder": "g", "players": ["one"], "args": ""}]);
    let cases = [
        (
            "{not json".to_string(),
            games.to_string(),
            "config.json is not valid",
        ),
        (
            s.config(ok_players.clone(), json!({})).to_string(),
            json!([{"gamefolder": "g", "players": ["ghost"]}]).to_string(),
            "player \"ghost\" is not in config",
        ),
        (
            s.config(
                json!({"one": {"command": "python3 x.py", "language": "cobol"}}),
                json!({}),
            )
            .to_string(),
            games.to_string(),
            "language \"cobol\", which has no entry in `timeout`",
        ),
        (
            s.config(ok_players.clone(), json!({"server": "./no/such/server"}))
                .to_string(),
            games.to_string(),
            "no/such/server does not exist",
        ),
        (
            s.config(ok_players.clone(), json!({})).to_string(),
            "[{\"gamefolder\": 3}]".to_string(),
            "games.json is not valid",
        ),
    ];
    for (config, games, want) in cases {
        std::fs::write(s.dir.path().join("config.json"), &config).unwrap();
        std::fs::write(s.dir.path().join("games.json"), &games).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_farm"))
            .args(["proboj", "config.json", "games.json"])
            .current_dir(s.dir.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{want}: {}", show(&out));
        assert!(err.contains(want), "want {want:?} in: {err}");
    }
}

/// A server that cannot start (not executable) fails its game with a clear reason; exit 1.
#[test]
fn server_that_cannot_start() {
    let s = Setup::new();
    let server = s.dir.path().join("server.txt");
    std::fs::write(&server, "not a program").unwrap();
    let cfg = s.config(
        json!({"one": s.player("")}),
        json!({"server": server.to_string_lossy()}),
    );
    let games =
        json!([{"gamefolder": "a", "players": ["one"]}, {"gamefolder": "b", "players": ["one"]}]);
    let out = s.run(&cfg, &games, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("game a: FAILED: the server"), "{err}");
    assert!(err.contains("game b: FAILED: the server"), "{err}");
    assert_eq!(s.survivors(), Vec::<i32>::new());
}

/// Ctrl-C (SIGINT) ends the running games and starts no more; no process survives.
#[test]
fn sigint_stops_cleanly() {
    let s = Setup::new();
    let mut slow = s.player("--mode slow");
    slow["language"] = json!("python");
    let cfg = s.config(
        json!({"slow": slow, "fork": s.player("--mode fork")}),
        json!({}),
    );
    let games = json!([
        {"gamefolder": "a", "players": ["slow", "fork"]},
        {"gamefolder": "b", "players": ["slow", "fork"]},
        {"gamefolder": "c", "players": ["slow", "fork"]},
    ]);
    let (c, g) = s.write(&cfg, &games);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_farm"))
        .arg("proboj")
        .arg(&c)
        .arg(&g)
        .args(["-c", "2"])
        .current_dir(proboj_support::repo_root())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until both running games have their players up.
    let until = Instant::now() + Duration::from_secs(60);
    while s.survivors().len() < 4 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(100));
    }
    // SAFETY: signalling the child we started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let t0 = Instant::now();
    let out = loop {
        if let Some(_st) = child.try_wait().unwrap() {
            break child.wait_with_output().unwrap();
        }
        assert!(t0.elapsed() < Duration::from_secs(30), "farm did not stop");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(out.status.code(), Some(130), "{}", show(&out));
    assert!(!s.game("c").exists(), "a game started after Ctrl-C");
    assert_eq!(s.survivors(), Vec::<i32>::new());
}

/// Scripts with a `#!` line run directly, sandboxed: the server and a player named by their
/// paths (`#!/usr/bin/env python3`), a player importing a module beside it.
#[test]
fn scripts_with_a_shebang_line_run_directly() {
    let s = Setup::new();
    let direct = |v: u32| {
        json!({"command": format!("bots/proboj/players/python/player.py --tag {} --value {v}", s.tag),
               "language": "python"})
    };
    let cfg = s.config(
        json!({"one": direct(1), "two": s.player("--value 2")}),
        json!({"server": "bots/proboj/server.py"}),
    );
    let games = json!([{"gamefolder": "g", "players": ["one", "two"], "args": "rounds=3"}]);
    let out = s.run(&cfg, &games, &[]);
    assert!(out.status.success(), "{}", show(&out));
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("could not start"),
        "{}",
        show(&out)
    );
    assert_eq!(scores(&s.game("g")), json!({"one": 6, "two": 12}));
}

/// Players of games played at once share the host's core tokens: with `--cores 1`, no two
/// players (of either game) compute at the same time. Each `think` player computes 150 ms per
/// message and logs when; the intervals of all of them must not overlap.
#[test]
fn games_at_once_share_the_core_tokens() {
    let s = Setup::new();
    let cfg = s.config(
        json!({"a": s.player("--mode think"), "b": s.player("--mode think")}),
        json!({}),
    );
    let games = json!([
        {"gamefolder": "g1", "players": ["a", "b"], "args": "rounds=3"},
        {"gamefolder": "g2", "players": ["b", "a"], "args": "rounds=3"},
    ]);
    let out = s.run(&cfg, &games, &["-c", "2", "--cores", "1"]);
    assert!(out.status.success(), "{}", show(&out));
    let mut spans: Vec<(u64, u64, String)> = Vec::new();
    for g in ["g1", "g2"] {
        for p in ["a", "b"] {
            let log = gunzip(&s.game(g).join(format!("logs/{p}.gz")));
            for line in log.lines().filter(|l| l.starts_with("think ")) {
                let w: Vec<u64> = line[6..]
                    .split_whitespace()
                    .map(|x| x.parse().unwrap())
                    .collect();
                spans.push((w[0], w[1], format!("{g}/{p}")));
            }
        }
    }
    assert_eq!(
        spans.len(),
        12,
        "every player thought every round: {spans:?}"
    );
    spans.sort();
    for w in spans.windows(2) {
        assert!(
            w[1].0 >= w[0].1,
            "{} computed from {} while {} computed until {}: two players held one core",
            w[1].2,
            w[1].0,
            w[0].2,
            w[0].1
        );
    }
}
