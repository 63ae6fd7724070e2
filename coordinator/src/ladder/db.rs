//! Ladder storage: one schema on SQLite (default, a file in the data folder) or PostgreSQL,
//! through sqlx's `Any` driver with runtime queries (`$n` placeholders work on both). Every
//! multi-row change runs in one transaction, so a failed request leaves nothing half-stored.

use anyhow::{Context, Result};
use sqlx::any::{AnyPoolOptions, AnyRow};
use sqlx::{AnyPool, Row};

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

/// A player (bot) as stored.
#[derive(Debug, Clone)]
pub struct PlayerRow {
    pub id: i64,
    pub name: String,
    pub email: String,
    pub email_verified: bool,
    pub rp: i64,
    pub wins: i64,
    pub draws: i64,
    pub losses: i64,
    pub current_version: Option<i64>,
    pub created_ms: i64,
}

/// One published code version.
#[derive(Debug, Clone)]
pub struct VersionRow {
    pub version: i64,
    pub code_sha256: String,
    pub notes: String,
    pub submitted_by: String,
    pub reverted_from: Option<i64>,
    pub created_ms: i64,
}

/// One stored challenge game.
#[derive(Debug, Clone)]
pub struct MatchRow {
    pub url_id: String,
    pub challenge_id: i64,
    pub black_id: i64,
    pub red_id: i64,
    pub black_name: String,
    pub red_name: String,
    pub black_version: i64,
    pub red_version: i64,
    pub black_sha: String,
    pub red_sha: String,
    pub seed: i64,
    pub winner: Option<String>,
    pub reason: String,
    pub turns: i64,
    pub record: String,
    pub created_ms: i64,
}

/// One challenge (two games) as stored.
#[derive(Debug, Clone)]
pub struct ChallengeRow {
    pub id: i64,
    pub challenger_id: i64,
    pub challenged_id: i64,
    pub result: String,
    pub scored: bool,
    pub challenger_delta: i64,
    pub challenged_delta: i64,
    pub challenger_rp: i64,
    pub challenged_rp: i64,
    pub created_ms: i64,
}

const SCHEMA: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS ladder_players (
        id {ID},
        name TEXT NOT NULL UNIQUE,
        email TEXT NOT NULL,
        email_verified BIGINT NOT NULL DEFAULT 0,
        key_hash TEXT NOT NULL UNIQUE,
        rp BIGINT NOT NULL DEFAULT 0,
        wins BIGINT NOT NULL DEFAULT 0,
        draws BIGINT NOT NULL DEFAULT 0,
        losses BIGINT NOT NULL DEFAULT 0,
        current_version BIGINT,
        created_ms BIGINT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS ladder_codes (
        sha256 TEXT PRIMARY KEY,
        code TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS ladder_versions (
        player_id BIGINT NOT NULL REFERENCES ladder_players(id),
        version BIGINT NOT NULL,
        code_sha256 TEXT NOT NULL REFERENCES ladder_codes(sha256),
        notes TEXT NOT NULL,
        submitted_by TEXT NOT NULL,
        reverted_from BIGINT,
        created_ms BIGINT NOT NULL,
        PRIMARY KEY (player_id, version))",
    "CREATE TABLE IF NOT EXISTS ladder_challenges (
        id {ID},
        challenger_id BIGINT NOT NULL REFERENCES ladder_players(id),
        challenged_id BIGINT NOT NULL REFERENCES ladder_players(id),
        challenger_sha TEXT NOT NULL,
        challenged_sha TEXT NOT NULL,
        pair_key TEXT NOT NULL,
        result TEXT NOT NULL,
        scored BIGINT NOT NULL,
        challenger_delta BIGINT NOT NULL,
        challenged_delta BIGINT NOT NULL,
        challenger_rp BIGINT NOT NULL,
        challenged_rp BIGINT NOT NULL,
        created_ms BIGINT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS ladder_challenges_pair ON ladder_challenges (pair_key)",
    "CREATE TABLE IF NOT EXISTS ladder_matches (
        url_id TEXT PRIMARY KEY,
        challenge_id BIGINT NOT NULL REFERENCES ladder_challenges(id),
        black_id BIGINT NOT NULL,
        red_id BIGINT NOT NULL,
        black_name TEXT NOT NULL,
        red_name TEXT NOT NULL,
        black_version BIGINT NOT NULL,
        red_version BIGINT NOT NULL,
        black_sha TEXT NOT NULL,
        red_sha TEXT NOT NULL,
        seed BIGINT NOT NULL,
        winner TEXT,
        reason TEXT NOT NULL,
        turns BIGINT NOT NULL,
        record TEXT NOT NULL,
        created_ms BIGINT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS ladder_matches_black ON ladder_matches (black_id)",
    "CREATE INDEX IF NOT EXISTS ladder_matches_red ON ladder_matches (red_id)",
    "CREATE TABLE IF NOT EXISTS ladder_email_tokens (
        token_hash TEXT PRIMARY KEY,
        player_id BIGINT NOT NULL REFERENCES ladder_players(id),
        email TEXT NOT NULL,
        expires_ms BIGINT NOT NULL,
        used BIGINT NOT NULL DEFAULT 0)",
];

