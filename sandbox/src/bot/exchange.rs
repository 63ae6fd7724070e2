//! One turn with a bot: take a core token, SIGCONT, send, poll stdout/stderr until one complete
//! line arrives or the (CPU-fair) deadline passes, SIGSTOP, give the token back, record timing.
//!
//! The deadline clock counts wall time from the first byte sent to the complete line, minus the
//! time the bot's main thread was runnable but waiting for a core (its run-queue wait from
//! `/proc/<pid>/schedstat`) and minus the host time its CPUs lost (hypervisor steal, interrupts:
//! [`crate::hosttime`]), so load from other processes and from the host does not eat a bot's
//! budget; never less than the CPU time the bot used ([`timing::fair_charge`]). A main thread
//! still waiting for a core at the deadline is waited for, and the turn charged again with that
//! wait (`uncounted_wait`). A turn never
//! lasts more than `max_wall_factor` deadlines of plain wall time. The time charged for the turn
//! (what a time bank pays for past the turn's limit) is measured the same way and kept for the
//! referee.

use std::cell::Cell;
use std::os::fd::{AsRawFd, RawFd};
use std::time::{Duration, Instant};

use shared::{Fault, FaultKind};

use super::Bot;
use crate::fdio::{self, PollFd};
use crate::hosttime;
use crate::timing::{self, current_thread_waited_ns, fair_charge, LateTurn, TurnTiming};

/// How many times a turn past its deadline is charged again after its main thread, waiting for
/// a core, was given one ([`Bot::uncounted_wait_ended`]).
const MAX_RECHECKS: u32 = 4;

/// How far past the deadline an answer that the loop saw in time may be read.
const READ_GRACE: Duration = Duration::from_millis(1);

/// Longest answer line accepted (without the line end).
pub const MAX_LINE: usize = 256;

/// Run-queue waits at the start of a turn: the bot's main thread, and the worker thread that
/// runs the exchange (its scheduling delays in sending or noticing the answer are not the
/// bot's either). Only with the fair clock; otherwise every wait counts as zero.
pub(super) struct Waits {
    bot0: u64,
    /// The worker thread's own wait at the start (None: no fair clock, or unreadable).
    me0: Option<u64>,
}

impl Waits {
    /// The waits at the start of a turn; `bot_waited_ns` is the bot's main-thread run-queue
    /// wait, read once with its on-CPU time ([`Bot::main_sched`]).
    fn start(bot: &Bot, bot_waited_ns: u64) -> Self {
        if !bot.cfg.fair_clock {
            return Waits { bot0: 0, me0: None };
        }
        Waits {
            bot0: bot_waited_ns,
            me0: current_thread_waited_ns(),
        }
    }

    /// Nanoseconds of run-queue wait (bot + worker thread) since `start`.
    fn since(&self, bot: &Bot) -> u64 {
        let (bot_ns, mine) = self.split(bot);
        bot_ns + mine
    }

    /// (bot's main thread, worker thread) run-queue wait since `start`, ns.
    fn split(&self, bot: &Bot) -> (u64, u64) {
        let Some(me0) = self.me0 else { return (0, 0) };
        let mine = current_thread_waited_ns()
            .unwrap_or(me0)
            .saturating_sub(me0);
        (bot.waited_ns().saturating_sub(self.bot0), mine)
    }
}

/// The bot's main-thread clocks at the start of a turn, for the late-turn breakdown (read with
/// the fair clock's own read, so no extra syscall on a turn in time).
#[derive(Clone, Copy)]
struct MainStart {
    cpu_ns: u64,
    waited_ns: u64,
}

/// What the turn loop saw when it gave up on the bot (timeouts only).
#[derive(Default)]
struct AtDeadline {
    unsent: u64,
    states: Vec<String>,
}

/// The clocks of one turn, as the loop reads them.
struct TurnClocks<'a> {
    t0: Instant,
    cpu0: u64,
    waits: &'a Waits,
    /// The turn's own limit (past it, a time bank pays).
    limit: Duration,
    /// When the bot times out (the limit plus what its bank holds).
    deadline: Duration,
    /// Host time lost during the turn, as last looked up (only past the limit: it costs a read
    /// of /proc/stat).
    host: Cell<Duration>,
}

enum Read {
    Data,
    Nothing,
    Eof,
}

