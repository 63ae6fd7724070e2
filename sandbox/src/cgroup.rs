//! Per-bot cgroups (`Full` mode): v1 memory (limit, OOM evidence), v1 pids (fork bombs), v1
//! cpuacct (CPU of every process of the bot) and v2 `cgroup.kill` (kills setsid'd, double-forked
//! descendants in one write). Created before the fork; the bot's init joins them by writing "0"
//! to the prepared `cgroup.procs` fds.

use std::fs::{File, OpenOptions};
use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::{HostError, HostSupport, Limits};

#[derive(Debug)]
pub(crate) struct BotCgroups {
    memory: Option<PathBuf>,
    pids: Option<PathBuf>,
    cpuacct: Option<PathBuf>,
    cpu: Option<PathBuf>,
    unified: Option<PathBuf>,
    procs: Vec<File>,
    /// `cpuacct.usage`, kept open: read twice per turn.
    usage: Option<File>,
}

impl BotCgroups {
    /// Make `matchfarm/<name>` in every available hierarchy and set the limits.
    /// `cpu_weight` (v1 cpu.shares of the worker's `matchfarm` group, 0 = leave as is) lets a
    /// thinking bot take its core from background load: only token holders run at all.
    pub(crate) fn create(
        host: &HostSupport,
        name: &str,
        limits: &Limits,
        cpu_weight: u64,
    ) -> Result<Self, HostError> {
        let make = |root: &Option<PathBuf>| -> Result<Option<PathBuf>, HostError> {
            let Some(root) = root else { return Ok(None) };
            let dir = root.join("matchfarm").join(name);
            std::fs::create_dir_all(&dir).map_err(|e| HostError::io("cgroup", &dir, e))?;
            Ok(Some(dir))
        };
        let mut cg = BotCgroups {
            memory: make(&host.cg_memory)?,
            pids: make(&host.cg_pids)?,
            cpuacct: make(&host.cg_cpuacct)?,
            cpu: make(&host.cg_cpu)?,
            unified: make(&host.cg_unified)?,
            procs: Vec::new(),
            usage: None,
        };
        cg.usage = cg
            .cpuacct
            .as_ref()
            .and_then(|d| File::open(d.join("cpuacct.usage")).ok());
        if let Some(m) = &cg.memory {
            write(&m.join("memory.limit_in_bytes"), &limits.memory.to_string())?;
            let memsw = m.join("memory.memsw.limit_in_bytes");
            if memsw.exists() {
                write(&memsw, &limits.memory.to_string())?;
            }
        }
        if let (Some(c), true) = (&cg.cpu, cpu_weight > 0) {
            // Below the worker's own threads (1024 each, see `join_worker_group`), so that the
            // worker stops a bot that answered before that bot's helpers can ponder on.
            write(&c.join("cpu.shares"), "256")?;
        }
        if let Some(p) = &cg.pids {
            write(&p.join("pids.max"), &limits.processes.to_string())?;
        }
        let paths: Vec<PathBuf> = cg.dirs().map(|d| d.join("cgroup.procs")).collect();
        for path in paths {
            let f = OpenOptions::new()
                .write(true)
                .open(&path)
                .map_err(|e| HostError::io("cgroup file", &path, e))?;
            cg.procs.push(f);
        }
        Ok(cg)
    }

    fn dirs(&self) -> impl Iterator<Item = &PathBuf> {
        [
            &self.memory,
            &self.pids,
            &self.cpuacct,
            &self.cpu,
            &self.unified,
        ]
        .into_iter()
        .flatten()
    }

    /// Fds the init writes "0" to, joining every hierarchy.
    pub(crate) fn procs_fds(&self) -> Vec<RawFd> {
        self.procs.iter().map(|f| f.as_raw_fd()).collect()
    }

    /// CPU time of every process of the bot, ns.
    pub(crate) fn cpu_ns(&self) -> Option<u64> {
        use std::os::unix::fs::FileExt;
        let file = self.usage.as_ref()?;
        let mut buf = [0u8; 32];
        let n = file.read_at(&mut buf, 0).ok()?;
        std::str::from_utf8(&buf[..n]).ok()?.trim().parse().ok()
    }

