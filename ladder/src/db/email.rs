//! Email verification tokens (stored hashed; one use each, with an expiry).

use super::{now_ms, Db, Result};

/// A stored token.
#[derive(Debug, sqlx::FromRow)]
struct TokenRow {
    player_id: i64,
    email: String,
    expires_ms: i64,
    used: i64,
}

impl Db {
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
        let row: Option<TokenRow> = sqlx::query_as(
            "SELECT player_id, email, expires_ms, used FROM ladder_email_tokens WHERE token_hash = $1",
        )
        .bind(token_hash)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(t) = row else { return Ok(None) };
        if t.used != 0 || t.expires_ms < now_ms() {
            return Ok(None);
        }
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
            .bind(&t.email)
            .bind(t.player_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(Some(t.player_id))
    }
}
