//! Bots as stored: name, email, key hash, and their standing (RP, Elo, scored record).

use sqlx::Row;

use super::{now_ms, Db, DbError, Flag, Result};

/// A player (bot) as stored.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct PlayerRow {
    pub id: i64,
    pub name: String,
    pub email: String,
    pub email_verified: Flag,
    pub rp: i64,
    /// The Elo rating (`ladder::elo`), moved by scored challenges only.
    pub elo: i64,
    pub wins: i64,
    pub draws: i64,
    pub losses: i64,
    pub current_version: Option<i64>,
    pub created_ms: i64,
}

const PLAYER_COLS: &str =
    "id, name, email, email_verified, rp, elo, wins, draws, losses, current_version, created_ms";

impl Db {
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
        .map_err(|source| DbError::CreatePlayer {
            name: name.to_string(),
            source,
        })?;
        Ok(row.try_get("id")?)
    }

    /// Every player, leaderboard order (RP, then the oldest first).
    pub async fn players(&self) -> Result<Vec<PlayerRow>> {
        Ok(sqlx::query_as(&format!(
            "SELECT {PLAYER_COLS} FROM ladder_players ORDER BY rp DESC, id ASC"
        ))
        .fetch_all(&self.pool)
        .await?)
    }

    pub async fn player_by_key(&self, key_hash: &str) -> Result<Option<PlayerRow>> {
        Ok(sqlx::query_as(&format!(
            "SELECT {PLAYER_COLS} FROM ladder_players WHERE key_hash = $1"
        ))
        .bind(key_hash)
        .fetch_optional(&self.pool)
        .await?)
    }

    pub async fn player_by_id(&self, id: i64) -> Result<Option<PlayerRow>> {
        Ok(sqlx::query_as(&format!(
            "SELECT {PLAYER_COLS} FROM ladder_players WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(&self.pool)
        .await?)
    }

    pub async fn player_by_name(&self, name: &str) -> Result<Option<PlayerRow>> {
        Ok(sqlx::query_as(&format!(
            "SELECT {PLAYER_COLS} FROM ladder_players WHERE name = $1"
        ))
        .bind(name)
        .fetch_optional(&self.pool)
        .await?)
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
}
