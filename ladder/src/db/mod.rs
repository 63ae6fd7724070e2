//! Ladder storage: one schema on SQLite (default, a file in the data folder) or PostgreSQL,
//! through sqlx's `Any` driver with runtime queries (`$n` placeholders work on both) and rows
//! mapped by `#[derive(sqlx::FromRow)]`. Every multi-row change runs in one transaction, so a
//! failed request leaves nothing half-stored.
//!
//! By concept: [`schema`] (creating and migrating the tables), [`players`] (bots, their keys and
//! standing: RP, Elo, record), [`code`] (code by hash and published versions), [`challenges`]
//! (challenges, their games, settlement), [`email`] (verification tokens).

pub mod challenges;
pub mod code;
pub mod email;
pub mod players;
pub mod schema;

use sqlx::any::{AnyPoolOptions, AnyTypeInfo, AnyValueRef};
use sqlx::{Any, AnyConnection, AnyPool, Connection};

pub use challenges::{ChallengeRow, ChallengeWrite, MatchRow};
pub use code::VersionRow;
pub use players::PlayerRow;

/// Why the ladder database could not be opened, migrated, read or written.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("--database {0:?}: expected a postgres://... or sqlite://... URL")]
    BadUrl(String),
    #[error("connecting to the ladder database {url}")]
    Connect {
        /// Without its password ([`redact`]).
        url: String,
        source: sqlx::Error,
    },
    #[error("setting SQLite WAL mode")]
    Wal(#[source] sqlx::Error),
    #[error("creating the ladder schema: {statement}")]
    Schema {
        /// The statement's first line.
        statement: String,
        source: sqlx::Error,
    },
    #[error("migrating the ladder schema: adding {table}.{column}")]
    Migrate {
        table: &'static str,
        column: &'static str,
        source: sqlx::Error,
    },
    #[error("creating player {name:?} (is the name taken?)")]
    CreatePlayer { name: String, source: sqlx::Error },
    #[error(transparent)]
    Query(#[from] sqlx::Error),
}

/// The database layer's results.
pub type Result<T, E = DbError> = std::result::Result<T, E>;

/// Which database a URL names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// The ladder database.
#[derive(Clone)]
pub struct Db {
    pub pool: AnyPool,
    pub backend: Backend,
}

/// A 0/1 `BIGINT` column read as a bool. SQLite has no boolean type, so the schema keeps flags
/// as integers on both backends, and the `Any` driver decodes them only as integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Flag(pub bool);

impl sqlx::Type<Any> for Flag {
    fn type_info() -> AnyTypeInfo {
        <i64 as sqlx::Type<Any>>::type_info()
    }

    fn compatible(ty: &AnyTypeInfo) -> bool {
        <i64 as sqlx::Type<Any>>::compatible(ty)
    }
}

impl<'r> sqlx::Decode<'r, Any> for Flag {
    fn decode(value: AnyValueRef<'r>) -> Result<Flag, sqlx::error::BoxDynError> {
        Ok(Flag(<i64 as sqlx::Decode<'r, Any>>::decode(value)? != 0))
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// The key under which challenges between two code hashes are counted (order-free), as the
/// guide's anti-farming rule says: the pair of code hashes, whoever holds them, so a second
/// account with the same code shares the count; a new version (new hash) starts a fresh count.
pub fn pair_key(a_sha: &str, b_sha: &str) -> String {
    if a_sha <= b_sha {
        format!("{a_sha}|{b_sha}")
    } else {
        format!("{b_sha}|{a_sha}")
    }
}

impl Db {
    /// Connects to `url` (`sqlite://...` or `postgres://...`), then creates or migrates the
    /// schema ([`schema`]).
    pub async fn open(url: &str) -> Result<Db> {
        sqlx::any::install_default_drivers();
        let backend = Backend::of(url)?;
        let mut opts = AnyPoolOptions::new().max_connections(8);
        if backend == Backend::Sqlite {
            opts = opts.after_connect(|conn, _| {
                Box::pin(async move {
                    sqlx::query("PRAGMA foreign_keys = ON")
                        .execute(&mut *conn)
                        .await?;
                    sqlx::query("PRAGMA busy_timeout = 10000")
                        .execute(&mut *conn)
                        .await?;
                    Ok(())
                })
            });
        }
        let pool = opts.connect(url).await.map_err(|source| DbError::Connect {
            url: redact(url),
            source,
        })?;
        if backend == Backend::Sqlite {
            sqlx::query("PRAGMA journal_mode = WAL")
                .execute(&pool)
                .await
                .map_err(DbError::Wal)?;
        }
        let db = Db { pool, backend };
        db.migrate().await?;
        Ok(db)
    }
}

impl Backend {
    /// The backend of a `sqlite://...` or `postgres://...` URL.
    pub fn of(url: &str) -> Result<Backend> {
        if url.starts_with("sqlite:") {
            Ok(Backend::Sqlite)
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Ok(Backend::Postgres)
        } else {
            Err(DbError::BadUrl(url.to_string()))
        }
    }
}

/// Runs `sql` (one or more statements, as they are) on the database at `url`, on a connection
/// of its own and without the ladder's schema: operators' maintenance, and tests setting up a
/// database (creating one on a PostgreSQL server, or an older schema) for a ladder to open.
pub async fn run_sql(url: &str, sql: &str) -> Result<()> {
    sqlx::any::install_default_drivers();
    Backend::of(url)?;
    let mut conn = AnyConnection::connect(url)
        .await
        .map_err(|source| DbError::Connect {
            url: redact(url),
            source,
        })?;
    sqlx::raw_sql(sql).execute(&mut conn).await?;
    conn.close().await?;
    Ok(())
}

/// The URL without a password, for messages.
pub fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => match url[s + 3..at].find(':') {
            Some(c) => format!("{}:***{}", &url[..s + 3 + c], &url[at..]),
            None => url.to_string(),
        },
        _ => url.to_string(),
    }
}
