//! One proboj game: create its folder, start the server and the players (sandboxed, working
//! directory = the game folder), send CONFIG, then relay the server's commands until END, the
//! server's exit, or a stop request; finally kill everything, append exit lines to the logs.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::sandbox::{Limits, SandboxConfig, StartError};

use super::config::{Command, Config, Game};
use super::log::{Drain, Log};
use super::pipe::{self, LineReader, PipeError};
use super::process::{describe_status, Launch, SandboxedProcess};
use super::protocol;

/// How games are run (beyond the config files).
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub sandbox: SandboxConfig,
    pub server_limits: Limits,
    pub player_limits: Limits,
    /// Stop players (SIGSTOP) while the server is not waiting on them.
    pub fair: bool,
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
            startup_grace: Duration::from_secs(2),
            write_timeout: Duration::from_secs(5),
            server_timeout: None,
            stderr_cap: 64 << 20,
            max_message: 64 << 20,
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
    pub scores: Option<Vec<(String, i64)>>,
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
}

pub(super) struct Table {
    pub server: Proc,
    pub players: Vec<Proc>,
}

/// Run one game to its end. Never panics on bad input: failures are in the outcome.
pub fn run_game(
    config: &Config,
    game: &Game,
    opts: &RunOptions,
    stop: &AtomicBool,
    slot_base: usize,
) -> GameOutcome {
    let folder = config.game_root.join(&game.gamefolder);
    let mut outcome = GameOutcome {
        gamefolder: game.gamefolder.clone(),
        folder: folder.clone(),
        players: game.players.clone(),
        scores: None,
        ending: Ending::End,
        warnings: Vec::new(),
        commands: 0,
        host_problem: None,
    };
    let logs = folder.join("logs");
    if let Err(e) = make_dirs(&config.game_root, &logs) {
        outcome.ending = Ending::Failed(format!("cannot create {}: {e}", logs.display()));
        return outcome;
    }
    let mk_log = |name: &str| {
        Log::create(
            &logs,
            name,
            !config.disable_logs,
            !config.disable_gzip,
            opts.stderr_cap,
        )
    };
    let start = |cmd: &Command, limits: &Limits, slot: usize, extra: &[PathBuf]| {
        let mut read = cmd.folders.clone();
        read.extend(extra.iter().cloned());
        SandboxedProcess::start(
            &opts.sandbox,
            &Launch {
                program: cmd.program.clone(),
                args: cmd.args.clone(),
                cwd: folder.clone(),
                read,
                limits: limits.clone(),
            },
            slot,
        )
    };

    // Names the server sees.
    let mut names = Vec::new();
    for p in &game.players {
        if config.processes_per_player > 1 {
            names.extend((0..config.processes_per_player).map(|i| (p.clone(), format!("{p}_{i}"))));
        } else {
            names.push((p.clone(), p.clone()));
        }
    }
    let server_log = match mk_log("__server") {
        Ok(l) => l,
        Err(e) => {
            outcome.ending = Ending::Failed(format!("cannot create the server log: {e}"));
            return outcome;
        }
    };
    let server_proc = match start(
        &config.server,
        &opts.server_limits,
        slot_base,
        std::slice::from_ref(&config.game_root),
    ) {
        Ok(p) => p,
        Err(e) => {
            let msg = format!(
                "the server ({}) could not start: {e}",
                config.server.program.display()
            );
            if matches!(e, StartError::Host(_)) {
                outcome.host_problem = Some(msg.clone());
            }
            server_log.note(&msg);
            server_log.close();
            outcome.ending = Ending::Failed(msg);
            return outcome;
        }
    };
    let mut players = Vec::new();
    for (i, (base, name)) in names.iter().enumerate() {
        let Some(pc) = config.player(base) else {
            continue; // checked when games.json was loaded
        };
        let log = match mk_log(name) {
            Ok(l) => l,
            Err(e) => {
                outcome.ending = Ending::Failed(format!("cannot create the log of {name}: {e}"));
                return outcome;
            }
        };
        let process = match start(&pc.command, &opts.player_limits, slot_base + 1 + i, &[]) {
            Ok(p) => Some(p),
            Err(e @ StartError::Host(_)) => {
                // The host's problem, not the player's: the game cannot be played fairly.
                let msg = format!("player {name} could not start (a host problem): {e}");
                log.note(&msg);
                log.close();
                server_log.note(&msg);
                server_log.close();
                outcome.host_problem = Some(msg.clone());
                outcome.ending = Ending::Failed(msg);
                return outcome;
            }
            Err(e) => {
                log.note(&format!("could not start: {e}"));
                outcome
                    .warnings
                    .push(format!("player {name} could not start: {e}"));
                None
            }
        };
        players.push(Proc {
            name: name.clone(),
            alive: process.is_some(),
            process,
            log,
            reader: LineReader::default(),
            timeout: pc.timeout,
            paused_by_server: false,
        });
    }
    let mut table = Table {
        server: Proc {
            name: "__server".into(),
            process: Some(server_proc),
            log: server_log,
            reader: LineReader::default(),
            timeout: Duration::ZERO,
            alive: true,
            paused_by_server: false,
        },
        players,
    };
    let pipes: Vec<_> = std::iter::once(&table.server)
        .chain(table.players.iter())
        .filter_map(|p| {
            let fd = p.process.as_ref()?.stderr_dup()?;
            Some((fd, p.log.clone()))
        })
        .collect();
    let drain = Drain::start(pipes);
    if opts.fair {
        settle_and_stop(&table.players, opts.startup_grace);
    }

    let observer = match super::protocol::Observer::create(&folder.join("observer.gz")) {
        Ok(o) => o,
        Err(e) => {
            outcome.ending = Ending::Failed(format!("cannot create observer.gz: {e}"));
            teardown(&mut table, drain);
            return outcome;
        }
    };
    let mut relay = protocol::Relay {
        table: &mut table,
        opts,
        stop,
        folder: &folder,
        observer,
        outcome: &mut outcome,
    };
    let player_names: Vec<&str> = names.iter().map(|(_, n)| n.as_str()).collect();
    relay.run(&player_names.join(" "), &game.args);
    let observer = relay.observer;
    if outcome.ending == Ending::ServerExited {
        // Its stdout closed: let it finish exiting so that its log shows its own exit status.
        if let Some(server) = table.server.process.as_mut() {
            server.wait_exit(Duration::from_secs(2));
        }
    }
    if let Err(e) = observer.finish() {
        outcome
            .warnings
            .push(format!("observer.gz could not be finished: {e}"));
    }
    teardown(&mut table, drain);
    open_logs(&folder);
    outcome
}

