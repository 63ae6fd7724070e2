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
        let evidence = status.map(|st| self.evidence(st));
        let verdict = match (status, &evidence) {
            (Some(st), Some(ev)) => classify(st, ev),
            _ => Verdict::bot(FaultKind::Exit, "closed its standard output".to_owned()),
        };
        self.host_failure = verdict.host;
        Fault {
            kind: verdict.kind,
            turn,
            detail: verdict.detail,
        }
    }

    /// What the sandbox knows about a death with wait status `st`.
    fn evidence(&self, st: i32) -> Evidence {
        let cg = self.proc_.as_ref().and_then(|p| p.res.cgroups.as_ref());
        let killed = libc::WIFSIGNALED(st) && libc::WTERMSIG(st) == libc::SIGKILL;
        Evidence {
            memcg_hit: cg.is_some_and(|c| c.memory_exceeded()),
            bad_alloc: self.stderr.contains(b"std::bad_alloc"),
            cpu_seconds: self.cpu_ns() / 1_000_000_000,
            cpu_limit: self.cfg.limits.cpu_seconds,
            host_oom_kills: match (killed, self.oom_kills_at_start, host_oom_kills()) {
                (true, Some(before), Some(now)) => now.saturating_sub(before),
                _ => 0,
            },
        }
    }
}

/// What is known about a bot's death besides its wait status.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Evidence {
    /// Its memory cgroup hit the limit (failcnt / oom_kill).
    pub memcg_hit: bool,
    /// Its stderr says `std::bad_alloc`.
    pub bad_alloc: bool,
    pub cpu_seconds: u64,
    pub cpu_limit: u64,
    /// OOM kills on the whole host since the bot started.
    pub host_oom_kills: u64,
}

/// The fault, and whether the host (not the bot) is to blame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Verdict {
    pub kind: FaultKind,
    pub detail: String,
    /// Some: the host caused it (the match must not be scored).
    pub host: Option<String>,
}

impl Verdict {
    fn bot(kind: FaultKind, detail: String) -> Verdict {
        Verdict {
            kind,
            detail,
            host: None,
        }
    }
}

/// Map a raw wait status and the evidence onto the fault taxonomy (see the module docs).
pub(super) fn classify(st: i32, ev: &Evidence) -> Verdict {
    if libc::WIFEXITED(st) {
        let code = libc::WEXITSTATUS(st);
        return Verdict::bot(FaultKind::Exit, format!("exited with status {code}"));
    }
    if !libc::WIFSIGNALED(st) {
        return Verdict::bot(FaultKind::Crash, format!("ended with wait status {st:#x}"));
    }
    let sig = libc::WTERMSIG(st);
    let name = nix::sys::signal::Signal::try_from(sig)
        .map(|s| s.as_str())
        .unwrap_or("unknown signal");
    let memory_hit = ev.memcg_hit || ev.bad_alloc;
    let cpu_out = ev.cpu_seconds >= ev.cpu_limit;
    let cpu = || format!("used up its {} CPU seconds ({name})", ev.cpu_limit);
    let (kind, detail) = match sig {
        libc::SIGSYS => (
            FaultKind::ForbiddenSyscall,
            format!("killed by the sandbox for a forbidden syscall ({name})"),
        ),
        libc::SIGXCPU => (FaultKind::CpuLimit, cpu()),
        libc::SIGKILL if cpu_out => (FaultKind::CpuLimit, cpu()),
        libc::SIGXFSZ => (
            FaultKind::OutputFlood,
            format!("wrote past the file size limit ({name})"),
        ),
        libc::SIGKILL | libc::SIGABRT | libc::SIGSEGV | libc::SIGBUS if memory_hit => (
            FaultKind::MemoryLimit,
            format!("hit the memory limit ({name})"),
        ),
        _ => (FaultKind::Crash, format!("killed by {name}")),
    };
    let host =
        (sig == libc::SIGKILL && !ev.memcg_hit && !cpu_out && ev.host_oom_kills > 0).then(|| {
            format!(
                "the bot was SIGKILLed by the host's OOM killer ({} OOM kill(s) on this host \
                 during the match, the bot's own memory limit not reached): the host is out of \
                 memory; run fewer workers or slots per host",
                ev.host_oom_kills
            )
        });
    Verdict { kind, detail, host }
}

/// The host-wide count of OOM kills (`oom_kill` in /proc/vmstat), if the kernel reports it.
pub(super) fn host_oom_kills() -> Option<u64> {
    std::fs::read_to_string("/proc/vmstat")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("oom_kill "))
        .and_then(|v| v.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Raw wait status of a death by `sig`.
    fn signaled(sig: i32) -> i32 {
        sig
    }

    fn exited(code: i32) -> i32 {
        code << 8
    }

    #[test]
    fn every_death_is_classified_and_only_a_host_oom_kill_is_the_hosts() {
        let ev = Evidence {
            cpu_limit: 60,
            ..Evidence::default()
        };
        let memcg = Evidence {
            memcg_hit: true,
            ..ev
        };
        let bad_alloc = Evidence {
            bad_alloc: true,
            ..ev
        };
        let cpu = Evidence {
            cpu_seconds: 60,
            ..ev
        };
        let host_oom = Evidence {
            host_oom_kills: 1,
            ..ev
        };
        let host_oom_own_limit = Evidence {
            host_oom_kills: 1,
            memcg_hit: true,
            ..ev
        };
        // (status, evidence, fault kind, the host's?)
        let table: &[(i32, Evidence, FaultKind, bool)] = &[
            (exited(0), ev, FaultKind::Exit, false),
            (exited(3), ev, FaultKind::Exit, false),
            (signaled(libc::SIGSEGV), ev, FaultKind::Crash, false),
            (signaled(libc::SIGABRT), ev, FaultKind::Crash, false),
            (signaled(libc::SIGKILL), ev, FaultKind::Crash, false), // killed itself
            (signaled(libc::SIGTERM), ev, FaultKind::Crash, false),
            (
                signaled(libc::SIGSYS),
                ev,
                FaultKind::ForbiddenSyscall,
                false,
            ),
            (signaled(libc::SIGXCPU), ev, FaultKind::CpuLimit, false),
            (signaled(libc::SIGKILL), cpu, FaultKind::CpuLimit, false),
            (signaled(libc::SIGXFSZ), ev, FaultKind::OutputFlood, false),
            (
                signaled(libc::SIGKILL),
                memcg,
                FaultKind::MemoryLimit,
                false,
            ),
            (
                signaled(libc::SIGABRT),
                bad_alloc,
                FaultKind::MemoryLimit,
                false,
            ),
            (
                signaled(libc::SIGSEGV),
                memcg,
                FaultKind::MemoryLimit,
                false,
            ),
            (signaled(libc::SIGKILL), host_oom, FaultKind::Crash, true),
            (
                signaled(libc::SIGKILL),
                host_oom_own_limit,
                FaultKind::MemoryLimit,
                false,
            ),
            (signaled(libc::SIGSEGV), host_oom, FaultKind::Crash, false),
        ];
        for (st, ev, kind, host) in table {
            let v = classify(*st, ev);
            assert_eq!(
                (v.kind, v.host.is_some()),
                (*kind, *host),
                "{st:#x} {ev:?}: {v:?}"
            );
        }
    }
}