const PLAYER_COLS: &str =
    "id, name, email, email_verified, rp, wins, draws, losses, current_version, created_ms";
const MATCH_COLS: &str = "url_id, challenge_id, black_id, red_id, black_name, red_name, black_version, red_version, black_sha, red_sha, seed, winner, reason, turns, record, created_ms";
const CHALLENGE_COLS: &str = "id, challenger_id, challenged_id, result, scored, challenger_delta, challenged_delta, challenger_rp, challenged_rp, created_ms";

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

fn player(r: &AnyRow) -> Result<PlayerRow, sqlx::Error> {
    Ok(PlayerRow {
        id: r.try_get("id")?,
        name: r.try_get("name")?,
        email: r.try_get("email")?,
        email_verified: r.try_get::<i64, _>("email_verified")? != 0,
        rp: r.try_get("rp")?,
        wins: r.try_get("wins")?,
        draws: r.try_get("draws")?,
        losses: r.try_get("losses")?,
        current_version: r.try_get("current_version")?,
        created_ms: r.try_get("created_ms")?,
    })
}

fn version(r: &AnyRow) -> Result<VersionRow, sqlx::Error> {
    Ok(VersionRow {
        version: r.try_get("version")?,
        code_sha256: r.try_get("code_sha256")?,
        notes: r.try_get("notes")?,
        submitted_by: r.try_get("submitted_by")?,
        reverted_from: r.try_get("reverted_from")?,
        created_ms: r.try_get("created_ms")?,
    })
}

fn match_row(r: &AnyRow) -> Result<MatchRow, sqlx::Error> {
    Ok(MatchRow {
        url_id: r.try_get("url_id")?,
        challenge_id: r.try_get("challenge_id")?,
        black_id: r.try_get("black_id")?,
        red_id: r.try_get("red_id")?,
        black_name: r.try_get("black_name")?,
        red_name: r.try_get("red_name")?,
        black_version: r.try_get("black_version")?,
        red_version: r.try_get("red_version")?,
        black_sha: r.try_get("black_sha")?,
        red_sha: r.try_get("red_sha")?,
        seed: r.try_get("seed")?,
        winner: r.try_get("winner")?,
        reason: r.try_get("reason")?,
        turns: r.try_get("turns")?,
        record: r.try_get("record")?,
        created_ms: r.try_get("created_ms")?,
    })
}

fn challenge(r: &AnyRow) -> Result<ChallengeRow, sqlx::Error> {
    Ok(ChallengeRow {
        id: r.try_get("id")?,
        challenger_id: r.try_get("challenger_id")?,
        challenged_id: r.try_get("challenged_id")?,
        result: r.try_get("result")?,
        scored: r.try_get::<i64, _>("scored")? != 0,
        challenger_delta: r.try_get("challenger_delta")?,
        challenged_delta: r.try_get("challenged_delta")?,
        challenger_rp: r.try_get("challenger_rp")?,
        challenged_rp: r.try_get("challenged_rp")?,
        created_ms: r.try_get("created_ms")?,
    })
}

/// What a challenge writes: the challenge row, both players' new standing, both games.
pub struct ChallengeWrite {
    pub challenger_id: i64,
    pub challenged_id: i64,
    pub challenger_sha: String,
    pub challenged_sha: String,
    /// "win" / "draw" / "loss" for the challenger.
    pub result: String,
    pub scored: bool,
    pub challenger_delta: i64,
    pub challenged_delta: i64,
    pub challenger_rp: i64,
    pub challenged_rp: i64,
    pub matches: Vec<MatchRow>,
}

