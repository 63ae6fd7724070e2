//! The ladder's schema and its migration. [`TABLES`] is the first schema (created with
//! `IF NOT EXISTS`); every later change is an added column in [`ADDED_COLUMNS`], applied to every
//! database on open, new or old, only when the column is missing. So a database made by an
//! earlier `farm ladder` gains the columns in place (existing rows get the column's default, or
//! NULL), and a new database goes through exactly the same statements.
//!
//! Columns are only ever added, never renamed or dropped, so an older binary still works on a
//! migrated database (it ignores the new columns; a player it creates gets the default Elo).

use sqlx::Row;

use super::{Backend, Db, DbError, Result};

/// The first schema (`{ID}`: the backend's auto-increment primary key).
pub const TABLES: &[&str] = &[
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

/// Columns added after the first schema, in order: (table, column, declaration).
pub const ADDED_COLUMNS: &[(&str, &str, &str)] = &[
    // Elo beside RP (`ladder::elo`); bots that predate it start from the initial rating
    // (a literal: DDL takes no bound parameters; kept equal to `elo::INITIAL` by a test).
    ("ladder_players", "elo", "BIGINT NOT NULL DEFAULT 1500"),
    // A challenge's Elo: the challenger's change (the challenged bot's is the negative) and both
    // ratings after it. NULL on challenges stored before Elo existed.
    ("ladder_challenges", "elo_delta", "BIGINT"),
    ("ladder_challenges", "challenger_elo", "BIGINT"),
    ("ladder_challenges", "challenged_elo", "BIGINT"),
];

impl Db {
    /// Creates the first schema if needed, then adds every missing column.
    pub(super) async fn migrate(&self) -> Result<()> {
        let id = match self.backend {
            Backend::Sqlite => "INTEGER PRIMARY KEY AUTOINCREMENT",
            Backend::Postgres => "BIGSERIAL PRIMARY KEY",
        };
        for stmt in TABLES {
            let sql = stmt.replace("{ID}", id);
            sqlx::query(&sql)
                .execute(&self.pool)
                .await
                .map_err(|source| DbError::Schema {
                    statement: first_line(&sql).to_string(),
                    source,
                })?;
        }
        for &(table, column, decl) in ADDED_COLUMNS {
            self.add_column(table, column, decl)
                .await
                .map_err(|source| DbError::Migrate {
                    table,
                    column,
                    source,
                })?;
        }
        Ok(())
    }

    /// Adds `table.column` unless it is there. PostgreSQL says `IF NOT EXISTS` itself; SQLite
    /// cannot, so the column list is read first, and a concurrent opener that added it in the
    /// meantime (the ALTER then fails) counts as done.
    async fn add_column(&self, table: &str, column: &str, decl: &str) -> Result<(), sqlx::Error> {
        match self.backend {
            Backend::Postgres => {
                sqlx::query(&format!(
                    "ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {column} {decl}"
                ))
                .execute(&self.pool)
                .await?;
            }
            Backend::Sqlite => {
                if self.has_column(table, column).await? {
                    return Ok(());
                }
                let r = sqlx::query(&format!("ALTER TABLE {table} ADD COLUMN {column} {decl}"))
                    .execute(&self.pool)
                    .await;
                if let Err(e) = r {
                    if !self.has_column(table, column).await? {
                        return Err(e);
                    }
                }
            }
        }
        Ok(())
    }

    /// Whether `table` has `column` (SQLite).
    async fn has_column(&self, table: &str, column: &str) -> Result<bool, sqlx::Error> {
        let row = sqlx::query(&format!(
            "SELECT COUNT(*) AS n FROM pragma_table_info('{table}') WHERE name = $1"
        ))
        .bind(column)
        .fetch_one(&self.pool)
        .await?;
        Ok(row.try_get::<i64, _>("n")? > 0)
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_elo_column_default_is_the_initial_rating() {
        let decl = ADDED_COLUMNS
            .iter()
            .find(|c| c.1 == "elo")
            .map(|c| c.2)
            .unwrap_or_default();
        assert_eq!(
            decl,
            format!("BIGINT NOT NULL DEFAULT {}", crate::elo::INITIAL)
        );
    }
}
