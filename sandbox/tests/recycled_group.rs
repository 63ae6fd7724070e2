//! A bot's process group id recycled by a stranger: a bot that exits early leaves its handle
//! alive until its match ends, and its group id is a pid the host hands out again once it wraps.
//! Before group signals went through a pidfd, the match's end sent SIGKILL (and a later turn's
//! pause SIGSTOP) to whatever group now had that number: another match's bot, another farm's, a
//! shell. Here the number is handed to a stranger on purpose (`/proc/sys/kernel/ns_last_pid`,
//! root only) and the stranger must come through the bot's end untouched, in every mode.

mod common;

use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use common::*;
use sandbox::{Bot, CoreTokens};

const NS_LAST_PID: &str = "/proc/sys/kernel/ns_last_pid";

/// A process that leads its own session (and so a process group numbered `pid`), started so
/// that it gets `pid`; None if another process of the host took the number first every time.
fn stranger_with_pid(pid: i32) -> Option<Child> {
    for _ in 0..200 {
        std::fs::write(NS_LAST_PID, (pid - 1).to_string()).expect("write ns_last_pid");
        let mut cmd = Command::new("sleep");
        cmd.arg("60");
        // SAFETY: setsid is async-signal-safe; nothing else runs between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().expect("spawn the stranger");
        if child.id() as i32 == pid {
            return Some(child);
        }
        kill_and_reap(child);
    }
    None
}

fn kill_and_reap(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// Wait until nothing has `pid` any more (the bot's end was reaped by its parent).
fn wait_gone(pid: i32) -> bool {
    let until = Instant::now() + Duration::from_secs(5);
    while exists(pid) {
        if Instant::now() > until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    true
}

#[test]
fn a_recycled_group_id_is_never_signalled() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 || std::fs::metadata(NS_LAST_PID).is_err() {
        skip("handing out a chosen pid needs root and /proc/sys/kernel/ns_last_pid");
        return;
    }
    for cfg in modes() {
        let tokens = CoreTokens::new(1);
        let mut b = Bot::spawn(&with_args(bot("test", "exiter"), &["1"]), &cfg, &tokens, 0)
            .expect("the bot starts");
        let pid = b.pid().expect("the bot's pid");
        b.exchange(0, &turn_input(0), deadline(0))
            .expect("turn 0 is answered");
        let fault = b
            .exchange(1, &turn_input(1), deadline(1))
            .expect_err("the bot exits on turn 1");
        assert!(
            wait_gone(pid),
            "{:?}: the exited bot {pid} was not reaped",
            cfg.mode
        );
        let Some(stranger) = stranger_with_pid(pid) else {
            skip(&format!(
                "{:?}: pid {pid} went elsewhere 200 times",
                cfg.mode
            ));
            continue;
        };
        // The stranger leads group `pid` now; the bot's handle still remembers that number.
        let report = b.finish();
        std::thread::sleep(Duration::from_millis(50));
        let seen = state(pid);
        let alive = seen.is_some_and(|s| s != 'Z' && s != 'T');
        kill_and_reap(stranger);
        assert!(
            alive,
            "{:?}: the bot's end reached the stranger that got its group id {pid} (state {seen:?}); \
             bot fault {fault:?}, leftovers {:?}",
            cfg.mode, report.leftovers
        );
        assert!(report.leftovers.is_empty(), "{:?}", report.leftovers);
    }
}
