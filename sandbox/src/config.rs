//! How bots are run: the isolation mode, the resource limits and every other setting of the
//! sandbox ([`SandboxConfig`]), and the one-line description of what is in force.

use std::path::PathBuf;
use std::time::Duration;

use crate::{seccomp, HostSupport};

/// Which isolation to apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SandboxMode {
    /// `Full` when the worker is root with CAP_SYS_ADMIN, else `Unprivileged`.
    #[default]
    Auto,
    /// Plain: own session and process group, empty environment, rlimits. No isolation.
    Off,
    /// No privileges needed: rlimits, NO_NEW_PRIVS, landlock, seccomp, a subreaper init.
    Unprivileged,
    /// Everything: cgroups, namespaces, private mounts, uid pool, plus all of `Unprivileged`.
    Full,
}

impl SandboxMode {
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::Auto => "auto",
            SandboxMode::Off => "off",
            SandboxMode::Unprivileged => "unprivileged",
            SandboxMode::Full => "full",
        }
    }
}

/// Resource limits of one bot (per process where the kernel counts per process).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// RLIMIT_AS, bytes.
    pub address_space: u64,
    /// cgroup memory limit (resident + page cache + tmpfs scratch), bytes; `Full` mode only.
    pub memory: u64,
    /// RLIMIT_CPU for the whole match, seconds (soft; the hard limit is one second more).
    pub cpu_seconds: u64,
    /// Processes + threads (cgroup pids.max; RLIMIT_NPROC for the bot's own uid).
    pub processes: u64,
    /// RLIMIT_NOFILE.
    pub open_files: u64,
    /// RLIMIT_FSIZE, bytes.
    pub file_size: u64,
    /// Size of the private scratch tmpfs in `Full` mode, bytes.
    pub scratch_quota: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            address_space: 1 << 30,
            memory: 1 << 30,
            cpu_seconds: 60,
            processes: 32,
            open_files: 64,
            file_size: 16 << 20,
            scratch_quota: 16 << 20,
        }
    }
}

/// Everything about how bots are run. `Default` is the production setting.
#[derive(Debug, Clone)]
pub struct SandboxConfig {
    pub mode: SandboxMode,
    pub limits: Limits,
    /// Bytes of stderr kept for the replay (head + tail).
    pub stderr_keep: usize,
    /// More stderr than this in one match is an `output_flood` fault.
    pub stderr_limit: u64,
    /// Where private bot folders are made (one per bot, `bot-<random hex>`, removed at its end;
    /// abandoned ones are swept by their flock). Must be on an exec-able filesystem: the bot's
    /// program copy runs from there. Default `$TMPDIR/matchfarm-scratch`; the farm's command
    /// line picks [`crate::scratch_root::default_root`] instead.
    pub scratch_root: PathBuf,
    /// Where uid leases (flocked `<uid>.lock` files) live: one host-wide folder shared by every
    /// worker of the host (see the `uids` module). Default [`default_uid_lock_dir`].
    pub uid_lock_dir: PathBuf,
    /// First uid of the pool used when the worker is root (one uid per concurrent bot).
    pub uid_base: u32,
    /// Size of the uid pool. Workers that cannot share `uid_lock_dir` need disjoint ranges.
    pub uid_count: u32,
    /// The cgroup filesystem root (v1 controllers below it, v2 at `unified/` or at the root).
    pub cgroup_root: PathBuf,
    /// How long a freshly started bot may run (uncharged) until it waits for input.
    pub startup_grace: Duration,
    /// Stop bots (SIGSTOP) between their turns. Off only for the fairness benchmark.
    pub stop_between_turns: bool,
    /// Do not charge a bot for time it spent runnable but waiting for a core (run-queue wait).
    pub fair_clock: bool,
    /// Even with the fair clock, a turn never lasts more than this many deadlines of wall time.
    pub max_wall_factor: u32,
    /// Extra read-only paths (besides /usr and the program's folder) a bot may read.
    pub extra_read_paths: Vec<PathBuf>,
    /// `Full` mode: cgroup v1 cpu.shares of the `matchfarm` group, which holds the worker process
    /// (1024 per thread) and every bot's cgroup (256 each); 1024 = one ordinary process. A
    /// thinking bot and the worker timing it get their cores ahead of background load.
    /// 0 = no cpu cgroup changes.
    pub cpu_weight: u64,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            mode: SandboxMode::Auto,
            limits: Limits::default(),
            stderr_keep: 16 << 10,
            stderr_limit: 8 << 20,
            scratch_root: std::env::temp_dir().join("matchfarm-scratch"),
            uid_lock_dir: default_uid_lock_dir(),
            uid_base: 60001,
            uid_count: 256,
            cgroup_root: PathBuf::from("/sys/fs/cgroup"),
            startup_grace: Duration::from_millis(1000),
            stop_between_turns: true,
            fair_clock: true,
            max_wall_factor: 4,
            extra_read_paths: Vec::new(),
            cpu_weight: 32768,
        }
    }
}

