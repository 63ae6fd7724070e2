//! The runner side of the proboj protocol: parse the server's commands (TO PLAYER, READ
//! PLAYER, TO OBSERVER, KILL/PAUSE/RESUME PLAYER, SCORES, END), execute them against the game's
//! processes, and answer `OK` / `ERROR` / `DIED` with a payload and a closing `.` line.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use flate2::write::GzEncoder;
use flate2::Compression;

use super::pipe::{self, PipeError};
use super::scores;
use super::table::{write_player, Ending, GameOutcome, Proc, RunOptions, Table};

/// A parsed command header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    ToPlayer { name: String, comment: String },
    ReadPlayer(String),
    ToObserver,
    Kill(String),
    Pause(String),
    Resume(String),
    Scores,
    End,
    Unknown(String),
}

/// Parse a header line as the official runner does: the first command the line starts with
/// (`TO PLAYER`, `READ PLAYER`, ...), then the rest, trimmed, split at single spaces: the first
/// part names the player (empty when missing: an unknown player, answered ERROR), the others
/// joined by a space are the comment of `TO PLAYER`.
pub fn parse_header(line: &str) -> Request {
    const PREFIXES: [&str; 8] = [
        "TO PLAYER",
        "READ PLAYER",
        "TO OBSERVER",
        "KILL PLAYER",
        "PAUSE PLAYER",
        "RESUME PLAYER",
        "SCORES",
        "END",
    ];
    let Some((prefix, rest)) = PREFIXES
        .iter()
        .find_map(|p| line.strip_prefix(p).map(|rest| (*p, rest)))
    else {
        return Request::Unknown(line.to_owned());
    };
    let rest = rest.trim();
    let (name, comment) = rest.split_once(' ').unwrap_or((rest, ""));
    let name = name.to_owned();
    match prefix {
        "TO PLAYER" => Request::ToPlayer {
            name,
            comment: comment.to_owned(),
        },
        "READ PLAYER" => Request::ReadPlayer(name),
        "TO OBSERVER" => Request::ToObserver,
        "KILL PLAYER" => Request::Kill(name),
        "PAUSE PLAYER" => Request::Pause(name),
        "RESUME PLAYER" => Request::Resume(name),
        "SCORES" => Request::Scores,
        _ => Request::End,
    }
}

/// `observer.gz`: one gzip stream the TO OBSERVER payloads are appended to.
/// Created 0600 (players running under pool uids must not read the observer's full view of
/// the game while it runs), made 0644 when finished.
pub struct Observer(GzEncoder<BufWriter<File>>, std::path::PathBuf);

impl Observer {
    pub fn create(path: &Path) -> std::io::Result<Observer> {
        use std::os::unix::fs::OpenOptionsExt;
        let f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(path)?;
        Ok(Observer(
            GzEncoder::new(BufWriter::new(f), Compression::default()),
            path.to_path_buf(),
        ))
    }

    /// The payload's lines joined by `\n`, with no newline after the last: the official
    /// runner's bytes (a frame ends with a newline only if the server sent an empty last line).
    fn append(&mut self, lines: &[Vec<u8>]) -> std::io::Result<()> {
        for (i, l) in lines.iter().enumerate() {
            if i > 0 {
                self.0.write_all(b"\n")?;
            }
            self.0.write_all(l)?;
        }
        Ok(())
    }

    pub fn finish(self) -> std::io::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        self.0.finish()?.flush()?;
        std::fs::set_permissions(&self.1, std::fs::Permissions::from_mode(0o644))
    }
}

pub(super) struct Relay<'a> {
    pub table: &'a mut Table,
    pub opts: &'a RunOptions,
    pub stop: &'a AtomicBool,
    pub folder: &'a Path,
    pub observer: Observer,
    pub outcome: &'a mut GameOutcome,
}

enum Status {
    Ok,
    Error,
    Died,
}