impl Bot {
    pub(super) fn exchange_inner(
        &mut self,
        turn: u32,
        input: &[u8],
        limit: Duration,
        deadline: Duration,
    ) -> Result<Vec<u8>, Fault> {
        let asked = Instant::now();
        let token = self.tokens.acquire();
        let token_us = asked.elapsed().as_micros() as u64;
        let fault = |kind, detail: String| Fault { kind, turn, detail };

        // Anything on stdout now was written before we asked (one poll of stdout and stderr,
        // not a read of each: this runs every turn).
        self.pending.clear();
        let (out_ready, err_ready) = self.ready_now();
        if err_ready {
            self.drain_stderr(turn)?;
        }
        if out_ready {
            match self.read_stdout() {
                Read::Data => {
                    let n = self.pending.len();
                    self.pending.clear();
                    self.drain_stderr(turn)?;
                    return Err(fault(
                        FaultKind::EarlyOutput,
                        format!("{n} bytes of output were waiting before turn {turn} was sent"),
                    ));
                }
                Read::Eof => return Err(self.death(turn, Duration::from_millis(500))),
                Read::Nothing => {}
            }
        }

        // SIGCONT, then the clocks, then (in the loop) the input, in that order: the bot woken
        // by the signal is usually back asleep in its read by the time the input arrives, and
        // the pipe write's synchronous wake-up then moves it onto this thread's core, about to
        // sleep. Reading the clocks before the SIGCONT, or writing the input before it, leaves
        // the bot where the signal's wake-up placed it (maybe on a core busy with another
        // match's bot): farm efficiency on CPU-hungry bots measured lower both ways (medians
        // 93% against 96%, BENCHMARKS.md, issue 15).
        self.resume();
        let t0 = Instant::now();
        let cpu0 = self.cpu_ns();
        let (main_cpu0, main_waited0) = self.main_sched();
        let waits = Waits::start(self, main_waited0);
        let main0 = MainStart {
            cpu_ns: main_cpu0,
            waited_ns: main_waited0,
        };
        let mut charge = None;
        let mut seen = AtDeadline::default();
        let clocks = TurnClocks {
            t0,
            cpu0,
            waits: &waits,
            limit,
            deadline,
            host: Cell::new(Duration::ZERO),
        };
        let result = self.turn_loop(turn, input, &clocks, &mut charge, &mut seen);
        self.pause();
        let wall = t0.elapsed();
        self.last_charge = charge.unwrap_or(wall);
        let (bot_waited_ns, host_waited_ns) = waits.split(self);
        let cpu_ns = self.cpu_ns().saturating_sub(cpu0);
        let late = (wall >= limit || result.is_err())
            .then(|| self.late_turn(main0, wall, clocks.host.get(), seen))
            .flatten();
        self.timing.record(TurnTiming {
            turn,
            wall_us: wall.as_micros() as u64,
            cpu_us: cpu_ns / 1000,
            waited_us: (bot_waited_ns + host_waited_ns) / 1000,
            met: result.is_ok(),
            token_us,
            host_waited_us: host_waited_ns / 1000,
            late,
        });
        drop(token);
        result
    }

    /// The wall-time breakdown of a turn that ran past its limit (None when the bot's main
    /// thread's clocks cannot be read, e.g. it is gone).
    fn late_turn(
        &self,
        main0: MainStart,
        wall: Duration,
        host: Duration,
        seen: AtDeadline,
    ) -> Option<LateTurn> {
        let (cpu, waited) = self.runq.as_ref()?.read()?;
        let main_cpu_us = cpu.saturating_sub(main0.cpu_ns) / 1000;
        let main_waited_us = waited.saturating_sub(main0.waited_ns) / 1000;
        let wall_us = wall.as_micros() as u64;
        Some(LateTurn {
            main_cpu_us,
            main_waited_us,
            idle_us: wall_us.saturating_sub(main_cpu_us + main_waited_us),
            charged_us: self.last_charge.as_micros() as u64,
            host_us: host.as_micros() as u64,
            unsent_bytes: seen.unsent,
            states: seen.states,
        })
    }

    /// Whether stdout / stderr have something to read (or are closed) right now.
    fn ready_now(&self) -> (bool, bool) {
        let Some(p) = self.proc_.as_ref() else {
            return (true, false);
        };
        let mut fds = [
            PollFd::readable(p.stdout.as_raw_fd()),
            PollFd::readable(p.stderr.as_raw_fd()),
        ];
        if fdio::poll(&mut fds, Duration::ZERO).is_err() {
            // Could not tell: look at both, as a read would.
            return (true, true);
        }
        (fds[0].ready(), fds[1].ready())
    }

    /// The time charged for an answer that arrived `elapsed` into the turn: plain wall time
    /// within the limit, the fair measure past it; None when that is past the deadline by more
    /// than [`READ_GRACE`] (host time credited earlier in the turn may be taken back at the
    /// answer: bursts the bot turned out to sleep through). Within the grace it is charged just
    /// under the deadline: the answer was in time at the loop's last check, and the
    /// microseconds until it was read are not the bot's.
    fn answer_charge(&self, elapsed: Duration, c: &TurnClocks) -> Option<Duration> {
        let mut charged = elapsed;
        if elapsed >= c.limit && self.cfg.fair_clock {
            charged = self.fair_charge_now(elapsed, c);
        }
        (charged < c.deadline.saturating_add(READ_GRACE))
            .then(|| charged.min(c.deadline.saturating_sub(Duration::from_micros(1))))
    }