    /// Whether the memory limit was hit (an OOM kill, or allocations refused at the limit).
    pub(crate) fn memory_exceeded(&self) -> bool {
        let Some(dir) = &self.memory else {
            return false;
        };
        let oom = std::fs::read_to_string(dir.join("memory.oom_control")).unwrap_or_default();
        let kills = oom
            .lines()
            .find_map(|l| l.strip_prefix("oom_kill "))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(0);
        let failcnt = read_u64(&dir.join("memory.failcnt")).unwrap_or(0);
        kills > 0 || failcnt > 0
    }

    /// Whether a fork was refused because pids.max was reached.
    pub(crate) fn pids_exhausted(&self) -> bool {
        let Some(dir) = &self.pids else { return false };
        let events = std::fs::read_to_string(dir.join("pids.events")).unwrap_or_default();
        events
            .lines()
            .find_map(|l| l.strip_prefix("max "))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .is_some_and(|n| n > 0)
    }

    /// Every pid still in any of the bot's cgroups.
    pub(crate) fn pids(&self) -> Vec<i32> {
        let mut out: Vec<i32> = self
            .dirs()
            .filter_map(|d| std::fs::read_to_string(d.join("cgroup.procs")).ok())
            .flat_map(|s| {
                s.lines()
                    .filter_map(|l| l.trim().parse().ok())
                    .collect::<Vec<_>>()
            })
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Kill everything in the cgroups and wait (bounded) until they are empty.
    pub(crate) fn kill_all(&self, wait: Duration) {
        if let Some(u) = &self.unified {
            let _ = std::fs::write(u.join("cgroup.kill"), "1");
        }
        let until = Instant::now() + wait;
        loop {
            let pids = self.pids();
            if pids.is_empty() || Instant::now() > until {
                return;
            }
            for pid in pids {
                // SAFETY: kill has no memory-safety preconditions.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Remove the cgroup directories (they must be empty); returns what could not be removed.
    pub(crate) fn remove(self) -> Vec<String> {
        let mut left = Vec::new();
        for dir in self.dirs() {
            let mut ok = false;
            for _ in 0..50 {
                if std::fs::remove_dir(dir).is_ok() || !dir.exists() {
                    ok = true;
                    break;
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            if !ok {
                left.push(format!("cgroup {} could not be removed", dir.display()));
            }
        }
        left
    }
}

/// Move the worker process into the `matchfarm` cpu group with `cpu_weight` shares: bots and
/// the worker threads that time them are scheduled ahead of background load, and the worker
/// (1024 per thread) ahead of its bots (256 each).
pub(crate) fn join_worker_group(host: &HostSupport, cpu_weight: u64) -> Result<(), HostError> {
    let Some(root) = &host.cg_cpu else {
        return Ok(());
    };
    if cpu_weight == 0 {
        return Ok(());
    }
    let group = root.join("matchfarm");
    std::fs::create_dir_all(&group).map_err(|e| HostError::io("cgroup", &group, e))?;
    write(&group.join("cpu.shares"), &cpu_weight.to_string())?;
    write(&group.join("cgroup.procs"), &std::process::id().to_string())
}

/// Remove what workers that died without cleaning up left under `matchfarm/` (cgroups are
/// named `<worker pid>-<seq>`): kill their processes and remove the cgroups.
pub(crate) fn sweep_stale(host: &HostSupport) -> usize {
    let mut swept = 0;
    let roots = [
        &host.cg_memory,
        &host.cg_pids,
        &host.cg_cpuacct,
        &host.cg_cpu,
        &host.cg_unified,
    ];
    for root in roots.into_iter().flatten() {
        let Ok(entries) = std::fs::read_dir(root.join("matchfarm")) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(pid) = name.split('-').next().and_then(|p| p.parse::<i32>().ok()) else {
                continue;
            };
            if Path::new(&format!("/proc/{pid}")).exists() {
                continue;
            }
            let dir = e.path();
            let _ = std::fs::write(dir.join("cgroup.kill"), "1");
            for _ in 0..100 {
                let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
                if procs.trim().is_empty() {
                    break;
                }
                for pid in procs.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
                    // SAFETY: kill has no memory-safety preconditions.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            if std::fs::remove_dir(&dir).is_ok() {
                swept += 1;
            }
        }
    }
    swept
}

fn write(path: &Path, value: &str) -> Result<(), HostError> {
    std::fs::write(path, value).map_err(|e| HostError::io("cgroup file", path, e))
}

fn read_u64(path: &Path) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}
