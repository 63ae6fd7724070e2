//! Processes, isolation, timing and core tokens: everything of the farm that starts a program
//! and holds it to its limits, and the only crate of the farm with `unsafe` code.
//!
//! * [`bot`]: one bot process of a match ([`Bot`]): started sandboxed, one turn at a time under
//!   a CPU-fair deadline while it holds a core token, every way it can fail classified on the
//!   fault taxonomy, everything it started killed and proven gone at its end.
//! * [`prepare`] / [`process`]: starting any sandboxed program ([`prepare::start`] with a
//!   [`prepare::Spec`]: a bot, the compiler, a proboj server or player) and the started process
//!   tree with its pipes and its kill-reap-verify clean-up.
//! * the layers applied between fork and exec, strongest mode first (`SandboxMode::Full`, root
//!   with CAP_SYS_ADMIN): per-bot cgroups (`cgroup`: v1 memory + pids + cpuacct, v2
//!   `cgroup.kill`) -> clone into fresh net/pid/mount/ipc/uts namespaces under a tiny reaping
//!   init (`child`) -> private mounts (hidepid /proc, tmpfs scratch with a quota) -> rlimits ->
//!   a pooled uid per concurrent bot (`uids`) -> NO_NEW_PRIVS -> landlock ([`lock`]) -> seccomp
//!   (`seccomp`) -> execve. `Unprivileged` keeps rlimits, NO_NEW_PRIVS, landlock and seccomp,
//!   with a subreaper init instead of a pid namespace. `Off` is the plain mode: own session and
//!   process group, empty environment, rlimits.
//! * [`config`] (mode, limits, settings), [`host`] (what this host supports), [`error`] (the
//!   fault boundary of a start: the host's problems against the program's own), [`folder`]
//!   (self-healing private folders guarded by a flock), [`sized_tmpfs`] (a size-limited tmpfs on
//!   a folder of the farm's, for what untrusted code may write outside its scratch).
//! * [`timing`]: the clocks a turn is measured with and what the replay records of them;
//!   [`tokens`]: core tokens, so that no more bots think at once than the host has cores;
//!   [`hosttime`]: the CPU time the host itself took (hypervisor steal, interrupts), which
//!   the fair clock does not charge; [`capture`]: the bounded head-and-tail capture of a bot's
//!   stderr.
//! * [`steps`]: the wall time of each step of a start-up and a teardown, in the debug log.
//! * [`fdio`]: small safe wrappers of the fd syscalls (poll with a timeout, read, write, flock)
//!   for the rest of the farm, which has no `unsafe` of its own.

pub(crate) mod backoff;
pub mod bot;
pub mod capture;
pub mod cgroup;
pub(crate) mod child;
pub mod config;
pub mod error;
pub mod fdio;
pub mod folder;
pub(crate) mod group;
pub mod host;
pub mod hosttime;
pub mod lock;
pub mod prepare;
pub mod process;
pub(crate) mod rawsys;
pub mod scratch_root;
pub(crate) mod seccomp;
pub mod sized_tmpfs;
pub mod steps;
pub mod timing;
pub mod tokens;
pub(crate) mod uids;

pub use bot::{Bot, BotCommand, BotReport, SpawnError};
pub use config::{default_uid_lock_dir, Limits, SandboxConfig, SandboxMode};
pub use error::{HostError, StartError};
pub use host::HostSupport;
pub use timing::{BotTiming, TurnTiming};
pub use tokens::CoreTokens;