impl Db {
    /// Connects to `url` (`sqlite://...` or `postgres://...`) and creates the schema if needed.
    pub async fn open(url: &str) -> Result<Db> {
        sqlx::any::install_default_drivers();
        let backend = if url.starts_with("sqlite:") {
            Backend::Sqlite
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Backend::Postgres
        } else {
            anyhow::bail!("--database {url:?}: expected a postgres://... or sqlite://... URL");
        };
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
        let pool = opts
            .connect(url)
            .await
            .with_context(|| format!("connecting to the ladder database {}", redact(url)))?;
        if backend == Backend::Sqlite {
            sqlx::query("PRAGMA journal_mode = WAL")
                .execute(&pool)
                .await
                .context("setting SQLite WAL mode")?;
        }
        let db = Db { pool, backend };
        db.migrate().await?;
        Ok(db)
    }

    async fn migrate(&self) -> Result<()> {
        let id = match self.backend {
            Backend::Sqlite => "INTEGER PRIMARY KEY AUTOINCREMENT",
            Backend::Postgres => "BIGSERIAL PRIMARY KEY",
        };
        for stmt in SCHEMA {
            let sql = stmt.replace("{ID}", id);
            sqlx::query(&sql)
                .execute(&self.pool)
                .await
                .with_context(|| format!("creating the ladder schema: {}", first_line(&sql)))?;
        }
        Ok(())
    }

    pub async fn create_player(&self, name: &str, email: &str, key_hash: &str) -> Result<i64> {
        let row = sqlx::query(
            "INSERT INTO ladder_players (name, email, key_hash, created_ms) VALUES ($1, $2, $3, $4) RETURNING id",
        )
        .bind(name)
        .bind(email)
        .bind(key_hash)
        .bind(now_ms())
        .fetch_one(&self.pool)
        .await
        .with_context(|| format!("creating player {name:?} (is the name taken?)"))?;
        Ok(row.try_get("id")?)
    }

