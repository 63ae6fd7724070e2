//! What the replay records about a bot's time: per turn wall time, CPU time, run-queue wait
//! (time the bot was runnable but the host gave its core to someone else) and whether the
//! deadline was met; for a turn that ran past its limit, where its wall time went (the
//! [`LateTurn`] breakdown, so that a timeout explains itself); plus the readers of those clocks
//! from /proc.

use serde::Serialize;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::time::Duration;

/// One bot-turn.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TurnTiming {
    pub turn: u32,
    /// From the start of sending to the complete answer line (or to the fault).
    pub wall_us: u64,
    /// CPU time the bot used in that interval (all its threads).
    pub cpu_us: u64,
    /// Part of `wall_us` spent runnable but waiting for a core, by the bot or by the worker
    /// thread talking to it (not charged to the bot; with the fair clock only).
    pub waited_us: u64,
    /// Whether the answer came within the deadline.
    pub met: bool,
    /// Time spent waiting for a core token before the turn's clock started (not charged).
    #[serde(skip_serializing_if = "is_zero")]
    pub token_us: u64,
    /// Part of `waited_us` that was the worker thread's own run-queue wait (the rest is the
    /// bot's main thread's).
    #[serde(skip_serializing_if = "is_zero")]
    pub host_waited_us: u64,
    /// Where the wall time went, for a turn that ran past its limit (or timed out).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub late: Option<LateTurn>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// The wall-time breakdown of one late turn, from the bot's main thread's scheduler clocks
/// (`/proc/<pid>/schedstat`) and its threads' states: `wall_us` of the turn =
/// `main_cpu_us` (on a core) + `main_waited_us` (runnable, no core) + `idle_us` (neither:
/// sleeping, blocked or stopped, `states` tells which, or on a CPU the host took, `host_us`
/// tells how much at most).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LateTurn {
    /// On-CPU time of the bot's main thread.
    pub main_cpu_us: u64,
    /// Run-queue wait of the bot's main thread.
    pub main_waited_us: u64,
    /// Wall time the main thread was neither on a core nor waiting for one.
    pub idle_us: u64,
    /// The time charged against the deadline.
    pub charged_us: u64,
    /// Host time (hypervisor steal, interrupts) lost on the CPUs of the bot and of the thread
    /// talking to it during the turn, as `/proc/stat` counts it (in its ticks), that the bot
    /// was exposed to: every burst, and of the thin spread its share of the turn on a core or
    /// waiting for one (`hosttime::HostLoss::credited`; not charged).
    #[serde(skip_serializing_if = "is_zero")]
    pub host_us: u64,
    /// Bytes of the turn's input not yet written when the turn ended (a bot not reading).
    #[serde(skip_serializing_if = "is_zero")]
    pub unsent_bytes: u64,
    /// The bot's threads when the deadline passed (timeouts only): `state` letter of
    /// `/proc/<tid>/stat` (R running, S sleeping, D blocked, T stopped) and the kernel function it
    /// waits in (`wchan`), e.g. `S pipe_read`, `T do_signal_stop`; at most [`MAX_THREADS`].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub states: Vec<String>,
}

/// What a turn past its limit costs a bot on the fair clock: its wall time `elapsed` less what
/// the host is to blame for (`waited`: run-queue waits of the bot's main thread and of the
/// thread talking to it; `host`: host time of their CPUs), never less than `cpu`, the CPU time
/// all the bot's threads used (so neither a helper thread nor the host's losses buy a bot
/// computing time), and never more than `elapsed`.
pub fn fair_charge(elapsed: Duration, waited: Duration, host: Duration, cpu: Duration) -> Duration {
    elapsed
        .saturating_sub(waited)
        .saturating_sub(host)
        .max(cpu)
        .min(elapsed)
}

/// Threads listed in [`LateTurn::states`].
pub const MAX_THREADS: usize = 8;

/// The states of up to [`MAX_THREADS`] threads of process `pid`, as [`LateTurn::states`] lists
/// them (empty when /proc cannot tell).
pub(crate) fn thread_states(pid: i32) -> Vec<String> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut tids: Vec<i32> = dir
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    tids.sort_unstable();
    tids.iter()
        .take(MAX_THREADS)
        .filter_map(|tid| {
            let stat = std::fs::read(format!("/proc/{pid}/task/{tid}/stat")).ok()?;
            let state = stat_state(&stat)?;
            let wchan = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/wchan"))
                .unwrap_or_default();
            let wchan = wchan.trim();
            Some(if wchan.is_empty() || wchan == "0" {
                state.to_string()
            } else {
                format!("{state} {wchan}")
            })
        })
        .collect()
}

