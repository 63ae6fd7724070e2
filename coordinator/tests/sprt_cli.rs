//! `farm sprt` end to end with real bots: the search bot against the baseline accepts H1; a
//! bot against a renamed copy of itself does not; a SIGKILL of the coordinator mid-test and a
//! `--resume` reach the verdict and counts of an uninterrupted test; on the cluster (RabbitMQ +
//! Redis, one `farm worker`) the same seed gives the same verdict and counts as embedded.

mod cluster_support;
mod common;

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{farm, run};
use serde_json::Value;

const SEARCH: &str = "Search=bots/bomberman/search.cpp";
const BASE: &str = "Base=bots/bomberman/baseline.cpp";

/// The H1 test every scenario below plays: Search against Base, H0 0 Elo, H1 150 Elo.
fn h1_args(out: &Path) -> Vec<String> {
    let mut v: Vec<String> = [
        "sprt",
        "--new",
        SEARCH,
        "--base",
        BASE,
        "--elo0",
        "0",
        "--elo1",
        "150",
        "--seed",
        "31",
        "--max-pairs",
        "40",
        "--workers",
        "2",
        "--output",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.push(out.display().to_string());
    v
}

fn sprt_json(out: &Path) -> Value {
    let text = std::fs::read_to_string(out.join("sprt.json")).expect("sprt.json written");
    serde_json::from_str(&text).expect("sprt.json parses")
}

/// What must be equal between two runs of one test: verdict, counts, LLR, pairs.
fn key(v: &Value) -> Value {
    serde_json::json!({
        "verdict": v["verdict"],
        "counts": v["pentanomial"]["counts"],
        "llr": v["llr"],
        "pairs_played": v["pairs_played"],
        "elo": v["elo"],
    })
}

fn log_lines(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("results.jsonl"))
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

/// The log is a whole number of pairs, in schedule order, and results.json holds them.
fn assert_whole_pairs(out: &Path, pairs: u64) {
    let results = common::results_without_timing(out);
    let rows = results.as_array().unwrap();
    assert_eq!(rows.len() as u64, 2 * pairs, "two matches per counted pair");
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(
            r["match"],
            i as u64 + 1,
            "results.json is a prefix of the schedule"
        );
    }
}

#[test]
fn search_beats_baseline_and_a_killed_test_resumes_to_the_same_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    let clean = tmp.path().join("clean");
    let (code, out, err) = run(farm().args(h1_args(&clean)));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    let v = sprt_json(&clean);
    eprintln!("search vs baseline: {v:#}");
    assert_eq!(v["verdict"], "H1 accepted", "{v:#}");
    assert_eq!(v["ended"], "bound");
    let pairs = v["pairs_played"].as_u64().unwrap();
    assert!(pairs < 40, "decided before the cap: {pairs}");
    assert!(v["llr"].as_f64().unwrap() > v["upper_bound"].as_f64().unwrap());
    let counts: u64 = v["pentanomial"]["counts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap())
        .sum();
    assert_eq!(counts + v["pairs_void"].as_u64().unwrap(), pairs);
    assert!(out.contains("H1 accepted"), "{out}");
    assert!(
        err.contains("sprt pair 1:"),
        "a line per pair on stderr:\n{err}"
    );
    assert_eq!(
        err.matches("sprt pair ").count() as u64,
        pairs,
        "one line per pair:\n{err}"
    );
    assert_whole_pairs(&clean, pairs);
    let identity = std::fs::read_to_string(clean.join("identity.json")).unwrap();
    assert!(identity.contains("\"sprt\""), "parameters in the identity");

    // The same test killed (SIGKILL) after a few results, then resumed.
    let killed = tmp.path().join("killed");
    let mut child = farm()
        .args(h1_args(&killed))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(300);
    let want = (pairs as usize).min(3);
    while log_lines(&killed) < want && Instant::now() < until {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let was_running = child.try_wait().unwrap().is_none();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        was_running,
        "the coordinator ended before it could be killed"
    );
    assert!(
        !killed.join("sprt.json").exists(),
        "killed before the verdict"
    );
    let mut args = h1_args(&killed);
    args.push("--resume".into());
    let (code, out, err) = run(farm().args(&args));
    assert_eq!(code, 0, "resume failed\nstdout:\n{out}\nstderr:\n{err}");
    assert_eq!(key(&sprt_json(&killed)), key(&v), "resumed test differs");
    assert_whole_pairs(&killed, pairs);

    // Resuming the finished test plays nothing and says the same; other parameters are refused.
    let (code, _, err) = run(farm().args(&args));
    assert_eq!(code, 0, "{err}");
    assert_eq!(key(&sprt_json(&killed)), key(&v));
    assert_whole_pairs(&killed, pairs);
    let mut other = args.clone();
    let i = other.iter().position(|a| a == "150").unwrap();
    other[i] = "100".into();
    let (code, _, err) = run(farm().args(&other));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("resume rejected"), "{err}");
}

