//! Cluster mode across "hosts" and a broker restart: workers in their own network namespaces
//! (veth pairs to the host, where small forwarders this test starts lead to the host-only
//! RabbitMQ and Redis) complete a run equal to the embedded one; and a run survives
//! `rabbitmqctl stop_app` / `start_app` in the middle (opt-in with FARM_TEST_BROKER_RESTART=1,
//! since it briefly takes the shared broker away from everyone on the machine).

mod cluster_support;

use std::process::{Command, Stdio};
use std::time::Duration;

use cluster_support::*;

/// A network namespace `fm-<i>` joined to the host by a veth pair 10.77.<i>.1 (host) <->
/// 10.77.<i>.2 (namespace), with forwarders on the host side to 127.0.0.1:5672 and :6379.
struct Host {
    ns: String,
    addr: String,
    forwarders: Vec<std::process::Child>,
}

fn sh(args: &[&str]) -> bool {
    Command::new(args[0])
        .args(&args[1..])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

impl Host {
    fn new(i: u32) -> Option<Host> {
        let ns = format!("fm-{i}");
        let (h, n) = (format!("fmh{i}"), format!("fmn{i}"));
        let host_ip = format!("10.77.{i}.1");
        // Leftovers of an interrupted run.
        sh(&["ip", "netns", "del", &ns]);
        sh(&["ip", "link", "del", &h]);
        let ok = sh(&["ip", "netns", "add", &ns])
            && sh(&["ip", "link", "add", &h, "type", "veth", "peer", "name", &n])
            && sh(&["ip", "link", "set", &n, "netns", &ns])
            && sh(&["ip", "addr", "add", &format!("{host_ip}/30"), "dev", &h])
            && sh(&["ip", "link", "set", &h, "up"])
            && sh(&[
                "ip",
                "netns",
                "exec",
                &ns,
                "ip",
                "addr",
                "add",
                &format!("10.77.{i}.2/30"),
                "dev",
                &n,
            ])
            && sh(&["ip", "netns", "exec", &ns, "ip", "link", "set", &n, "up"])
            && sh(&["ip", "netns", "exec", &ns, "ip", "link", "set", "lo", "up"]);
        let mut host = Host {
            ns,
            addr: host_ip.clone(),
            forwarders: Vec::new(),
        };
        if !ok {
            return None;
        }
        for port in ["5672", "6379"] {
            let child = Command::new("socat")
                .arg(format!("TCP-LISTEN:{port},bind={host_ip},fork,reuseaddr"))
                .arg(format!("TCP:127.0.0.1:{port}"))
                .stderr(Stdio::null())
                .spawn()
                .ok()?;
            host.forwarders.push(child);
        }
        std::thread::sleep(Duration::from_millis(300));
        Some(host)
    }

    fn worker(&self, farm_: &Farm, id: &str) -> Proc {
        let log = farm_.dir.path().join(format!("worker-{id}.log"));
        let child = Command::new("ip")
            .args(["netns", "exec", &self.ns, farm()])
            .current_dir(root())
            .args([
                "worker",
                "--broker",
                &format!("amqp://guest:guest@{}:5672/%2f", self.addr),
            ])
            .args([
                "--redis",
                &format!("redis://{}:6379/{}", self.addr, farm_.db),
            ])
            .args(["--slots", "1", "--id", id, "--scratch"])
            .arg(farm_.dir.path().join(format!("scratch-{id}")))
            .env("FARM_KEY", KEY)
            .stdout(std::fs::File::create(&log).unwrap())
            .stderr(std::fs::File::create(log.with_extension("err")).unwrap())
            .spawn()
            .unwrap();
        Proc {
            child: Some(child),
            log,
        }
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        for f in &mut self.forwarders {
            let _ = f.kill();
            let _ = f.wait();
        }
        sh(&["ip", "netns", "del", &self.ns]);
    }
}

#[test]
fn workers_in_separate_network_namespaces() {
    let Some(_g) = setup() else { return };
    if !nix::unistd::geteuid().is_root() || !sh(&["socat", "-V"]) {
        eprintln!("skipped: needs root (ip netns) and socat");
        return;
    }
    let (Some(a), Some(b)) = (Host::new(41), Host::new(42)) else {
        panic!("could not set up network namespaces fm-41/fm-42");
    };
    let t = Farm::new("netns", 12);
    let w1 = a.worker(&t, "ns-a");
    let w2 = b.worker(&t, "ns-b");
    let out = t.run_cluster(&[]);
    assert_eq!(out.status, Some(0), "coordinator failed:\n{}", out.stderr);
    assert_same_results(&t.output(), &reference());
    // Both namespaced workers served the tournament.
    for w in [w1, w2] {
        let log = w.stop();
        assert!(
            log.contains("ready") && log.contains("stopped"),
            "worker log:\n{log}"
        );
    }
    t.assert_queues_gone();
}

#[test]
fn broker_stopped_and_started_mid_run() {
    let Some(_g) = setup() else { return };
    if std::env::var("FARM_TEST_BROKER_RESTART").as_deref() != Ok("1") {
        eprintln!("skipped: set FARM_TEST_BROKER_RESTART=1 to stop and start the shared RabbitMQ");
        return;
    }
    let t = Farm::new("restart", 4);
    let _w1 = t.worker("w1", 1);
    let _w2 = t.worker("w2", 1);
    let mut coord = t.start_cluster(&[]);
    t.wait_for_results(20, &mut coord);
    assert!(
        t.logged_rows() < reference().len(),
        "the run ended before the restart"
    );
    assert!(
        sh(&["rabbitmqctl", "stop_app"]),
        "rabbitmqctl stop_app failed"
    );
    std::thread::sleep(Duration::from_secs(3));
    assert!(
        sh(&["rabbitmqctl", "start_app"]),
        "rabbitmqctl start_app failed"
    );
    let out = coord.wait();
    assert_eq!(out.status, Some(0), "coordinator failed:\n{}", out.stderr);
    assert!(
        out.stderr.contains("broker link"),
        "no reconnect seen:\n{}",
        out.stderr
    );
    assert_same_results(&t.output(), &reference());
    t.assert_queues_gone();
}

/// The small tournament of the host-fault scenarios: 8 matches of two quick bots.
const SMALL: [&str; 11] = [
    "--bots",
    "A=bots/test/answer.cpp",
    "R=bots/bomberman/random.cpp",
    "--anchor",
    "A",
    "--sizes",
    "2",
    "--seeds",
    "4",
    "--seed",
    "11",
];

/// Rows of results.jsonl that carry a result (none failed).
fn assert_all_played(t: &Farm, total: usize, log: &str) {
    let text = std::fs::read_to_string(t.output().join("results.jsonl")).unwrap();
    let rows: Vec<serde_json::Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), total, "{log}");
    let failed: Vec<_> = rows.iter().filter(|r| !r["failed"].is_null()).collect();
    assert!(failed.is_empty(), "failed rows {failed:?}\n{log}");
}

