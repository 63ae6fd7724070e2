//! Log set-up for every `farm` command: tracing to stderr, filtered by `FARM_LOG` (default
//! `warn`, e.g. `FARM_LOG=info` or `FARM_LOG=worker=debug`).

use tracing_subscriber::EnvFilter;

/// Install the global subscriber (idempotent: a second call does nothing).
pub fn init() {
    let filter = EnvFilter::try_from_env("FARM_LOG").unwrap_or_else(|_| EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}
