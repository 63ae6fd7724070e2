//! One bot process of a match: start it (sandboxed per `SandboxConfig`), exchange one turn at a
//! time under a CPU-fair deadline (the bot runs only while it holds a core token; between turns
//! it is SIGSTOPped), classify every way it can fail, and at the end kill everything it started
//! and prove that nothing is left.
//!
//! Start-up failures are split on the fault boundary (see [`crate::error`] for the rule):
//! [`SpawnError::Bot`] is the bot's `start_failure` (its program is not executable, ENOEXEC),
//! [`SpawnError::Host`] is the host's (our program copy, scratch, uid lease, cgroups, mounts,
//! landlock/seccomp set-up, a noexec scratch mount, ...) and must never be scored.

mod classify;
mod exchange;
mod uncounted_wait;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use shared::{Fault, FaultKind};

use crate::capture::HeadTail;
use crate::lock::FsPolicy;
use crate::prepare::{self, Spec};
use crate::process::Process;
use crate::timing::{BotTiming, CpuClock, RunQueueClock};
use crate::{CoreTokens, HostError, SandboxConfig, StartError};

/// An executable to run as a bot (already compiled).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BotCommand {
    pub program: PathBuf,
    pub args: Vec<String>,
}

impl BotCommand {
    pub fn new(program: impl Into<PathBuf>) -> Self {
        BotCommand {
            program: program.into(),
            args: Vec::new(),
        }
    }
}

/// What the replay needs from a finished bot.
#[derive(Debug, Clone, Default)]
pub struct BotReport {
    /// The kept head and tail of its stderr (lossy UTF-8).
    pub stderr_tail: String,
    /// Bytes of stderr in total.
    pub stderr_bytes: u64,
    pub timing: BotTiming,
    /// Empty when clean: otherwise what could not be killed or removed.
    pub leftovers: Vec<String>,
    /// The fault that ended it, if any.
    pub fault: Option<Fault>,
}

/// Why [`Bot::spawn`] did not give a running bot.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// The bot's own fault (a `start_failure`): its program cannot be executed.
    #[error("{}", .0.detail)]
    Bot(Fault),
    /// The host's: the match must fail as an infrastructure problem, never be scored.
    #[error("could not start {}: {source}", program.display())]
    Host {
        program: PathBuf,
        #[source]
        source: HostError,
    },
}

impl SpawnError {
    /// The bot's fault, if it is one.
    pub fn bot_fault(&self) -> Option<&Fault> {
        match self {
            SpawnError::Bot(f) => Some(f),
            SpawnError::Host { .. } => None,
        }
    }
}

/// A running bot. `Send`: a match may move it between threads.
#[derive(Debug)]
pub struct Bot {
    proc_: Option<Process>,
    tokens: CoreTokens,
    cfg: SandboxConfig,
    stderr: HeadTail,
    timing: BotTiming,
    cpu: Option<CpuClock>,
    runq: Option<RunQueueClock>,
    /// Set once the bot has faulted: it is dead and every later exchange repeats the fault.
    fault: Option<Fault>,
    /// stdout bytes received but not yet consumed (only ever non-empty inside `exchange`).
    pending: Vec<u8>,
    /// Host-wide OOM kills when the bot started (to tell the host's OOM killer from the bot).
    oom_kills_at_start: Option<u64>,
    /// Set when the bot's end was the host's doing (see `classify`): not a fault of the bot.
    host_failure: Option<String>,
    /// Time charged for the last exchange (see [`Bot::last_charge`]).
    last_charge: Duration,
    /// Keeps the host-time sampler running while this bot lives (fair clock only).
    _host_time: Option<crate::hosttime::Enlisted>,
}

impl Bot {
    /// Start the program: it runs (uncharged, holding a core token) until it waits for input or
    /// `startup_grace` passes, then is stopped until its first exchange.
    pub fn spawn(
        cmd: &BotCommand,
        cfg: &SandboxConfig,
        tokens: &CoreTokens,
        slot: usize,
    ) -> Result<Bot, SpawnError> {
        let host = |source: HostError| SpawnError::Host {
            program: cmd.program.clone(),
            source,
        };
        // The program path comes from the compile cache or the artifact store: the farm's files.
        let meta = std::fs::metadata(&cmd.program)
            .map_err(|e| host(HostError::io("program", &cmd.program, e)))?;
        if !meta.is_file() {
            return Err(host(HostError::io(
                "program",
                &cmd.program,
                std::io::Error::other("not a regular file"),
            )));
        }
        let spec = Spec {
            program: &cmd.program,
            args: &cmd.args,
            env: Vec::new(),
            copy_program: true,
            extra: FsPolicy::default(),
            work_dir: None,
            tmpfs_scratch: true,
            cwd: None,
            stdin_null: false,
            limits: cfg.limits.clone(),
            slot,
        };
        let token = tokens.acquire();
        let proc_ = prepare::start(cfg, &spec).map_err(|e| match e {
            StartError::Host(e) => host(e),
            e @ StartError::Program { .. } => SpawnError::Bot(Fault {
                kind: FaultKind::StartFailure,
                turn: 0,
                detail: format!("could not start {}: {e}", cmd.program.display()),
            }),
        })?;
        let bot_pid = proc_.bot_pid;
        let bot = Bot {
            proc_: Some(proc_),
            tokens: tokens.clone(),
            cfg: cfg.clone(),
            stderr: HeadTail::new(cfg.stderr_keep),
            timing: BotTiming::default(),
            cpu: bot_pid.and_then(CpuClock::of),
            runq: bot_pid.and_then(RunQueueClock::of),
            fault: None,
            pending: Vec::new(),
            oom_kills_at_start: classify::host_oom_kills(),
            host_failure: None,
            last_charge: Duration::ZERO,
            _host_time: cfg.fair_clock.then(crate::hosttime::enlist),
        };
        if let Some(pid) = bot_pid {
            wait_until_blocked(pid, cfg.startup_grace);
        }
        bot.pause();
        drop(token);
        Ok(bot)
    }

