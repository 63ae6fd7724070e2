//! The worker side of a match's JavaScript child: [`JsChild`] starts `farm __js-bot` (or the
//! [`JsHost`]'s program) in the sandbox, sends it each load and turn ([`super::wire`]) and waits
//! for the answer on the wall clock. A call that runs past its limit plus [`KILL_GRACE`] (bot
//! code stuck in a QuickJS built-in that never checks for interrupts) gets the child killed and
//! is that bot's timeout; a child that dies under a bot is that bot's fault; a child that cannot
//! start or speaks nonsense is the host's.

use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use games::qianwang::{Forfeit, Game, Move, RuntimeKind, Side};
use sandbox::fdio::{self, PollFd};
use sandbox::lock::FsPolicy;
use sandbox::prepare::{self, Spec};
use sandbox::process::Process;
use sandbox::SandboxConfig;

use super::bot::TurnFault;
use super::wire::{self, Reply, Request};
use super::{Limits, LoadError};

/// How long past a call's own limit the worker waits before it kills the child. The bot's own
/// interrupt handler stops ordinary code at the limit itself (with a precise detail); this is
/// only for code that never reaches it.
pub const KILL_GRACE: Duration = Duration::from_millis(250);
/// How long a fresh child may take to say it is ready (no bot code has run yet: the host's).
const STARTUP_LIMIT: Duration = Duration::from_secs(10);
/// The hidden subcommand of `farm` that runs [`super::serve_child`].
pub const CHILD_SUBCOMMAND: &str = "__js-bot";
/// RLIMIT_CPU of a child, seconds: a backstop only (every call has its wall-clock limit), high
/// enough for the longest match at the move limit.
const CHILD_CPU_SECONDS: u64 = 3600;

/// Where the JavaScript bots of a match run: the program to start as the child (it must run
/// [`super::serve_child`] when given [`CHILD_SUBCOMMAND`]) and the sandbox it runs in.
#[derive(Debug, Clone)]
pub struct JsHost {
    pub program: PathBuf,
    pub sandbox: SandboxConfig,
}

impl JsHost {
    /// This very program (`farm`) as the child, under `sandbox`.
    pub fn this_program(sandbox: SandboxConfig) -> JsHost {
        let program = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("/proc/self/exe"));
        JsHost { program, sandbox }
    }
}

/// A call to the child that did not give an answer.
enum CallError {
    /// Past the limit: the child has been killed.
    Timeout,
    /// The child ended on its own (how, in words) and the fault that is for the bot running.
    Died(Forfeit, String),
    /// The host's problem (pipes, nonsense from the child).
    Host(String),
}

/// Why a turn did not give a move.
pub(crate) enum TurnError {
    Bot(TurnFault),
    Host(String),
}

/// The running child of one match.
pub(crate) struct JsChild {
    proc_: Option<Process>,
    /// Plies of the game the child has been sent.
    sent: usize,
    /// Bytes read from the child's stdout not yet part of a whole frame.
    buf: Vec<u8>,
}

impl JsChild {
    /// Starts the child and waits until it is ready. An `Err` is the host's
    /// ([`LoadError::EngineStart`]).
    pub fn start(host: &JsHost) -> Result<JsChild, LoadError> {
        let mut limits = host.sandbox.limits.clone();
        limits.cpu_seconds = limits.cpu_seconds.max(CHILD_CPU_SECONDS);
        let args = [CHILD_SUBCOMMAND.to_string()];
        let spec = Spec {
            program: &host.program,
            args: &args,
            env: Vec::new(),
            copy_program: false,
            extra: FsPolicy::default(),
            work_dir: None,
            tmpfs_scratch: true,
            cwd: None,
            stdin_null: false,
            limits,
            slot: 0,
        };
        let proc_ = prepare::start(&host.sandbox, &spec).map_err(|e| {
            LoadError::EngineStart(format!("cannot start {}: {e}", host.program.display()))
        })?;
        let mut child = JsChild {
            proc_: Some(proc_),
            sent: 0,
            buf: Vec::new(),
        };
        let why = match child.receive(Instant::now() + STARTUP_LIMIT) {
            Ok(Reply::Ready) => return Ok(child),
            Ok(other) => format!("the JavaScript child said {other:?} at start"),
            Err(CallError::Timeout) => format!(
                "the JavaScript child was not ready within {} s",
                STARTUP_LIMIT.as_secs()
            ),
            Err(CallError::Died(_, how) | CallError::Host(how)) => {
                format!("the JavaScript child failed to start: {how}")
            }
        };
        Err(LoadError::EngineStart(why))
    }

