//! Waiting for the kernel to finish something it gives no event for (a killed process tree to
//! leave its cgroup, a zombie to be reaped): look again after a pause that starts short and
//! doubles up to a cap. Most such waits end within a few hundred µs, so a fixed 1 ms sleep made
//! every teardown wait at least that long.

use std::time::Duration;

/// The first pause.
const FIRST: Duration = Duration::from_micros(25);

/// Pauses that double from 25 µs up to `cap`.
pub(crate) struct Backoff {
    next: Duration,
    cap: Duration,
}

impl Backoff {
    pub(crate) fn up_to(cap: Duration) -> Backoff {
        Backoff {
            next: FIRST.min(cap),
            cap,
        }
    }

    /// Sleep for the next pause.
    pub(crate) fn pause(&mut self) {
        std::thread::sleep(self.next);
        self.next = (self.next * 2).min(self.cap);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_double_up_to_the_cap() {
        let mut b = Backoff::up_to(Duration::from_micros(120));
        let mut seen = Vec::new();
        for _ in 0..5 {
            seen.push(b.next.as_micros());
            b.pause();
        }
        assert_eq!(seen, [25, 50, 100, 120, 120]);
    }
}
