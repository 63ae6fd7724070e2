//! The one shutdown value: set once (by SIGTERM or SIGINT, or by a caller), read by every task
//! of a long-running command in the form it needs: async tasks await [`Shutdown::wait`],
//! blocking code (the proboj runner's relay) polls [`Shutdown::flag`]. `farm worker`, `farm
//! ladder serve` and `farm proboj` each make one and hand clones to their tasks.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::sync::watch;

/// A shutdown request, shared by clones.
#[derive(Clone, Debug)]
pub struct Shutdown {
    flag: Arc<AtomicBool>,
    tx: Arc<watch::Sender<bool>>,
}

impl Default for Shutdown {
    fn default() -> Self {
        Self::new()
    }
}

impl Shutdown {
    /// A shutdown nothing has requested yet.
    pub fn new() -> Shutdown {
        Shutdown {
            flag: Arc::new(AtomicBool::new(false)),
            tx: Arc::new(watch::channel(false).0),
        }
    }

    /// A shutdown that SIGTERM or SIGINT requests (logged with `what`: what stops, and how). The
    /// signals are awaited on a thread of their own, so blocking and async callers alike get it.
    pub fn on_signals(what: &'static str) -> std::io::Result<Shutdown> {
        let s = Shutdown::new();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()?;
        // Install the handlers before returning, so a signal right after start is not lost.
        let (mut term, mut int) = rt.block_on(async {
            use tokio::signal::unix::{signal, SignalKind};
            Ok::<_, std::io::Error>((
                signal(SignalKind::terminate())?,
                signal(SignalKind::interrupt())?,
            ))
        })?;
        let set = s.clone();
        std::thread::Builder::new()
            .name("shutdown-signals".into())
            .spawn(move || {
                rt.block_on(async {
                    tokio::select! { _ = term.recv() => {}, _ = int.recv() => {} }
                });
                tracing::info!("stopping: {what}");
                set.trigger();
            })?;
        Ok(s)
    }

    /// Request the shutdown (idempotent).
    pub fn trigger(&self) {
        self.flag.store(true, Ordering::SeqCst);
        self.tx.send_replace(true);
    }

    /// True once the shutdown was requested.
    pub fn is_set(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }

    /// The flag blocking code polls.
    pub fn flag(&self) -> &AtomicBool {
        &self.flag
    }

    /// The same flag, shared, for code that outlives a borrow (a blocking task of its own).
    pub fn shared_flag(&self) -> Arc<AtomicBool> {
        self.flag.clone()
    }

    /// Wait until the shutdown is requested (at once if it already was).
    pub async fn wait(&self) {
        let mut rx = self.tx.subscribe();
        // The sender lives as long as `self`: wait_for only fails once it is gone.
        let _ = rx.wait_for(|set| *set).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn every_clone_sees_one_trigger_in_its_own_form() {
        let s = Shutdown::new();
        let (a, b) = (s.clone(), s.clone());
        let waiter = tokio::spawn(async move { a.wait().await });
        assert!(!b.is_set());
        s.trigger();
        waiter.await.unwrap();
        assert!(b.is_set() && b.flag().load(Ordering::SeqCst));
        // Waiting after the fact returns at once.
        tokio::time::timeout(std::time::Duration::from_secs(1), b.wait())
            .await
            .unwrap();
    }
}