    /// Loads `side`'s program within `limits.load_ms`.
    pub fn load(
        &mut self,
        side: Side,
        code: &str,
        seed: u64,
        limits: &Limits,
    ) -> Result<(), LoadError> {
        let req = Request::Load {
            side,
            code: code.to_string(),
            seed,
            limits: *limits,
        };
        match self.call(&req, Duration::from_millis(limits.load_ms)) {
            Ok(Reply::Loaded) => Ok(()),
            Ok(Reply::LoadFailed(e)) => Err(e),
            Ok(other) => Err(LoadError::EngineStart(format!(
                "the JavaScript child answered a load with {other:?}"
            ))),
            Err(CallError::Timeout) => Err(LoadError::Timeout { ms: limits.load_ms }),
            Err(CallError::Died(Forfeit::Runtime(RuntimeKind::Memory), _)) => {
                Err(LoadError::Memory {
                    limit_bytes: limits.memory_bytes,
                })
            }
            Err(CallError::Died(_, how)) => Err(LoadError::Engine(format!(
                "the JavaScript engine died while loading: {how}"
            ))),
            Err(CallError::Host(why)) => Err(LoadError::EngineStart(why)),
        }
    }

    /// Asks the loaded bot of the side to move in `game` for its move within `move_ms`.
    pub fn turn(&mut self, game: &Game, move_ms: u64) -> Result<(Move, u32), TurnError> {
        let history = game.history();
        let plies = history.get(self.sent..).unwrap_or_default().to_vec();
        let req = Request::Turn {
            side: game.to_move(),
            plies,
        };
        self.sent = history.len();
        match self.call(&req, Duration::from_millis(move_ms)) {
            Ok(Reply::Moved { mv, points }) => Ok((mv, points)),
            Ok(Reply::Fault { fault, detail }) => Err(TurnError::Bot(TurnFault {
                fault: fault.into(),
                detail,
            })),
            Ok(Reply::Host(why)) => Err(TurnError::Host(why)),
            Ok(other) => Err(TurnError::Host(format!(
                "the JavaScript child answered a turn with {other:?}"
            ))),
            Err(CallError::Timeout) => Err(TurnError::Bot(TurnFault {
                fault: Forfeit::Runtime(RuntimeKind::Timeout),
                detail: format!(
                    "onTurn did not return within the {move_ms} ms move limit (stopped by force)"
                ),
            })),
            Err(CallError::Died(fault, how)) => Err(TurnError::Bot(TurnFault {
                fault,
                detail: format!("the JavaScript engine died during onTurn: {how}"),
            })),
            Err(CallError::Host(why)) => Err(TurnError::Host(why)),
        }
    }

    /// Sends `req` and waits for the reply at most `limit` + [`KILL_GRACE`].
    fn call(&mut self, req: &Request, limit: Duration) -> Result<Reply, CallError> {
        let frame = wire::encode(req).map_err(|e| CallError::Host(e.to_string()))?;
        let deadline = Instant::now() + limit + KILL_GRACE;
        self.send(&frame, deadline)?;
        self.receive(deadline)
    }

    fn process(&self) -> Result<&Process, CallError> {
        self.proc_
            .as_ref()
            .ok_or_else(|| CallError::Host("the JavaScript child is gone".into()))
    }

