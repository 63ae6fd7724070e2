//! Shared helpers of the ladder tests: a real `farm ladder serve` process on a fresh SQLite
//! folder or a fresh PostgreSQL database (created per server, dropped after), the admin CLI, and
//! a small blocking HTTP client (ureq) that returns status, headers and JSON for any answer.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

pub const PG_ADMIN_URL: &str = "postgres://postgres@127.0.0.1:5432/test";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("coordinator/ has a parent")
        .to_path_buf()
}

/// The test bots of this folder (osc.js, quit.js, ...).
pub fn bot(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/ladder_support/bots")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Runs SQL on a database URL through the ladder crate's own connection (panics on failure).
fn run_sql(url: &str, sql: &str) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(ladder::db::run_sql(url, sql))
        .unwrap_or_else(|e| {
            let why = ladder::error::chain(&e);
            panic!("{sql} on {url}: {why} (the ladder tests need this database)")
        });
}

fn pg(sql: &str) {
    run_sql(PG_ADMIN_URL, sql);
}

/// Server options the tests vary.
#[derive(Debug, Clone)]
pub struct Opts {
    pub rate_challenge: String,
    pub rate_submit: String,
    pub rate_auth: String,
    pub max_code_bytes: usize,
    pub workers: usize,
    pub training: PathBuf,
    /// More `farm ladder serve` arguments and environment (cluster mode).
    pub extra: Vec<String>,
    pub env: Vec<(String, String)>,
    /// Where the server's standard error (its log) goes; inherited when None.
    pub log: Option<PathBuf>,
}

impl Default for Opts {
    fn default() -> Opts {
        Opts {
            rate_challenge: "1000/60".into(),
            rate_submit: "1000/60".into(),
            rate_auth: "1000/60".into(),
            max_code_bytes: 64 * 1024,
            workers: 2,
            training: repo_root().join("bots/qianwang"),
            extra: Vec::new(),
            env: Vec::new(),
            log: None,
        }
    }
}

/// A running ladder server with its own data folder and database.
pub struct Ladder {
    pub backend: Backend,
    pub base: String,
    pub data: tempfile::TempDir,
    pub database: Option<String>,
    pg_name: Option<String>,
    child: Option<Child>,
    agent: ureq::Agent,
}

/// An HTTP answer.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub json: Value,
    pub text: String,
    pub retry_after: Option<String>,
    pub content_type: String,
}

impl Ladder {
    pub fn start(backend: Backend, opts: Opts) -> Ladder {
        let data = tempfile::tempdir().unwrap();
        let (database, pg_name) = match backend {
            Backend::Sqlite => (None, None),
            Backend::Postgres => {
                let name = format!(
                    "ladder_{}_{}",
                    std::process::id(),
                    std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .unwrap()
                        .as_nanos()
                        % 1_000_000_000
                );
                pg(&format!("CREATE DATABASE {name}"));
                (
                    Some(format!("postgres://postgres@127.0.0.1:5432/{name}")),
                    Some(name),
                )
            }
        };
        let mut l = Ladder {
            backend,
            base: String::new(),
            data,
            database,
            pg_name,
            child: None,
            agent: ureq::AgentBuilder::new()
                .timeout(Duration::from_secs(600))
                .build(),
        };
        l.spawn(&opts);
        l
    }

    fn store_args(&self) -> Vec<String> {
        let mut a = vec!["--data".to_string(), self.data.path().display().to_string()];
        if let Some(db) = &self.database {
            a.push("--database".into());
            a.push(db.clone());
        }
        a
    }

