//! Where a start-up or a teardown spends its wall time, step by step. Logged at debug level
//! under the target `matchfarm::startup` (`FARM_LOG=matchfarm::startup=debug` on `farm`,
//! `RUST_LOG=...` on the sandbox bench), one line per
//! start or teardown, so that an operator (and the start-up bench) can see which step a slow
//! host spends its milliseconds in. Costs one clock read per step; nothing is formatted unless
//! the target is enabled.

use std::time::Instant;

/// The log target of the step timings.
pub const TARGET: &str = "matchfarm::startup";

/// Up to this many steps are kept (a start has 9, a teardown 4).
const MAX: usize = 12;

/// The end of each step, in µs since the first.
pub(crate) struct Steps {
    t0: Instant,
    ends: [(&'static str, u32); MAX],
    len: usize,
}

impl Steps {
    pub(crate) fn start() -> Steps {
        Steps {
            t0: Instant::now(),
            ends: [("", 0); MAX],
            len: 0,
        }
    }

    /// The step `name` ends now.
    pub(crate) fn end(&mut self, name: &'static str) {
        if let Some(slot) = self.ends.get_mut(self.len) {
            let us = self.t0.elapsed().as_micros().min(u32::MAX as u128) as u32;
            *slot = (name, us);
            self.len += 1;
        }
    }

    /// Log each step's own duration (µs) and the total, as `what` (`start` or `teardown`).
    pub(crate) fn log(&self, what: &'static str) {
        if !tracing::enabled!(target: TARGET, tracing::Level::DEBUG) {
            return;
        }
        let mut text = String::new();
        let mut before = 0;
        for (name, end) in &self.ends[..self.len] {
            text.push_str(&format!(" {name}={}", end.saturating_sub(before)));
            before = *end;
        }
        tracing::debug!(target: TARGET, total_us = before, "{what}:{text}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_kept_in_order_and_never_overflow() {
        let mut s = Steps::start();
        for _ in 0..MAX + 3 {
            s.end("x");
        }
        assert_eq!(s.len, MAX);
        assert!(s.ends.windows(2).all(|w| w[0].1 <= w[1].1));
    }
}
