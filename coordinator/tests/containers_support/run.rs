//! The tournament side of the containers test: the roster (with the network probe bot) and its
//! cached embedded reference, the worker's help, waits on workers' metrics and on checkpointed
//! rows, a watch for uids shared by two containers, the probe's listener, and the guard that
//! deletes the tournament's queues.

use std::collections::{BTreeMap, BTreeSet};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{container_id, http_get, logs, metric, podman, processes_in_uid_range};
use crate::cluster_support::{self, Farm, Proc, BROKER};
use crate::common;

/// The worker's default uid pool (the deploy files do not change it; checked below).
pub const UID_BASE: u32 = 60001;
pub const UID_COUNT: u32 = 256;
/// Ports tried, in order, for the network probe's listener (a fixed port keeps the probe bot's
/// source, and so the cached embedded reference run, the same from run to run).
pub const PROBE_PORTS: std::ops::Range<u16> = 47613..47653;

pub fn farm_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_farm"))
}

pub fn repo() -> PathBuf {
    common::repo()
}

/// The hostile `connect` bot with `port` compiled in where it takes ports from argv.
pub fn probe_source(port: u16) -> String {
    let text = std::fs::read_to_string(repo().join("bots/hostile/connect.cpp")).unwrap();
    let argv_loop = "for (int i = 1; i < argc; ++i) try_connect(std::atoi(argv[i]));";
    assert!(
        text.contains(argv_loop),
        "bots/hostile/connect.cpp changed: no `{argv_loop}` to put the probe port in"
    );
    text.replace(argv_loop, &format!("try_connect({port});"))
}

pub fn tournament(probe: &Path) -> Vec<String> {
    let mut v: Vec<String> = vec!["--bots".into()];
    v.push(format!("A={}", cluster_support::ANSWER_BOT));
    // Burns ~40 ms of CPU per turn: long enough matches to kill and stop workers mid-run.
    v.push("C=bots/test/cpu40.cpp".into());
    v.push(format!("N={}", probe.display()));
    v.push("Base=bots/bomberman/baseline.cpp".into());
    for s in [
        "--anchor", "Base", "--sizes", "2", "--seeds", "3", "--seed", "9090",
    ] {
        v.push(s.into());
    }
    v
}

