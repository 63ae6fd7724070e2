//! Players writing into their own folder (`farm proboj` on this machine, real sandbox): each
//! player process works in a private copy of its folder per game, so its writes persist through
//! the game, no other game and no other player sees them, the organiser's folder is unchanged,
//! and a folder too large to copy per game is refused as the organiser's set-up.

mod proboj_support;

use std::path::{Path, PathBuf};

use proboj_support::{gunzip, repo_root, scores, show, Setup};
use serde_json::{json, Value};

/// The writer player's command (relative to the repository root, where `farm` runs).
fn writer(extra: &str) -> Value {
    json!({
        "command": format!("python3 bots/proboj/players/writer/player.py {extra}"),
        "language": "python"
    })
}

/// Every file under `dir` with its content.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// The writer's state grows by one line per round in each game (1 + 2 + 3 = 6 over three
/// rounds): it writes and reads back in its folder, and neither a concurrent game nor an
/// earlier one shows through. The organiser's folder is unchanged afterwards.
#[test]
fn each_game_writes_into_its_own_copy_of_the_players_folder() {
    let s = Setup::new();
    let folder = repo_root().join("bots/proboj/players/writer");
    let before = snapshot(&folder);
    let cfg = s.config(
        json!({"w": writer(&format!("--tag {}", s.tag)), "one": s.player("--value 1")}),
        json!({}),
    );
    let games = json!([
        {"gamefolder": "g1", "players": ["w", "one"], "args": "rounds=3"},
        {"gamefolder": "g2", "players": ["one", "w"], "args": "rounds=3"},
        {"gamefolder": "g3", "players": ["w", "one"], "args": "rounds=3"},
    ]);
    let out = s.run(&cfg, &games, &["-c", "2"]);
    assert!(out.status.success(), "{}", show(&out));
    let mut copies = Vec::new();
    for g in ["g1", "g2", "g3"] {
        let game = s.game(g);
        let log = gunzip(&game.join("logs/w.gz"));
        assert_eq!(
            scores(&game),
            json!({"w": 6, "one": 6}),
            "game {g}: the writer's state was not private to the game:\n{log}\n{}",
            show(&out)
        );
        assert!(log.contains("round 3 state lines 3"), "{log}");
        let copy = log
            .lines()
            .find_map(|l| l.strip_prefix("folder "))
            .unwrap_or_else(|| panic!("no folder line: {log}"))
            .to_owned();
        assert!(
            !copy.starts_with(folder.to_str().unwrap()),
            "game {g} ran the player in place: {copy}"
        );
        assert!(
            !Path::new(&copy).exists(),
            "the copy {copy} of game {g} was not removed"
        );
        copies.push(copy);
    }
    copies.sort();
    copies.dedup();
    assert_eq!(copies.len(), 3, "games shared a copy: {copies:?}");
    assert_eq!(
        snapshot(&folder),
        before,
        "the organiser's player folder changed"
    );
    assert!(s.survivors().is_empty());
}

/// Two writers from the same folder in one game: each has its own copy, and neither can read
/// the other's: it peeks at the exact path of the other's copy (the other's own log names its
/// folder) and is denied (permission denied; with the full sandbox as root the other's copy is
/// a tmpfs mounted after this player's private mounts were made, so it is not even there).
#[test]
fn a_player_cannot_read_another_players_copy() {
    let s = Setup::new();
    let cfg = s.config(
        json!({"a": writer("--peek b"), "b": writer("--peek a")}),
        json!({}),
    );
    let games = json!([{"gamefolder": "g", "players": ["a", "b"], "args": "rounds=3"}]);
    let out = s.run(&cfg, &games, &[]);
    assert!(out.status.success(), "{}", show(&out));
    let game = s.game("g");
    let log = |p: &str| gunzip(&game.join(format!("logs/{p}.gz")));
    let folder = |log: &str| {
        log.lines()
            .find_map(|l| l.strip_prefix("folder "))
            .unwrap_or_else(|| panic!("no folder line: {log}"))
            .to_owned()
    };
    for (p, other) in [("a", "b"), ("b", "a")] {
        let (mine, theirs) = (log(p), log(other));
        let target = format!("peek {}/state.txt ", folder(&theirs));
        let peeks: Vec<&str> = mine.lines().filter(|l| l.starts_with("peek ")).collect();
        assert!(!peeks.is_empty(), "player {p} never peeked:\n{mine}");
        for l in peeks {
            assert!(
                l.starts_with(&target),
                "player {p} peeked elsewhere than {other}'s copy ({target}):\n{mine}"
            );
            assert!(
                l.ends_with("exists=True denied PermissionError")
                    || l.ends_with("exists=False denied FileNotFoundError"),
                "player {p} could read {other}'s copy:\n{mine}"
            );
        }
    }
    assert_eq!(scores(&game), json!({"a": 6, "b": 6}), "{}", show(&out));
}

