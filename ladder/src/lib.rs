//! The 钳王 (qianwang) ladder service behind `farm ladder serve`: bots submitted as JavaScript
//! over a Bearer-key HTTP API ([`api`], axum, with its [`extract`]ors and [`error`] answers),
//! smoke-tested against training bots and ranked by challenges ([`service`]: RP tiers from
//! `games::qianwang::ladder` and an Elo rating, [`elo`]); per-key and per-IP rate [`limits`];
//! email verification through a pluggable [`mail`]er; SQLite or PostgreSQL storage ([`db`],
//! sqlx); the public leaderboard and replay [`pages`]; its Prometheus [`metrics`].
//!
//! The ladder plays no games itself. Every game (smoke test or challenge) is asked of a
//! [`farm::Farm`] handle, a channel whose other end some farm answers with verified match
//! records; the `farm` binary plugs in the coordinator's dispatcher (embedded workers or a
//! cluster), so this crate depends on the game and worker libraries, never on the coordinator.
//! Bots' code lives content-addressed on disk ([`code`]), where that farm reads it.
//!
//! Starting: [`Server::open`] (database, code folder, training bots), start a farm on
//! [`Server::code`], then [`Server::serve`] until a stop future completes.

pub mod api;
pub mod code;
pub mod db;
pub mod elo;
pub mod error;
pub mod extract;
pub mod farm;
pub mod limits;
pub mod mail;
pub mod metrics;
pub mod pages;
pub mod service;

use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use code::{CodeError, CodeFolder, TrainingBot, TrainingError};
use db::{Db, DbError};
use limits::{Limiter, Rate};
use mail::MailError;

/// Everything the ladder service needs (the farm is the caller's, see [`Server::serve`]).
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// The data folder: SQLite database (unless `database`), code, mail outbox.
    pub data: PathBuf,
    /// A `postgres://` or `sqlite://` URL instead of `<data>/ladder.db`.
    pub database: Option<String>,
    pub listen: String,
    /// The training bots' folder (`*.js`).
    pub training: PathBuf,
    pub challenge_rate: Rate,
    pub submit_rate: Rate,
    pub auth_rate: Rate,
    pub max_code_bytes: usize,
}

/// Why the ladder could not start, or stopped serving.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("creating the data folder {}", dir.display())]
    DataFolder {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Db(#[from] DbError),
    #[error(transparent)]
    Code(#[from] CodeError),
    #[error(transparent)]
    Training(#[from] TrainingError),
    #[error(transparent)]
    Mail(#[from] MailError),
    #[error("--listen {addr}")]
    Listen {
        addr: String,
        source: std::io::Error,
    },
    #[error("the listening socket has no address")]
    LocalAddr(#[source] std::io::Error),
    #[error("serving the ladder")]
    Serve(#[source] std::io::Error),
}

/// The database URL: `database`, else SQLite in `<data>/ladder.db` (the folder is made).
pub fn database_url(data: &Path, database: Option<&str>) -> Result<String, ServeError> {
    match database {
        Some(url) => Ok(url.to_string()),
        None => {
            std::fs::create_dir_all(data).map_err(|source| ServeError::DataFolder {
                dir: data.to_path_buf(),
                source,
            })?;
            Ok(format!(
                "sqlite://{}?mode=rwc",
                data.join("ladder.db").display()
            ))
        }
    }
}

/// The ladder with its storage open, before it serves.
pub struct Server {
    cfg: ServeConfig,
    url: String,
    db: Db,
    code: Arc<CodeFolder>,
    training: Vec<TrainingBot>,
}

impl Server {
    /// Opens (and migrates) the database, the code folder `<data>/code`, and loads the
    /// training bots into it.
    pub async fn open(cfg: ServeConfig) -> Result<Server, ServeError> {
        let url = database_url(&cfg.data, cfg.database.as_deref())?;
        let db = Db::open(&url).await?;
        let code = Arc::new(CodeFolder::new(cfg.data.join("code"))?);
        let training = code::load_training(&cfg.training, &code)?;
        Ok(Server {
            cfg,
            url,
            db,
            code,
            training,
        })
    }

    /// The code folder the farm reads contenders' code from.
    pub fn code(&self) -> Arc<CodeFolder> {
        self.code.clone()
    }

    /// Serves the API and pages, playing games through `farm`, until `stop` completes (then
    /// finishes the requests in progress). Prints `ladder listening on http://ADDR` once ready.
    pub async fn serve(
        self,
        farm: farm::Farm,
        stop: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServeError> {
        let cfg = self.cfg;
        let mailer = Arc::new(mail::OutboxMailer::new(cfg.data.join("outbox"))?);
        let ladder = Arc::new(service::Ladder {
            db: self.db,
            farm,
            code: self.code,
            training: self.training,
            mailer,
            challenge_limit: Limiter::new(cfg.challenge_rate),
            submit_limit: Limiter::new(cfg.submit_rate),
            auth_limit: Limiter::new(cfg.auth_rate),
            max_code_bytes: cfg.max_code_bytes,
            write_lock: tokio::sync::Mutex::new(()),
        });
        metrics::global();
        let listener = tokio::net::TcpListener::bind(&cfg.listen)
            .await
            .map_err(|source| ServeError::Listen {
                addr: cfg.listen.clone(),
                source,
            })?;
        let addr = listener.local_addr().map_err(ServeError::LocalAddr)?;
        tracing::info!(
            %addr,
            database = %db::redact(&self.url),
            farm = ladder.farm.describe(),
            training = ladder.training.len(),
            "ladder up"
        );
        println!("ladder listening on http://{addr}");
        let stop = async move {
            stop.await;
            tracing::info!("ladder shutting down");
        };
        let app = api::router(ladder).into_make_service_with_connect_info::<SocketAddr>();
        axum::serve(listener, app)
            .with_graceful_shutdown(stop)
            .await
            .map_err(ServeError::Serve)
    }
}