impl Relay<'_> {
    fn warn(&mut self, msg: String) {
        self.table.server.log.note(&msg);
        tracing::warn!(game = %self.outcome.gamefolder, "{msg}");
        self.outcome.warnings.push(msg);
    }

    fn send_server(&mut self, data: &[u8]) -> Result<(), PipeError> {
        let fd = self
            .table
            .server
            .process
            .as_ref()
            .and_then(|p| p.stdin_fd())
            .ok_or(PipeError::Closed)?;
        pipe::write_all(fd, data, None, self.stop, || {})
    }

    fn answer(&mut self, status: Status, payload: &[Vec<u8>]) -> Result<(), PipeError> {
        let head = match status {
            Status::Ok => "OK",
            Status::Error => "ERROR",
            Status::Died => "DIED",
        };
        // `<STATUS>\n<payload>\n.\n`
        let mut out = Vec::new();
        out.extend_from_slice(head.as_bytes());
        out.push(b'\n');
        out.extend_from_slice(&payload.join(&b'\n'));
        out.extend_from_slice(b"\n.\n");
        self.send_server(&out)
    }

    /// Relay until END, the server's end, or a stop request; sets the outcome's ending.
    pub fn run(&mut self, names: &str, args: &str) {
        let config = format!("CONFIG\n{names}\n{args}\n.\n");
        if let Err(e) = self.send_server(config.as_bytes()) {
            self.end_on(e, "sending CONFIG");
            return;
        }
        loop {
            let Some(fd) = self
                .table
                .server
                .process
                .as_ref()
                .and_then(|p| p.stdout_fd())
            else {
                return;
            };
            let deadline = self.opts.server_timeout.map(|t| Instant::now() + t);
            let max = self.opts.max_message;
            let msg = match self
                .table
                .server
                .reader
                .message(fd, deadline, self.stop, max)
            {
                Ok(m) => m,
                Err(e) => {
                    self.end_on(e, "reading a command");
                    return;
                }
            };
            let Some((head, payload)) = msg.split_first() else {
                self.warn("the server sent an empty message (ignored)".into());
                continue;
            };
            let head = String::from_utf8_lossy(head).into_owned();
            self.outcome.commands += 1;
            if self.opts.verbose {
                tracing::info!(game = %self.outcome.gamefolder, "server: {head}");
            }
            let req = parse_header(&head);
            if req == Request::End {
                return;
            }
            if let Err(e) = self.execute(req, payload) {
                self.end_on(e, "answering");
                return;
            }
        }
    }

    fn end_on(&mut self, e: PipeError, when: &str) {
        self.outcome.ending = match e {
            PipeError::Stopped => Ending::Interrupted,
            PipeError::Closed => {
                self.warn(format!(
                    "the server ended without END (its pipe closed while {when}); tearing the game down"
                ));
                Ending::ServerExited
            }
            PipeError::Timeout => {
                let msg = format!("the server was silent for too long while {when}");
                self.warn(msg.clone());
                Ending::Failed(msg)
            }
            PipeError::TooLong => {
                let msg = format!(
                    "the server sent more than {} bytes without ending its line or message while {when}",
                    self.opts.max_message
                );
                self.warn(msg.clone());
                Ending::Failed(msg)
            }
        };
    }

    fn player(&mut self, name: &str) -> Option<usize> {
        self.table.players.iter().position(|p| p.name == name)
    }

    fn execute(&mut self, req: Request, payload: &[Vec<u8>]) -> Result<(), PipeError> {
        let opts = self.opts;
        let stop = self.stop;
        let req_kind = match &req {
            Request::Kill(_) => Some(Kind::Kill),
            Request::Pause(_) => Some(Kind::Pause),
            Request::Resume(_) => Some(Kind::Resume),
            _ => None,
        };
        match req {
            Request::ToObserver => match self.observer.append(payload) {
                Ok(()) => self.answer(Status::Ok, &[]),
                Err(e) => {
                    self.warn(format!("observer.gz write failed: {e}"));
                    self.answer(Status::Error, &[])
                }
            },
            Request::Scores => match scores::parse(payload) {
                Ok(lines) => {
                    let text = scores::score_json(&lines);
                    match std::fs::write(self.folder.join("score.json"), text) {
                        Ok(()) => {
                            self.outcome.scores = Some(scores::exact(&lines));
                            self.answer(Status::Ok, &[])
                        }
                        Err(e) => {
                            self.warn(format!("score.json could not be written: {e}"));
                            self.answer(Status::Error, &[])
                        }
                    }
                }
                Err(why) => {
                    self.warn(format!("SCORES refused: {why}"));
                    self.answer(Status::Error, &[])
                }
            },
            Request::Unknown(head) => {
                self.warn(format!("unknown command {head:?} (ignored)"));
                Ok(())
            }
            Request::End => Ok(()),
            Request::ToPlayer { name, comment } => {
                let Some(i) = self.player(&name) else {
                    return self.answer(Status::Error, &[]);
                };
                let p = &mut self.table.players[i];
                if !running(p) {
                    return self.answer(Status::Died, &[]);
                }
                // The official runner notes every message, `[proboj] ` when it has no comment.
                p.log.note(&comment);
                let data = pipe::encode_payload(payload);
                match write_player(p, &data, opts, stop) {
                    Ok(()) => self.answer(Status::Ok, &[]),
                    Err(PipeError::Stopped) => Err(PipeError::Stopped),
                    // Its stdin is closed: DIED once it has exited, else the official runner's
                    // failed write (ERROR); it is not dead while it runs.
                    Err(PipeError::Closed) if !running(p) => self.answer(Status::Died, &[]),
                    Err(PipeError::Closed) => {
                        p.log.note("its stdin is closed (the write failed)");
                        self.answer(Status::Error, &[])
                    }
                    Err(_) => {
                        p.log.note("killing process due to write timeout");
                        kill(p, "a write to it did not complete in time");
                        self.answer(Status::Error, &[])
                    }
                }
            }
            Request::ReadPlayer(name) => {
                let Some(i) = self.player(&name) else {
                    return self.answer(Status::Error, &[]);
                };
                let p = &mut self.table.players[i];
                if !running(p) {
                    return self.answer(Status::Died, &[]);
                }
                match read_player(p, opts, stop) {
                    Ok(lines) => self.answer(Status::Ok, &lines),
                    Err(PipeError::Stopped) => Err(PipeError::Stopped),
                    // It runs and its stdout ended: the official runner's read fails (ERROR),
                    // at every READ until the process has exited (then DIED).
                    Err(PipeError::Closed) => self.answer(Status::Error, &[]),
                    Err(_) => self.answer(Status::Died, &[]),
                }
            }
            Request::Kill(name) | Request::Pause(name) | Request::Resume(name) => {
                let kind = match req_kind {
                    Some(k) => k,
                    None => return Ok(()),
                };
                let Some(i) = self.player(&name) else {
                    return self.answer(Status::Error, &[]);
                };
                let p = &mut self.table.players[i];
                if !running(p) {
                    // Nothing left to kill, pause or resume: done (the official runner's OK).
                    return self.answer(Status::Ok, &[]);
                }
                match pause_change(kind, p.paused_by_server) {
                    Change::Refused(why) => {
                        p.log.note(why);
                        return self.answer(Status::Error, &[]);
                    }
                    Change::Kill => kill(p, "killed at the server's request (KILL PLAYER)"),
                    Change::Paused(paused) => {
                        p.paused_by_server = paused;
                        // In fair mode the player runs only while it is read or written to.
                        let sig = match paused {
                            true => Some(libc::SIGSTOP),
                            false => (!opts.fair).then_some(libc::SIGCONT),
                        };
                        if let (Some(x), Some(sig)) = (p.process.as_ref(), sig) {
                            x.signal(sig);
                        }
                    }
                }
                self.answer(Status::Ok, &[])
            }
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Kill,
    Pause,
    Resume,
}

/// What KILL, PAUSE or RESUME does to a running player.
#[derive(Debug, PartialEq, Eq)]
enum Change {
    Kill,
    /// Paused by the server from now on (true) or not (false).
    Paused(bool),
    /// Answered ERROR, the reason noted in its log.
    Refused(&'static str),
}

/// As the official runner: PAUSE of a player the server paused and RESUME of one it did not
/// are refused (its `already paused` / `not paused` errors); KILL always goes ahead.
fn pause_change(kind: Kind, paused: bool) -> Change {
    match (kind, paused) {
        (Kind::Kill, _) => Change::Kill,
        (Kind::Pause, true) => Change::Refused("PAUSE refused: it is paused already"),
        (Kind::Resume, false) => Change::Refused("RESUME refused: it is not paused"),
        (Kind::Pause, false) => Change::Paused(true),
        (Kind::Resume, true) => Change::Paused(false),
    }
}

/// Whether the player still runs, as the official runner's `IsRunning`: false once farm killed
/// it or its process has exited.
fn running(p: &mut Proc) -> bool {
    if p.alive && p.process.as_mut().is_none_or(|x| x.has_exited()) {
        p.alive = false;
    }
    p.alive
}

/// Read one answer of a player (it runs only now in fair mode). Kills it on timeout.
fn read_player(
    p: &mut Proc,
    opts: &RunOptions,
    stop: &AtomicBool,
) -> Result<Vec<Vec<u8>>, PipeError> {
    if !p.alive {
        return Err(PipeError::Closed);
    }
    let Some(fd) = p.process.as_ref().and_then(|x| x.stdout_fd()) else {
        return Err(PipeError::Closed);
    };
    let fair = opts.fair && !p.paused_by_server;
    // The player's time starts once it holds a core: waiting for one is nobody's turn time.
    let _core = fair.then(|| opts.tokens.as_ref().map(|t| t.acquire()));
    if fair {
        if let Some(x) = &p.process {
            x.signal(libc::SIGCONT);
        }
    }
    let deadline = Instant::now() + p.timeout;
    let r = p.reader.message(fd, Some(deadline), stop, opts.max_message);
    match &r {
        Ok(_) => {
            if fair {
                if let Some(x) = &p.process {
                    x.signal(libc::SIGSTOP);
                }
            }
            check_budget(p);
        }
        Err(PipeError::Timeout) => {
            p.log.note("killing process due to read timeout");
            kill(
                p,
                &format!("it did not answer within {:?} (killed)", p.timeout),
            )
        }
        Err(PipeError::TooLong) => kill(p, "it sent too much without a `.` line (killed)"),
        // Not dead while it runs: READs answer ERROR until its process has exited.
        Err(PipeError::Closed) => p.log.note("its stdout is closed (the read failed)"),
        Err(PipeError::Stopped) => {}
    }
    r
}

/// After a turn: a player whose private folder copy grew past its budget (its size at the start
/// plus the player's scratch quota) is killed, as for any other limit it broke.
fn check_budget(p: &mut Proc) {
    let Some(over) = p.budget.as_ref().and_then(|b| b.exceeded()) else {
        return;
    };
    let limit = p.budget.as_ref().map_or(0, |b| b.limit);
    kill(
        p,
        &format!(
            "its folder copy holds {over} bytes, more than its {limit} (the folder plus its \
             scratch quota) (killed)"
        ),
    );
}

pub(super) fn kill(p: &mut Proc, why: &str) {
    p.log.note(why);
    if let Some(x) = &p.process {
        x.kill();
    }
    p.alive = false;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers() {
        // As the official runner splits: the comment keeps all but one space after the name.
        assert_eq!(
            parse_header("TO PLAYER a  hello  world "),
            Request::ToPlayer {
                name: "a".into(),
                comment: " hello  world".into()
            }
        );
        assert_eq!(
            parse_header("TO PLAYER b"),
            Request::ToPlayer {
                name: "b".into(),
                comment: String::new()
            }
        );
        assert_eq!(
            parse_header("READ PLAYER x"),
            Request::ReadPlayer("x".into())
        );
        assert_eq!(parse_header("PAUSE PLAYER x"), Request::Pause("x".into()));
        assert_eq!(parse_header("RESUME PLAYER x"), Request::Resume("x".into()));
        assert_eq!(parse_header("KILL PLAYER x"), Request::Kill("x".into()));
        assert_eq!(parse_header("TO OBSERVER"), Request::ToObserver);
        assert_eq!(parse_header("SCORES"), Request::Scores);
        assert_eq!(parse_header("END"), Request::End);
        assert_eq!(parse_header("READ PLAYER"), Request::ReadPlayer("".into()));
        assert_eq!(parse_header("KILL PLAYER x y"), Request::Kill("x".into()));
        assert_eq!(parse_header("ENDED"), Request::End);
        assert_eq!(
            parse_header("TO  PLAYER a"),
            Request::Unknown("TO  PLAYER a".into())
        );
        assert_eq!(parse_header("hello"), Request::Unknown("hello".into()));
    }
}
