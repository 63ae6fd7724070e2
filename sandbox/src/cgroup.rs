//! Per-bot cgroups (`Full` mode): v1 memory (limit, OOM evidence), v1 pids (fork bombs), v1
//! cpuacct (CPU of every process of the bot) and v2 `cgroup.kill` (kills setsid'd, double-forked
//! descendants in one write). Created before the fork. The bot joins them before its exec
//! without the kernel's global threadgroup lock, whose write side waits for an RCU grace period
//! (4-9 ms on this host, on the start's critical path, and every other cgroup operation of the
//! host queues behind it on `cgroup_mutex`): it is cloned straight into its v2 cgroup
//! (`CLONE_INTO_CGROUP`) and writes "0" to each v1 `tasks` file, which moves only the calling
//! thread, its only one (see `Join`).
//!
//! Ownership is a lock, never a pid: each bot cgroup is `matchfarm/bot-<32 hex>` in every
//! hierarchy, and its creator holds an exclusive flock on the cgroup's directory (flock works on
//! cgroupfs, v1 and v2, and a flock dies with its holder in whatever pid namespace it lived) for
//! the cgroup's whole life. Protocol, as for bot folders (`folder`): `mkdir` (a new name on
//! EEXIST), open the directory, take the flock non-blockingly, check that the path still names
//! the locked inode (a sweeper may have locked and removed the fresh directory before our
//! flock), else undo and start over under a new name. A worker that dies leaves its cgroups
//! unlocked: `sweep` takes their locks and only then clears them.

use std::fs::{File, OpenOptions};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::backoff::Backoff;
use super::{HostError, HostSupport, Limits};

mod sweep;
pub use sweep::{sweep_stale, Sweep};

/// Prefix of bot cgroup names (`bot-<32 hex>`); the sweep touches no other name.
pub(crate) const NAME_PREFIX: &str = "bot-";

