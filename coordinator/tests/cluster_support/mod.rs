//! Helpers for the cluster tests: a per-test farm (own Redis database, own temp folder), worker
//! and coordinator processes, the embedded reference run, and direct broker/Redis access.
#![allow(dead_code)]

use std::fs::File;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use serde_json::Value;

pub const BROKER: &str = "amqp://guest:guest@127.0.0.1:5672/%2f";
pub const KEY: &str = "cluster-test-farm-key-0123456789";
pub const ANSWER_BOT: &str = "bots/test/answer.cpp";
pub const RANDOM_BOT: &str = "bots/bomberman/random.cpp";
const TURN_MS_ENV: &str = "FARM_TURN_MS";
const TURN_MS: &str = "1000";

/// The tournament every scenario plays (and the embedded reference plays too).
pub fn tournament_args() -> Vec<String> {
    let mut v: Vec<String> = vec!["--bots".into()];
    v.push(format!("A={ANSWER_BOT}"));
    v.push(format!("R={RANDOM_BOT}"));
    v.push("Base=bots/bomberman/baseline.cpp".into());
    for s in [
        "--anchor", "Base", "--sizes", "2", "3", "--seeds", "18", "--seed", "4242",
    ] {
        v.push(s.into());
    }
    v
}

pub fn farm() -> &'static str {
    env!("CARGO_BIN_EXE_farm")
}

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

static LOCK: Mutex<()> = Mutex::new(());

/// Held while a scenario runs: scenarios of one test binary run one at a time under
/// `cargo test` (threads). Across processes, nextest's `shared-services` test group
/// (.config/nextest.toml) runs one scenario at a time.
pub struct Serial {
    _inner: MutexGuard<'static, ()>,
}

/// One scenario at a time; None (test skipped, reason printed) without a broker and Redis.
pub fn setup() -> Option<Serial> {
    let up =
        |a: &str| TcpStream::connect_timeout(&a.parse().unwrap(), Duration::from_secs(2)).is_ok();
    if !up("127.0.0.1:5672") || !up("127.0.0.1:6379") {
        if std::env::var("FARM_REQUIRE_BROKER").as_deref() == Ok("1") {
            panic!("FARM_REQUIRE_BROKER=1 but RabbitMQ (127.0.0.1:5672) or Redis (127.0.0.1:6379) is not reachable");
        }
        eprintln!("skipped: RabbitMQ at 127.0.0.1:5672 or Redis at 127.0.0.1:6379 not reachable");
        return None;
    }
    // Every process a scenario starts (reference run, workers, coordinators) inherits this:
    // turn deadlines of 1 s, so that a loaded test machine cannot turn a slow turn into a
    // timeout in one run and not in the other (the runs are compared match by match).
    std::env::set_var(TURN_MS_ENV, TURN_MS);
    let serial = Serial {
        _inner: LOCK.lock().unwrap_or_else(|e| e.into_inner()),
    };
    // The clean run every scenario compares with, before any scenario loads the machine.
    reference();
    Some(serial)
}

