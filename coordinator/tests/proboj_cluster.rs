//! proboj games through RabbitMQ: the same config and games.json run locally and with
//! `--broker` (a real `farm worker`, the package shipped through real Redis) leave the same game
//! folders; a package that cannot be built is refused before anything is queued; the stock
//! layout (`./server`, `"game_root": "."`) plays on the cluster as the official runner does.

mod cluster_support;
mod proboj_support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cluster_support::{farm, root, setup, Farm, BROKER, KEY};
use serde_json::{json, Value};

/// A start directory holding a copy of the example game, a map, config and games files.
fn start_dir(config: &Value, games: &Value) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    copy_tree(&root().join("bots/proboj"), &dir.path().join("bots/proboj"));
    let maps = dir.path().join("games/maps");
    std::fs::create_dir_all(&maps).unwrap();
    std::fs::write(maps.join("small.txt"), "small-map-7x7\n#######\n").unwrap();
    std::fs::write(dir.path().join("config.json"), config.to_string()).unwrap();
    std::fs::write(dir.path().join("games.json"), games.to_string()).unwrap();
    dir
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o755)).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let name = e.file_name();
        if name == "__pycache__" {
            continue;
        }
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &to.join(&name));
        } else {
            std::fs::copy(e.path(), to.join(&name)).unwrap();
        }
    }
}

fn proboj(dir: &Path, extra: &[&str]) -> Output {
    Command::new(farm())
        .current_dir(dir)
        .args(["proboj", "config.json", "games.json"])
        .args(extra)
        .env("FARM_KEY", KEY)
        .env("FARM_LOG", "warn")
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Every file under `dir`, relative, sorted.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    out.sort();
    out
}

/// A file's content, decompressed when it is gzip.
fn content(p: &Path) -> Vec<u8> {
    if p.extension().is_some_and(|e| e == "gz") {
        let out = Command::new("zcat").arg(p).output().unwrap();
        assert!(out.status.success(), "zcat {}", p.display());
        out.stdout
    } else {
        std::fs::read(p).unwrap()
    }
}

fn players() -> Value {
    let p = |v: u32| {
        json!({"command": format!("python3 bots/proboj/players/python/player.py --value {v}"),
               "language": "python"})
    };
    json!({"one": p(1), "two": p(2), "three": p(3)})
}

/// Run the same files locally and on the cluster; compare every game folder.
fn same_both_ways(name: &str, db: u32, config: Value, games: Value, data: &[&str]) {
    let Some(_serial) = setup() else { return };
    let local = start_dir(&config, &games);
    let out = proboj(local.path(), &[]);
    assert!(out.status.success(), "local run failed: {}", text(&out));

    let t = Farm::new(name, db);
    let remote = start_dir(&config, &games);
    let worker = t.worker("w1", 2);
    let redis = t.redis_url();
    let mut args = vec!["--broker", BROKER, "--redis", &redis];
    for d in data {
        args.extend(["--data", d]);
    }
    let out = proboj(remote.path(), &args);
    let worker_log = worker.stop();
    assert!(
        out.status.success(),
        "cluster run failed: {}\nworker:\n{worker_log}",
        text(&out)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("proboj on the cluster"), "{err}");
    // Where the support code looks for the tournament's queue names.
    std::fs::write(t.dir.path().join("coordinator.err"), &out.stderr).unwrap();

    let root = config["game_root"].as_str().unwrap();
    for g in games.as_array().unwrap() {
        let folder = g["gamefolder"].as_str().unwrap();
        let a = local.path().join(root).join(folder);
        let b = remote.path().join(root).join(folder);
        let (fa, fb) = (files(&a), files(&b));
        assert!(!fa.is_empty(), "local run left nothing in {}", a.display());
        assert_eq!(fa, fb, "game {folder}: different files");
        assert_eq!(
            std::fs::read(a.join("score.json")).unwrap(),
            std::fs::read(b.join("score.json")).unwrap(),
            "game {folder}: different score.json"
        );
        for f in fa.iter().filter(|f| f.starts_with("observer")) {
            assert_eq!(
                content(&a.join(f)),
                content(&b.join(f)),
                "game {folder}: different {}",
                f.display()
            );
        }
    }
    let summary = |d: &Path| std::fs::read_to_string(d.join(root).join("summary.md")).unwrap();
    assert_eq!(summary(local.path()), summary(remote.path()));
    t.assert_queues_gone();
}