/// results.json of the embedded run of `args`, cached in /tmp by the binary, the arguments and
/// the bots' bytes.
pub fn embedded_reference(args: &[String], bots: &[PathBuf]) -> Vec<Value> {
    let meta = std::fs::metadata(farm_bin()).unwrap();
    let stamp = meta
        .modified()
        .unwrap()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let mut key = format!("{args:?} {} {stamp} 1000", meta.len()).into_bytes();
    for b in bots {
        key.extend(std::fs::read(b).unwrap());
    }
    let key = shared::manifest::sha256_hex(&key);
    let cache = std::env::temp_dir().join(format!("matchfarm-containers-ref-{}.json", &key[..16]));
    if let Ok(text) = std::fs::read_to_string(&cache) {
        if let Ok(v) = serde_json::from_str(&text) {
            return v;
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("embedded");
    let t0 = Instant::now();
    let status = Command::new(farm_bin())
        .current_dir(repo())
        .arg("run")
        .args(args)
        .args(["--workers", "2", "--output"])
        .arg(&out)
        .env("FARM_TURN_MS", "1000")
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "embedded reference run failed");
    eprintln!("embedded reference run: {:.1?}", t0.elapsed());
    let v = cluster_support::results(&out);
    std::fs::write(&cache, serde_json::to_string(&v).unwrap()).unwrap();
    v
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The worker's help: (flags, FARM_* names).
pub fn worker_help() -> (BTreeSet<String>, BTreeSet<String>) {
    let out = Command::new(farm_bin())
        .args(["worker", "--help"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let toks = |p: &str| -> BTreeSet<String> {
        text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            .filter(|w| w.starts_with(p) && w.len() > p.len())
            .map(str::to_string)
            .collect()
    };
    (toks("--"), toks("FARM_"))
}

pub fn services_up() -> bool {
    let up =
        |a: &str| TcpStream::connect_timeout(&a.parse().unwrap(), Duration::from_secs(2)).is_ok();
    up("127.0.0.1:5672") && up("127.0.0.1:6379")
}

/// Deletes a tournament's queues (a formal run stopped on purpose leaves them).
pub fn delete_queues(jobs_queue: &str) {
    let base = jobs_queue.trim_end_matches(".jobs").to_string();
    cluster_support::rt().block_on(async move {
        let Ok(conn) = lapin::Connection::connect(BROKER, Default::default()).await else {
            return;
        };
        for suffix in ["jobs", "results", "dlq"] {
            if let Ok(ch) = conn.create_channel().await {
                let _ = ch
                    .queue_delete(&format!("{base}.{suffix}"), Default::default())
                    .await;
            }
        }
        let _ = conn.close(200, "bye").await;
    });
}

/// Processes of the bot uid pool that belong to one of `ids` (by cgroup path).
pub fn bot_processes_of(ids: &[String]) -> Vec<(i32, u32, String)> {
    processes_in_uid_range(UID_BASE..UID_BASE + UID_COUNT)
        .into_iter()
        .filter(|(_, _, cg)| ids.iter().any(|id| cg.contains(id.as_str())))
        .collect()
}

/// Samples the host's processes of the bot uid pool while the tournament runs: a uid with live
/// processes in two of the test's containers at the same moment is a shared uid.
pub struct UidWatch {
    pub stop: Arc<AtomicBool>,
    pub ids: Arc<Mutex<BTreeMap<String, String>>>,
    pub shared: Arc<Mutex<Vec<String>>>,
    pub samples: Arc<AtomicUsize>,
    pub seen: Arc<Mutex<BTreeSet<u32>>>,
    pub thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for UidWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl UidWatch {
    pub fn start() -> UidWatch {
        let stop = Arc::new(AtomicBool::new(false));
        let ids: Arc<Mutex<BTreeMap<String, String>>> = Default::default();
        let shared: Arc<Mutex<Vec<String>>> = Default::default();
        let samples = Arc::new(AtomicUsize::new(0));
        let seen: Arc<Mutex<BTreeSet<u32>>> = Default::default();
        let (s, i, sh, n, se) = (
            stop.clone(),
            ids.clone(),
            shared.clone(),
            samples.clone(),
            seen.clone(),
        );
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                let known = i.lock().unwrap().clone();
                let mut by_uid: BTreeMap<u32, BTreeSet<String>> = BTreeMap::new();
                for (_, uid, cg) in processes_in_uid_range(UID_BASE..UID_BASE + UID_COUNT) {
                    if let Some((_, name)) = known.iter().find(|(id, _)| cg.contains(id.as_str())) {
                        by_uid.entry(uid).or_default().insert(name.clone());
                        se.lock().unwrap().insert(uid);
                    }
                }
                for (uid, names) in by_uid {
                    if names.len() > 1 {
                        sh.lock().unwrap().push(format!("uid {uid} in {names:?}"));
                    }
                }
                n.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        UidWatch {
            stop,
            ids,
            shared,
            samples,
            seen,
            thread: Some(thread),
        }
    }

    pub fn watch(&self, name: &str) {
        self.ids
            .lock()
            .unwrap()
            .insert(container_id(name), name.to_string());
    }

    pub fn finish(mut self) -> (Vec<String>, usize, BTreeSet<u32>) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        (
            self.shared.lock().unwrap().clone(),
            self.samples.load(Ordering::Relaxed),
            self.seen.lock().unwrap().clone(),
        )
    }
}

/// Listens on the probe port and counts connections (there must be none).
pub struct Listener {
    pub port: u16,
    pub accepted: Arc<AtomicUsize>,
    pub stop: Arc<AtomicBool>,
}

impl Listener {
    pub fn start() -> Listener {
        let l = PROBE_PORTS
            .clone()
            .find_map(|p| TcpListener::bind(("127.0.0.1", p)).ok())
            .expect("a free probe port");
        l.set_nonblocking(true).unwrap();
        let port = l.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (a, s) = (accepted.clone(), stop.clone());
        std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                match l.accept() {
                    Ok(_) => {
                        a.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(20)),
                }
            }
        });
        Listener {
            port,
            accepted,
            stop,
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Flushes the test's Redis database and deletes queues it left, whatever happens.
pub struct Restore {
    pub redis: String,
    pub queues: Mutex<Vec<String>>,
    /// Coordinator containers whose log names a queue (read before they are removed).
    pub coordinators: Mutex<Vec<String>>,
}

/// The jobs queue a coordinator names in its log: `... (queue farm.X.jobs)`.
pub fn queue_in_log(log: &str) -> Option<String> {
    log.find("(queue ")
        .map(|i| log[i + 7..].split(')').next().unwrap().to_string())
}

impl Drop for Restore {
    fn drop(&mut self) {
        for c in self.coordinators.lock().unwrap().drain(..) {
            if let Some(q) = queue_in_log(&logs(&c)) {
                self.queues.lock().unwrap().push(q);
            }
        }
        let queues: Vec<String> = self.queues.lock().unwrap().drain(..).collect();
        for q in queues {
            delete_queues(&q);
        }
        if let Ok(mut c) = redis::Client::open(self.redis.as_str()).and_then(|c| c.get_connection())
        {
            let _: Result<(), _> = redis::cmd("FLUSHDB").query(&mut c);
        }
    }
}

pub fn mounts_of(name: &str) -> String {
    podman(&["exec", name, "cat", "/proc/mounts"]).1
}

pub fn mount_line<'a>(mounts: &'a str, at: &str) -> Option<&'a str> {
    mounts
        .lines()
        .rfind(|l| l.split_whitespace().nth(1) == Some(at))
}

/// Wait for `n` logged results while the coordinator runs.
pub fn wait_rows(farm: &Farm, coord: &mut Proc, n: usize, limit: Duration) {
    let t0 = Instant::now();
    while farm.logged_rows() < n {
        assert!(
            coord.running(),
            "coordinator ended early (after {} results; make the tournament longer):\n{}",
            farm.logged_rows(),
            coord.stderr()
        );
        assert!(
            t0.elapsed() < limit,
            "no {n} results after {limit:?}:\n{}",
            coord.stderr()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Wait (bounded) until the worker plays a match (its farm_worker_slots_busy > 0).
pub fn wait_busy(port: u16, limit: Duration) -> bool {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        if let Some((200, page)) = http_get(port, "/metrics") {
            if metric(&page, "farm_worker_slots_busy") > 0.0 {
                return true;
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// Index of the first of `ports` whose worker reports a busy slot, and whether one did before
/// `limit` (index 0 when none did).
pub fn wait_any_busy(ports: &[u16], limit: Duration) -> (usize, bool) {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        for (i, port) in ports.iter().enumerate() {
            if let Some((200, page)) = http_get(*port, "/metrics") {
                if metric(&page, "farm_worker_slots_busy") > 0.0 {
                    return (i, true);
                }
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    (0, false)
}

pub fn rows(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .map(|t| t.lines().filter(|l| !l.trim().is_empty()).count())
        .unwrap_or(0)
}
