//! Issue 21: a bot whose main thread is still waiting for a core at its deadline is not timed
//! out for that wait. The scheduler counts a thread's run-queue wait only when the thread is
//! given a core, so before the fix such a turn showed the wait as the bot's own time: 3 of the
//! 4 spurious timeouts of the first full stress run (main thread `R` at the deadline).
//!
//! The test plays the host: the bot (sleeping 40 ms of its 50 ms) is pinned to CPU 0, and from
//! 15 ms into its turn until 130 ms a real-time thread spins on CPU 0, so the bot, woken at
//! 40 ms, waits for its core until 130 ms, past its deadline. It must be in time, with that wait
//! counted. A bot that computes past its limit still times out.

mod common;

use std::time::{Duration, Instant};

use common::*;
use sandbox::{Bot, CoreTokens};

/// Pin thread or process `tid` (0: the calling thread) to `cpu`.
fn pin(tid: i32, cpu: usize) {
    // SAFETY: a cpu_set_t on the stack, filled by the libc macros, passed by pointer.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        let rc = libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set);
        assert_eq!(
            rc,
            0,
            "pin {tid} to cpu {cpu}: {}",
            std::io::Error::last_os_error()
        );
    }
}

/// A real-time thread on `cpu` that spins from `from` until `until` (so that nothing of normal
/// priority runs on that CPU meanwhile).
fn hog(cpu: usize, from: Instant, until: Instant) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        pin(0, cpu);
        real_time();
        while Instant::now() < from {
            std::thread::sleep(Duration::from_micros(200));
        }
        while Instant::now() < until {
            std::hint::spin_loop();
        }
    })
}

/// Make the calling thread SCHED_FIFO. Under cgroup v1 the farm's own `cpu` cgroup has no
/// real-time budget, so the thread (this test's own) first moves to the root `cpu` group.
fn real_time() {
    let set = || {
        let param = libc::sched_param { sched_priority: 10 };
        // SAFETY: sets this thread's own scheduling policy.
        unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) }
    };
    if set() == 0 {
        return;
    }
    let root = std::path::Path::new("/sys/fs/cgroup/cpu/tasks");
    if root.exists() {
        // SAFETY: gettid has no arguments.
        let tid = unsafe { libc::gettid() };
        std::fs::write(root, tid.to_string()).expect("move the hog thread to the root cpu group");
    }
    assert_eq!(
        set(),
        0,
        "SCHED_FIFO: {} (cgroups: {:?})",
        std::io::Error::last_os_error(),
        std::fs::read_to_string("/proc/thread-self/cgroup")
    );
}

fn two_cpus() -> bool {
    std::thread::available_parallelism().map_or(0, |n| n.get()) >= 2
}

#[test]
fn a_bot_waiting_for_its_core_at_the_deadline_is_not_timed_out() {
    assert!(
        two_cpus(),
        "this test needs two CPUs (one to hold up, one for the exchange)"
    );
    for cfg in modes() {
        let tokens = CoreTokens::new(1);
        let mut b =
            Bot::spawn(&with_args(bot("test", "slow"), &["40"]), &cfg, &tokens, 0).expect("starts");
        pin(b.pid().expect("pid"), 0);
        pin(0, 1);
        let t0 = Instant::now();
        let hog = hog(
            0,
            t0 + Duration::from_millis(15),
            t0 + Duration::from_millis(130),
        );
        let answered = b.exchange(0, &turn_input(0), Duration::from_millis(50));
        hog.join().expect("hog thread");
        let report = b.finish();
        assert!(report.leftovers.is_empty(), "{:?}", report.leftovers);
        let t = report.timing.per_turn.last().cloned().expect("a turn");
        assert!(
            answered.is_ok() && t.met,
            "{:?}: the wait for its core was charged to the bot: {answered:?} {t:?}",
            cfg.mode
        );
        assert!(t.wall_us >= 120_000, "{:?}: not held up: {t:?}", cfg.mode);
        assert!(
            t.waited_us >= 60_000,
            "{:?}: the wait is not counted: {t:?}",
            cfg.mode
        );
    }
}

#[test]
fn a_bot_computing_past_its_limit_still_times_out() {
    for cfg in modes() {
        let tokens = CoreTokens::new(1);
        let mut b = Bot::spawn(&bot("test", "stress_slow"), &cfg, &tokens, 0).expect("starts");
        let answered = b.exchange(0, &turn_input(0), Duration::from_millis(50));
        let report = b.finish();
        let t = report.timing.per_turn.last().cloned().expect("a turn");
        assert!(answered.is_err() && !t.met, "{:?}: {t:?}", cfg.mode);
        let late = t.late.clone().expect("a breakdown");
        assert!(late.charged_us >= 50_000, "{:?}: {late:?}", cfg.mode);
    }
}