#[test]
fn local_and_rabbitmq_runs_leave_the_same_game_folders() {
    let config = json!({
        "server": "python3 bots/proboj/server.py",
        "players": players(),
        "timeout": {"python": 30},
        "game_root": "games",
    });
    let games = json!([
        {"gamefolder": "g1", "players": ["one", "two", "three"], "args": "rounds=3 map=../maps/small.txt"},
        {"gamefolder": "g2", "players": ["two", "three"], "args": "rounds=4 mode=pause"},
        {"gamefolder": "g3", "players": ["one", "two", "three"], "args": "rounds=3 mode=kill"},
        {"gamefolder": "g4", "players": ["three", "one"], "args": "rounds=2 mode=badscores"},
    ]);
    same_both_ways("proboj-eq", 14, config, games, &["games/maps"]);
}

#[test]
fn two_processes_per_player_and_plain_logs_through_rabbitmq() {
    let config = json!({
        "server": "python3 bots/proboj/server.py",
        "players": players(),
        "processes_per_player": 2,
        "disable_gzip": true,
        "timeout": {"python": 30},
        "game_root": "out/games",
    });
    let games = json!([
        {"gamefolder": "a", "players": ["one", "two"], "args": "rounds=2"},
        {"gamefolder": "b", "players": ["three", "two"], "args": "rounds=3"},
    ]);
    same_both_ways("proboj-ppp", 15, config, games, &[]);
}

#[test]
fn a_package_outside_the_start_directory_is_refused_before_anything_runs() {
    let Some(_serial) = setup() else { return };
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::copy(
        root().join("bots/proboj/server.py"),
        elsewhere.path().join("server.py"),
    )
    .unwrap();
    let server = format!("python3 {}", elsewhere.path().join("server.py").display());
    let config = json!({
        "server": server,
        "players": players(),
        "timeout": {"python": 30},
        "game_root": "games",
    });
    let games = json!([{"gamefolder": "g1", "players": ["one", "two"], "args": ""}]);
    let dir = start_dir(&config, &games);
    let out = proboj(
        dir.path(),
        &["--broker", BROKER, "--redis", "redis://127.0.0.1:6379/14"],
    );
    assert!(!out.status.success(), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("outside") && err.contains("the server"),
        "no clear error: {err}"
    );
    assert!(!dir.path().join("games/g1").exists());

    // --broker without Redis names what is missing.
    let out = Command::new(farm())
        .current_dir(dir.path())
        .args(["proboj", "config.json", "games.json", "--broker", BROKER])
        .env_remove("FARM_REDIS")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--redis"),
        "{}",
        text(&out)
    );
}

/// The stock layout (`"server": "./server"`, `"game_root": "."`: the package is the start
/// folder itself, once packed as 0 files) on the cluster, compared with the official runner.
#[test]
fn the_stock_layout_plays_on_the_cluster_as_the_official_runner() {
    let Some(_serial) = setup() else { return };
    let dir = proboj_support::conformance::fixture_copy();
    // The worker's PATH is its own: the game without the player that reports its environment.
    let games = r#"[{"gamefolder": "hra2", "players": ["echo", "crash"], "args": "noenv"}]"#;
    std::fs::write(dir.path().join("games.json"), games).unwrap();
    std::fs::remove_dir_all(dir.path().join("bin")).unwrap();
    let t = Farm::new("proboj-stock", 14);
    let worker = t.worker("w1", 2);
    let redis = t.redis_url();
    let out = proboj(dir.path(), &["--broker", BROKER, "--redis", &redis]);
    let worker_log = worker.stop();
    assert!(
        out.status.success(),
        "cluster run failed: {}\nworker:\n{worker_log}",
        text(&out)
    );
    std::fs::write(t.dir.path().join("coordinator.err"), &out.stderr).unwrap();
    proboj_support::conformance::assert_as_official(dir.path(), "hra2");
    t.assert_queues_gone();
}

