//! Code by hash (`ladder_codes`, each program stored once) and each bot's published versions.

use sqlx::Row;

use super::{now_ms, Db, Result};

/// One published code version.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct VersionRow {
    pub version: i64,
    pub code_sha256: String,
    pub notes: String,
    pub submitted_by: String,
    pub reverted_from: Option<i64>,
    pub created_ms: i64,
}

const VERSION_COLS: &str = "version, code_sha256, notes, submitted_by, reverted_from, created_ms";

impl Db {
    pub async fn code(&self, sha256: &str) -> Result<Option<String>> {
        let row: Option<(String,)> =
            sqlx::query_as("SELECT code FROM ladder_codes WHERE sha256 = $1")
                .bind(sha256)
                .fetch_optional(&self.pool)
                .await?;
        Ok(row.map(|r| r.0))
    }

    pub async fn versions(&self, player_id: i64) -> Result<Vec<VersionRow>> {
        Ok(sqlx::query_as(&format!(
            "SELECT {VERSION_COLS} FROM ladder_versions WHERE player_id = $1 ORDER BY version ASC"
        ))
        .bind(player_id)
        .fetch_all(&self.pool)
        .await?)
    }

    pub async fn version(&self, player_id: i64, v: i64) -> Result<Option<VersionRow>> {
        Ok(sqlx::query_as(&format!(
            "SELECT {VERSION_COLS} FROM ladder_versions WHERE player_id = $1 AND version = $2"
        ))
        .bind(player_id)
        .bind(v)
        .fetch_optional(&self.pool)
        .await?)
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
}