    /// The configuration this bot runs under.
    pub fn config(&self) -> &SandboxConfig {
        &self.cfg
    }

    /// The host pid of the bot's main process (= its process group), while it runs.
    pub fn pid(&self) -> Option<i32> {
        self.proc_.as_ref().and_then(|p| p.bot_pid)
    }

    /// The fault that ended this bot, if any.
    pub fn fault(&self) -> Option<&Fault> {
        self.fault.as_ref()
    }

    /// Why the bot's end was the host's fault, not the bot's (e.g. the host's OOM killer): a
    /// referee that sees this after a fault must fail the match as an infrastructure problem.
    pub fn host_failure(&self) -> Option<&str> {
        self.host_failure.as_deref()
    }

    /// The time charged to the bot for its last exchange, as its deadline counts it: wall
    /// time less run-queue waits (never less than its CPU time) once the turn passes its limit,
    /// plain wall time before that. An answer is charged less than its deadline; a timeout at
    /// least the deadline (at the wall-time cap, the wall time).
    pub fn last_charge(&self) -> Duration {
        self.last_charge
    }

    /// Timing so far.
    pub fn timing(&self) -> &BotTiming {
        &self.timing
    }

    /// Write `input` and wait for one complete answer line within `deadline` (see the module
    /// docs for how the deadline is measured). Returns the line without LF / CRLF.
    pub fn exchange(
        &mut self,
        turn: u32,
        input: &[u8],
        deadline: Duration,
    ) -> Result<Vec<u8>, Fault> {
        self.exchange_within(turn, input, deadline, deadline)
    }

    /// [`Bot::exchange`] for a turn whose limit is `limit` but which may run on to `deadline`
    /// (a time bank covers the rest): the bot times out only at `deadline`, and the time it is
    /// charged ([`Bot::last_charge`]) is measured on the fair clock once the turn passes `limit`.
    pub fn exchange_within(
        &mut self,
        turn: u32,
        input: &[u8],
        limit: Duration,
        deadline: Duration,
    ) -> Result<Vec<u8>, Fault> {
        self.last_charge = Duration::ZERO;
        if let Some(f) = &self.fault {
            return Err(Fault { turn, ..f.clone() });
        }
        let result = self.exchange_inner(turn, input, limit.min(deadline), deadline);
        if let Err(f) = &result {
            self.fault = Some(f.clone());
            if let Some(p) = &self.proc_ {
                p.kill_now();
            }
        }
        result
    }

    /// Send SIGKILL to every process of this bot now, without waiting for them to end. A match
    /// that ends kills all its bots first and then [`finish`](Self::finish)es each, so the
    /// kernel tears their processes and pid namespaces down side by side instead of one bot
    /// after another. `finish` still kills, reaps and verifies.
    pub fn kill(&self) {
        if let Some(p) = &self.proc_ {
            p.kill_now();
        }
    }

    /// Kill every process of this bot, reap, remove its folder and cgroups, verify that nothing
    /// is left, and hand back what the replay needs.
    pub fn finish(mut self) -> BotReport {
        let leftovers = self.teardown();
        BotReport {
            stderr_tail: self.stderr.render(),
            stderr_bytes: self.stderr.total(),
            timing: std::mem::take(&mut self.timing),
            leftovers,
            fault: self.fault.take(),
        }
    }

    fn teardown(&mut self) -> Vec<String> {
        let Some(p) = self.proc_.take() else {
            return Vec::new();
        };
        p.kill_now();
        let fd = p.stderr.try_clone().ok();
        let left = p.cleanup();
        if let Some(fd) = fd {
            self.drain_stderr_fd(std::os::fd::AsRawFd::as_raw_fd(&fd));
        }
        left
    }

    fn pause(&self) {
        if self.cfg.stop_between_turns {
            if let Some(p) = &self.proc_ {
                p.signal_group(libc::SIGSTOP);
            }
        }
    }

    fn resume(&self) {
        if let Some(p) = &self.proc_ {
            p.signal_group(libc::SIGCONT);
        }
    }

    fn cpu_ns(&self) -> u64 {
        let cg = self
            .proc_
            .as_ref()
            .and_then(|p| p.res.cgroups.as_ref())
            .and_then(|c| c.cpu_ns());
        cg.or_else(|| self.cpu.and_then(|c| c.read_ns()))
            .unwrap_or(0)
    }

    fn waited_ns(&self) -> u64 {
        self.main_sched().1
    }

    /// (on-CPU, run-queue wait) of the bot's main thread so far, ns (zeros when unreadable).
    fn main_sched(&self) -> (u64, u64) {
        self.runq.as_ref().and_then(|r| r.read()).unwrap_or((0, 0))
    }
}

impl Drop for Bot {
    fn drop(&mut self) {
        let left = self.teardown();
        if !left.is_empty() {
            tracing::warn!(
                ?left,
                "bot dropped without finish left processes or files behind"
            );
        }
    }
}

/// Let a freshly started bot run until it blocks (on reading its input, typically).
fn wait_until_blocked(pid: i32, grace: Duration) {
    let until = Instant::now() + grace;
    let path = format!("/proc/{pid}/stat");
    while Instant::now() < until {
        let Ok(stat) = std::fs::read(&path) else {
            return;
        };
        match crate::timing::stat_state(&stat) {
            Some('S') | Some('T') | Some('t') | Some('Z') | Some('X') | None => return,
            _ => std::thread::sleep(Duration::from_micros(100)),
        }
    }
}