/// results.json of the embedded farm for `tournament_args()`: computed once per build of
/// `farm` (cached in /tmp by the binary's size and mtime; call it under `setup()`).
pub fn reference() -> Vec<Value> {
    static REF: OnceLock<Vec<Value>> = OnceLock::new();
    REF.get_or_init(|| {
        let meta = std::fs::metadata(farm()).unwrap();
        let stamp = meta
            .modified()
            .unwrap()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let key = shared::manifest::sha256_hex(
            format!("{:?} {} {stamp} {TURN_MS}", tournament_args(), meta.len()).as_bytes(),
        );
        let cache = std::env::temp_dir().join(format!("matchfarm-cluster-ref-{}.json", &key[..16]));
        if let Ok(text) = std::fs::read_to_string(&cache) {
            if let Ok(v) = serde_json::from_str(&text) {
                return v;
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("embedded");
        let status = Command::new(farm())
            .current_dir(root())
            .arg("run")
            .args(tournament_args())
            .args(["--workers", "2", "--output"])
            .arg(&out)
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "embedded reference run failed");
        let v = results(&out);
        std::fs::write(&cache, serde_json::to_string(&v).unwrap()).unwrap();
        v
    })
    .clone()
}

pub fn results(out: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(out.join("results.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Every match once, with the same ranks and points as the reference.
pub fn assert_same_results(out: &Path, reference: &[Value]) {
    let got = results(out);
    let key = |v: &Value| -> (Value, Value, Value, Value) {
        (
            v["match"].clone(),
            v["size"].clone(),
            v["result"]["ranks"].clone(),
            v["result"]["points"].clone(),
        )
    };
    assert_eq!(got.len(), reference.len(), "number of results");
    for (g, r) in got.iter().zip(reference) {
        assert_eq!(
            key(g),
            key(r),
            "match {} differs from the embedded run (its faults and where their turns' time \
             went say whose they are):\n  this run: {}\n  embedded: {}",
            r["match"],
            brief(g),
            brief(r)
        );
        assert!(!g["result"]["ranks"].is_null(), "no ranks in {g}");
    }
}

/// A result as a failed comparison shows it: at most 3000 characters of its JSON.
fn brief(v: &Value) -> String {
    let text = v.to_string();
    text.chars().take(3000).collect()
}

pub struct Output {
    pub status: Option<i32>,
    pub stderr: String,
}

/// A scenario's farm: Redis database `db` (flushed now), a temp folder.
pub struct Farm {
    pub name: String,
    pub db: u32,
    pub dir: tempfile::TempDir,
}

impl Farm {
    pub fn new(name: &str, db: u32) -> Farm {
        let f = Farm {
            name: name.into(),
            db,
            dir: tempfile::tempdir().unwrap(),
        };
        f.flush_redis();
        f
    }

    pub fn redis_url(&self) -> String {
        format!("redis://127.0.0.1:6379/{}", self.db)
    }

    pub fn output(&self) -> PathBuf {
        self.dir.path().join("out")
    }

    fn redis(&self) -> redis::Connection {
        redis::Client::open(self.redis_url())
            .unwrap()
            .get_connection()
            .unwrap()
    }

    /// FLUSHDB on this scenario's own database only.
    pub fn flush_redis(&self) {
        let _: () = redis::cmd("FLUSHDB").query(&mut self.redis()).unwrap();
    }

    /// How many artifacts Redis holds now.
    pub fn artifact_count(&self) -> usize {
        let keys: Vec<String> = redis::cmd("KEYS")
            .arg("farm:art:*")
            .query(&mut self.redis())
            .unwrap();
        keys.len()
    }

    /// The jobs (`<tournament>#<number>`) worker `id` of this farm lists in its live
    /// heartbeat; empty when it has none.
    pub fn held_by(&self, id: &str) -> Vec<String> {
        let json: Option<String> = redis::cmd("GET")
            .arg(format!("farm:worker:{}-{id}", self.name))
            .query(&mut self.redis())
            .unwrap();
        json.and_then(|j| serde_json::from_str::<Value>(&j).ok())
            .and_then(|v| v["current"].as_array().cloned())
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }

    pub fn plant_artifact(&self, file: &str, bytes: &[u8]) {
        let real = std::fs::read(root().join(file)).unwrap();
        let sha = shared::manifest::sha256_hex(&real);
        let _: () = redis::cmd("SET")
            .arg(format!("farm:art:{sha}"))
            .arg(bytes)
            .query(&mut self.redis())
            .unwrap();
    }

    pub fn worker(&self, id: &str, slots: usize) -> Proc {
        self.worker_with_scratch(id, slots, id)
    }

    pub fn worker_with_scratch(&self, id: &str, slots: usize, scratch: &str) -> Proc {
        self.worker_args(id, slots, scratch, &[])
    }

    pub fn worker_args(&self, id: &str, slots: usize, scratch: &str, extra: &[&str]) -> Proc {
        self.worker_under(&[], id, slots, scratch, extra)
    }

    /// A worker started by `wrap` (e.g. `unshare -m`: a host of its own mounts), or directly.
    pub fn worker_under(
        &self,
        wrap: &[&str],
        id: &str,
        slots: usize,
        scratch: &str,
        extra: &[&str],
    ) -> Proc {
        let log = self.dir.path().join(format!("worker-{id}.log"));
        let mut command = match wrap.split_first() {
            Some((program, args)) => {
                let mut c = Command::new(program);
                c.args(args).arg(farm());
                c
            }
            None => Command::new(farm()),
        };
        let child = command
            .current_dir(root())
            .args(["worker", "--broker", BROKER, "--redis", &self.redis_url()])
            .args([
                "--slots",
                &slots.to_string(),
                "--id",
                &format!("{}-{id}", self.name),
            ])
            .arg("--scratch")
            .arg(self.dir.path().join(format!("scratch-{scratch}")))
            .args(extra)
            .env("FARM_KEY", KEY)
            .env("FARM_LOG", "warn")
            .stdout(File::create(&log).unwrap())
            .stderr(File::create(log.with_extension("err")).unwrap())
            .spawn()
            .unwrap();
        Proc {
            child: Some(child),
            log,
        }
    }

    fn coordinator(&self, extra: &[&str]) -> Command {
        let mut base = tournament_args();
        if let Some(i) = base
            .iter()
            .position(|a| a == "--seeds")
            .filter(|_| extra.contains(&"--seeds"))
        {
            base.drain(i..i + 2);
        }
        self.run_command(&base, extra)
    }

    /// `farm run <tournament> --workers 2 --broker .. --redis .. <extra>` for this scenario
    /// (`--workers` only when `extra` does not give it).
    fn run_command(&self, tournament: &[String], extra: &[&str]) -> Command {
        let mut c = Command::new(farm());
        c.current_dir(root()).arg("run").args(tournament);
        if !extra.contains(&"--workers") {
            c.args(["--workers", "2"]);
        }
        c.args(["--broker", BROKER, "--redis", &self.redis_url()])
            .args(extra)
            .env("FARM_KEY", KEY)
            .stdout(Stdio::null());
        c
    }

    pub fn start_cluster(&self, extra: &[&str]) -> Proc {
        self.start_cluster_at(&self.output(), extra)
    }

    /// The scenario's coordinator, writing into `output` (its log appends to the same file).
    pub fn start_cluster_at(&self, output: &Path, extra: &[&str]) -> Proc {
        self.spawn_coordinator(self.coordinator(extra), output)
    }

    /// A coordinator playing `tournament` (its own `--bots ..`, sizes and seeds) instead of the
    /// scenario's, writing into the scenario's output.
    pub fn start_tournament(&self, tournament: &[&str]) -> Proc {
        let tournament: Vec<String> = tournament.iter().map(|a| a.to_string()).collect();
        self.spawn_coordinator(self.run_command(&tournament, &[]), &self.output())
    }

    /// A coordinator playing `tournament` with `extra` flags, writing into `output`.
    pub fn start_tournament_at(&self, output: &Path, tournament: &[&str], extra: &[&str]) -> Proc {
        let tournament: Vec<String> = tournament.iter().map(|a| a.to_string()).collect();
        self.spawn_coordinator(self.run_command(&tournament, extra), output)
    }

    fn spawn_coordinator(&self, mut cmd: Command, output: &Path) -> Proc {
        let log = self.dir.path().join("coordinator.log");
        let err = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log.with_extension("err"))
            .unwrap();
        cmd.arg("--output").arg(output);
        let child = cmd.stderr(err).spawn().unwrap();
        Proc {
            child: Some(child),
            log,
        }
    }

    pub fn run_cluster(&self, extra: &[&str]) -> Output {
        let mut p = self.start_cluster(extra);
        p.wait()
    }

    pub fn logged_rows(&self) -> usize {
        std::fs::read_to_string(self.output().join("results.jsonl"))
            .map(|t| t.lines().filter(|l| !l.trim().is_empty()).count())
            .unwrap_or(0)
    }

    /// Wait until `n` workers of this farm's Redis are ready (past their self-tests).
    pub fn wait_ready(&self, n: usize, limit: Duration) {
        let rt = rt();
        let store = rt
            .block_on(broker::Store::connect(&self.redis_url()))
            .unwrap();
        wait_until(limit, || {
            let ready = rt
                .block_on(store.workers())
                .unwrap()
                .iter()
                .filter(|h| h.state == broker::WorkerState::Ready)
                .count();
            (ready >= n)
                .then_some(())
                .ok_or_else(|| format!("{ready} of {n} workers ready"))
        });
    }

    pub fn wait_for_results(&self, n: usize, coord: &mut Proc) {
        wait_until(Duration::from_secs(120), || {
            assert!(
                coord.running(),
                "coordinator ended early:\n{}",
                coord.stderr()
            );
            (self.logged_rows() >= n)
                .then_some(())
                .ok_or_else(|| format!("no {n} results"))
        });
    }

    /// The tournament's jobs queue, from the coordinator's log.
    pub fn jobs_queue(&self) -> String {
        let t0 = Instant::now();
        loop {
            let log = std::fs::read_to_string(self.dir.path().join("coordinator.err"))
                .unwrap_or_default();
            if let Some(i) = log.find("(queue ") {
                let rest = &log[i + 7..];
                return rest[..rest.find(')').unwrap()].to_string();
            }
            assert!(
                t0.elapsed() < Duration::from_secs(30),
                "no queue name in the coordinator log"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn publish_raw_job(&self, body: Vec<u8>) {
        let q = self.jobs_queue();
        rt().block_on(async move {
            let conn = lapin::Connection::connect(BROKER, Default::default())
                .await
                .unwrap();
            let ch = conn.create_channel().await.unwrap();
            ch.confirm_select(Default::default()).await.unwrap();
            let props = lapin::BasicProperties::default().with_delivery_mode(2);
            let c = ch
                .basic_publish("", &q, Default::default(), &body, props)
                .await
                .unwrap()
                .await
                .unwrap();
            assert!(c.is_ack());
            conn.close(200, "bye").await.unwrap();
        });
    }

    /// Take `n` jobs off the tournament's jobs queue (acked: gone), as anyone who can consume
    /// from the broker could; their bytes, as the coordinator signed them.
    pub fn steal_jobs(&self, n: usize) -> Vec<Vec<u8>> {
        let q = self.jobs_queue();
        rt().block_on(async move {
            let conn = lapin::Connection::connect(BROKER, Default::default())
                .await
                .unwrap();
            let ch = conn.create_channel().await.unwrap();
            let mut stolen = Vec::new();
            let t0 = Instant::now();
            while stolen.len() < n {
                assert!(
                    t0.elapsed() < Duration::from_secs(60),
                    "only {} jobs to steal after a minute",
                    stolen.len()
                );
                let got = ch
                    .basic_get(&q, lapin::options::BasicGetOptions { no_ack: true })
                    .await
                    .unwrap();
                match got {
                    Some(m) => stolen.push(m.delivery.data),
                    None => tokio::time::sleep(Duration::from_millis(50)).await,
                }
            }
            let _ = conn.close(200, "bye").await;
            stolen
        })
    }

    /// Publish `body` to the tournament's dead-letter exchange with `headers`, with no farm key.
    pub fn publish_dead(&self, body: &[u8], headers: lapin::types::FieldTable) {
        let q = self.jobs_queue();
        let dlx = format!("{}.dlx", q.trim_end_matches(".jobs"));
        let body = body.to_vec();
        rt().block_on(async move {
            let conn = lapin::Connection::connect(BROKER, Default::default())
                .await
                .unwrap();
            let ch = conn.create_channel().await.unwrap();
            ch.confirm_select(Default::default()).await.unwrap();
            let props = lapin::BasicProperties::default()
                .with_delivery_mode(2)
                .with_headers(headers);
            let c = ch
                .basic_publish(&dlx, "", Default::default(), &body, props)
                .await
                .unwrap()
                .await
                .unwrap();
            assert!(c.is_ack());
            conn.close(200, "bye").await.unwrap();
        });
    }

    /// A well-formed job of this tournament, signed with another key.
    pub fn publish_forged_job(&self) {
        let q = self.jobs_queue();
        let short = q
            .trim_start_matches("farm.")
            .trim_end_matches(".jobs")
            .to_string();
        let job = shared::msg::Job {
            tournament: short,
            number: 1,
            referee_version: games::bomberman::VERSION.into(),
            seats: Vec::new(),
            game: shared::msg::GameJob::Bomberman(shared::msg::BombermanJob {
                seed: 1,
                manifest_digest: String::new(),
                clock: None,
            }),
        };
        let posting = shared::msg::Posting {
            publication: 1,
            job,
        };
        let bytes = shared::codec::encode(
            &posting,
            &shared::codec::FarmKey::new(b"not-the-farm-key".to_vec()),
        )
        .unwrap();
        self.publish_raw_job(bytes);
    }

    /// After a finished run, the tournament's queues are deleted.
    pub fn assert_queues_gone(&self) {
        let q = self.jobs_queue();
        let base = q.trim_end_matches(".jobs").to_string();
        rt().block_on(async move {
            let conn = lapin::Connection::connect(BROKER, Default::default())
                .await
                .unwrap();
            for suffix in ["jobs", "results", "dlq"] {
                let ch = conn.create_channel().await.unwrap();
                let name = format!("{base}.{suffix}");
                let r = ch
                    .queue_declare(
                        &name,
                        lapin::options::QueueDeclareOptions {
                            passive: true,
                            ..Default::default()
                        },
                        Default::default(),
                    )
                    .await;
                assert!(r.is_err(), "queue {name} still exists");
            }
            let _ = conn.close(200, "bye").await;
        });
    }
}

pub fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Wait until `check` is `Ok`, looking every 100 ms; past `limit`, fail with its last `Err`
/// (what it was waiting for). `check` may itself assert (e.g. that a process still runs).
pub fn wait_until<T>(limit: Duration, mut check: impl FnMut() -> Result<T, String>) -> T {
    let t0 = Instant::now();
    loop {
        match check() {
            Ok(v) => return v,
            Err(what) if t0.elapsed() > limit => {
                panic!("waited {limit:?}: {what}")
            }
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

/// A child process with its log; killed (SIGKILL) when dropped.
pub struct Proc {
    pub child: Option<Child>,
    pub log: PathBuf,
}

impl Proc {
    /// The process id (of the process itself: a wrapper must exec it, as `unshare` does).
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    pub fn running(&mut self) -> bool {
        matches!(self.child.as_mut().map(|c| c.try_wait()), Some(Ok(None)))
    }

    pub fn stderr(&self) -> String {
        let out = std::fs::read_to_string(&self.log).unwrap_or_default();
        let err = std::fs::read_to_string(self.log.with_extension("err")).unwrap_or_default();
        format!("{out}{err}")
    }

    pub fn kill9(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Wait at most `limit`; past it the process is killed and the status is None.
    pub fn wait_limit(&mut self, limit: Duration) -> Output {
        let t0 = Instant::now();
        while self.running() && t0.elapsed() < limit {
            std::thread::sleep(Duration::from_millis(100));
        }
        if self.running() {
            self.kill9();
            return Output {
                status: None,
                stderr: self.stderr(),
            };
        }
        self.wait()
    }

    pub fn wait(&mut self) -> Output {
        let status = self
            .child
            .take()
            .map(|mut c| c.wait().unwrap().code())
            .unwrap_or(None);
        Output {
            status,
            stderr: self.stderr(),
        }
    }

    /// SIGTERM, then wait up to `limit` for the exit; (exit code, log).
    pub fn terminate(mut self, limit: Duration) -> (Option<i32>, String) {
        let mut c = self.child.take().unwrap();
        unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
        let t0 = Instant::now();
        loop {
            if let Some(s) = c.try_wait().unwrap() {
                return (s.code(), self.stderr());
            }
            if t0.elapsed() > limit {
                let _ = c.kill();
                let _ = c.wait();
                return (None, self.stderr());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// SIGTERM and wait; the log.
    pub fn stop(self) -> String {
        self.terminate(Duration::from_secs(60)).1
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill9();
    }
}