/// Players write into their own folder on the cluster too: each game's player works in a
/// private copy of the package's folder (two games at once on one worker see none of each
/// other's writes), cannot read another player's copy, and the laid-out package is untouched.
#[test]
fn players_write_into_private_copies_of_their_folder_on_the_cluster() {
    let Some(_serial) = setup() else { return };
    let w = |extra: &str| {
        json!({"command": format!("python3 bots/proboj/players/writer/player.py {extra}"),
               "language": "python"})
    };
    let config = json!({
        "server": "python3 bots/proboj/server.py",
        "players": {"a": w("--peek b"), "b": w("--peek a"), "one": players()["one"].clone()},
        "timeout": {"python": 30},
        "game_root": "games",
    });
    let games = json!([
        {"gamefolder": "g1", "players": ["a", "b"], "args": "rounds=3"},
        {"gamefolder": "g2", "players": ["a", "one"], "args": "rounds=3"},
        {"gamefolder": "g3", "players": ["one", "a"], "args": "rounds=3"},
    ]);
    let dir = start_dir(&config, &games);
    let t = Farm::new("proboj-writes", 14);
    let worker = t.worker("w1", 2);
    let redis = t.redis_url();
    let out = proboj(dir.path(), &["--broker", BROKER, "--redis", &redis]);
    let worker_log = worker.stop();
    assert!(
        out.status.success(),
        "cluster run failed: {}\nworker:\n{worker_log}",
        text(&out)
    );
    std::fs::write(t.dir.path().join("coordinator.err"), &out.stderr).unwrap();
    let score = |g: &str| -> Value {
        serde_json::from_slice(
            &std::fs::read(dir.path().join("games").join(g).join("score.json")).unwrap(),
        )
        .unwrap()
    };
    let log = |g: &str, p: &str| {
        String::from_utf8_lossy(&content(
            &dir.path()
                .join("games")
                .join(g)
                .join(format!("logs/{p}.gz")),
        ))
        .into_owned()
    };
    assert_eq!(score("g1"), json!({"a": 6, "b": 6}), "{}", log("g1", "a"));
    assert_eq!(score("g2"), json!({"a": 6, "one": 6}), "{}", log("g2", "a"));
    assert_eq!(score("g3"), json!({"one": 6, "a": 6}), "{}", log("g3", "a"));
    // Each peeks at the other's copy and is denied (with the full sandbox as root the other's
    // copy is a tmpfs mounted after this player's private mounts were made: not even there).
    for p in ["a", "b"] {
        let l = log("g1", p);
        let peeks: Vec<&str> = l.lines().filter(|l| l.starts_with("peek ")).collect();
        assert!(!peeks.is_empty(), "{l}");
        assert!(
            peeks
                .iter()
                .all(|x| x.ends_with("exists=True denied PermissionError")
                    || x.ends_with("exists=False denied FileNotFoundError")),
            "{l}"
        );
    }
    assert!(!dir
        .path()
        .join("bots/proboj/players/writer/state.txt")
        .exists());
    t.assert_queues_gone();
}

/// On the cluster, players get the `farm worker`'s `PATH` and locale (and `PWD`), as on this
/// machine they get `farm proboj`'s, and none of the worker's farm settings or secrets: the
/// worker here has the broker URL, the Redis URL and the key in its environment, and a `PATH`
/// ending in `/opt/probe` that the coordinator's lacks; the fixture's env player must answer
/// exactly what the official runner answered with that `PATH` and locale.
#[test]
fn cluster_players_get_the_workers_path_and_locale_and_no_secret() {
    let Some(_serial) = setup() else { return };
    let dir = proboj_support::conformance::fixture_copy();
    let games = r#"[{"gamefolder": "hra", "players": ["echo", "crash", "env"], "args": "main"}]"#;
    std::fs::write(dir.path().join("games.json"), games).unwrap();
    let t = Farm::new("proboj-env", 14);
    let redis = t.redis_url();
    let path = format!(
        "{}/bin:/usr/local/bin:/usr/bin:/bin:/opt/probe",
        dir.path().display()
    );
    let log = t.dir.path().join("worker-env.log");
    let child = Command::new(farm())
        .current_dir(root())
        .args([
            "worker",
            "--slots",
            "2",
            "--id",
            "proboj-env-w1",
            "--scratch",
        ])
        .arg(t.dir.path().join("scratch-env"))
        .env_clear()
        .env("PATH", &path)
        .env("LANG", "C.UTF-8")
        .env("FARM_BROKER", BROKER)
        .env("FARM_REDIS", &redis)
        .env("FARM_KEY", KEY)
        .env("FARM_LOG", "warn")
        .stdout(std::fs::File::create(&log).unwrap())
        .stderr(std::fs::File::create(log.with_extension("err")).unwrap())
        .spawn()
        .unwrap();
    let worker = cluster_support::Proc {
        child: Some(child),
        log,
    };
    let out = proboj(dir.path(), &["--broker", BROKER, "--redis", &redis]);
    let worker_log = worker.stop();
    assert!(
        out.status.success(),
        "cluster run failed: {}\nworker:\n{worker_log}",
        text(&out)
    );
    std::fs::write(t.dir.path().join("coordinator.err"), &out.stderr).unwrap();
    proboj_support::conformance::assert_as_official(dir.path(), "hra");
    t.assert_queues_gone();
}
