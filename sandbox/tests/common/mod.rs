//! Helpers shared by the sandbox's process tests: the test bots of `bots/` compiled (once per
//! source, into the target dir), playing a well-behaved bot next to a misbehaving one, and
//! checking that no process is left; plus what `support` has (the modes this host can run).
#![allow(dead_code)]

mod support;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use sandbox::{Bot, BotCommand, BotReport, CoreTokens, SandboxConfig};
use sha2::{Digest, Sha256};
use shared::Fault;

pub use support::*;

/// `(hierarchy, path)` of every cgroup `pid` is in (`/proc/<pid>/cgroup`; `pid` may be `self`;
/// the v2 hierarchy's name is empty).
pub fn cgroups_of(pid: &str) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).expect("cgroups");
    text.lines()
        .filter_map(|l| l.split_once(':'))
        .filter_map(|(_, rest)| rest.split_once(':'))
        .map(|(h, p)| (h.to_string(), p.to_string()))
        .collect()
}

/// The flags the worker's compile cache compiles every bot with.
const FLAGS: [&str; 2] = ["-std=c++20", "-O2"];

/// `source` compiled with g++ (once per source text, across test processes and runs: into
/// the target dir, by atomic rename), read-only as the compile cache leaves its executables.
/// The test bots are this checkout's own, so they are compiled outside the sandbox.
pub fn compile(source: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let text = std::fs::read(source).unwrap_or_else(|e| panic!("{}: {e}", source.display()));
    let key = hex::encode(Sha256::digest(
        [&text[..], FLAGS.join(" ").as_bytes()].concat(),
    ));
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("test-bots");
    let exe = dir.join(format!("{key}.bin"));
    if exe.is_file() {
        return exe;
    }
    std::fs::create_dir_all(&dir).expect("test bot folder");
    // Unique per process and per call: tests of one binary may run in threads.
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!(".{key}.{}-{call}", std::process::id()));
    let out = std::process::Command::new("g++")
        .args(FLAGS)
        .arg("-o")
        .arg(&tmp)
        .arg(source)
        .output()
        .expect("g++ runs");
    assert!(
        out.status.success(),
        "{} does not compile:\n{}",
        source.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o555)).expect("chmod");
    std::fs::rename(&tmp, &exe).expect("rename into the test bot folder");
    exe
}

/// `bots/<folder>/<name>.cpp` compiled.
pub fn bot(folder: &str, name: &str) -> BotCommand {
    let src = repo().join("bots").join(folder).join(format!("{name}.cpp"));
    BotCommand::new(compile(&src))
}

pub fn with_args(mut cmd: BotCommand, args: &[&str]) -> BotCommand {
    cmd.args = args.iter().map(|s| s.to_string()).collect();
    cmd
}

/// The input of turn `t` (enough of the protocol for the test bots).
pub fn turn_input(t: u32) -> Vec<u8> {
    let mut s = String::new();
    if t == 0 {
        s.push_str("INIT 13 2 0 300 4 3 2 2 150 20\n");
    }
    s.push_str(&format!(
        "TURN {t}\nBOARD\n#############\nP 0 1 1 1\nP 1 11 11 1\nBOMBS 0\nFLAMES 0\nEND\n"
    ));
    s.into_bytes()
}

pub fn deadline(t: u32) -> std::time::Duration {
    if t == 0 {
        FIRST
    } else {
        TURN
    }
}

pub struct Pair {
    pub good: BotReport,
    pub bad: BotReport,
    pub fault: Option<Fault>,
    pub bad_answers: Vec<String>,
}

/// Play `turns` turns with a well-behaved bot and `bad` side by side; the good one must answer
/// every turn. Both are finished; no process of either may be left.
pub fn play_pair(bad: &BotCommand, cfg: &SandboxConfig, turns: u32) -> Pair {
    let tokens = CoreTokens::new(2);
    let mut good = Bot::spawn(&bot("test", "answer"), cfg, &tokens, 0).expect("good bot starts");
    let mut badb = Bot::spawn(bad, cfg, &tokens, 1).expect("bad bot starts");
    let pids = [good.pid().unwrap(), badb.pid().unwrap()];
    let mut fault = None;
    let mut bad_answers = Vec::new();
    for t in 0..turns {
        let line = good
            .exchange(t, &turn_input(t), deadline(t))
            .expect("the good bot keeps playing");
        assert_eq!(line, format!("{t} S 0").into_bytes());
        if fault.is_none() {
            match badb.exchange(t, &turn_input(t), deadline(t)) {
                Ok(l) => bad_answers.push(String::from_utf8_lossy(&l).into_owned()),
                Err(f) => fault = Some(f),
            }
        }
    }
    let good = good.finish();
    let bad = badb.finish();
    assert!(
        good.leftovers.is_empty(),
        "good bot left: {:?}",
        good.leftovers
    );
    assert!(
        bad.leftovers.is_empty(),
        "bad bot left: {:?}",
        bad.leftovers
    );
    for pid in pids {
        assert!(!exists(pid), "process {pid} survived its match");
        assert!(!exists(-pid), "process group {pid} survived its match");
    }
    Pair {
        good,
        bad,
        fault,
        bad_answers,
    }
}