#[test]
fn a_bot_against_a_renamed_copy_of_itself_is_not_accepted_better() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("self");
    let (code, out, err) = run(farm().args([
        "sprt",
        "--new",
        "Greedy=bots/bomberman/greedy.cpp",
        "--base",
        "Copy=bots/bomberman/greedy.cpp",
        "--elo0",
        "0",
        "--elo1",
        "50",
        "--seed",
        "5",
        "--max-pairs",
        "8",
        "--workers",
        "2",
        "--output",
        out_dir.to_str().unwrap(),
    ]));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    let v = sprt_json(&out_dir);
    eprintln!("greedy vs its copy: {v:#}");
    let verdict = v["verdict"].as_str().unwrap();
    assert!(
        verdict == "H0 accepted" || verdict == "inconclusive",
        "{v:#}"
    );
    if verdict == "inconclusive" {
        assert_eq!(v["pairs_played"], 8);
        assert_eq!(v["ended"], "max_pairs");
        assert!(err.contains("inconclusive"), "{err}");
    }
    assert_whole_pairs(&out_dir, v["pairs_played"].as_u64().unwrap());
}

#[test]
fn refusals_name_what_is_wrong() {
    let tmp = tempfile::tempdir().unwrap();
    let o = tmp.path().join("x");
    let o = o.to_str().unwrap();
    for (extra, needle) in [
        (vec!["--elo0", "10", "--elo1", "5"], "elo0"),
        (vec!["--alpha", "0.6", "--beta", "0.5"], "--alpha"),
        (vec!["--max-pairs", "0"], "--max-pairs"),
    ] {
        let mut args = vec!["sprt", "--new", SEARCH, "--base", BASE, "--output", o];
        args.extend(extra);
        let (code, _, err) = run(farm().args(&args));
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!tmp.path().join("x").exists(), "nothing written");
    }
    let (code, _, err) = run(farm().args([
        "sprt",
        "--new",
        SEARCH,
        "--base",
        "Search=bots/bomberman/baseline.cpp",
        "--output",
        o,
    ]));
    assert_eq!(code, 2);
    assert!(err.contains("different names"), "{err}");
}

#[test]
fn on_the_cluster_the_same_seed_gives_the_same_verdict_and_counts() {
    let Some(_serial) = cluster_support::setup() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let embedded = tmp.path().join("embedded");
    let (code, out, err) = run(farm().args(h1_args(&embedded)));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    let want = sprt_json(&embedded);

    let f = cluster_support::Farm::new("sprt", 13);
    let _worker = f.worker("w1", 2);
    let mut args = h1_args(&f.output());
    args.extend([
        "--broker".to_string(),
        cluster_support::BROKER.to_string(),
        "--redis".to_string(),
        f.redis_url(),
    ]);
    let (code, out, err) = run(farm().args(&args).env("FARM_KEY", cluster_support::KEY));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    let got = sprt_json(&f.output());
    assert_eq!(key(&got), key(&want), "cluster test differs from embedded");
    assert_whole_pairs(&f.output(), got["pairs_played"].as_u64().unwrap());
    assert!(err.contains("RabbitMQ"), "it ran on the cluster:\n{err}");
    // The helpers find the tournament's queue name in the coordinator's log.
    std::fs::write(f.dir.path().join("coordinator.err"), &err).unwrap();
    f.assert_queues_gone();
}

/// GET `path` from 127.0.0.1:`port` (one request, then the server closes): the body.
fn http_body(port: u16, path: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("metrics port answers");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").expect("an HTTP answer");
    assert!(
        head.starts_with("HTTP/1.") && head.contains(" 200 "),
        "{head}"
    );
    body.to_string()
}

/// The value of an unlabelled series in a Prometheus text page.
fn series(page: &str, name: &str) -> f64 {
    page.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("{name} missing from /metrics:\n{page}"))
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn the_live_state_is_on_metrics_and_equals_sprt_json() {
    use std::io::{BufRead, BufReader};
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("metrics");
    let mut child = farm()
        .args(h1_args(&out))
        .args(["--metrics-addr", "127.0.0.1:0", "--linger-secs", "120"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("farm sprt starts");
    let (tx, rx) = std::sync::mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(addr) = line.strip_prefix("metrics: http://") {
                let _ = tx.send(addr.trim_end_matches("/metrics").to_string());
            }
        }
    });
    let addr = rx
        .recv_timeout(Duration::from_secs(120))
        .expect("farm sprt prints its metrics address");
    let port: u16 = addr.rsplit(':').next().unwrap().parse().unwrap();
    // sprt.json is written when the test ends; the server lingers after it.
    let started = Instant::now();
    while !out.join("sprt.json").exists() {
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "the test did not end"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let v = sprt_json(&out);
    let page = http_body(port, "/metrics");
    let _ = child.kill();
    let _ = child.wait();
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(1.0);
    assert_eq!(v["verdict"], "H1 accepted", "{v:#}");
    for (metric, field) in [
        ("farm_sprt_llr", "llr"),
        ("farm_sprt_lower_bound", "lower_bound"),
        ("farm_sprt_upper_bound", "upper_bound"),
        ("farm_sprt_elo", "elo"),
    ] {
        let (m, j) = (series(&page, metric), v[field].as_f64().unwrap());
        assert!(close(m, j), "{metric} = {m}, sprt.json {field} = {j}");
    }
    assert_eq!(
        series(&page, "farm_sprt_pairs") as u64,
        v["pairs_counted"].as_u64().unwrap(),
        "{page}"
    );
}
