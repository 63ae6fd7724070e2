//! Shared helpers of the proboj tests: write config/games files into a fresh folder, run the
//! real `farm proboj` binary from the repository root, read gzip logs, find leftover processes.

#![allow(dead_code)]

pub mod conformance;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{json, Value};

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// A unique tag put on every player's command line, to find its processes afterwards.
pub fn tag() -> String {
    format!(
        "probojtag{}x{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    )
}

pub struct Setup {
    pub dir: tempfile::TempDir,
    pub tag: String,
}

impl Setup {
    pub fn new() -> Setup {
        let dir = tempfile::tempdir().unwrap();
        // Sandboxed processes may run under other uids.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        Setup { dir, tag: tag() }
    }

    pub fn root(&self) -> PathBuf {
        self.dir.path().join("games")
    }

    /// A player command of the example game.
    pub fn player(&self, extra: &str) -> Value {
        json!({
            "command": format!("python3 bots/proboj/players/python/player.py --tag {} {extra}", self.tag),
            "language": "python"
        })
    }

    /// A config with the example server and the given players (+ overrides).
    pub fn config(&self, players: Value, over: Value) -> Value {
        let mut c = json!({
            "server": "python3 bots/proboj/server.py",
            "players": players,
            "timeout": {"python": 30, "slow": 1.5},
            "game_root": self.root().to_string_lossy(),
        });
        for (k, v) in over.as_object().unwrap() {
            c[k] = v.clone();
        }
        c
    }

    pub fn run(&self, config: &Value, games: &Value, args: &[&str]) -> Output {
        let (c, g) = self.write(config, games);
        Command::new(env!("CARGO_BIN_EXE_farm"))
            .arg("proboj")
            .arg(&c)
            .arg(&g)
            .args(args)
            .current_dir(repo_root())
            .output()
            .unwrap()
    }

    pub fn write(&self, config: &Value, games: &Value) -> (PathBuf, PathBuf) {
        let c = self.dir.path().join("config.json");
        let g = self.dir.path().join("games.json");
        std::fs::write(&c, config.to_string()).unwrap();
        std::fs::write(&g, games.to_string()).unwrap();
        (c, g)
    }

    pub fn game(&self, folder: &str) -> PathBuf {
        self.root().join(folder)
    }

    /// Pids whose command line holds this setup's tag.
    pub fn survivors(&self) -> Vec<i32> {
        let mut out = Vec::new();
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
                continue;
            };
            if let Ok(cmd) = std::fs::read(format!("/proc/{pid}/cmdline")) {
                if String::from_utf8_lossy(&cmd).contains(&self.tag) {
                    out.push(pid);
                }
            }
        }
        out
    }
}

/// The text of a gzip file (via the system's `gzip`, which reads concatenated members too).
pub fn gunzip(path: &Path) -> String {
    assert!(path.exists(), "{} is missing", path.display());
    let out = Command::new("gzip").arg("-cd").arg(path).output().unwrap();
    assert!(
        out.status.success(),
        "gzip -cd {}: {:?}",
        path.display(),
        out
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn scores(game: &Path) -> Value {
    let text = std::fs::read_to_string(game.join("score.json"))
        .unwrap_or_else(|e| panic!("score.json of {}: {e}", game.display()));
    serde_json::from_str(&text).unwrap()
}

pub fn show(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}
