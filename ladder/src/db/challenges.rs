//! Challenges and their games: the anti-farming count per code-hash pair, storing a settled
//! challenge (RP, Elo and records of both bots with its two games, in one transaction) and
//! reading challenges and games back.

use sqlx::Row;

use super::{now_ms, pair_key, Db, Flag, Result};

/// One stored challenge game.
#[derive(Debug, Clone, sqlx::FromRow)]
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
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ChallengeRow {
    pub id: i64,
    pub challenger_id: i64,
    pub challenged_id: i64,
    pub result: String,
    pub scored: Flag,
    pub challenger_delta: i64,
    pub challenged_delta: i64,
    pub challenger_rp: i64,
    pub challenged_rp: i64,
    /// The challenger's Elo change (the challenged bot's is the negative); 0 when practice,
    /// None on challenges stored before the ladder kept Elo.
    pub elo_delta: Option<i64>,
    /// Both Elo ratings after the challenge (None before the ladder kept Elo).
    pub challenger_elo: Option<i64>,
    pub challenged_elo: Option<i64>,
    pub created_ms: i64,
}

const MATCH_COLS: &str = "url_id, challenge_id, black_id, red_id, black_name, red_name, black_version, red_version, black_sha, red_sha, seed, winner, reason, turns, record, created_ms";
const CHALLENGE_COLS: &str = "id, challenger_id, challenged_id, result, scored, challenger_delta, challenged_delta, challenger_rp, challenged_rp, elo_delta, challenger_elo, challenged_elo, created_ms";

/// What a challenge writes: the challenge row, both players' new standing, both games.
pub struct ChallengeWrite {
    pub challenger_id: i64,
    pub challenged_id: i64,
    pub challenger_sha: String,
    pub challenged_sha: String,
    /// "win" / "draw" / "loss" for the challenger.
    pub result: String,
    /// Scored challenges change RP, Elo and records; practice ones only store the games.
    pub scored: bool,
    pub challenger_delta: i64,
    pub challenged_delta: i64,
    pub challenger_rp: i64,
    pub challenged_rp: i64,
    /// The challenger's Elo change and both ratings after it (unchanged when practice).
    pub elo_delta: i64,
    pub challenger_elo: i64,
    pub challenged_elo: i64,
    pub matches: Vec<MatchRow>,
}

impl Db {
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

    /// Stores a challenge and its games and, when scored, both players' new RP, Elo and records,
    /// in one transaction.
    pub async fn record_challenge(&self, w: &ChallengeWrite) -> Result<i64> {
        let mut tx = self.pool.begin().await?;
        let row = sqlx::query(
            "INSERT INTO ladder_challenges (challenger_id, challenged_id, challenger_sha, challenged_sha,
               pair_key, result, scored, challenger_delta, challenged_delta, challenger_rp, challenged_rp,
               elo_delta, challenger_elo, challenged_elo, created_ms)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) RETURNING id",
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
        .bind(w.elo_delta)
        .bind(w.challenger_elo)
        .bind(w.challenged_elo)
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
            for (pid, rp, elo, col) in [
                (w.challenger_id, w.challenger_rp, w.challenger_elo, a_col),
                (w.challenged_id, w.challenged_rp, w.challenged_elo, b_col),
            ] {
                sqlx::query(&format!(
                    "UPDATE ladder_players SET rp = $1, elo = $2, {col} = {col} + 1 WHERE id = $3"
                ))
                .bind(rp)
                .bind(elo)
                .bind(pid)
                .execute(&mut *tx)
                .await?;
            }
        }
        tx.commit().await?;
        Ok(id)
    }

    pub async fn challenge(&self, id: i64) -> Result<Option<ChallengeRow>> {
        Ok(sqlx::query_as(&format!(
            "SELECT {CHALLENGE_COLS} FROM ladder_challenges WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(&self.pool)
        .await?)
    }

    /// The most recent challenges a player took part in (either side), newest first.
    pub async fn challenges_of(&self, player_id: i64, limit: i64) -> Result<Vec<ChallengeRow>> {
        Ok(sqlx::query_as(&format!(
            "SELECT {CHALLENGE_COLS} FROM ladder_challenges
             WHERE challenger_id = $1 OR challenged_id = $1 ORDER BY id DESC LIMIT $2"
        ))
        .bind(player_id)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?)
    }

    pub async fn matches_of_challenge(&self, challenge_id: i64) -> Result<Vec<MatchRow>> {
        Ok(sqlx::query_as(&format!(
            "SELECT {MATCH_COLS} FROM ladder_matches WHERE challenge_id = $1 ORDER BY created_ms ASC, url_id ASC"
        ))
        .bind(challenge_id)
        .fetch_all(&self.pool)
        .await?)
    }

    /// The most recent games a player played (either colour), newest first.
    pub async fn matches_of(&self, player_id: i64, limit: i64) -> Result<Vec<MatchRow>> {
        Ok(sqlx::query_as(&format!(
            "SELECT {MATCH_COLS} FROM ladder_matches WHERE black_id = $1 OR red_id = $1
             ORDER BY challenge_id DESC, created_ms DESC LIMIT $2"
        ))
        .bind(player_id)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?)
    }

    pub async fn match_by_url(&self, url_id: &str) -> Result<Option<MatchRow>> {
        Ok(sqlx::query_as(&format!(
            "SELECT {MATCH_COLS} FROM ladder_matches WHERE url_id = $1"
        ))
        .bind(url_id)
        .fetch_optional(&self.pool)
        .await?)
    }
}
