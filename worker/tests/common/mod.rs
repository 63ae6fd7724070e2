//! Helpers shared by the worker's process tests: compiling the bots of `bots/` through the
//! compile cache, playing a well-behaved bot next to a misbehaving one, and checking that no
//! process is left.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use shared::Fault;
use worker::{Bot, BotCommand, BotReport, CompileCache, CoreTokens, SandboxConfig, SandboxMode};

pub const FIRST: Duration = Duration::from_millis(2000);
pub const TURN: Duration = Duration::from_millis(300);

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The sandbox configuration tests use for `mode`: the production default, except that uid
/// leases live where older checkouts of this project lease them (`$TMPDIR/matchfarm-scratch/
/// .uids`), so that test runs of several checkouts on one machine still never share a uid.
pub fn config(mode: SandboxMode) -> SandboxConfig {
    SandboxConfig {
        mode,
        uid_lock_dir: std::env::temp_dir().join("matchfarm-scratch").join(".uids"),
        ..SandboxConfig::default()
    }
}

/// One cache for the whole test binary (and across runs: it lives in the target dir).
pub fn cache() -> &'static CompileCache {
    static CACHE: OnceLock<CompileCache> = OnceLock::new();
    CACHE.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bot-cache");
        CompileCache::new(dir, config(SandboxMode::Auto)).expect("compile cache")
    })
}

/// `bots/<folder>/<name>.cpp` compiled.
pub fn bot(folder: &str, name: &str) -> BotCommand {
    let src = repo().join("bots").join(folder).join(format!("{name}.cpp"));
    let exe = cache()
        .executable_for(&src)
        .unwrap_or_else(|e| panic!("{}: {e}", src.display()));
    BotCommand::new(exe)
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

pub fn deadline(t: u32) -> Duration {
    if t == 0 {
        FIRST
    } else {
        TURN
    }
}

/// Whether a process (or, with a negative id, a process group) exists.
pub fn exists(pid: i32) -> bool {
    // SAFETY: signal 0 only checks existence.
    unsafe { libc::kill(pid, 0) == 0 }
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

/// The modes to run a test under: plain always; the sandboxed ones when this host can run them.
/// With FARM_REQUIRE_SANDBOX=1 a missing primitive is a failure, otherwise a printed skip.
pub fn modes() -> Vec<SandboxConfig> {
    let mut out = vec![SandboxConfig::plain()];
    for mode in [SandboxMode::Unprivileged, SandboxMode::Full] {
        match sandbox_unavailable(mode) {
            None => out.push(config(mode)),
            Some(why) => skip(&format!("{} mode: {why}", mode.as_str())),
        }
    }
    out
}

/// Every sandboxed configuration this host supports (Full first), skips printed.
pub fn sandboxes() -> Vec<SandboxConfig> {
    let mut out = Vec::new();
    for mode in [SandboxMode::Full, SandboxMode::Unprivileged] {
        match sandbox_unavailable(mode) {
            None => out.push(config(mode)),
            Some(why) => skip(&format!("{} mode: {why}", mode.as_str())),
        }
    }
    out
}

/// The sandboxed configuration for hostile tests (Full when possible).
pub fn strongest() -> Option<SandboxConfig> {
    for mode in [SandboxMode::Full, SandboxMode::Unprivileged] {
        match sandbox_unavailable(mode) {
            None => return Some(config(mode)),
            Some(why) => skip(&format!("{} mode: {why}", mode.as_str())),
        }
    }
    None
}

pub fn sandbox_unavailable(mode: SandboxMode) -> Option<String> {
    let host = worker::sandbox::HostSupport::get();
    if host.landlock_abi == 0 {
        return Some("landlock is not available".into());
    }
    if mode == SandboxMode::Full {
        if !host.full_possible() {
            return Some("needs root with CAP_SYS_ADMIN".into());
        }
        if host.cg_memory.is_none() || host.cg_pids.is_none() {
            return Some("cgroup v1 memory/pids not writable".into());
        }
    }
    None
}

pub fn skip(why: &str) {
    if std::env::var("FARM_REQUIRE_SANDBOX").is_ok_and(|v| v == "1") {
        panic!("FARM_REQUIRE_SANDBOX=1 but {why}");
    }
    eprintln!("SKIPPED (sandbox primitive unavailable): {why}");
}
