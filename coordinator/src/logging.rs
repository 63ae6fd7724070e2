//! Log set-up for every `farm` command: tracing to stderr, filtered by the global `--log`
//! flag (env `FARM_LOG`; default `warn`, e.g. `FARM_LOG=info` or `--log worker=debug`).
//! Colour codes only when stderr is a terminal: a file or a pipe gets plain text.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// A `--log` value as a filter, or why it is not one.
pub fn filter(directives: &str) -> Result<EnvFilter, tracing_subscriber::filter::ParseError> {
    EnvFilter::try_new(directives)
}

/// Install the global subscriber (idempotent: a second call does nothing).
pub fn init(filter: EnvFilter) {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}