    pub async fn players(&self) -> Result<Vec<PlayerRow>> {
        let rows = sqlx::query(&format!(
            "SELECT {PLAYER_COLS} FROM ladder_players ORDER BY rp DESC, id ASC"
        ))
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.iter().map(player).collect::<Result<_, _>>()?)
    }

    pub async fn player_by_key(&self, key_hash: &str) -> Result<Option<PlayerRow>> {
        let row = sqlx::query(&format!(
            "SELECT {PLAYER_COLS} FROM ladder_players WHERE key_hash = $1"
        ))
        .bind(key_hash)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.as_ref().map(player).transpose()?)
    }

    pub async fn player_by_id(&self, id: i64) -> Result<Option<PlayerRow>> {
        let row = sqlx::query(&format!(
            "SELECT {PLAYER_COLS} FROM ladder_players WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.as_ref().map(player).transpose()?)
    }

    pub async fn player_by_name(&self, name: &str) -> Result<Option<PlayerRow>> {
        let row = sqlx::query(&format!(
            "SELECT {PLAYER_COLS} FROM ladder_players WHERE name = $1"
        ))
        .bind(name)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.as_ref().map(player).transpose()?)
    }

    /// Sets one admin-editable column of a player; false when no such player.
    pub async fn set_key_hash(&self, id: i64, key_hash: &str) -> Result<bool> {
        let r = sqlx::query("UPDATE ladder_players SET key_hash = $1 WHERE id = $2")
            .bind(key_hash)
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(r.rows_affected() == 1)
    }

    pub async fn set_email_verified(&self, id: i64, email: &str) -> Result<bool> {
        let r =
            sqlx::query("UPDATE ladder_players SET email = $1, email_verified = 1 WHERE id = $2")
                .bind(email)
                .bind(id)
                .execute(&self.pool)
                .await?;
        Ok(r.rows_affected() == 1)
    }

    pub async fn set_rp(&self, id: i64, rp: i64) -> Result<bool> {
        let r = sqlx::query("UPDATE ladder_players SET rp = $1 WHERE id = $2")
            .bind(rp)
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(r.rows_affected() == 1)
    }

    pub async fn code(&self, sha256: &str) -> Result<Option<String>> {
        let row = sqlx::query("SELECT code FROM ladder_codes WHERE sha256 = $1")
            .bind(sha256)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.map(|r| r.try_get("code")).transpose()?)
    }

    pub async fn versions(&self, player_id: i64) -> Result<Vec<VersionRow>> {
        let rows = sqlx::query(
            "SELECT version, code_sha256, notes, submitted_by, reverted_from, created_ms
             FROM ladder_versions WHERE player_id = $1 ORDER BY version ASC",
        )
        .bind(player_id)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.iter().map(version).collect::<Result<_, _>>()?)
    }

    pub async fn version(&self, player_id: i64, v: i64) -> Result<Option<VersionRow>> {
        let row = sqlx::query(
            "SELECT version, code_sha256, notes, submitted_by, reverted_from, created_ms
             FROM ladder_versions WHERE player_id = $1 AND version = $2",
        )
        .bind(player_id)
        .bind(v)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.as_ref().map(version).transpose()?)
    }

    /// Publishes a new version (the code stored once by hash) and makes it current, atomically.
    /// Returns the new version number.
    pub async fn publish(
        &self,
        player_id: i64,
        sha256: &str,
        code: &str,
        notes: &str,
        submitted_by: &str,
        reverted_from: Option<i64>,
    ) -> Result<i64> {
        let mut tx = self.pool.begin().await?;
        let exists = sqlx::query("SELECT sha256 FROM ladder_codes WHERE sha256 = $1")
            .bind(sha256)
            .fetch_optional(&mut *tx)
            .await?;
        if exists.is_none() {
            sqlx::query("INSERT INTO ladder_codes (sha256, code) VALUES ($1, $2)")
                .bind(sha256)
                .bind(code)
                .execute(&mut *tx)
                .await?;
        }
        let row = sqlx::query(
            "SELECT COALESCE(MAX(version), 0) AS v FROM ladder_versions WHERE player_id = $1",
        )
        .bind(player_id)
        .fetch_one(&mut *tx)
        .await?;
        let next: i64 = row.try_get::<i64, _>("v")? + 1;
        sqlx::query(
            "INSERT INTO ladder_versions (player_id, version, code_sha256, notes, submitted_by, reverted_from, created_ms)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(player_id)
        .bind(next)
        .bind(sha256)
        .bind(notes)
        .bind(submitted_by)
        .bind(reverted_from)
        .bind(now_ms())
        .execute(&mut *tx)
        .await?;
        sqlx::query("UPDATE ladder_players SET current_version = $1 WHERE id = $2")
            .bind(next)
            .bind(player_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(next)
    }

    /// Scored challenges so far under a [`pair_key`].
    pub async fn pair_count(&self, key: &str) -> Result<i64> {
        let row = sqlx::query(
            "SELECT COUNT(*) AS n FROM ladder_challenges WHERE pair_key = $1 AND scored = 1",
        )
        .bind(key)
        .fetch_one(&self.pool)
        .await?;
        Ok(row.try_get("n")?)
    }

    /// Stores a challenge, its games and both players' new RP and records in one transaction.
    pub async fn record_challenge(&self, w: &ChallengeWrite) -> Result<i64> {
        let mut tx = self.pool.begin().await?;
        let row = sqlx::query(
            "INSERT INTO ladder_challenges (challenger_id, challenged_id, challenger_sha, challenged_sha,
               pair_key, result, scored, challenger_delta, challenged_delta, challenger_rp, challenged_rp, created_ms)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id",
        )
        .bind(w.challenger_id)
        .bind(w.challenged_id)
        .bind(&w.challenger_sha)
        .bind(&w.challenged_sha)
        .bind(pair_key(&w.challenger_sha, &w.challenged_sha))
        .bind(&w.result)
        .bind(w.scored as i64)
        .bind(w.challenger_delta)
        .bind(w.challenged_delta)
        .bind(w.challenger_rp)
        .bind(w.challenged_rp)
        .bind(now_ms())
        .fetch_one(&mut *tx)
        .await?;
        let id: i64 = row.try_get("id")?;
        for m in &w.matches {
            sqlx::query(&format!(
                "INSERT INTO ladder_matches ({MATCH_COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)"
            ))
            .bind(&m.url_id)
            .bind(id)
            .bind(m.black_id)
            .bind(m.red_id)
            .bind(&m.black_name)
            .bind(&m.red_name)
            .bind(m.black_version)
            .bind(m.red_version)
            .bind(&m.black_sha)
            .bind(&m.red_sha)
            .bind(m.seed)
            .bind(m.winner.clone())
            .bind(&m.reason)
            .bind(m.turns)
            .bind(&m.record)
            .bind(m.created_ms)
            .execute(&mut *tx)
            .await?;
        }
        if w.scored {
            let (a_col, b_col) = match w.result.as_str() {
                "win" => ("wins", "losses"),
                "loss" => ("losses", "wins"),
                _ => ("draws", "draws"),
            };
            for (pid, rp, col) in [
                (w.challenger_id, w.challenger_rp, a_col),
                (w.challenged_id, w.challenged_rp, b_col),
            ] {
                sqlx::query(&format!(
                    "UPDATE ladder_players SET rp = $1, {col} = {col} + 1 WHERE id = $2"
                ))
                .bind(rp)
                .bind(pid)
                .execute(&mut *tx)
                .await?;
            }
        }
        tx.commit().await?;
        Ok(id)
    }

    pub async fn challenge(&self, id: i64) -> Result<Option<ChallengeRow>> {
        let row = sqlx::query(&format!(
            "SELECT {CHALLENGE_COLS} FROM ladder_challenges WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.as_ref().map(challenge).transpose()?)
    }

    /// The most recent challenges a player took part in (either side), newest first.
    pub async fn challenges_of(&self, player_id: i64, limit: i64) -> Result<Vec<ChallengeRow>> {
        let rows = sqlx::query(&format!(
            "SELECT {CHALLENGE_COLS} FROM ladder_challenges
             WHERE challenger_id = $1 OR challenged_id = $1 ORDER BY id DESC LIMIT $2"
        ))
        .bind(player_id)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.iter().map(challenge).collect::<Result<_, _>>()?)
    }

    pub async fn matches_of_challenge(&self, challenge_id: i64) -> Result<Vec<MatchRow>> {
        let rows = sqlx::query(&format!(
            "SELECT {MATCH_COLS} FROM ladder_matches WHERE challenge_id = $1 ORDER BY created_ms ASC, url_id ASC"
        ))
        .bind(challenge_id)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.iter().map(match_row).collect::<Result<_, _>>()?)
    }

    /// The most recent games a player played (either colour), newest first.
    pub async fn matches_of(&self, player_id: i64, limit: i64) -> Result<Vec<MatchRow>> {
        let rows = sqlx::query(&format!(
            "SELECT {MATCH_COLS} FROM ladder_matches WHERE black_id = $1 OR red_id = $1
             ORDER BY challenge_id DESC, created_ms DESC LIMIT $2"
        ))
        .bind(player_id)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.iter().map(match_row).collect::<Result<_, _>>()?)
    }

    pub async fn match_by_url(&self, url_id: &str) -> Result<Option<MatchRow>> {
        let row = sqlx::query(&format!(
            "SELECT {MATCH_COLS} FROM ladder_matches WHERE url_id = $1"
        ))
        .bind(url_id)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.as_ref().map(match_row).transpose()?)
    }

    pub async fn add_email_token(
        &self,
        token_hash: &str,
        player_id: i64,
        email: &str,
        expires_ms: i64,
    ) -> Result<()> {
        sqlx::query(
            "INSERT INTO ladder_email_tokens (token_hash, player_id, email, expires_ms) VALUES ($1, $2, $3, $4)",
        )
        .bind(token_hash)
        .bind(player_id)
        .bind(email)
        .bind(expires_ms)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Uses an email token: marks the player's email (the one the token was sent to) verified.
    /// Returns the player id, or None when the token is unknown, used or expired.
    pub async fn use_email_token(&self, token_hash: &str) -> Result<Option<i64>> {
        let mut tx = self.pool.begin().await?;
        let row = sqlx::query(
            "SELECT player_id, email, expires_ms, used FROM ladder_email_tokens WHERE token_hash = $1",
        )
        .bind(token_hash)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(row) = row else { return Ok(None) };
        let used: i64 = row.try_get("used")?;
        let expires: i64 = row.try_get("expires_ms")?;
        if used != 0 || expires < now_ms() {
            return Ok(None);
        }
        let pid: i64 = row.try_get("player_id")?;
        let email: String = row.try_get("email")?;
        let r = sqlx::query(
            "UPDATE ladder_email_tokens SET used = 1 WHERE token_hash = $1 AND used = 0",
        )
        .bind(token_hash)
        .execute(&mut *tx)
        .await?;
        if r.rows_affected() != 1 {
            return Ok(None);
        }
        sqlx::query("UPDATE ladder_players SET email = $1, email_verified = 1 WHERE id = $2")
            .bind(email)
            .bind(pid)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(Some(pid))
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or(s)
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