/// A worker's artifact folder removed under it (a tmp cleaner, an operator) is made again: the
/// run plays every match, none failed.
#[test]
fn a_removed_artifact_folder_is_made_again() {
    let Some(_g) = setup() else { return };
    let t = Farm::new("rmscratch", 11);
    let w = t.worker("w", 2);
    std::thread::sleep(Duration::from_secs(3));
    let scratch = t.dir.path().join("scratch-w");
    assert!(scratch.join("artifacts").is_dir(), "{}", w.stderr());
    std::fs::remove_dir_all(&scratch).unwrap();
    let out = t
        .start_tournament(&SMALL)
        .wait_limit(Duration::from_secs(240));
    let logs = w.stop();
    assert_eq!(out.status, Some(0), "{}\nworker:\n{logs}", out.stderr);
    assert_all_played(&t, 8, &logs);
}

/// A host that can no longer play (its scratch path is now a file: nothing can be cached) does
/// not report every job it takes as failed, which would use up each match's retries in
/// milliseconds: it withholds the job, stops taking more and exits non-zero saying why; its
/// match is played by a healthy worker that joins later, and no match fails.
#[test]
fn an_unfit_host_stops_and_its_match_is_played_elsewhere() {
    let Some(_g) = setup() else { return };
    let t = Farm::new("unfit", 11);
    let mut bad = t.worker("bad", 2);
    std::thread::sleep(Duration::from_secs(3));
    let scratch = t.dir.path().join("scratch-bad");
    assert!(scratch.join("artifacts").is_dir(), "{}", bad.stderr());
    std::fs::remove_dir_all(&scratch).unwrap();
    std::fs::write(&scratch, b"not a folder").unwrap();
    let mut coord = t.start_tournament(&SMALL);
    let gone = bad.wait_limit(Duration::from_secs(120));
    assert!(
        matches!(gone.status, Some(c) if c != 0),
        "the unfit worker did not exit with an error ({:?}):\n{}",
        gone.status,
        gone.stderr
    );
    assert!(
        gone.stderr.contains("can no longer play matches") && gone.stderr.contains("--scratch"),
        "{}",
        gone.stderr
    );
    assert!(
        !gone.stderr.contains("unfit-bad: played "),
        "the unfit worker reported a match:\n{}",
        gone.stderr
    );
    assert_eq!(t.logged_rows(), 0, "{}", coord.stderr());
    let good = t.worker("good", 2);
    let out = coord.wait_limit(Duration::from_secs(240));
    let logs = good.stop();
    assert_eq!(out.status, Some(0), "{}\nworker:\n{logs}", out.stderr);
    assert_all_played(&t, 8, &out.stderr);
    // Who played what, beside the results: every match by the healthy worker, at the speed
    // its self-test measured; the withheld attempts left no line.
    let text = std::fs::read_to_string(t.output().join("played-by.jsonl")).unwrap();
    let played: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(played.len(), 8, "{text}");
    for p in &played {
        assert_eq!(p["worker"], "unfit-good", "{text}");
        assert!(p["speed"].as_f64().is_some_and(|s| s > 0.0), "{text}");
        assert!(p["failed"].is_null(), "{text}");
    }
    // ... and report.html's workers table says so.
    let page = std::fs::read_to_string(t.output().join("report.html")).unwrap();
    let table = page
        .split("<table id=\"workers\">")
        .nth(1)
        .and_then(|r| r.split("</table>").next())
        .unwrap_or_else(|| panic!("no workers table in report.html"));
    assert!(
        table.contains("unfit-good</td>") && table.contains("<td>8</td>"),
        "{table}"
    );
    assert!(!table.contains("unfit-bad"), "{table}");
}