fn make_dirs(root: &std::path::Path, logs: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(logs)?;
    // Players may not read each other's logs while the game runs (made 0755 at the end).
    std::fs::set_permissions(logs, std::fs::Permissions::from_mode(0o700))?;
    // Sandboxed processes may run under other uids: the game folders must be traversable.
    let mut dir = logs.parent();
    while let Some(d) = dir {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755))?;
        if d == root {
            break;
        }
        dir = d.parent();
    }
    Ok(())
}

/// Let freshly started players run until they wait for input (or the grace passes), then stop
/// them until the server first needs them.
fn settle_and_stop(players: &[Proc], grace: Duration) {
    let until = Instant::now() + grace;
    let pids: Vec<i32> = players
        .iter()
        .filter_map(|p| p.process.as_ref()?.pid())
        .collect();
    loop {
        let running = pids.iter().any(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            matches!(
                stat.rsplit_once(')')
                    .and_then(|(_, r)| r.trim_start().chars().next()),
                Some('R') | Some('D')
            )
        });
        if !running || Instant::now() >= until {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    for p in players {
        if let Some(proc_) = &p.process {
            proc_.signal(libc::SIGSTOP);
        }
    }
}

/// Kill the server and every player, reap them, drain their stderr, append exit lines.
pub(super) fn teardown(table: &mut Table, drain: Drain) {
    let mut ends = Vec::new();
    for p in std::iter::once(&mut table.server).chain(table.players.iter_mut()) {
        if let Some(mut proc_) = p.process.take() {
            let (status, left) = proc_.finish();
            ends.push((p.log.clone(), status, left));
        }
    }
    drain.stop();
    for (log, status, left) in ends {
        log.note(&format!("process {}", describe_status(status)));
        if !left.is_empty() {
            log.note(&format!("left behind: {}", left.join("; ")));
        }
    }
    for p in std::iter::once(&table.server).chain(table.players.iter()) {
        p.log.close();
    }
}

/// Open the logs folder to everyone once the game is over.
fn open_logs(folder: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(folder.join("logs"), std::fs::Permissions::from_mode(0o755));
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
