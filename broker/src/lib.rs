//! What the coordinator and the workers speak over RabbitMQ and Redis: the queue names of a
//! tournament and how they are declared (`names`), how to connect and back off, the headers and
//! delivery mode, the Redis store (`store`: artifacts by sha256, active tournaments, completed
//! sets, dead letters, the ownership lease, worker heartbeats; `terms`: how workers share their
//! time between tournaments) and the one shutdown value of a
//! long-running command (`shutdown`). The coordinator's RabbitMQ transport and cluster commands
//! and the worker's `farm worker` loop (`worker::serve`) build on it; it depends on neither.

pub mod names;
pub mod shutdown;
pub mod store;
pub mod terms;
pub mod wake;

use std::time::Duration;

use lapin::BasicProperties;

pub use names::Names;
pub use shutdown::Shutdown;
pub use store::{Followed, Heartbeat, Store, StoreError, WorkerState};
pub use terms::Terms;

/// Jobs a worker has tried this often (deaths, requeues) are dead-lettered as poison.
pub const DELIVERY_LIMIT: i32 = 5;
/// AMQP header a worker sets on a job it refuses, giving the reason.
pub const REASON_HEADER: &str = "x-farm-reason";
/// A worker's heartbeat expires after this long without renewal.
pub const HEARTBEAT_TTL: Duration = Duration::from_secs(10);
/// Version a worker announces in its heartbeat (the workspace's version).
pub const WORKER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// What went wrong talking to RabbitMQ. The messages name what was being done; the broker's own
/// error is the source.
#[derive(Debug, thiserror::Error)]
pub enum BrokerError {
    /// The connection could not be opened (the URL in the message has its password hidden).
    #[error("connecting to the broker {url}")]
    Connect {
        url: String,
        #[source]
        source: lapin::Error,
    },
    #[error("declaring exchange {name}")]
    DeclareExchange {
        name: String,
        #[source]
        source: lapin::Error,
    },
    #[error("declaring queue {name}")]
    DeclareQueue {
        name: String,
        #[source]
        source: lapin::Error,
    },
    #[error("binding {queue} to {exchange}")]
    Bind {
        queue: String,
        exchange: String,
        #[source]
        source: lapin::Error,
    },
    /// Any other AMQP operation.
    #[error(transparent)]
    Amqp(#[from] lapin::Error),
}

/// Connect to RabbitMQ (lapin's own executor; works under tokio).
pub async fn connect(broker: &str) -> Result<lapin::Connection, BrokerError> {
    lapin::Connection::connect(broker, lapin::ConnectionProperties::default())
        .await
        .map_err(|source| BrokerError::Connect {
            url: redact(broker),
            source,
        })
}

/// A URL with its password hidden, for messages.
pub fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => {
            let creds = &url[s + 3..at];
            match creds.find(':') {
                Some(c) => format!("{}{}:***{}", &url[..s + 3], &creds[..c], &url[at..]),
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}

/// Exponential backoff with jitter for reconnects: attempt 0 -> ~0.2 s, capped near 10 s.
pub fn backoff(attempt: u32) -> Duration {
    let base = 200u64.saturating_mul(1u64 << attempt.min(6)).min(10_000);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos() as u64)
        .unwrap_or(0);
    Duration::from_millis(base / 2 + nanos % (base / 2 + 1))
}

/// This host's name.
pub fn hostname() -> String {
    nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .unwrap_or_else(|| "localhost".to_string())
}

/// Persistent delivery mode.
pub fn persistent() -> BasicProperties {
    BasicProperties::default().with_delivery_mode(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_their_password_and_nothing_else() {
        assert_eq!(
            redact("amqp://farm:sekrit@rabbit:5672/%2f"),
            "amqp://farm:***@rabbit:5672/%2f"
        );
        assert_eq!(redact("redis://rabbit:6379/0"), "redis://rabbit:6379/0");
        assert_eq!(redact("redis://user@host/0"), "redis://user@host/0");
    }

    #[test]
    fn backoff_grows_and_stays_capped() {
        assert!(backoff(0) <= Duration::from_millis(200));
        assert!(backoff(3) >= Duration::from_millis(800));
        assert!(backoff(40) <= Duration::from_secs(10));
    }
}