    fn spawn(&mut self, o: &Opts) {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_farm"));
        cmd.args(["ladder", "serve"])
            .args(self.store_args())
            .args(["--listen", "127.0.0.1:0"])
            .arg("--training-bots")
            .arg(&o.training)
            .args(["--rate-challenge", &o.rate_challenge])
            .args(["--rate-submit", &o.rate_submit])
            .args(["--rate-auth", &o.rate_auth])
            .args(["--max-code-bytes", &o.max_code_bytes.to_string()])
            .args(["--workers", &o.workers.to_string()])
            .args(&o.extra)
            .envs(o.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .env("FARM_CACHE_DIR", self.data.path().join("cache"))
            .stdout(Stdio::piped())
            .stderr(match &o.log {
                Some(path) => Stdio::from(
                    std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(path)
                        .expect("the server's log file opens"),
                ),
                None => Stdio::inherit(),
            });
        let mut child = cmd.spawn().expect("farm ladder serve starts");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) => {
                    if let Some(url) = line.strip_prefix("ladder listening on ") {
                        self.base = url.trim().to_string();
                        break;
                    }
                }
                Err(_) => {
                    let status = child.try_wait().ok().flatten();
                    let _ = child.kill();
                    panic!("farm ladder serve did not start within 60 s (exit: {status:?})");
                }
            }
        }
        self.child = Some(child);
    }

    /// Stops the server (SIGTERM) and starts it again on the same data and database.
    pub fn restart(&mut self, opts: &Opts) {
        self.stop();
        self.spawn(opts);
    }

    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            unsafe {
                libc::kill(c.id() as i32, libc::SIGTERM);
            }
            let deadline = std::time::Instant::now() + Duration::from_secs(20);
            loop {
                if let Ok(Some(_)) = c.try_wait() {
                    break;
                }
                if std::time::Instant::now() > deadline {
                    let _ = c.kill();
                    let _ = c.wait();
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }

    /// Runs `farm ladder admin <args>` on this ladder's store; panics on failure.
    pub fn admin(&self, args: &[&str]) -> String {
        let (ok, out, err) = self.admin_raw(args);
        assert!(ok, "farm ladder admin {args:?} failed:\n{out}\n{err}");
        out
    }

    pub fn admin_raw(&self, args: &[&str]) -> (bool, String, String) {
        let out = Command::new(env!("CARGO_BIN_EXE_farm"))
            .args(["ladder", "admin"])
            .args(self.store_args())
            .args(args)
            .output()
            .expect("farm ladder admin runs");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    }

    /// Creates a player through the admin CLI; returns (botId, key).
    pub fn player(&self, name: &str, verified: bool) -> (i64, String) {
        let email = format!("{name}@example.org");
        let mut args = vec!["create-player", "--name", name, "--email", &email];
        if verified {
            args.push("--verified");
        }
        let out = self.admin(&args);
        let id = field(&out, "botId").parse().expect("botId is a number");
        (id, field(&out, "key"))
    }

    /// Runs SQL (one or more statements) on this ladder's own database, SQLite or PostgreSQL;
    /// panics on failure. Stop the server first when the SQL changes the schema.
    pub fn sql(&self, sql: &str) {
        match &self.database {
            Some(url) => run_sql(url, sql),
            None => run_sql(
                &format!("sqlite://{}", self.data.path().join("ladder.db").display()),
                sql,
            ),
        }
    }

    pub fn set_rp(&self, name: &str, rp: u32) {
        self.admin(&["set-rp", "--name", name, "--rp", &rp.to_string()]);
    }

    fn answer(r: Result<ureq::Response, ureq::Error>) -> Answer {
        let resp = match r {
            Ok(r) => r,
            Err(ureq::Error::Status(_, r)) => r,
            Err(e) => panic!("HTTP transport error: {e}"),
        };
        let status = resp.status();
        let retry_after = resp.header("retry-after").map(str::to_string);
        let content_type = resp.header("content-type").unwrap_or("").to_string();
        let text = resp.into_string().unwrap_or_default();
        let json = serde_json::from_str(&text).unwrap_or(Value::Null);
        Answer {
            status,
            json,
            text,
            retry_after,
            content_type,
        }
    }

    pub fn get(&self, path: &str, key: Option<&str>) -> Answer {
        let mut req = self.agent.get(&format!("{}{path}", self.base));
        if let Some(k) = key {
            req = req.set("Authorization", &format!("Bearer {k}"));
        }
        Self::answer(req.call())
    }

    pub fn post(&self, path: &str, key: Option<&str>, body: &str) -> Answer {
        let mut req = self
            .agent
            .post(&format!("{}{path}", self.base))
            .set("Content-Type", "application/json");
        if let Some(k) = key {
            req = req.set("Authorization", &format!("Bearer {k}"));
        }
        Self::answer(req.send_string(body))
    }

    /// Like [`Ladder::post`], but a connection the server drops mid-body (it refused a body
    /// past its limit before reading all of it) is `Err` instead of a panic. Sent on a
    /// connection of its own: the server closes it after such a refusal, and it must not go
    /// back to the pool the other requests use.
    pub fn try_post(&self, path: &str, key: Option<&str>, body: &str) -> Result<Answer, String> {
        let once = ureq::AgentBuilder::new()
            .timeout(Duration::from_secs(60))
            .max_idle_connections(0)
            .build();
        let mut req = once
            .post(&format!("{}{path}", self.base))
            .set("Content-Type", "application/json");
        if let Some(k) = key {
            req = req.set("Authorization", &format!("Bearer {k}"));
        }
        match req.send_string(body) {
            Err(ureq::Error::Transport(t)) => Err(t.to_string()),
            r => Ok(Self::answer(r)),
        }
    }

    pub fn post_json(&self, path: &str, key: Option<&str>, body: &Value) -> Answer {
        self.post(path, key, &body.to_string())
    }

    /// Submits code; the answer as it comes.
    pub fn submit(&self, key: &str, code: &str) -> Answer {
        self.post_json(
            "/api/agent/bot/code/submit",
            Some(key),
            &serde_json::json!({"code": code, "notes": "test", "submittedBy": "ladder test"}),
        )
    }

    /// Submits code that must be published; returns its version.
    pub fn publish(&self, key: &str, code: &str) -> i64 {
        let a = self.submit(key, code);
        assert_eq!(a.status, 200, "submit: {}", a.text);
        a.json["version"].as_i64().expect("version")
    }

    pub fn challenge(&self, key: &str, target: i64) -> Answer {
        self.post_json(
            "/api/agent/challenge",
            Some(key),
            &serde_json::json!({"challengedBotId": target}),
        )
    }
}

