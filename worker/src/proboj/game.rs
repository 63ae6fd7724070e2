//! One proboj game: create its folder, start the server and the players (sandboxed, working
//! directory = the game folder; each player in a private writable copy of its folder, removed
//! at the end), send CONFIG, then relay the server's commands until END, the
//! server's exit, or a stop request; finally kill everything, append exit lines to the logs.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sandbox::{Limits, SandboxMode, StartError};

use super::config::{game_relative_folders, Command, Config, Game};
use super::copies::{CopyError, GameCopies};
use super::log::{Drain, Log};
use super::pipe::LineReader;
use super::process::{describe_status, Launch, SandboxedProcess};
use super::protocol;
use super::table::{Ending, GameOutcome, Proc, RunOptions, Table};

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
    let Some(server) = start_server(config, opts, &folder, &mk_log, slot_base, &mut outcome) else {
        return outcome;
    };
    let copies = match GameCopies::create(&opts.sandbox.scratch_root, pool_uids(opts)) {
        Ok(c) => c,
        Err(e) => {
            let msg = format!(
                "cannot make the players' folder copies in {} (a host problem): {e}",
                opts.sandbox.scratch_root.display()
            );
            return fail_with_server(server, msg, true, outcome);
        }
    };
    let setup = PlayerSetup {
        config,
        opts,
        folder: &folder,
        copies: &copies,
        mk_log: &mk_log,
    };
    let names = seat_names(config, game);
    let Ok(players) = start_players(&setup, &names, slot_base, &mut outcome) else {
        if let Ending::Failed(why) = &outcome.ending {
            server.log.note(why);
        }
        server.log.close();
        return outcome;
    };
    let mut table = Table { server, players };
    let drain = start_drain(&table);
    if opts.fair {
        settle_and_stop(&table.players, opts.startup_grace);
    }
    let names: Vec<&str> = names.iter().map(|(_, n)| n.as_str()).collect();
    let relayed = relay(&mut table, opts, stop, &folder, &names, game, &mut outcome);
    teardown(&mut table, drain);
    if !relayed {
        return outcome;
    }
    if let Some(left) = copies.remove() {
        outcome
            .warnings
            .push(format!("the players' folder copies: {left}"));
    }
    open_logs(&folder);
    outcome
}

/// The names the server sees: each player's, or `<player>_<i>` when a player runs several
/// processes; with the player each belongs to.
fn seat_names(config: &Config, game: &Game) -> Vec<(String, String)> {
    let mut names = Vec::new();
    for p in &game.players {
        if config.processes_per_player > 1 {
            names.extend((0..config.processes_per_player).map(|i| (p.clone(), format!("{p}_{i}"))));
        } else {
            names.push((p.clone(), p.clone()));
        }
    }
    names
}

/// Start the game's server in its folder, with its log. None when it cannot start (the outcome
/// says why, and whether the host is to blame).
fn start_server(
    config: &Config,
    opts: &RunOptions,
    folder: &Path,
    mk_log: &dyn Fn(&str) -> std::io::Result<Arc<Log>>,
    slot: usize,
    outcome: &mut GameOutcome,
) -> Option<Proc> {
    let log = match mk_log("__server") {
        Ok(l) => l,
        Err(e) => {
            outcome.ending = Ending::Failed(format!("cannot create the server log: {e}"));
            return None;
        }
    };
    let cmd = config.server.for_game(folder);
    let read = std::slice::from_ref(&config.game_root);
    let started = start_in(
        opts,
        folder,
        &cmd,
        (&cmd, &[]),
        &opts.server_limits,
        slot,
        read,
    );
    let process = match started {
        Ok(p) => p,
        Err(e) => {
            let msg = format!(
                "the server ({}) could not start: {e}",
                config.server.program.display()
            );
            if matches!(e, StartError::Host(_)) {
                outcome.host_problem = Some(msg.clone());
            }
            log.note(&msg);
            log.close();
            outcome.ending = Ending::Failed(msg);
            return None;
        }
    };
    Some(Proc {
        name: "__server".into(),
        process: Some(process),
        log,
        reader: LineReader::default(),
        timeout: Duration::ZERO,
        alive: true,
        paused_by_server: false,
        budget: None,
    })
}

/// The game failed before it began: note why in the server's log and the outcome (the host's
/// problem when `host`); the server is stopped as it drops.
fn fail_with_server(
    server: Proc,
    msg: String,
    host: bool,
    mut outcome: GameOutcome,
) -> GameOutcome {
    server.log.note(&msg);
    server.log.close();
    if host {
        outcome.host_problem = Some(msg.clone());
    }
    outcome.ending = Ending::Failed(msg);
    outcome
}

/// Copy every process's stderr into its log, as it comes.
fn start_drain(table: &Table) -> Drain {
    let pipes: Vec<_> = std::iter::once(&table.server)
        .chain(table.players.iter())
        .filter_map(|p| {
            let fd = p.process.as_ref()?.stderr_dup()?;
            if let Some(again) = p.process.as_ref()?.stderr_dup() {
                p.log.attach(again);
            }
            Some((fd, p.log.clone()))
        })
        .collect();
    Drain::start(pipes)
}

/// Relay the server's commands until the game ends, recording the observer file. False when
/// the game could not be played (the outcome says why).
fn relay(
    table: &mut Table,
    opts: &RunOptions,
    stop: &AtomicBool,
    folder: &Path,
    names: &[&str],
    game: &Game,
    outcome: &mut GameOutcome,
) -> bool {
    let observer = match protocol::Observer::create(&folder.join("observer.gz")) {
        Ok(o) => o,
        Err(e) => {
            outcome.ending = Ending::Failed(format!("cannot create observer.gz: {e}"));
            return false;
        }
    };
    let mut r = protocol::Relay {
        table: &mut *table,
        opts,
        stop,
        folder,
        observer,
        outcome: &mut *outcome,
    };
    r.run(&names.join(" "), &game.args);
    let observer = r.observer;
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
    true
}

