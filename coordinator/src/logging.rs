//! Log set-up for every `farm` command: tracing to stderr, filtered by the global `--log`
//! flag (env `FARM_LOG`; default `warn`, e.g. `FARM_LOG=info` or `--log worker=debug`).
//! Colour codes only when stderr is a terminal: a file or a pipe gets plain text.
//!
//! lapin (the RabbitMQ client) logs at ERROR every channel the broker closes, including the
//! NOT_FOUND a worker gets when a tournament ends and its coordinator deletes the queues. Each
//! such error also comes back to the caller as a `Result`, which the farm handles and logs at
//! the level it deserves, so lapin's own events are off unless the filter names `lapin`
//! (e.g. `--log warn,lapin=debug`).

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// A `--log` value as a filter, or why it is not one.
pub fn filter(directives: &str) -> Result<EnvFilter, tracing_subscriber::filter::ParseError> {
    if directives.contains("lapin") {
        EnvFilter::try_new(directives)
    } else {
        EnvFilter::try_new(format!("{directives},lapin=off"))
    }
}

/// Install the global subscriber (idempotent: a second call does nothing).
pub fn init(filter: EnvFilter) {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// What a subscriber with `directives` writes for an ERROR from lapin and one from the farm.
    fn written(directives: &str) -> String {
        let out = Arc::new(Mutex::new(Vec::<u8>::new()));
        let sink = out.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_env_filter(filter(directives).unwrap())
            .with_ansi(false)
            .with_writer(move || Sink(sink.clone()))
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            tracing::error!(target: "lapin::channel", "Channel closed by the broker");
            tracing::error!(target: "worker::serve", "a farm error");
        });
        let bytes = out.lock().unwrap().clone();
        String::from_utf8(bytes).unwrap()
    }

    struct Sink(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Sink {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn lapins_own_errors_are_off_unless_the_filter_names_lapin() {
        for d in ["warn", "info", "warn,worker=debug", "error"] {
            let w = written(d);
            assert!(!w.contains("Channel closed"), "{d}: {w}");
            assert!(w.contains("a farm error"), "{d}: {w}");
        }
        for d in ["warn,lapin=error", "lapin=debug"] {
            assert!(written(d).contains("Channel closed"), "{d}");
        }
    }

    #[test]
    fn a_bad_filter_is_still_refused() {
        assert!(filter("warn,worker=loud").is_err());
    }
}