    fn send(&mut self, frame: &[u8], deadline: Instant) -> Result<(), CallError> {
        let mut written = 0;
        while written < frame.len() {
            let fd = match &self.process()?.stdin {
                Some(fd) => fd.as_raw_fd(),
                None => return Err(CallError::Host("the child has no stdin".into())),
            };
            match fdio::write(fd, &frame[written..]) {
                Ok(n) => written += n,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    self.wait(PollFd::new(fd, fdio::OUT), deadline)?;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Err(self.died()),
                Err(e) => return Err(CallError::Host(format!("writing to the child: {e}"))),
            }
        }
        Ok(())
    }

    /// Reads one whole frame.
    fn receive(&mut self, deadline: Instant) -> Result<Reply, CallError> {
        loop {
            if self.buf.len() >= 4 {
                let header = [self.buf[0], self.buf[1], self.buf[2], self.buf[3]];
                let n = wire::body_len(header).map_err(|e| CallError::Host(e.to_string()))?;
                if self.buf.len() >= 4 + n {
                    let reply = serde_json::from_slice(&self.buf[4..4 + n]).map_err(|e| {
                        CallError::Host(format!("the child's answer is not a reply: {e}"))
                    });
                    self.buf.drain(..4 + n);
                    return reply;
                }
            }
            let fd = self.process()?.stdout.as_raw_fd();
            self.buf.reserve(64 << 10);
            match fdio::read_append(fd, &mut self.buf) {
                Ok(0) => return Err(self.died()),
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    self.wait(PollFd::readable(fd), deadline)?;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(CallError::Host(format!("reading from the child: {e}"))),
            }
        }
    }

    /// Waits until `fd` is ready; past `deadline` the child is killed (a timeout).
    fn wait(&mut self, fd: PollFd, deadline: Instant) -> Result<(), CallError> {
        let left = deadline.saturating_duration_since(Instant::now());
        let mut fds = [fd];
        match fdio::poll(&mut fds, left) {
            Ok(0) => {
                if let Some(p) = &self.proc_ {
                    p.kill_now();
                }
                Err(CallError::Timeout)
            }
            Ok(_) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Ok(()),
            Err(e) => Err(CallError::Host(format!("waiting for the child: {e}"))),
        }
    }

    /// The child closed its end: how it ended, and whose fault that is.
    fn died(&mut self) -> CallError {
        let Some(p) = self.proc_.as_mut() else {
            return CallError::Host("the JavaScript child is gone".into());
        };
        let status = p.wait_status(Duration::from_millis(500));
        let mut tail = vec![0u8; 2048];
        let n = fdio::read(p.stderr.as_raw_fd(), &mut tail).unwrap_or(0);
        let said = String::from_utf8_lossy(tail.get(..n).unwrap_or_default())
            .trim()
            .to_string();
        let said = if said.is_empty() {
            String::new()
        } else {
            format!(" ({said})")
        };
        match status {
            Some(st) if libc::WIFSIGNALED(st) => {
                let sig = libc::WTERMSIG(st);
                let fault = match sig {
                    libc::SIGXCPU => Forfeit::Runtime(RuntimeKind::Timeout),
                    // Only the memory cgroup (or the kernel's OOM killer) kills it this way.
                    libc::SIGKILL => Forfeit::Runtime(RuntimeKind::Memory),
                    _ => Forfeit::Error,
                };
                CallError::Died(fault, format!("killed by signal {sig}{said}"))
            }
            Some(st) if libc::WIFEXITED(st) => CallError::Died(
                Forfeit::Error,
                format!("exited with status {}{said}", libc::WEXITSTATUS(st)),
            ),
            _ => CallError::Died(Forfeit::Error, format!("ended{said}")),
        }
    }
}

impl Drop for JsChild {
    fn drop(&mut self) {
        if let Some(p) = self.proc_.take() {
            let left = p.cleanup();
            if !left.is_empty() {
                tracing::warn!(?left, "a JavaScript child left processes or files behind");
            }
        }
    }
}