    /// The fair charge of the turn so far ([`fair_charge`]), `elapsed` into it. The host's
    /// time is looked up only when the waits alone do not bring the charge under the limit.
    fn fair_charge_now(&self, elapsed: Duration, c: &TurnClocks) -> Duration {
        let waited = Duration::from_nanos(c.waits.since(self));
        let cpu = Duration::from_nanos(self.cpu_ns().saturating_sub(c.cpu0));
        let mut charged = fair_charge(elapsed, waited, Duration::ZERO, cpu);
        if charged >= c.limit {
            let cpus: Vec<usize> = [
                self.pid().and_then(hosttime::last_cpu),
                hosttime::current_cpu(),
            ]
            .into_iter()
            .flatten()
            .collect();
            let host =
                hosttime::since(c.t0, &cpus).credited(cpu.saturating_add(waited), elapsed, c.limit);
            c.host.set(host);
            charged = fair_charge(elapsed, waited, host, cpu);
        }
        charged
    }

    fn turn_loop(
        &mut self,
        turn: u32,
        input: &[u8],
        c: &TurnClocks,
        charge: &mut Option<Duration>,
        seen: &mut AtDeadline,
    ) -> Result<Vec<u8>, Fault> {
        let (deadline, t0) = (c.deadline, c.t0);
        let fault = |kind, detail: String| Fault { kind, turn, detail };
        let hard_cap = deadline * self.cfg.max_wall_factor.max(1);
        let mut written = 0usize;
        let mut stderr_open = true;
        let mut rechecks = 0u32;
        let mut answered_late = false;
        loop {
            if written < input.len() {
                match self.write_stdin(&input[written..]) {
                    Ok(n) => written += n,
                    Err(()) => return Err(self.death(turn, Duration::from_millis(500))),
                }
            }
            // Time left on the bot's clock.
            let elapsed = t0.elapsed();
            let mut charged = elapsed;
            if (elapsed >= deadline && self.cfg.fair_clock) || answered_late {
                charged = self.fair_charge_now(elapsed, c);
                if answered_late {
                    charged = charged.max(deadline);
                }
            }
            if charged >= deadline
                && !answered_late
                && elapsed < hard_cap
                && self.cfg.fair_clock
                && rechecks < MAX_RECHECKS
                && self.uncounted_wait_ended(t0 + hard_cap)
            {
                // It was waiting for a core at its deadline: charge it again with that wait.
                rechecks += 1;
                continue;
            }
            if charged >= deadline || elapsed >= hard_cap {
                // At the wall-time cap the wall time is what the turn cost.
                *charge = Some(if charged >= deadline {
                    charged
                } else {
                    elapsed
                });
                // Before anything else: what the bot's threads are doing as the deadline passes.
                *seen = AtDeadline {
                    unsent: input.len().saturating_sub(written) as u64,
                    states: self.pid().map(timing::thread_states).unwrap_or_default(),
                };
                self.drain_stderr(turn)?;
                let forks_refused = self
                    .proc_
                    .as_ref()
                    .and_then(|p| p.res.cgroups.as_ref())
                    .is_some_and(|c| c.pids_exhausted());
                let note = if forks_refused {
                    "; it hit its process limit"
                } else {
                    ""
                };
                return Err(fault(
                    FaultKind::Timeout,
                    format!(
                        "no complete answer line within {} ms ({} ms of wall time, {} bytes received){note}",
                        deadline.as_millis(),
                        elapsed.as_millis(),
                        self.pending.len()
                    ),
                ));
            }
            let wait = (deadline - charged).min(hard_cap - elapsed);

            let (stdin_fd, stdout_fd, stderr_fd) = {
                let p = self.proc_.as_ref().expect("exchange on a live bot");
                (
                    p.stdin.as_ref().map_or(-1, |f| f.as_raw_fd()),
                    p.stdout.as_raw_fd(),
                    if stderr_open {
                        p.stderr.as_raw_fd()
                    } else {
                        -1
                    },
                )
            };
            // Negative fds (stderr closed, input all sent) are ignored.
            let mut fds = [
                PollFd::readable(stdout_fd),
                PollFd::readable(stderr_fd),
                PollFd::new(if written < input.len() { stdin_fd } else { -1 }, fdio::OUT),
            ];
            if !matches!(fdio::poll(&mut fds, wait), Ok(n) if n > 0) {
                continue;
            }
            if fds[1].ready() {
                stderr_open = self.drain_stderr(turn)?;
            }
            if fds[0].ready() {
                match self.read_stdout() {
                    Read::Eof => return Err(self.death(turn, Duration::from_millis(500))),
                    Read::Nothing => {}
                    Read::Data => {
                        if let Some(line) = self.take_line(turn)? {
                            if let Some(charged) = self.answer_charge(t0.elapsed(), c) {
                                *charge = Some(charged);
                                return Ok(line);
                            }
                            // Past its time by the clock at the answer (the host's bursts
                            // credited earlier in the turn were ones it slept through).
                            answered_late = true;
                        }
                    }
                }
            }
        }
    }

