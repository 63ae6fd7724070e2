//! A ladder served in-process for the ladder's own tests: the real router (`api::router`) over a
//! real database (a SQLite file, or a fresh PostgreSQL database at 127.0.0.1:5432, dropped
//! after), with no training bots (a valid submit publishes without games) and a farm that is
//! gone (a game asked fails at once: 503). Requests go through the router as tower calls.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{header, Request, StatusCode};
use axum::Router;
use ladder::code::CodeFolder;
use ladder::db::Db;
use ladder::farm::Farm;
use ladder::limits::{Limiter, Rate};
use ladder::mail::OutboxMailer;
use ladder::service::{new_key, Ladder};
use tower::ServiceExt;

pub const PG_ADMIN_URL: &str = "postgres://postgres@127.0.0.1:5432/test";

/// A served ladder: its router, a verified bot's key, and what must outlive it.
pub struct Served {
    pub rt: tokio::runtime::Runtime,
    pub router: Router,
    pub key: String,
    pub dir: tempfile::TempDir,
    pg_name: Option<String>,
}

/// True when PostgreSQL answers at 127.0.0.1:5432 (with FARM_REQUIRE_BROKER=1, as in CI, its
/// absence fails instead of skipping).
pub fn postgres_available() -> bool {
    let addr = "127.0.0.1:5432".parse().expect("a socket address");
    if std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(2)).is_ok() {
        return true;
    }
    assert!(
        std::env::var("FARM_REQUIRE_BROKER").as_deref() != Ok("1"),
        "FARM_REQUIRE_BROKER=1 but PostgreSQL (127.0.0.1:5432) is not reachable"
    );
    eprintln!("skipped: PostgreSQL at 127.0.0.1:5432 not reachable");
    false
}

impl Served {
    /// A ladder on SQLite (`postgres` false) or on a fresh PostgreSQL database.
    pub fn start(postgres: bool) -> Served {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let (url, pg_name) = if postgres {
            let name = format!("ladder_t_{}_{}", std::process::id(), ladder::db::now_ms());
            rt.block_on(ladder::db::run_sql(
                PG_ADMIN_URL,
                &format!("CREATE DATABASE {name}"),
            ))
            .unwrap();
            (
                format!("postgres://postgres@127.0.0.1:5432/{name}"),
                Some(name),
            )
        } else {
            let url = format!("sqlite://{}?mode=rwc", dir.path().join("l.db").display());
            (url, None)
        };
        let (router, key) = rt.block_on(serve(&url, dir.path()));
        Served {
            rt,
            router,
            key,
            dir,
            pg_name,
        }
    }

    /// Sends a request (with this bot's key when `key`); the status and the body's bytes.
    pub fn send(
        &self,
        method: &str,
        uri: &str,
        key: bool,
        body: Vec<u8>,
    ) -> Option<(StatusCode, Vec<u8>)> {
        let mut req = Request::builder().method(method).uri(uri);
        if key {
            req = req.header(header::AUTHORIZATION, format!("Bearer {}", self.key));
        }
        // Not a request http can even build (a method or URI it refuses): nothing to send.
        let mut req = req.body(Body::from(body)).ok()?;
        let addr: SocketAddr = "127.0.0.9:4000".parse().unwrap();
        req.extensions_mut().insert(ConnectInfo(addr));
        Some(self.rt.block_on(async {
            let resp = self.router.clone().oneshot(req).await.unwrap();
            let status = resp.status();
            let bytes = axum::body::to_bytes(resp.into_body(), 1 << 24)
                .await
                .unwrap();
            (status, bytes.to_vec())
        }))
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(name) = &self.pg_name {
            let sql = format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)");
            let _ = self.rt.block_on(ladder::db::run_sql(PG_ADMIN_URL, &sql));
        }
    }
}

async fn serve(url: &str, dir: &std::path::Path) -> (Router, String) {
    let db = Db::open(url).await.unwrap();
    let (key, hash) = new_key();
    let me = db
        .create_player("fuzz", "fuzz@example.org", &hash)
        .await
        .unwrap();
    db.set_email_verified(me, "fuzz@example.org").await.unwrap();
    let (_, other) = new_key();
    db.create_player("other", "other@example.org", &other)
        .await
        .unwrap();
    let rate = Rate {
        count: 1_000_000_000,
        per: Duration::from_secs(1),
    };
    // The farm's end is dropped: a game asked fails at once (503).
    let (farm, _gone) = Farm::channel(Duration::from_secs(1));
    let ladder = Ladder {
        db,
        farm,
        code: Arc::new(CodeFolder::new(dir.join("code")).unwrap()),
        training: Vec::new(),
        mailer: Arc::new(OutboxMailer::new(dir.join("outbox")).unwrap()),
        challenge_limit: Limiter::new(rate),
        submit_limit: Limiter::new(rate),
        auth_limit: Limiter::new(rate),
        max_code_bytes: 4096,
        write_lock: tokio::sync::Mutex::new(()),
    };
    (ladder::api::router(Arc::new(ladder)), key)
}
