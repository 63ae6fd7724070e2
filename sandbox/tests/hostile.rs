//! The hostile suite: every program of `bots/hostile/` runs in every sandbox mode this host
//! offers (the ones only `Full` contains: only there), next to a well-behaved bot.
//! Each test asserts that the worker survives, the other bot plays on, the fault is classified
//! right, and no process or file is left behind. Where the host lacks a primitive the test
//! prints why and skips (fails under FARM_REQUIRE_SANDBOX=1).

mod common;

use std::time::Duration;

use common::*;
use sandbox::{Bot, BotCommand, CoreTokens, SandboxConfig, SandboxMode};
use shared::FaultKind;

fn hostile(name: &str) -> BotCommand {
    bot("hostile", name)
}

/// (blocked, succeeded) attack lines from a bot's stderr.
fn attacks(stderr: &str) -> (Vec<&str>, Vec<&str>) {
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("ATTACK "))
        .collect();
    let (ok, blocked): (Vec<&str>, Vec<&str>) =
        lines.into_iter().partition(|l| l.contains("SUCCEEDED"));
    (blocked, ok)
}

/// The `Full` sandbox only: for attacks that only its cgroups / uid / pid namespace contain.
fn full_only() -> Vec<SandboxConfig> {
    sandboxes()
        .into_iter()
        .filter(|c| c.effective_mode() == SandboxMode::Full)
        .collect()
}

fn expect_fault_in(cfgs: Vec<SandboxConfig>, name: &str, kind: FaultKind, turn: u32) -> Vec<Pair> {
    let mut out = Vec::new();
    for cfg in cfgs {
        let pair = play_pair(&hostile(name), &cfg, 3);
        let f = pair.fault.clone().unwrap_or_else(|| {
            panic!(
                "{name} ({:?}): no fault; answers {:?}",
                cfg.mode, pair.bad_answers
            )
        });
        assert_eq!(
            (f.kind, f.turn),
            (kind, turn),
            "{name} ({:?}): {f:?}",
            cfg.mode
        );
        out.push(pair);
    }
    out
}

fn expect_fault(name: &str, kind: FaultKind, turn: u32) -> Vec<Pair> {
    expect_fault_in(sandboxes(), name, kind, turn)
}

/// The attack must be tried, must fail every time, and the bot plays every turn without fault.
fn expect_blocked_in(
    cfgs: Vec<SandboxConfig>,
    name: &str,
    args: &[&str],
    min_attempts: usize,
) -> Vec<Pair> {
    let mut out = Vec::new();
    for cfg in cfgs {
        let pair = play_pair(&with_args(hostile(name), args), &cfg, 3);
        let mode = cfg.mode;
        assert!(
            pair.fault.is_none(),
            "{name} ({mode:?}): {:?}\n{}",
            pair.fault,
            pair.bad.stderr_tail
        );
        assert_eq!(
            pair.bad_answers,
            ["0 S 0", "1 S 0", "2 S 0"],
            "{name} ({mode:?})"
        );
        let (blocked, succeeded) = attacks(&pair.bad.stderr_tail);
        assert!(
            succeeded.is_empty(),
            "{name} ({mode:?}): attacks succeeded: {succeeded:#?}"
        );
        assert!(
            blocked.len() >= min_attempts,
            "{name} ({mode:?}): only {} attempts:\n{}",
            blocked.len(),
            pair.bad.stderr_tail
        );
        out.push(pair);
    }
    out
}

fn expect_blocked(name: &str, args: &[&str], min_attempts: usize) -> Vec<Pair> {
    expect_blocked_in(sandboxes(), name, args, min_attempts)
}

#[test]
fn fork_bomb_times_out_and_is_contained() {
    // Only the full sandbox bounds the number of processes (pids cgroup, per-uid NPROC).
    for p in expect_fault_in(full_only(), "fork_bomb", FaultKind::Timeout, 1) {
        println!("fork bomb: {}", p.fault.unwrap().detail);
    }
}

#[test]
fn allocating_10_gib_is_a_memory_fault() {
    expect_fault("alloc_10g", FaultKind::MemoryLimit, 1);
}

#[test]
fn spinning_forever_times_out() {
    expect_fault("spin", FaultKind::Timeout, 1);
}

#[test]
fn spinning_past_the_cpu_budget_is_a_cpu_fault() {
    for mut cfg in modes() {
        cfg.limits.cpu_seconds = 1;
        let tokens = CoreTokens::new(1);
        let mut b = Bot::spawn(&hostile("spin"), &cfg, &tokens, 0).unwrap();
        b.exchange(0, &turn_input(0), FIRST).unwrap();
        let f = b
            .exchange(1, &turn_input(1), Duration::from_secs(4))
            .unwrap_err();
        assert_eq!(
            (f.kind, f.turn),
            (FaultKind::CpuLimit, 1),
            "{:?}: {f:?}",
            cfg.mode
        );
        assert!(b.finish().leftovers.is_empty());
    }
}

#[test]
fn sleeping_forever_times_out() {
    expect_fault("sleep_forever", FaultKind::Timeout, 1);
}

#[test]
fn a_gigabyte_on_stdout_is_bad_output() {
    expect_fault("stdout_flood", FaultKind::BadOutput, 1);
}

#[test]
fn a_gigabyte_on_stderr_is_an_output_flood_and_kept_bounded() {
    for p in expect_fault("stderr_flood", FaultKind::OutputFlood, 1) {
        assert!(
            p.bad.stderr_tail.len() < 64 * 1024,
            "{}",
            p.bad.stderr_tail.len()
        );
        assert!(p.bad.stderr_bytes > SandboxConfig::default().stderr_limit);
    }
}