    /// A complete line from `pending`, or a fault if what is pending can never be a valid one.
    fn take_line(&mut self, turn: u32) -> Result<Option<Vec<u8>>, Fault> {
        let bad = |detail: String| Fault {
            kind: FaultKind::BadOutput,
            turn,
            detail,
        };
        match self.pending.iter().position(|&b| b == b'\n') {
            Some(pos) => {
                if self.pending.len() > pos + 1 {
                    return Err(bad(format!(
                        "{} bytes of extra output after the answer line",
                        self.pending.len() - pos - 1
                    )));
                }
                // Copy the line out and keep `pending`'s buffer for the next turn.
                let end = if pos > 0 && self.pending[pos - 1] == b'\r' {
                    pos - 1
                } else {
                    pos
                };
                let line = self.pending[..end].to_vec();
                self.pending.clear();
                if line.len() > MAX_LINE {
                    return Err(bad(format!(
                        "answer line of {} bytes (at most {MAX_LINE})",
                        line.len()
                    )));
                }
                Ok(Some(line))
            }
            None if self.pending.len() > MAX_LINE + 1 => Err(bad(format!(
                "{} bytes without a line end (an answer has at most {MAX_LINE})",
                self.pending.len()
            ))),
            None => Ok(None),
        }
    }

    fn read_stdout(&mut self) -> Read {
        let Some(p) = self.proc_.as_ref() else {
            return Read::Eof;
        };
        let mut buf = [0u8; 4096];
        let mut got = false;
        loop {
            let err = match fdio::read(p.stdout.as_raw_fd(), &mut buf) {
                Ok(0) => return if got { Read::Data } else { Read::Eof },
                Ok(n) => {
                    self.pending.extend_from_slice(&buf[..n]);
                    got = true;
                    // A short read emptied the pipe: the read that would say so is saved (one
                    // syscall a turn); anything written after it is seen by the next poll.
                    if n < buf.len() || self.pending.len() > 64 * 1024 {
                        return Read::Data;
                    }
                    continue;
                }
                Err(err) => err,
            };
            if err.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return if got {
                Read::Data
            } else if err.kind() == std::io::ErrorKind::WouldBlock {
                Read::Nothing
            } else {
                Read::Eof
            };
        }
    }

    fn write_stdin(&mut self, data: &[u8]) -> Result<usize, ()> {
        let Some(fd) = self.proc_.as_ref().and_then(|p| p.stdin.as_ref()) else {
            return Err(());
        };
        match fdio::write(fd.as_raw_fd(), data) {
            Ok(n) => Ok(n),
            Err(e) => match e.kind() {
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted => Ok(0),
                _ => Err(()),
            },
        }
    }

    /// Move whatever stderr is waiting into the capture. Returns whether stderr is still open;
    /// a flood beyond `stderr_limit` is a fault.
    pub(super) fn drain_stderr(&mut self, turn: u32) -> Result<bool, Fault> {
        let Some(fd) = self.proc_.as_ref().map(|p| p.stderr.as_raw_fd()) else {
            return Ok(false);
        };
        let open = self.drain_stderr_fd(fd);
        if self.stderr.total() > self.cfg.stderr_limit {
            return Err(Fault {
                kind: FaultKind::OutputFlood,
                turn,
                detail: format!("more than {} bytes on stderr", self.cfg.stderr_limit),
            });
        }
        Ok(open)
    }

    pub(super) fn drain_stderr_fd(&mut self, fd: RawFd) -> bool {
        let mut buf = [0u8; 16384];
        loop {
            let kind = match fdio::read(fd, &mut buf) {
                Ok(0) => return false,
                Ok(n) => {
                    self.stderr.push(&buf[..n]);
                    if self.stderr.total() > self.cfg.stderr_limit {
                        return true;
                    }
                    continue;
                }
                Err(e) => e.kind(),
            };
            if kind == std::io::ErrorKind::Interrupted {
                continue;
            }
            return kind == std::io::ErrorKind::WouldBlock;
        }
    }
}
