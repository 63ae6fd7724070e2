//! A run-queue wait the scheduler has not counted yet. `/proc/<pid>/schedstat` adds a thread's
//! wait for a core only when the thread is given one, so a bot whose main thread woke just
//! before its deadline and was still waiting for a core at it showed that wait as its own time:
//! 3 of the 4 spurious timeouts of the first full stress run of issue 21 (main thread `R` at the
//! deadline, 25–109 ms of wall time that was neither its CPU nor a counted wait).
//!
//! So before a timeout is declared on the fair clock, a main thread that is runnable but not on
//! a core is waited for, until it is given one (its wait is then counted and the turn is
//! charged again) or the turn's wall-time cap passes. A main thread on a core (computing) is
//! not waited for: its on-CPU time moves while it is never switched in, and its timeout stands.

use std::time::{Duration, Instant};

use super::Bot;

/// How often a main thread waiting for a core is looked at.
const LOOK: Duration = Duration::from_millis(1);

/// On-CPU time of the main thread, moved while it was never switched in, that shows it was on a
/// core all along (the scheduler updates it at least every tick while it runs).
const ON_A_CORE: Duration = Duration::from_micros(500);

impl Bot {
    /// Whether the bot's main thread was waiting for a core now and has since been given one,
    /// so that its wait is in its clock and the turn must be charged again. False at once when
    /// it is not runnable or its clocks cannot be read, as soon as it shows it is on a core,
    /// and when `cap` passes first.
    pub(super) fn uncounted_wait_ended(&self, cap: Instant) -> bool {
        let Some(runq) = self.runq.as_ref() else {
            return false;
        };
        let Some(pid) = self.pid() else {
            return false;
        };
        if crate::timing::state_of(pid) != Some('R') {
            return false;
        }
        let Some((cpu0, _, cores0)) = runq.read_all() else {
            return false;
        };
        while Instant::now() < cap {
            std::thread::sleep(LOOK);
            let Some((cpu, _, cores)) = runq.read_all() else {
                return false;
            };
            if cores != cores0 {
                return true;
            }
            if Duration::from_nanos(cpu.saturating_sub(cpu0)) >= ON_A_CORE {
                return false;
            }
        }
        false
    }
}