/// The state letter of a `/proc/<pid>/stat` line (the field after the parenthesised name).
/// The state letter of process `pid`'s main thread (`R` runnable or running, `S` asleep, ...).
pub(crate) fn state_of(pid: i32) -> Option<char> {
    stat_state(&std::fs::read(format!("/proc/{pid}/stat")).ok()?)
}

pub(crate) fn stat_state(stat: &[u8]) -> Option<char> {
    let close = stat.iter().rposition(|&b| b == b')')?;
    stat.get(close + 1..)?
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .map(|&b| char::from(b))
        .filter(char::is_ascii_alphabetic)
}

/// A bot's time over a match.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct BotTiming {
    pub turns: u32,
    pub wall_us: u64,
    pub cpu_us: u64,
    pub max_wall_us: u64,
    pub deadline_misses: u32,
    /// Share of the wall time that was CPU time, in per mille (0..=1000 for single-threaded bots).
    pub cpu_per_mille: u64,
    pub per_turn: Vec<TurnTiming>,
}

impl BotTiming {
    pub(crate) fn record(&mut self, t: TurnTiming) {
        self.turns += 1;
        self.wall_us += t.wall_us;
        self.cpu_us += t.cpu_us;
        self.max_wall_us = self.max_wall_us.max(t.wall_us);
        if !t.met {
            self.deadline_misses += 1;
        }
        self.cpu_per_mille = (self.cpu_us * 1000).checked_div(self.wall_us).unwrap_or(0);
        self.per_turn.push(t);
    }
}

/// CPU clock of another process (all threads), in nanoseconds.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CpuClock(libc::clockid_t);

impl CpuClock {
    pub(crate) fn of(pid: i32) -> Option<Self> {
        let mut id: libc::clockid_t = 0;
        // SAFETY: plain syscall wrapper writing into a local.
        let rc = unsafe { libc::clock_getcpuclockid(pid, &mut id) };
        (rc == 0).then_some(CpuClock(id))
    }

    pub(crate) fn read_ns(&self) -> Option<u64> {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: plain syscall wrapper writing into a local.
        let rc = unsafe { libc::clock_gettime(self.0, &mut ts) };
        (rc == 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
    }
}

/// `/proc/<pid>/schedstat` of the bot's main thread: field 2 is the time spent runnable but
/// waiting on a run queue, the part of wall time that host load (not the bot) is to blame for.
#[derive(Debug)]
pub(crate) struct RunQueueClock(File);

impl RunQueueClock {
    pub(crate) fn of(pid: i32) -> Option<Self> {
        File::open(format!("/proc/{pid}/schedstat"))
            .ok()
            .map(RunQueueClock)
    }

    /// The calling thread's own clock.
    pub(crate) fn current_thread() -> Option<Self> {
        File::open("/proc/thread-self/schedstat")
            .ok()
            .map(RunQueueClock)
    }

    pub(crate) fn waited_ns(&self) -> Option<u64> {
        self.read().map(|(_, waited)| waited)
    }

    /// (on-CPU, run-queue wait) of the thread so far, ns.
    pub(crate) fn read(&self) -> Option<(u64, u64)> {
        self.read_all().map(|(cpu, waited, _)| (cpu, waited))
    }