/// Whether `name` is of the form only lock-guarded bot cgroups have: `bot-<32 lowercase hex>`.
pub(crate) fn is_bot_cgroup_name(name: &str) -> bool {
    name.strip_prefix(NAME_PREFIX).is_some_and(|hex| {
        hex.len() == 32
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

#[derive(Debug)]
pub(crate) struct BotCgroups {
    memory: Option<PathBuf>,
    pids: Option<PathBuf>,
    cpuacct: Option<PathBuf>,
    cpu: Option<PathBuf>,
    unified: Option<PathBuf>,
    /// v1 `tasks` files, and the v2 directory and its `cgroup.procs`, kept open for the bot.
    tasks: Vec<File>,
    v2: Option<(File, File)>,
    /// `cpuacct.usage`, kept open: read twice per turn.
    usage: Option<File>,
    /// The flocked directories (one per distinct hierarchy): our claim on the cgroups, released
    /// (closed) only after they are removed.
    locks: Vec<File>,
}

/// What the bot's clone needs to join its cgroups, as raw fds (`child` runs without libc).
#[derive(Debug, Default, Clone)]
pub(crate) struct Join {
    /// v1 `tasks` files: the bot writes "0". On a `tasks` file "0" moves only the calling
    /// thread, and the kernel then skips the global threadgroup lock (`cgroup.procs` takes it
    /// for writing: an RCU grace period, measured at 3.9 ms on average and 9 ms under load, per
    /// start); the bot's clone has one thread, so that is the whole process.
    pub tasks: Vec<RawFd>,
    /// The v2 cgroup (its directory, its `cgroup.procs`): the bot is cloned into the directory
    /// (`clone3` with `CLONE_INTO_CGROUP`, which takes that lock only for reading); where
    /// `clone3` is refused (before Linux 5.7, or filtered by a container's seccomp profile) it
    /// is cloned as before and writes "0" to `cgroup.procs`.
    pub v2: Option<(RawFd, RawFd)>,
}

/// The hierarchies of `host` in a fixed order: memory, pids, cpuacct, cpu, unified.
pub(crate) fn roots(host: &HostSupport) -> [&Option<PathBuf>; 5] {
    [
        &host.cg_memory,
        &host.cg_pids,
        &host.cg_cpuacct,
        &host.cg_cpu,
        &host.cg_unified,
    ]
}

/// `(dev, inode)` of a path or an open file: two roots that are one hierarchy (co-mounted
/// `cpu,cpuacct`) have the same.
fn identity(meta: &std::fs::Metadata) -> (u64, u64) {
    (meta.dev(), meta.ino())
}

/// Open `dir` for a flock on it.
pub(crate) fn open_dir(dir: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY)
        .open(dir)
}

/// Whether the path `dir` still names the directory open as `file`.
pub(crate) fn still_names(dir: &Path, file: &File) -> bool {
    std::fs::metadata(dir)
        .ok()
        .zip(file.metadata().ok())
        .is_some_and(|(a, b)| identity(&a) == identity(&b))
}

/// A bot's cgroup directory per root (in `roots` order) and the locks we hold on them.
type Made = ([Option<PathBuf>; 5], Vec<File>);

/// One try at `matchfarm/<name>` in every root, each made and locked by us. `Ok(None)`: the
/// name is taken or a sweeper got in between; what this try made and locked is removed again.
fn make_locked(roots: &[&Option<PathBuf>; 5], name: &str) -> Result<Option<Made>, HostError> {
    let mut dirs: [Option<PathBuf>; 5] = Default::default();
    let mut made: Vec<((u64, u64), PathBuf, File)> = Vec::new();
    let undo = |made: Vec<((u64, u64), PathBuf, File)>| {
        for (_, dir, lock) in made {
            let _ = std::fs::remove_dir(&dir);
            drop(lock);
        }
    };
    for (slot, root) in roots.iter().enumerate() {
        let Some(root) = root else { continue };
        let parent = root.join("matchfarm");
        std::fs::create_dir_all(&parent).map_err(|e| HostError::io("cgroup", &parent, e))?;
        let key = std::fs::metadata(&parent)
            .map(|m| identity(&m))
            .map_err(|e| HostError::io("cgroup", &parent, e))?;
        if let Some((_, dir, _)) = made.iter().find(|(k, _, _)| *k == key) {
            dirs[slot] = Some(dir.clone()); // the same hierarchy under another name
            continue;
        }
        let dir = parent.join(name);
        match std::fs::create_dir(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                undo(made);
                return Ok(None);
            }
            Err(e) => {
                undo(made);
                return Err(HostError::io("cgroup", &dir, e));
            }
        }
        let lock = match open_dir(&dir) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                undo(made); // a sweeper removed it already
                return Ok(None);
            }
            Err(e) => {
                let _ = std::fs::remove_dir(&dir);
                undo(made);
                return Err(HostError::io("cgroup", &dir, e));
            }
        };
        if !crate::fdio::try_lock_exclusive(&lock) || !still_names(&dir, &lock) {
            // A sweeper holds it (and removes it) or has removed it: not ours.
            undo(made);
            return Ok(None);
        }
        dirs[slot] = Some(dir.clone());
        made.push((key, dir, lock));
    }
    Ok(Some((dirs, made.into_iter().map(|(_, _, l)| l).collect())))
}

