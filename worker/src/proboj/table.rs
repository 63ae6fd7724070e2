//! The state a proboj game is played with, shared by the game's set-up and teardown (`game`)
//! and the protocol relay (`protocol`): the run options, the process table, how a game ended
//! and what it left behind, and the one way to write to a player.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sandbox::{CoreTokens, Limits, SandboxConfig};

use super::log::Log;
use super::pipe::{self, LineReader, PipeError};
use super::process::SandboxedProcess;

/// How games are run (beyond the config files).
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub sandbox: SandboxConfig,
    pub server_limits: Limits,
    pub player_limits: Limits,
    /// Stop players (SIGSTOP) while the server is not waiting on them.
    pub fair: bool,
    /// The worker's core tokens: in fair mode a player holds one while it runs for a READ, so
    /// no more players think at once than the host has cores (None: no limit).
    pub tokens: Option<CoreTokens>,
    /// How long a freshly started player may run until it waits for input.
    pub startup_grace: Duration,
    /// Timeout for a write to a player (the protocol's 5 s).
    pub write_timeout: Duration,
    /// End the game when the server is silent for this long (None: never).
    pub server_timeout: Option<Duration>,
    /// Bytes of stderr kept per process log.
    pub stderr_cap: u64,
    /// Bytes a single message may hold.
    pub max_message: usize,
    /// Bytes a player's folders may hold (each player works in a private copy of them per
    /// game, see `copies`).
    pub folder_limit: u64,
    pub verbose: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            sandbox: SandboxConfig::default(),
            server_limits: Limits {
                address_space: 4 << 30,
                memory: 4 << 30,
                cpu_seconds: 3600,
                processes: 64,
                open_files: 256,
                file_size: 256 << 20,
                scratch_quota: 64 << 20,
            },
            player_limits: Limits {
                cpu_seconds: 1800,
                ..Limits::default()
            },
            fair: true,
            tokens: None,
            startup_grace: Duration::from_secs(2),
            write_timeout: Duration::from_secs(5),
            server_timeout: None,
            stderr_cap: 64 << 20,
            max_message: 64 << 20,
            folder_limit: super::copies::FOLDER_LIMIT,
            verbose: false,
        }
    }
}

/// How a game ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// The server sent END.
    End,
    /// The server exited (or closed stdout) without END.
    ServerExited,
    /// Ctrl-C.
    Interrupted,
    /// The game could not run or was aborted: the reason.
    Failed(String),
}

/// What a game left behind.
#[derive(Debug, Clone)]
pub struct GameOutcome {
    pub gamefolder: String,
    pub folder: PathBuf,
    /// Player names as in games.json (one per config player, before processes_per_player).
    pub players: Vec<String>,
    /// The last SCORES the server sent (in its order).
    pub scores: Option<Vec<(String, f64)>>,
    pub ending: Ending,
    /// Warnings worth showing (also in the server log).
    pub warnings: Vec<String>,
    /// Commands relayed.
    pub commands: u64,
    /// Set (with `ending` = `Failed`) when the host, not a program, kept the game from running
    /// (a sandbox set-up or exec failure on the farm's side): never to be scored.
    pub host_problem: Option<String>,
}

pub(super) struct Proc {
    pub name: String,
    pub process: Option<SandboxedProcess>,
    pub log: Arc<Log>,
    pub reader: LineReader,
    pub timeout: Duration,
    pub alive: bool,
    pub paused_by_server: bool,
    /// How much a player's private folder copy may hold (None: the server).
    pub budget: Option<super::copies::Budget>,
}

pub(super) struct Table {
    pub server: Proc,
    pub players: Vec<Proc>,
}

/// Write to a player, letting it run while its pipe is full (fair mode keeps it stopped).
pub(super) fn write_player(
    p: &mut Proc,
    data: &[u8],
    opts: &RunOptions,
    stop: &AtomicBool,
) -> Result<(), PipeError> {
    let Some(proc_) = &p.process else {
        return Err(PipeError::Closed);
    };
    let Some(fd) = proc_.stdin_fd() else {
        return Err(PipeError::Closed);
    };
    let mut resumed = false;
    let paused = p.paused_by_server;
    let r = pipe::write_all(
        fd,
        data,
        Some(Instant::now() + opts.write_timeout),
        stop,
        || {
            if opts.fair && !paused {
                proc_.signal(libc::SIGCONT);
                resumed = true;
            }
        },
    );
    if resumed {
        proc_.signal(libc::SIGSTOP);
    }
    r
}
