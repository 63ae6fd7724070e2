//! Why a bot stopped answering: its wait status (and the evidence of the sandbox: seccomp's
//! SIGSYS, rlimit signals, cgroup OOM counters, the C++ runtime's `std::bad_alloc` on stderr)
//! mapped onto the fault taxonomy.

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
        Fault { kind, turn, detail }
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
