//! A real Prometheus scrapes a real embedded `farm run` (--metrics-addr), then every PromQL
//! expression of the Grafana dashboards is evaluated through Prometheus's HTTP API: each must
//! be valid and return series. Expressions on RabbitMQ's own metrics need a cluster and are
//! skipped (and listed). Needs the `prometheus` binary (tools/install-prometheus.sh): the test
//! fails without it when FARM_REQUIRE_BROKER=1 (CI), and is skipped with a reason otherwise.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use common::{farm, repo};

/// Kills a child process when dropped (the test may panic half-way).
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn prometheus_binary() -> Option<PathBuf> {
    ["/usr/bin/prometheus", "/usr/local/bin/prometheus"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// GET over HTTP/1.0 (no chunking): (status code, body).
fn http_get(port: u16, path: &str) -> std::io::Result<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)?;
    let text = String::from_utf8_lossy(&raw).to_string();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let code = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    Ok((code, body.to_string()))
}

/// An instant query: Prometheus's JSON answer.
fn query(port: u16, expr: &str) -> Value {
    let (_, body) =
        http_get(port, &format!("/api/v1/query?query={}", encode(expr))).expect("query");
    serde_json::from_str(&body)
        .unwrap_or_else(|e| panic!("answer to {expr} is not JSON ({e}): {body}"))
}

fn scalar(port: u16, expr: &str) -> Option<f64> {
    let v = query(port, expr);
    v["data"]["result"][0]["value"][1].as_str()?.parse().ok()
}

fn dashboard_exprs() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let dir = repo().join("grafana/dashboards");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for f in files
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
    {
        let d: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        for p in d["panels"].as_array().unwrap() {
            for t in p["targets"].as_array().unwrap() {
                let name = format!(
                    "{} / {}",
                    f.file_name().unwrap().to_string_lossy(),
                    p["title"].as_str().unwrap_or("?")
                );
                out.push((name, t["expr"].as_str().unwrap().to_string()));
            }
        }
    }
    out
}

fn wait_for(what: &str, limit: Duration, mut ok: impl FnMut() -> bool) {
    let until = Instant::now() + limit;
    while !ok() {
        assert!(Instant::now() < until, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(250));
    }
}

fn start_prometheus(bin: &Path, dir: &Path, target: &str, port: u16) -> Reaped {
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: farm-coordinator\n    static_configs:\n      - targets: [\"{target}\"]\n"
        ),
    )
    .unwrap();
    let log = std::fs::File::create(dir.join("prometheus.log")).unwrap();
    let child = Command::new(bin)
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("tsdb").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("prometheus starts");
    Reaped(child)
}

