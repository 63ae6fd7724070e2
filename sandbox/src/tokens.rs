//! Core tokens: a counting semaphore shared by every match of a worker, so that no more bots
//! think at once than the host has cores. A bot holds a token only while it is running a turn.

use std::sync::{Arc, Condvar, Mutex};

/// A counting semaphore of "cores"; cheap to clone (all clones share the same count).
#[derive(Clone, Debug)]
pub struct CoreTokens(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    free: Mutex<Count>,
    wake: Condvar,
    total: usize,
}

/// Free tokens, and how many threads wait for one (a token given back wakes a thread only if
/// one waits: a condvar notification is a futex syscall even when nobody listens, and a token
/// changes hands twice per bot-turn).
#[derive(Debug)]
struct Count {
    free: usize,
    waiting: usize,
}

/// One held token; given back when dropped.
#[derive(Debug)]
pub struct CoreToken {
    inner: Arc<Inner>,
}

impl CoreTokens {
    /// `n` tokens (at least one).
    pub fn new(n: usize) -> Self {
        let n = n.max(1);
        CoreTokens(Arc::new(Inner {
            free: Mutex::new(Count {
                free: n,
                waiting: 0,
            }),
            wake: Condvar::new(),
            total: n,
        }))
    }

    /// One token per core of this host.
    pub fn default_for_host() -> Self {
        Self::new(
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
        )
    }

    /// How many tokens exist in total.
    pub fn total(&self) -> usize {
        self.0.total
    }

    /// How many tokens are free right now (a snapshot, for tests and metrics).
    pub fn available(&self) -> usize {
        self.0.free.lock().unwrap_or_else(|e| e.into_inner()).free
    }

    /// Wait until a token is free and take it.
    pub fn acquire(&self) -> CoreToken {
        let mut count = self.0.free.lock().unwrap_or_else(|e| e.into_inner());
        while count.free == 0 {
            count.waiting += 1;
            count = self.0.wake.wait(count).unwrap_or_else(|e| e.into_inner());
            count.waiting -= 1;
        }
        count.free -= 1;
        CoreToken {
            inner: Arc::clone(&self.0),
        }
    }
}

impl Drop for CoreToken {
    fn drop(&mut self) {
        let mut count = self.inner.free.lock().unwrap_or_else(|e| e.into_inner());
        count.free += 1;
        if count.waiting > 0 {
            self.inner.wake.notify_one();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[test]
    fn never_more_holders_than_tokens() {
        let tokens = CoreTokens::new(2);
        let inside = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..6)
            .map(|_| {
                let (tokens, inside, peak) = (tokens.clone(), inside.clone(), peak.clone());
                std::thread::spawn(move || {
                    for _ in 0..20 {
                        let _t = tokens.acquire();
                        let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                        peak.fetch_max(now, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_micros(200));
                        inside.fetch_sub(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(peak.load(Ordering::SeqCst), 2);
        assert_eq!(tokens.available(), 2);
    }

    #[test]
    fn zero_means_one() {
        assert_eq!(CoreTokens::new(0).total(), 1);
    }
}