    /// (on-CPU ns, run-queue wait ns, times it was given a core) of the thread so far. The
    /// scheduler adds a wait to the second only as the third counts the core that ends it.
    pub(crate) fn read_all(&self) -> Option<(u64, u64, u64)> {
        let mut buf = [0u8; 96];
        let n = self.0.read_at(&mut buf, 0).ok()?;
        let text = buf.get(..n)?;
        Some((field(text, 0)?, field(text, 1)?, field(text, 2)?))
    }
}

thread_local! {
    /// This thread's own schedstat, opened once per thread (not once per turn).
    static MY_RUNQ: Option<RunQueueClock> = RunQueueClock::current_thread();
}

/// Run-queue wait of the calling thread so far, ns.
pub(crate) fn current_thread_waited_ns() -> Option<u64> {
    MY_RUNQ.with(|c| c.as_ref().and_then(|c| c.waited_ns()))
}

/// The `index`-th space-separated decimal field of a schedstat line (`<cpu> <wait> <slices>`).
fn field(text: &[u8], index: usize) -> Option<u64> {
    let mut fields = text
        .split(|b| b.is_ascii_whitespace())
        .filter(|f| !f.is_empty());
    let f = fields.nth(index)?;
    if f.is_empty() || f.len() > 20 || !f.iter().all(u8::is_ascii_digit) {
        return None;
    }
    f.iter().try_fold(0u64, |acc, d| {
        acc.checked_mul(10)?.checked_add(u64::from(d - b'0'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_accumulates() {
        let mut t = BotTiming::default();
        t.record(TurnTiming {
            turn: 0,
            wall_us: 100,
            cpu_us: 50,
            waited_us: 0,
            met: true,
            ..TurnTiming::default()
        });
        t.record(TurnTiming {
            turn: 1,
            wall_us: 300,
            cpu_us: 10,
            waited_us: 0,
            met: false,
            ..TurnTiming::default()
        });
        assert_eq!(
            (
                t.turns,
                t.wall_us,
                t.cpu_us,
                t.max_wall_us,
                t.deadline_misses
            ),
            (2, 400, 60, 300, 1)
        );
        assert_eq!(t.cpu_per_mille, 150);
    }

    #[test]
    fn clocks_of_self_are_readable() {
        let me = std::process::id() as i32;
        assert!(CpuClock::of(me).unwrap().read_ns().is_some());
        assert!(RunQueueClock::of(me).unwrap().waited_ns().is_some());
        assert!(current_thread_waited_ns().is_some());
    }

    #[test]
    fn schedstat_fields() {
        assert_eq!(field(b"123 456 7\n", 1), Some(456));
        assert_eq!(field(b"123 456 7\n", 0), Some(123));
        assert_eq!(field(b"123", 1), None);
        assert_eq!(field(b"1 x2 3", 1), None);
    }

    #[test]
    fn stat_state_letter() {
        assert_eq!(stat_state(b"12 (a b) c) S 1 2"), Some('S'));
        assert_eq!(stat_state(b"12 (x) T 1"), Some('T'));
        assert_eq!(stat_state(b"12 (x"), None);
        assert_eq!(stat_state(b"12 (x) "), None);
    }

    #[test]
    fn own_threads_have_states() {
        let me = std::process::id() as i32;
        let states = thread_states(me);
        assert!(
            !states.is_empty() && states.len() <= MAX_THREADS,
            "{states:?}"
        );
        // This thread is running while it reads its own state.
        assert!(states.iter().any(|s| s.starts_with('R')), "{states:?}");
    }

    /// Issue 21, case 1, as a turn of it measured: a bot burning 30 ms of CPU against a 50 ms
    /// limit on a guest whose hypervisor took 22 ms of the bot's CPU during the turn (and 3 ms
    /// of run-queue wait). Before host time was counted, the charge was 55 ms: a timeout.
    #[test]
    fn host_time_is_not_charged_but_cpu_always_is() {
        let ms = Duration::from_millis;
        let limit = ms(50);
        let charged = fair_charge(ms(55), ms(3), ms(22), ms(30));
        assert_eq!(charged, ms(30));
        assert!(charged < limit);
        // Without the host's part (the old clock): past the limit.
        assert!(fair_charge(ms(55), ms(3), Duration::ZERO, ms(30)) >= limit);
        // A bot that really computes too long times out whatever the host lost.
        assert_eq!(fair_charge(ms(120), ms(5), ms(40), ms(80)), ms(80));
        // A bot asleep past its limit, with no host loss, is charged its sleep.
        assert_eq!(fair_charge(ms(60), ms(0), ms(0), ms(1)), ms(60));
        // Never more than the wall time (a helper thread on a second core).
        assert_eq!(fair_charge(ms(40), ms(0), ms(0), ms(70)), ms(40));
    }

    #[test]
    fn quiet_fields_are_left_out() {
        let t = TurnTiming {
            turn: 3,
            wall_us: 10,
            ..TurnTiming::default()
        };
        let v = serde_json::to_value(&t).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"turn": 3, "wall_us": 10, "cpu_us": 0, "waited_us": 0, "met": false})
        );
    }
}