impl Drop for Ladder {
    fn drop(&mut self) {
        self.stop();
        if let Some(name) = &self.pg_name {
            pg(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
        }
    }
}

/// The value of a `name: value` line of admin output.
pub fn field(out: &str, name: &str) -> String {
    out.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}: ")))
        .unwrap_or_else(|| panic!("no {name:?} line in:\n{out}"))
        .trim()
        .to_string()
}

/// True when PostgreSQL answers at 127.0.0.1:5432. When it does not, the PostgreSQL tests are
/// skipped with a message, unless FARM_REQUIRE_BROKER=1 (CI), which makes them fail.
pub fn postgres_available() -> bool {
    let addr = "127.0.0.1:5432".parse().expect("a socket address");
    if std::net::TcpStream::connect_timeout(&addr, std::time::Duration::from_secs(2)).is_ok() {
        return true;
    }
    if std::env::var("FARM_REQUIRE_BROKER").as_deref() == Ok("1") {
        panic!("FARM_REQUIRE_BROKER=1 but PostgreSQL (127.0.0.1:5432) is not reachable");
    }
    eprintln!("skipped: PostgreSQL at 127.0.0.1:5432 not reachable");
    false
}

/// Generates `<name>_sqlite` and `<name>_postgres` tests calling `body(Backend)`.
#[macro_export]
macro_rules! both_backends {
    ($name:ident, $body:ident) => {
        mod $name {
            #[test]
            fn sqlite() {
                super::$body($crate::ladder_support::Backend::Sqlite)
            }
            #[test]
            fn postgres() {
                if $crate::ladder_support::postgres_available() {
                    super::$body($crate::ladder_support::Backend::Postgres)
                }
            }
        }
    };
}
