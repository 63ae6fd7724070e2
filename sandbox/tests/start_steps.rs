//! The start-up and teardown step log (`sandbox::steps`): every start and every teardown of a
//! bot, in every mode this host runs, logs one line at debug level under `matchfarm::startup`
//! naming each step with its µs, the steps adding up to the total; `tools/startup-steps.py`
//! reads those lines back.

mod common;

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use sandbox::{Bot, CoreTokens};

/// A writer into a shared buffer, for a subscriber that keeps what it logs.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The `(step, µs)` pairs and the total of the one line of `kind` in `log`.
fn steps_of(log: &str, kind: &str) -> (Vec<(String, u64)>, u64) {
    let lines: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(&format!(" {kind}:")))
        .collect();
    assert_eq!(lines.len(), 1, "one {kind} line in:\n{log}");
    let text = lines[0].split_once(&format!(" {kind}:")).unwrap().1;
    let mut steps = Vec::new();
    let mut total = None;
    for pair in text.split_whitespace() {
        let (name, us) = pair.split_once('=').unwrap();
        let us: u64 = us.parse().unwrap();
        if name == "total_us" {
            total = Some(us);
        } else {
            steps.push((name.to_string(), us));
        }
    }
    (steps, total.expect("a total"))
}

#[test]
fn each_start_and_teardown_logs_its_steps() {
    for cfg in modes() {
        let out = Captured::default();
        let writer = out.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_env_filter("matchfarm::startup=debug")
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            let tokens = CoreTokens::new(1);
            let mut b = Bot::spawn(&bot("test", "answer"), &cfg, &tokens, 0).expect("spawn");
            b.exchange(0, &turn_input(0), Duration::from_secs(5))
                .expect("an answer");
            assert!(b.finish().leftovers.is_empty());
        });
        let log = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        let (start, total) = steps_of(&log, "start");
        let names: Vec<&str> = start.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "uid",
                "folder",
                "copy",
                "cgroups",
                "landlock_seccomp",
                "pipes",
                "clone_exec"
            ],
            "{:?}",
            cfg.mode
        );
        assert_eq!(start.iter().map(|(_, us)| us).sum::<u64>(), total);
        assert!(total > 0, "{:?}: a start takes time", cfg.mode);
        let (teardown, total) = steps_of(&log, "teardown");
        let names: Vec<&str> = teardown.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            ["kill", "reap", "verify", "remove"],
            "{:?}",
            cfg.mode
        );
        assert_eq!(teardown.iter().map(|(_, us)| us).sum::<u64>(), total);

        // The medians tool reads the same lines back.
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), &log).unwrap();
        let report = std::process::Command::new("python3")
            .arg(repo().join("tools/startup-steps.py"))
            .arg(file.path())
            .output()
            .expect("python3 runs");
        let text = String::from_utf8_lossy(&report.stdout);
        assert!(
            report.status.success(),
            "{text}{}",
            String::from_utf8_lossy(&report.stderr)
        );
        assert!(text.contains("start (1 lines)"), "{text}");
        assert!(text.contains("teardown (1 lines)"), "{text}");
        assert!(text.contains("clone_exec"), "{text}");
    }
}
