//! What the ladder does, independent of HTTP: authenticate bot keys and answer bot info (here),
//! publish code after the smoke test and revert (`code`), play and settle challenges: RP via
//! `games::qianwang::ladder::settle`, Elo via `ladder::elo`, anti-farming by code-hash pair
//! (`challenge`), read games back (`matches`), email verification (`email`). Answers are
//! JSON values or [`ApiError`]s.

mod challenge;
mod code;
mod email;
mod matches;

use std::sync::Arc;

use axum::http::StatusCode;
use games::qianwang::ladder::{tier_of, PlayerResult};
use games::qianwang::{EndReason, Side};
use rand::RngCore;
use serde_json::{json, Value};

use crate::code::{CodeFolder, TrainingBot};
use crate::db::{Db, PlayerRow};
use crate::error::{ApiError, Internal};
use crate::farm::Farm;
use crate::limits::Limiter;
use crate::mail::Mailer;

/// Challenges per pair of code hashes that count for RP, Elo and records.
pub const SCORED_PER_PAIR: i64 = 10;
/// Base of the smoke test's fixed seeds (game i uses BASE + i).
pub const SMOKE_SEED_BASE: u64 = 0x5eed_0000;
/// How long an email token stays valid.
const EMAIL_TOKEN_MS: i64 = 24 * 3600 * 1000;

/// The running ladder.
pub struct Ladder {
    pub db: Db,
    /// Where games are played (see [`crate::farm`]).
    pub farm: Farm,
    /// The code of every contender, by hash, where the farm reads it.
    pub code: Arc<CodeFolder>,
    pub training: Vec<TrainingBot>,
    pub mailer: Arc<dyn Mailer>,
    pub challenge_limit: Limiter,
    pub submit_limit: Limiter,
    pub auth_limit: Limiter,
    pub max_code_bytes: usize,
    /// Serializes writes that read-then-write (version numbers, RP settlement).
    pub write_lock: tokio::sync::Mutex<()>,
}

/// A fresh random bot key and its stored hash.
pub fn new_key() -> (String, String) {
    let mut b = [0u8; 20];
    rand::thread_rng().fill_bytes(&mut b);
    let key = format!("qwk_{}", hex::encode(b));
    let hash = key_hash(&key);
    (key, hash)
}

pub fn key_hash(key: &str) -> String {
    shared::manifest::sha256_hex(key.as_bytes())
}

fn random_hex(bytes: usize) -> String {
    let mut b = vec![0u8; bytes];
    rand::thread_rng().fill_bytes(&mut b);
    hex::encode(b)
}

pub fn tier_json(rp: i64) -> Value {
    let t = tier_of(rp.max(0) as u32);
    json!({"major": t.major, "minor": t.minor.as_str(), "name": t.name_en(), "nameZh": t.name_zh(), "index": t.index()})
}

fn colour(side: Side) -> &'static str {
    side.as_str()
}

fn reason_str(r: EndReason) -> String {
    serde_json::to_value(r)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| format!("{r:?}").to_lowercase())
}

fn result_str(r: PlayerResult) -> &'static str {
    match r {
        PlayerResult::Win => "win",
        PlayerResult::Draw => "draw",
        PlayerResult::Loss => "loss",
    }
}

fn is_fault(r: EndReason) -> bool {
    matches!(
        r,
        EndReason::Illegal | EndReason::Error | EndReason::Runtime
    )
}

impl Ladder {
    /// The player holding `key`, or 401 (429 when this IP keeps sending bad keys).
    pub async fn authenticate(&self, key: Option<&str>, ip: &str) -> Result<PlayerRow, ApiError> {
        let Some(key) = key.filter(|k| !k.is_empty()) else {
            self.auth_limit
                .check(&format!("ip:{ip}"))
                .map_err(|s| ApiError::too_many("auth", s))?;
            return Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "missing_key",
                "send your bot key as `Authorization: Bearer <key>`",
            ));
        };
        match self.db.player_by_key(&key_hash(key)).await? {
            Some(p) => Ok(p),
            None => {
                self.auth_limit
                    .check(&format!("ip:{ip}"))
                    .map_err(|s| ApiError::too_many("auth", s))?;
                Err(ApiError::new(
                    StatusCode::UNAUTHORIZED,
                    "invalid_key",
                    "this bot key is not known (rotated or mistyped?)",
                ))
            }
        }
    }

    pub async fn player(&self, id: i64) -> Result<PlayerRow, ApiError> {
        self.db
            .player_by_id(id)
            .await?
            .ok_or_else(|| ApiError::not_found("unknown_bot", format!("no bot with botId {id}")))
    }

    async fn current_sha(&self, p: &PlayerRow) -> Result<Option<(i64, String)>, ApiError> {
        let Some(v) = p.current_version else {
            return Ok(None);
        };
        let row = self.db.version(p.id, v).await?.ok_or_else(|| {
            ApiError::internal(Internal::MissingVersion {
                bot: p.id,
                version: v,
            })
        })?;
        Ok(Some((v, row.code_sha256)))
    }

    /// Makes sure the code of `sha` is in the code folder (it may only be in the database).
    async fn materialize(&self, sha: &str) -> Result<(), ApiError> {
        if self.code.path(sha).exists() {
            return Ok(());
        }
        let code = self
            .db
            .code(sha)
            .await?
            .ok_or_else(|| ApiError::internal(Internal::MissingCode(sha.to_string())))?;
        self.code.put(&code)?;
        Ok(())
    }

    pub async fn info(&self, p: &PlayerRow) -> Result<Value, ApiError> {
        let current = self.current_sha(p).await?;
        let rank = self
            .db
            .players()
            .await?
            .iter()
            .position(|q| q.id == p.id)
            .map(|i| i + 1);
        Ok(json!({
            "botId": p.id, "name": p.name, "email": p.email, "emailVerified": p.email_verified.0,
            "rp": p.rp, "tier": tier_json(p.rp), "rank": rank, "elo": p.elo,
            "wins": p.wins, "draws": p.draws, "losses": p.losses,
            "currentVersion": p.current_version, "codeSha256": current.map(|c| c.1),
        }))
    }
}