#[test]
fn prometheus_scrapes_a_run_and_every_dashboard_query_returns_series() {
    let Some(bin) = prometheus_binary() else {
        if std::env::var("FARM_REQUIRE_BROKER").is_ok_and(|v| v == "1") {
            panic!("prometheus is not installed (tools/install-prometheus.sh) and FARM_REQUIRE_BROKER=1");
        }
        eprintln!("SKIPPED: no prometheus binary; run tools/install-prometheus.sh");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    // A fresh compile cache: the three sources are compile-cache misses, every later seat a hit.
    let mut child = Reaped(
        farm()
            .args([
                "run",
                "--bots",
                "Base=bots/bomberman/baseline.cpp",
                "Random=bots/bomberman/random.cpp",
            ])
            .arg("Crash=bots/test/crasher.cpp")
            .args([
                "--anchor", "Base", "--sizes", "2", "3", "--seeds", "1", "--seed", "5",
            ])
            .args([
                "--workers",
                "2",
                "--report-every",
                "2",
                "--linger-secs",
                "300",
            ])
            .args(["--metrics-addr", "127.0.0.1:0", "--output"])
            .arg(&out)
            .arg("--cache-dir")
            .arg(tmp.path().join("cache"))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("farm starts"),
    );
    let (tx, rx) = mpsc::channel();
    let stderr = child.0.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(addr) = line.strip_prefix("metrics: http://") {
                let _ = tx.send(addr.trim_end_matches("/metrics").to_string());
            }
        }
    });
    let target = rx
        .recv_timeout(Duration::from_secs(120))
        .expect("farm run prints its metrics address");
    let metrics_port: u16 = target.rsplit(':').next().unwrap().parse().unwrap();
    let (code, text) = http_get(metrics_port, "/metrics").expect("GET /metrics");
    assert_eq!(code, 200);
    assert!(
        text.contains("# TYPE farm_matches_scheduled gauge"),
        "{text}"
    );
    assert_eq!(http_get(metrics_port, "/nothing").unwrap().0, 404);

    let port = free_port();
    let _prom = start_prometheus(&bin, tmp.path(), &target, port);
    wait_for("prometheus ready", Duration::from_secs(60), || {
        http_get(port, "/-/ready").is_ok_and(|(c, _)| c == 200)
    });
    wait_for(
        "the run to finish (farm_run_finished == 1)",
        Duration::from_secs(600),
        || scalar(port, "farm_run_finished") == Some(1.0),
    );
    // A few more scrapes after the end, so rates over the last minute have samples.
    std::thread::sleep(Duration::from_secs(4));

    // The numbers the run must have produced (seats and Crash's matches from its schedule).
    let schedule: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("schedule.json")).unwrap()).unwrap();
    let entries = schedule["entries"].as_array().expect("schedule entries");
    let seats: usize = entries
        .iter()
        .map(|e| e["roster"].as_array().unwrap().len())
        .sum();
    let crash_matches = entries
        .iter()
        .filter(|e| {
            e["roster"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r[0] == "Crash")
        })
        .count() as f64;
    assert_eq!(entries.len(), 12);
    assert_eq!(scalar(port, "farm_matches_scheduled"), Some(12.0));
    assert_eq!(scalar(port, "farm_matches_completed_total"), Some(12.0));
    assert_eq!(
        scalar(
            port,
            "farm_matches_dispatched_total - farm_matches_retried_total"
        ),
        Some(12.0)
    );
    assert_eq!(
        scalar(port, "farm_matches_in_flight + farm_matches_pending"),
        Some(0.0)
    );
    // The 3 sources are compiled once each before the tournament (compile first), and the
    // self-test compiles its own two tiny bots (the echo and the speed signature's): 5 misses.
    // Then every seat of every job looks its source up once and hits.
    assert_eq!(
        scalar(port, "sum(farm_worker_compile_cache_misses_total)"),
        Some(5.0)
    );
    assert_eq!(
        scalar(port, "sum(farm_worker_compile_cache_hits_total)"),
        Some(seats as f64)
    );
    assert_eq!(scalar(port, "farm_bot_rating{bot=\"Base\"}"), Some(0.0));
    let crash = scalar(port, "sum(farm_faults_total{bot=\"Crash\",kind=\"crash\"})").unwrap();
    assert_eq!(
        crash, crash_matches,
        "Crash crashes once in each of its matches"
    );
    assert_eq!(
        scalar(port, "sum(farm_faults_total{bot!=\"Crash\"})"),
        Some(0.0)
    );
    assert_eq!(
        scalar(port, "sum(farm_worker_faults_total{kind=\"crash\"})"),
        Some(crash_matches)
    );
    assert!(scalar(port, "sum(farm_worker_turn_seconds_count)").unwrap() > 0.0);
    assert_eq!(
        scalar(port, "sum(farm_worker_match_seconds_count)"),
        Some(12.0)
    );
    assert_eq!(scalar(port, "sum(farm_worker_sandbox_mode)"), Some(1.0));

    let mut skipped = Vec::new();
    let mut failures = Vec::new();
    let exprs = dashboard_exprs();
    for (panel, expr) in &exprs {
        if expr.contains("rabbitmq_") {
            skipped.push(format!("{panel}: {expr}"));
            continue;
        }
        let v = query(port, expr);
        if v["status"] != "success" {
            failures.push(format!("{panel}: {expr}: invalid: {}", v["error"]));
        } else if v["data"]["result"].as_array().is_none_or(|r| r.is_empty()) {
            failures.push(format!("{panel}: {expr}: no series"));
        }
    }
    eprintln!(
        "evaluated {} dashboard expressions; skipped {} that need a cluster (RabbitMQ's own metrics):\n  {}",
        exprs.len() - skipped.len(),
        skipped.len(),
        skipped.join("\n  ")
    );
    assert!(
        failures.is_empty(),
        "dashboard expressions that fail:\n{}",
        failures.join("\n")
    );
    // The check itself can fail: an invalid expression and one without series are caught.
    assert_ne!(
        query(port, "sum(rate(farm_matches_completed_total[1m]")["status"],
        "success"
    );
    assert!(query(port, "farm_no_such_metric")["data"]["result"]
        .as_array()
        .unwrap()
        .is_empty());
}