/// A player folder too large to copy for each game is refused before any game runs, in the
/// organiser's words (a sparse file: no disk is used).
#[test]
fn a_player_folder_too_large_to_copy_is_refused_up_front() {
    let s = Setup::new();
    let big = s.dir.path().join("big");
    std::fs::create_dir(&big).unwrap();
    std::fs::copy(
        repo_root().join("bots/proboj/players/writer/player.py"),
        big.join("player.py"),
    )
    .unwrap();
    let f = std::fs::File::create(big.join("checkpoint.bin")).unwrap();
    f.set_len(300 << 20).unwrap();
    let cmd = format!("python3 {}", big.join("player.py").display());
    let cfg = s.config(
        json!({"big": {"command": cmd, "language": "python"}, "one": s.player("")}),
        json!({}),
    );
    let games = json!([{"gamefolder": "g", "players": ["big", "one"], "args": "rounds=1"}]);
    let out = s.run(&cfg, &games, &[]);
    assert!(!out.status.success(), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("player big") && err.contains("256 MiB") && err.contains("organiser"),
        "no clear error: {err}"
    );
    assert!(!err.contains("player's fault") || err.contains("not the player's fault"));
    assert!(!s.game("g").exists(), "a game ran: {}", show(&out));
}

/// With the full sandbox (root), what a player writes into its copy is bounded by the kernel:
/// the copy sits on a tmpfs of its own size plus the player's scratch quota (16 MiB), so a player
/// that tries to write 200 MiB is stopped by ENOSPC well before the disk notices, and the game
/// goes on. (In the other modes the copy is measured after each turn instead.)
#[test]
fn a_player_cannot_write_more_than_its_quota_into_its_copy() {
    if !nix::unistd::geteuid().is_root() {
        assert!(
            std::env::var("FARM_REQUIRE_SANDBOX").as_deref() != Ok("1"),
            "FARM_REQUIRE_SANDBOX=1 but this test needs root (the full sandbox)"
        );
        eprintln!("skipped: the full sandbox needs root");
        return;
    }
    let s = Setup::new();
    let cfg = s.config(
        json!({"w": writer("--fill 200"), "one": s.player("--value 1")}),
        json!({}),
    );
    let games = json!([{"gamefolder": "g", "players": ["w", "one"], "args": "rounds=2"}]);
    let out = s.run(&cfg, &games, &["--sandbox", "full"]);
    assert!(out.status.success(), "{}", show(&out));
    let log = gunzip(&s.game("g").join("logs/w.gz"));
    let wrote: u64 = log
        .lines()
        .find_map(|l| l.strip_prefix("fill wrote "))
        .and_then(|l| l.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no fill line:\n{log}"));
    assert!(
        log.contains("stopped by errno 28"),
        "the player's writes were not stopped by a full copy:\n{log}"
    );
    assert!((8..=20).contains(&wrote), "wrote {wrote} MiB:\n{log}");
    // It went on playing (and keeping its state) after the refused writes.
    assert!(log.contains("round 2 state lines 2"), "{log}");
    assert!(s.survivors().is_empty());
}
