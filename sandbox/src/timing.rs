//! What the replay records about a bot's time: per turn wall time, CPU time, run-queue wait
//! (time the bot was runnable but the host gave its core to someone else) and whether the
//! deadline was met; plus the readers of those clocks from /proc.

use serde::Serialize;
use std::fs::File;
use std::os::unix::fs::FileExt;

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
        let mut buf = [0u8; 96];
        let n = self.0.read_at(&mut buf, 0).ok()?;
        second_field(&buf[..n])
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

/// The second space-separated decimal field of a schedstat line (`<cpu> <wait> <slices>`).
fn second_field(text: &[u8]) -> Option<u64> {
    let mut fields = text
        .split(|b| b.is_ascii_whitespace())
        .filter(|f| !f.is_empty());
    let f = fields.nth(1)?;
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
        });
        t.record(TurnTiming {
            turn: 1,
            wall_us: 300,
            cpu_us: 10,
            waited_us: 0,
            met: false,
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
    fn schedstat_second_field() {
        assert_eq!(second_field(b"123 456 7\n"), Some(456));
        assert_eq!(second_field(b"123"), None);
        assert_eq!(second_field(b"1 x2 3"), None);
    }
}