impl BotCgroups {
    /// Make `matchfarm/<name>` (`name`: `bot-<32 hex>`; another such name if that one is taken)
    /// in every available hierarchy, each locked by us, and set the limits.
    /// `cpu_weight` (v1 cpu.shares of the worker's `matchfarm` group, 0 = leave as is) lets a
    /// thinking bot take its core from background load: only token holders run at all.
    pub(crate) fn create(
        host: &HostSupport,
        name: &str,
        limits: &Limits,
        cpu_weight: u64,
    ) -> Result<Self, HostError> {
        let roots = roots(host);
        // A name no sweep would ever clear is never used.
        let mut made = match is_bot_cgroup_name(name) {
            true => make_locked(&roots, name)?,
            false => None,
        };
        for _ in 0..63 {
            if made.is_some() {
                break;
            }
            let fresh = crate::folder::random_hex()
                .map_err(|e| HostError::Setup(format!("random cgroup name: {e}")))?;
            made = make_locked(&roots, &format!("{NAME_PREFIX}{fresh}"))?;
        }
        let Some(([memory, pids, cpuacct, cpu, unified], locks)) = made else {
            return Err(HostError::Setup(
                "no free bot cgroup name under matchfarm/ after 64 tries".into(),
            ));
        };
        let mut cg = BotCgroups {
            memory,
            pids,
            cpuacct,
            cpu,
            unified,
            tasks: Vec::new(),
            v2: None,
            usage: None,
            locks,
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
        let open = |path: PathBuf| {
            OpenOptions::new()
                .write(true)
                .open(&path)
                .map_err(|e| HostError::io("cgroup file", &path, e))
        };
        let v1: Vec<PathBuf> = cg
            .dirs()
            .filter(|d| Some(*d) != cg.unified.as_ref())
            .map(|d| d.join("tasks"))
            .collect();
        for path in v1 {
            cg.tasks.push(open(path)?);
        }
        if let Some(dir) = &cg.unified {
            let fd = open_dir(dir).map_err(|e| HostError::io("cgroup", dir, e))?;
            cg.v2 = Some((fd, open(dir.join("cgroup.procs"))?));
        }
        Ok(cg)
    }

    /// Each distinct cgroup directory once (co-mounted hierarchies share one).
    fn dirs(&self) -> impl Iterator<Item = &PathBuf> {
        let mut out: Vec<&PathBuf> = Vec::new();
        for d in [
            &self.memory,
            &self.pids,
            &self.cpuacct,
            &self.cpu,
            &self.unified,
        ]
        .into_iter()
        .flatten()
        {
            if !out.contains(&d) {
                out.push(d);
            }
        }
        out.into_iter()
    }

    /// How the bot joins these cgroups (the fds stay open as long as `self`).
    pub(crate) fn join(&self) -> Join {
        Join {
            tasks: self.tasks.iter().map(|f| f.as_raw_fd()).collect(),
            v2: self
                .v2
                .as_ref()
                .map(|(dir, procs)| (dir.as_raw_fd(), procs.as_raw_fd())),
        }
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

    /// Kill everything in the cgroups and wait (bounded) until they are empty. A pid that reads
    /// as 0 (a process outside this pid namespace, which none of the bot's is) is never
    /// signalled: `cleanup` reports it as left over.
    pub(crate) fn kill_all(&self, wait: Duration) {
        if let Some(u) = &self.unified {
            let _ = std::fs::write(u.join("cgroup.kill"), "1");
        }
        let until = Instant::now() + wait;
        let mut backoff = Backoff::up_to(Duration::from_millis(1));
        loop {
            let pids = self.pids();
            if pids.is_empty() || Instant::now() > until {
                return;
            }
            for pid in pids {
                crate::fdio::kill_pid(pid, libc::SIGKILL);
            }
            backoff.pause();
        }
    }

    /// Remove the cgroup directories (they must be empty), then give up their locks (what could
    /// not be removed is left to a later sweep); returns what could not be removed.
    pub(crate) fn remove(self) -> Vec<String> {
        let mut left = Vec::new();
        for dir in self.dirs() {
            let mut ok = false;
            let until = Instant::now() + Duration::from_millis(100);
            let mut backoff = Backoff::up_to(Duration::from_millis(2));
            while Instant::now() <= until {
                if std::fs::remove_dir(dir).is_ok() || !dir.exists() {
                    ok = true;
                    break;
                }
                backoff.pause();
            }
            if !ok {
                left.push(format!("cgroup {} could not be removed", dir.display()));
            }
        }
        drop(self.locks);
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

fn write(path: &Path, value: &str) -> Result<(), HostError> {
    std::fs::write(path, value).map_err(|e| HostError::io("cgroup file", path, e))
}

fn read_u64(path: &Path) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}