/// Where uid leases live by default: `/run/matchfarm/uids` for a root worker (host-wide, and a
/// tmpfs, so leases of a rebooted host are gone), else `$TMPDIR/matchfarm-uids` (a non-root
/// worker never switches uids, so it never leases one).
pub fn default_uid_lock_dir() -> PathBuf {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        PathBuf::from("/run/matchfarm/uids")
    } else {
        std::env::temp_dir().join("matchfarm-uids")
    }
}

impl SandboxConfig {
    /// A plain configuration (no isolation), e.g. for trusted bots or benchmarks.
    pub fn plain() -> Self {
        SandboxConfig {
            mode: SandboxMode::Off,
            ..Self::default()
        }
    }

    /// The mode actually in force on this host (`Auto` resolved).
    pub fn effective_mode(&self) -> SandboxMode {
        match self.mode {
            SandboxMode::Auto if HostSupport::get().full_possible() => SandboxMode::Full,
            SandboxMode::Auto => SandboxMode::Unprivileged,
            m => m,
        }
    }

    /// One line saying which mode is in force and what it enforces (logged at start).
    pub fn describe(&self) -> String {
        let host = HostSupport::get();
        let l = &self.limits;
        let mode = self.effective_mode();
        let mut parts = vec![format!(
            "sandbox mode {} (configured {})",
            mode.as_str(),
            self.mode.as_str()
        )];
        parts.push(format!(
            "rlimits AS {} MiB, CPU {} s/match, NPROC {}, NOFILE {}, FSIZE {} MiB, no core",
            l.address_space >> 20,
            l.cpu_seconds,
            l.processes,
            l.open_files,
            l.file_size >> 20
        ));
        parts.push(format!(
            "own session + process group, empty environment, folder in {}",
            self.scratch_root.display()
        ));
        if mode != SandboxMode::Off {
            match host.landlock_abi {
                abi if abi > 0 => parts.push(format!(
                    "landlock ABI {abi}: read /usr, read+exec its own program copy, read-write scratch only{}",
                    if abi >= 6 { ", signals scoped" } else { "" }
                )),
                _ => parts.push("landlock UNAVAILABLE (filesystem not confined)".into()),
            }
            parts.push(format!("NO_NEW_PRIVS, {}", seccomp::describe()));
        }
        match mode {
            SandboxMode::Full => {
                parts.push(
                    "namespaces net+pid+mount+ipc+uts, reaping init as pid 1, hidepid /proc".into(),
                );
                parts.push(format!(
                    "tmpfs scratch {} MiB, uid pool {}..{} leased in {}",
                    l.scratch_quota >> 20,
                    self.uid_base,
                    self.uid_base + self.uid_count.max(1) - 1,
                    self.uid_lock_dir.display()
                ));
                parts.push(host.cgroup_summary(l));
            }
            SandboxMode::Unprivileged => parts
                .push("no namespaces/uid switch: subreaper init kills leftover children".into()),
            _ => {}
        }
        parts.join("; ")
    }
}
