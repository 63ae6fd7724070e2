//! Test support shared by the sandbox's tests and the worker's (which include this file): the
//! sandbox configurations a test runs under on this host, with a printed skip (a failure under
//! FARM_REQUIRE_SANDBOX=1) where the host lacks a primitive, the checkout's root, the deadlines
//! of the test matches, and a check that no process is left.
#![allow(dead_code)]

use std::path::PathBuf;
use std::time::Duration;

use sandbox::{HostSupport, SandboxConfig, SandboxMode};

pub const FIRST: Duration = Duration::from_millis(2000);
pub const TURN: Duration = Duration::from_millis(300);

/// The checkout (every crate of the workspace is one folder below it).
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The sandbox configuration tests use for `mode`: the production default, bot folders where
/// the farm's command line puts them by default (`sandbox::scratch_root`: `/dev/shm` in full
/// mode where it can), except that uid leases live where older checkouts of this project lease
/// them (`$TMPDIR/matchfarm-scratch/.uids`), so that test runs of several checkouts on one
/// machine still never share a uid.
pub fn config(mode: SandboxMode) -> SandboxConfig {
    let full = mode == SandboxMode::Full;
    SandboxConfig {
        mode,
        scratch_root: sandbox::scratch_root::default_root(full).0,
        uid_lock_dir: std::env::temp_dir().join("matchfarm-scratch").join(".uids"),
        ..SandboxConfig::default()
    }
}

/// The state letter of `pid` in `/proc/<pid>/stat` (R, S, T, Z, ...); None when it is gone.
pub fn state(pid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

/// Whether a process (or, with a negative id, a process group) exists.
pub fn exists(pid: i32) -> bool {
    // SAFETY: signal 0 only checks existence.
    unsafe { libc::kill(pid, 0) == 0 }
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
    let host = HostSupport::get();
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
