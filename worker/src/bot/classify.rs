//! Why a bot stopped answering: its wait status (and the evidence of the sandbox: seccomp's
//! SIGSYS, rlimit signals, cgroup OOM counters, the C++ runtime's `std::bad_alloc` on stderr)
//! mapped onto the fault taxonomy.
//!
//! The fault boundary for a running bot: everything the bot did is its fault (its exit, its
//! crash signals, SIGSYS from seccomp, SIGXCPU/SIGKILL past its CPU limit, SIGXFSZ, a kill by
//! its own memory cgroup). The one death that can come from the host is an unexplained SIGKILL
//! while the host-wide OOM killer was at work (`oom_kill` in /proc/vmstat went up since the bot
//! started and the bot's own memory cgroup was not at its limit): the kernel picked the bot
//! because the *host* ran out of memory. That is recorded as a host failure
//! ([`Bot::host_failure`]) and the referee fails the match as an infrastructure problem. Any
//! other SIGKILL stays the bot's crash (a bot can kill itself; the worker's own kills happen
//! only after a fault is already decided or at teardown, which is never classified).

use std::time::Duration;

use shared::{Fault, FaultKind};

use super::Bot;

impl Bot {
    /// The bot's output ended: wait (bounded) for its status, make sure it is dead, classify.
    pub(super) fn death(&mut self, turn: u32, wait: Duration) -> Fault {
        let status = self.proc_.as_mut().and_then(|p| p.wait_status(wait));
        if let Some(p) = &self.proc_ {
            p.kill_now();
        }
        let _ = self.drain_stderr(turn);
        let (kind, detail) = match status {
            None => (FaultKind::Exit, "closed its standard output".to_owned()),
            Some(st) => self.classify_status(st),
        };
        if let Some(st) = status {
            self.host_failure = self.host_caused(st);
        }
        Fault { kind, turn, detail }
    }

    /// Whether a death was the host's doing (see the module docs).
    fn host_caused(&self, st: i32) -> Option<String> {
        if !libc::WIFSIGNALED(st) || libc::WTERMSIG(st) != libc::SIGKILL {
            return None;
        }
        let cg = self.proc_.as_ref().and_then(|p| p.res.cgroups.as_ref());
        if cg.is_some_and(|c| c.memory_exceeded())
            || self.cpu_ns() / 1_000_000_000 >= self.cfg.limits.cpu_seconds
        {
            return None;
        }
        let before = self.oom_kills_at_start?;
        let now = host_oom_kills()?;
        (now > before).then(|| {
            format!(
                "the bot was SIGKILLed by the host's OOM killer ({} OOM kill(s) on this host \
                 during the match, the bot's own memory limit not reached): the host is out of \
                 memory; run fewer workers or slots per host",
                now - before
            )
        })
    }

    fn classify_status(&self, st: i32) -> (FaultKind, String) {
        if libc::WIFEXITED(st) {
            let code = libc::WEXITSTATUS(st);
            return (FaultKind::Exit, format!("exited with status {code}"));
        }
        if !libc::WIFSIGNALED(st) {
            return (FaultKind::Crash, format!("ended with wait status {st:#x}"));
        }
        let sig = libc::WTERMSIG(st);
        let name = nix::sys::signal::Signal::try_from(sig)
            .map(|s| s.as_str())
            .unwrap_or("unknown signal");
        let cg = self.proc_.as_ref().and_then(|p| p.res.cgroups.as_ref());
        let memory_hit =
            cg.is_some_and(|c| c.memory_exceeded()) || self.stderr.contains(b"std::bad_alloc");
        let cpu_s = self.cpu_ns() / 1_000_000_000;
        match sig {
            libc::SIGSYS => (
                FaultKind::ForbiddenSyscall,
                format!("killed by the sandbox for a forbidden syscall ({name})"),
            ),
            libc::SIGXCPU => (
                FaultKind::CpuLimit,
                format!(
                    "used up its {} CPU seconds ({name})",
                    self.cfg.limits.cpu_seconds
                ),
            ),
            libc::SIGKILL if cpu_s >= self.cfg.limits.cpu_seconds => (
                FaultKind::CpuLimit,
                format!(
                    "used up its {} CPU seconds ({name})",
                    self.cfg.limits.cpu_seconds
                ),
            ),
            libc::SIGXFSZ => (
                FaultKind::OutputFlood,
                format!("wrote past the file size limit ({name})"),
            ),
            libc::SIGKILL | libc::SIGABRT | libc::SIGSEGV | libc::SIGBUS if memory_hit => (
                FaultKind::MemoryLimit,
                format!("hit the memory limit ({name})"),
            ),
            _ => (FaultKind::Crash, format!("killed by {name}")),
        }
    }
}

/// The host-wide count of OOM kills (`oom_kill` in /proc/vmstat), if the kernel reports it.
pub(super) fn host_oom_kills() -> Option<u64> {
    std::fs::read_to_string("/proc/vmstat")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("oom_kill "))
        .and_then(|v| v.trim().parse().ok())
}