#[test]
fn writing_outside_the_scratch_dir_is_refused() {
    let open_dir = tempfile::tempdir().unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(open_dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let target = open_dir.path().join("escaped.txt");
    let cwd_target = std::env::current_dir()
        .unwrap()
        .join("matchfarm-escaped.txt");
    let args = [target.to_str().unwrap(), cwd_target.to_str().unwrap()];
    for p in expect_blocked("write_outside", &args, 5) {
        assert!(
            p.bad.stderr_tail.contains("scratch write: ok"),
            "{}",
            p.bad.stderr_tail
        );
        assert!(!target.exists() && !cwd_target.exists());
        assert!(!std::path::Path::new("/tmp/matchfarm-escaped.txt").exists());
    }
}

#[test]
fn reading_another_bots_program_is_refused() {
    let other = bot("test", "answer").program;
    let source = repo().join("bots/test/answer.cpp");
    let args = [other.to_str().unwrap(), source.to_str().unwrap()];
    expect_blocked("read_other_bot", &args, 4);
}

#[test]
fn the_workers_environment_cannot_be_read() {
    let secret = "matchfarm-secret-4f1c2e";
    // SAFETY (edition 2021: safe fn): set once; nothing in this test binary reads it concurrently.
    std::env::set_var("FARM_TEST_SECRET", secret);
    for p in expect_blocked("proc_environ", &[], 1) {
        assert!(!p.bad.stderr_tail.contains(secret));
    }
}

#[test]
fn no_network() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    for p in expect_blocked("connect", &[&port], 6) {
        assert!(
            p.bad.stderr_tail.contains("unix socketpair: ok"),
            "{}",
            p.bad.stderr_tail
        );
        assert!(
            listener.accept().is_err(),
            "the bot reached the test's listener"
        );
    }
}

#[test]
fn kill_minus_one_hurts_nobody() {
    // Only where three layers stand between the call and the host (uid, pid namespace, seccomp).
    expect_blocked_in(full_only(), "kill_all", &[], 1);
}

#[test]
fn ptrace_is_a_forbidden_syscall() {
    expect_fault("ptrace_parent", FaultKind::ForbiddenSyscall, 1);
}

fn running_copies_of(program: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).into_owned();
            if cmd.contains("matchfarm-scratch") && cmd.contains(program) {
                out.push(format!("{:?}: {cmd}", e.file_name()));
            }
        }
    }
    out
}

#[test]
fn a_double_forked_daemon_dies_with_the_match() {
    for p in expect_blocked("daemon", &[], 1) {
        assert!(
            p.bad.stderr_tail.contains("ATTACK setsid: blocked"),
            "{}",
            p.bad.stderr_tail
        );
        let left = running_copies_of("/bin/daemon");
        assert!(left.is_empty(), "daemon survived: {left:?}");
    }
}

#[test]
fn exec_of_a_shell_is_refused() {
    expect_blocked("exec_sh", &[], 1);
}

#[test]
fn filling_the_disk_stops_at_the_quota() {
    // Only the full sandbox has a quota for the whole scratch dir (a tmpfs); elsewhere only
    // RLIMIT_FSIZE bounds each file.
    for p in expect_blocked_in(full_only(), "fill_disk", &[], 0) {
        let err = &p.bad.stderr_tail;
        let filled: u64 = err
            .lines()
            .find_map(|l| {
                l.strip_prefix("filled ")?
                    .split_whitespace()
                    .next()?
                    .parse()
                    .ok()
            })
            .unwrap_or_else(|| panic!("{err}"));
        let l = &SandboxConfig::default().limits;
        assert!(filled >= 1 << 20, "the scratch dir must be usable: {err}");
        assert!(
            filled <= l.scratch_quota.max(l.file_size) + (1 << 20),
            "filled {filled} bytes"
        );
    }
}

/// Work a pondering bot got done between turns, per gap.
fn ponder_work(cfg: &SandboxConfig) -> Vec<u64> {
    let tokens = CoreTokens::new(2);
    let mut b = Bot::spawn(&hostile("ponder"), cfg, &tokens, 0).unwrap();
    for t in 0..4 {
        b.exchange(t, &turn_input(t), deadline(t)).unwrap();
        std::thread::sleep(Duration::from_millis(200));
    }
    let r = b.finish();
    assert!(r.leftovers.is_empty(), "{:?}", r.leftovers);
    assert!(running_copies_of("/bin/ponder").is_empty());
    r.stderr_tail
        .lines()
        .filter_map(|l| l.strip_prefix("ponder_work ")?.parse().ok())
        .collect()
}

#[test]
fn pondering_with_threads_and_children_does_not_help() {
    for cfg in sandboxes() {
        let stopped = ponder_work(&cfg);
        let unstopped = ponder_work(&SandboxConfig {
            stop_between_turns: false,
            ..cfg.clone()
        });
        assert_eq!((stopped.len(), unstopped.len()), (3, 3));
        let (s, u): (u64, u64) = (stopped.iter().sum(), unstopped.iter().sum());
        // Without stops a thread and a child count through 3 x 200 ms of gaps; with stops they
        // only count while the bot runs its own (short) turns.
        assert!(
            s * 5 < u,
            "{:?}: pondered {s} with stops vs {u} without",
            cfg.mode
        );
    }
}

#[test]
fn describe_names_the_mode_in_force() {
    let Some(cfg) = strongest() else { return };
    let d = cfg.describe();
    println!("{d}");
    assert!(d.contains(cfg.effective_mode().as_str()));
    assert!(d.contains("seccomp") && d.contains("landlock"), "{d}");
}
