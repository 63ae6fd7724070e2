//! The worker self-test as an operator meets it: `farm worker --self-test`, `farm worker` at
//! start (no job taken when it fails, metrics published from the start) and an embedded
//! `farm run` (nothing played on a host that cannot run bots). The failing case is a real
//! `noexec` tmpfs, as Docker mounts a compose `tmpfs:` entry.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{farm, run};

/// A tmpfs mounted noexec for the test; unmounted when dropped (also when the test fails).
struct NoexecMount {
    dir: tempfile::TempDir,
}

impl NoexecMount {
    /// None (test skipped) when this process may not mount.
    fn new() -> Option<NoexecMount> {
        let dir = tempfile::tempdir().unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "noexec,nosuid,nodev,size=64m", "tmpfs"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            if std::env::var("FARM_REQUIRE_SANDBOX").as_deref() == Ok("1") {
                panic!("FARM_REQUIRE_SANDBOX=1 but a tmpfs cannot be mounted here (not root?)");
            }
            eprintln!("skipped: cannot mount a tmpfs (needs root)");
            return None;
        }
        Some(NoexecMount { dir })
    }

    fn path(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }
}

impl Drop for NoexecMount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

fn worker_self_test(scratch: &Path, cache: &Path) -> (i32, String, String) {
    run(farm()
        .args(["worker", "--self-test", "--scratch-dir"])
        .arg(scratch)
        .arg("--cache-dir")
        .arg(cache))
}

/// The speed signature a passed self-test prints ("speed 412.3 reference turns/s").
fn speed_of(out: &str) -> f64 {
    out.split("speed ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no speed in {out}"))
}

#[test]
fn self_test_passes_here_and_names_a_noexec_scratch() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let (code, out, err) = worker_self_test(&tmp.path().join("scratch"), &cache);
    assert_eq!(code, 0, "self-test failed on a good host:\n{out}{err}");
    assert!(out.contains("self-test passed"), "{out}");
    let speed = speed_of(&out);
    assert!(speed > 0.0, "{out}");

    // --min-speed: a host below it takes no job and says so; one above it passes.
    let (code, out, err) = run(farm()
        .args(["worker", "--self-test", "--min-speed"])
        .arg(format!("{}", speed * 1000.0))
        .arg("--scratch-dir")
        .arg(tmp.path().join("scratch"))
        .arg("--cache-dir")
        .arg(&cache));
    assert_eq!(code, 2, "a host below --min-speed passed:\n{out}{err}");
    assert!(err.contains("below --min-speed"), "{err}");
    let (code, out, err) = run(farm()
        .args([
            "worker",
            "--self-test",
            "--min-speed",
            "0.001",
            "--scratch-dir",
        ])
        .arg(tmp.path().join("scratch"))
        .arg("--cache-dir")
        .arg(&cache));
    assert_eq!(code, 0, "{out}{err}");
    for bad in ["0", "-3", "fast", "inf"] {
        let (code, _, err) = run(farm().args(["worker", "--self-test", "--min-speed", bad]));
        assert_eq!(code, 2, "--min-speed {bad} accepted: {err}");
        assert!(err.contains("reference turns per second"), "{err}");
    }

    let Some(noexec) = NoexecMount::new() else {
        return;
    };
    let (code, out, err) = worker_self_test(&noexec.path().join("scratch"), &cache);
    assert_ne!(code, 0, "self-test passed on a noexec scratch:\n{out}{err}");
    assert!(err.contains("noexec"), "no reason given:\n{err}");
    assert!(
        err.contains("FARM_SCRATCH_DIR") || err.contains("--scratch-dir"),
        "no fix given:\n{err}"
    );
}

#[test]
fn an_embedded_run_on_a_host_that_cannot_run_bots_plays_nothing() {
    let Some(noexec) = NoexecMount::new() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("out");
    let (code, out, err) = run(farm()
        .args([
            "run",
            "--bots",
            "A=bots/test/answer.cpp",
            "Base=bots/bomberman/baseline.cpp",
            "--anchor",
            "Base",
            "--sizes",
            "2",
            "--seeds",
            "1",
            "--seed",
            "3",
            "--scratch-dir",
        ])
        .arg(noexec.path().join("scratch"))
        .arg("--output")
        .arg(&out_dir));
    assert_ne!(code, 0, "the run looked successful:\n{out}{err}");
    assert!(err.contains("noexec"), "{err}");
    let rows = std::fs::read_to_string(out_dir.join("results.jsonl")).unwrap_or_default();
    assert!(rows.trim().is_empty(), "matches were played: {rows}");
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `farm worker` with an unreachable broker and Redis (it never gets that far or keeps
/// retrying), metrics on `port`, and the given cache and scratch folders.
fn worker(port: u16, cache: &Path, scratch: &Path) -> Command {
    let mut c = farm();
    c.args([
        "worker",
        "--broker",
        "amqp://guest:guest@127.0.0.1:1/%2f",
        "--redis",
        "redis://127.0.0.1:1/",
        "--metrics-addr",
        &format!("127.0.0.1:{port}"),
        "--cache-dir",
    ])
    .arg(cache)
    .arg("--scratch-dir")
    .arg(scratch)
    .env("FARM_KEY", "self-test-key");
    c
}

fn scrape(port: u16) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        s,
        "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    Some(text)
}

fn metric(text: &str, prefix: &str) -> Option<f64> {
    text.lines()
        .find(|l| l.starts_with(prefix))
        .and_then(|l| l.rsplit(' ').next()?.parse().ok())
}

#[test]
fn a_worker_that_fails_its_self_test_takes_no_job_and_exits() {
    let Some(noexec) = NoexecMount::new() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let port = free_port();
    // No broker is needed to fail: the worker stops before it connects to anything.
    let child = worker(
        port,
        &tmp.path().join("cache"),
        &noexec.path().join("scratch"),
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("takes no jobs") && err.contains("noexec"),
        "{err}"
    );
}

#[test]
fn a_worker_publishes_its_sandbox_mode_and_self_test_from_the_start() {
    let tmp = tempfile::tempdir().unwrap();
    let port = free_port();
    // An unreachable broker: the worker passes its self-test, then keeps retrying to connect;
    // its metrics must already say which sandbox it runs and that the self-test passed.
    let mut child = worker(port, &tmp.path().join("cache"), &tmp.path().join("scratch"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    let mut seen = None;
    while t0.elapsed() < Duration::from_secs(60) {
        if let Some(text) = scrape(port) {
            if metric(&text, "farm_worker_self_test_ok") == Some(1.0) {
                seen = Some(text);
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let _ = child.kill();
    let _ = child.wait();
    let text = seen.expect("farm_worker_self_test_ok never reached 1");
    let modes: f64 = text
        .lines()
        .filter(|l| l.starts_with("farm_worker_sandbox_mode{"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum();
    assert_eq!(modes, 1.0, "exactly one sandbox mode at 1:\n{text}");
    let speed = metric(&text, "farm_worker_speed").expect("farm_worker_speed");
    assert!(speed > 0.0, "{text}");
}