/// Start `cmd` in the game folder `folder`; it may read what `read_as` names (the command as
/// configured, whose folders stay readable, and folders it may write) and `extra`.
fn start_in(
    opts: &RunOptions,
    folder: &Path,
    cmd: &Command,
    read_as: (&Command, &[PathBuf]),
    limits: &Limits,
    slot: usize,
    extra: &[PathBuf],
) -> Result<SandboxedProcess, StartError> {
    let (orig, write) = read_as;
    let mut read = orig.folders.clone();
    read.extend(extra.iter().cloned());
    read.extend(game_relative_folders(orig, folder));
    SandboxedProcess::start(
        &opts.sandbox,
        &Launch {
            program: cmd.program.clone(),
            args: cmd.args.clone(),
            cwd: folder.to_path_buf(),
            read,
            write: write.to_vec(),
            limits: limits.clone(),
        },
        slot,
    )
}

/// Players under the sandbox's pool uids (a root worker in `Full` mode): their copies must be
/// writable for uids leased only when they start.
fn pool_uids(opts: &RunOptions) -> bool {
    opts.sandbox.effective_mode() == SandboxMode::Full && nix::unistd::geteuid().is_root()
}

/// What starting a game's players needs.
struct PlayerSetup<'a> {
    config: &'a Config,
    opts: &'a RunOptions,
    folder: &'a Path,
    copies: &'a GameCopies,
    mk_log: &'a dyn Fn(&str) -> std::io::Result<Arc<Log>>,
}

/// Copy each player's folder and start it there. Err when the game cannot go on (the outcome
/// says why: a folder too large is the organiser's set-up, a failed copy or start the host's).
fn start_players(
    s: &PlayerSetup,
    names: &[(String, String)],
    slot_base: usize,
    outcome: &mut GameOutcome,
) -> Result<Vec<Proc>, ()> {
    let mut players = Vec::new();
    for (i, (base, name)) in names.iter().enumerate() {
        let Some(pc) = s.config.player(base) else {
            continue; // checked when games.json was loaded
        };
        let log = match (s.mk_log)(name) {
            Ok(l) => l,
            Err(e) => {
                outcome.ending = Ending::Failed(format!("cannot create the log of {name}: {e}"));
                return Err(());
            }
        };
        if let Some(why) = &pc.missing {
            // As the official runner: the game goes on without it (DIED to TO PLAYER and READ,
            // OK to KILL, PAUSE and RESUME), its log in the official words, then farm's.
            let program = pc.command.program.display();
            log.note(&terminated(
                0,
                &format!("fork/exec {program}: no such file or directory"),
            ));
            log.note(&format!("could not start: {why}"));
            outcome
                .warnings
                .push(format!("player {name} could not start: {why}"));
            players.push(Proc {
                name: name.clone(),
                alive: false,
                process: None,
                log,
                reader: LineReader::default(),
                timeout: pc.timeout,
                paused_by_server: false,
                budget: None,
            });
            continue;
        }
        let sizes = (s.opts.folder_limit, s.opts.player_limits.scratch_quota);
        let command = pc.command.for_game(s.folder);
        let copy = match s.copies.copy_for(name, &command, s.config, s.folder, sizes) {
            Ok(c) => c,
            Err(e) => {
                let msg = e.to_string();
                log.note(&msg);
                log.close();
                if matches!(e, CopyError::Host { .. }) {
                    outcome.host_problem = Some(msg.clone());
                }
                outcome.ending = Ending::Failed(msg);
                return Err(());
            }
        };
        let limits = &s.opts.player_limits;
        let read_as = (&command, copy.write.as_slice());
        let slot = slot_base + 1 + i;
        let process = match start_in(s.opts, s.folder, &copy.command, read_as, limits, slot, &[]) {
            Ok(p) => Some(p),
            Err(e @ StartError::Host(_)) => {
                // The host's problem, not the player's: the game cannot be played fairly.
                let msg = format!("player {name} could not start (a host problem): {e}");
                log.note(&msg);
                log.close();
                outcome.host_problem = Some(msg.clone());
                outcome.ending = Ending::Failed(msg);
                return Err(());
            }
            Err(e) => {
                log.note(&terminated(0, &e.to_string()));
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
            budget: Some(copy.budget),
        });
    }
    Ok(players)
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
        // The official runner's closing lines first (Go's ExitCode(): -1 for a signal), then
        // farm's own wording.
        log.note(&terminated(go_exit_code(status), "<nil>"));
        log.note(&format!("process {}", describe_status(status)));
        if !left.is_empty() {
            log.note(&format!("left behind: {}", left.join("; ")));
        }
    }
    for p in std::iter::once(&table.server).chain(table.players.iter()) {
        p.log.close();
    }
}

/// The official runner's last lines of a log (after `[proboj] `).
fn terminated(exit: i32, err: &str) -> String {
    format!("process terminated\n exit: {exit}\n err: {err}")
}

/// Go's `ProcessState.ExitCode()` of a raw wait status: the exit status, or -1 when a signal
/// (or nothing known) ended the process.
fn go_exit_code(status: Option<i32>) -> i32 {
    match status {
        Some(st) if libc::WIFEXITED(st) => libc::WEXITSTATUS(st),
        _ => -1,
    }
}

/// Open the logs folder to everyone once the game is over.
fn open_logs(folder: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(folder.join("logs"), std::fs::Permissions::from_mode(0o755));
}
