//! What the ladder does, independent of HTTP: authenticate bot keys, publish code after the
//! smoke test, revert, play and settle challenges (RP via `games::qianwang::ladder::settle`,
//! anti-farming by code-hash pair), email verification. Answers are JSON values or [`ApiError`]s.

use std::sync::Arc;

use axum::http::StatusCode;
use games::qianwang::ladder::{combine, settle, tier_of, GameResult};
use games::qianwang::{EndReason, MatchRecord, Side};
use rand::RngCore;
use serde_json::{json, Value};

use super::db::{now_ms, pair_key, ChallengeWrite, Db, MatchRow, PlayerRow};
use super::error::ApiError;
use super::farm::{self, Farm, Seat, TrainingBot};
use super::limits::Limiter;
use super::mail::{Mail, Mailer};
use super::metrics;

/// Challenges per pair of code hashes that count for RP and records.
pub const SCORED_PER_PAIR: i64 = 10;
/// Base of the smoke test's fixed seeds (game i uses BASE + i).
pub const SMOKE_SEED_BASE: u64 = 0x5eed_0000;
/// How long an email token stays valid.
const EMAIL_TOKEN_MS: i64 = 24 * 3600 * 1000;

/// The running ladder.
pub struct Ladder {
    pub db: Db,
    pub farm: Farm,
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
    farm::sha256_hex(key)
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

fn result_str(r: GameResult) -> &'static str {
    match r {
        GameResult::Win => "win",
        GameResult::Draw => "draw",
        GameResult::Loss => "loss",
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
            ApiError::internal(anyhow::anyhow!(
                "bot {} has no row for its version {v}",
                p.id
            ))
        })?;
        Ok(Some((v, row.code_sha256)))
    }

    /// Makes sure the code of `sha` is in the code folder (it may only be in the database).
    async fn materialize(&self, sha: &str) -> Result<(), ApiError> {
        if self.farm.code().path(sha).exists() {
            return Ok(());
        }
        let code = self.db.code(sha).await?.ok_or_else(|| {
            ApiError::internal(anyhow::anyhow!("code {sha} is missing from the database"))
        })?;
        self.farm.code().put(&code)?;
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
            "botId": p.id, "name": p.name, "email": p.email, "emailVerified": p.email_verified,
            "rp": p.rp, "tier": tier_json(p.rp), "rank": rank,
            "wins": p.wins, "draws": p.draws, "losses": p.losses,
            "currentVersion": p.current_version, "codeSha256": current.map(|c| c.1),
        }))
    }

    /// Smoke test, then publish. `code` is already size-checked.
    pub async fn submit(
        &self,
        p: &PlayerRow,
        code: &str,
        notes: &str,
        submitted_by: &str,
    ) -> Result<Value, ApiError> {
        let m = metrics::global();
        let owned = code.to_string();
        let loaded = tokio::task::spawn_blocking(move || farm::check_code(&owned))
            .await
            .map_err(|e| ApiError::internal(anyhow::anyhow!("code check task: {e}")))?;
        if let Err(why) = loaded {
            m.submissions.with_label_values(&["rejected"]).inc();
            return Err(ApiError::bad_request("invalid_code", why));
        }
        let sha = self.farm.code().put(code)?;
        let mut games = Vec::new();
        for (i, t) in self.training.iter().enumerate() {
            for (c, side) in [Side::Black, Side::Red].into_iter().enumerate() {
                let seed = SMOKE_SEED_BASE + (2 * i + c) as u64;
                let me = Seat {
                    name: p.name.clone(),
                    sha256: sha.clone(),
                };
                let them = Seat {
                    name: format!("training/{}", t.name),
                    sha256: t.sha256.clone(),
                };
                let (black, red) = match side {
                    Side::Black => (me, them),
                    Side::Red => (them, me),
                };
                let farm = self.farm.clone();
                let handle = tokio::spawn(async move { farm.play(black, red, seed).await });
                games.push((t.name.clone(), side, seed, handle));
            }
        }
        let mut report = Vec::new();
        let mut failures = Vec::new();
        for (opponent, side, seed, handle) in games {
            let rec = handle
                .await
                .map_err(|e| ApiError::internal(anyhow::anyhow!("smoke game task: {e}")))?
                .map_err(|e| {
                    ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "farm_unavailable", e)
                })?;
            m.matches.with_label_values(&["smoke"]).inc();
            let o = &rec.outcome;
            let result = GameResult::of(o, side);
            let faulted = is_fault(o.reason) && o.winner != Some(side);
            if is_fault(o.reason) && !faulted {
                tracing::warn!(
                    opponent,
                    seed,
                    "training bot faulted in a smoke game: {}",
                    o.detail
                );
            }
            let entry = json!({
                "opponent": opponent, "colour": colour(side), "seed": seed,
                "result": result_str(result), "reason": reason_str(o.reason),
                "subtype": o.runtime.map(|k| k.as_str()), "turn": o.turn, "detail": o.detail,
                "plies": rec.plies.len(),
            });
            if faulted {
                failures.push(entry.clone());
            }
            report.push(entry);
        }
        if let Some(first) = failures.first() {
            m.submissions.with_label_values(&["smoke_failed"]).inc();
            let sub = first["subtype"]
                .as_str()
                .map(|s| format!(" ({s})"))
                .unwrap_or_default();
            let detail = format!(
                "smoke test failed: vs {} as {} (seed {}): {}{} at turn {}: {}; nothing was published",
                first["opponent"].as_str().unwrap_or("?"),
                first["colour"].as_str().unwrap_or("?"),
                first["seed"],
                first["reason"].as_str().unwrap_or("?"),
                sub,
                first["turn"],
                first["detail"].as_str().unwrap_or(""),
            );
            return Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "smoke_test_failed",
                detail,
            )
            .with("failures", Value::Array(failures))
            .with("games", Value::Array(report)));
        }
        let version = {
            let _w = self.write_lock.lock().await;
            self.db
                .publish(p.id, &sha, code, notes, submitted_by, None)
                .await?
        };
        m.submissions.with_label_values(&["published"]).inc();
        tracing::info!(bot = %p.name, version, sha = %sha, "published");
        Ok(json!({"version": version, "codeSha256": sha, "smokeTest": report}))
    }

    pub async fn revert(
        &self,
        p: &PlayerRow,
        to: i64,
        notes: &str,
        submitted_by: &str,
    ) -> Result<Value, ApiError> {
        let _w = self.write_lock.lock().await;
        let v = self.db.version(p.id, to).await?.ok_or_else(|| {
            ApiError::not_found(
                "unknown_version",
                format!("bot {} has no published version {to}", p.id),
            )
        })?;
        let code =
            self.db.code(&v.code_sha256).await?.ok_or_else(|| {
                ApiError::internal(anyhow::anyhow!("code {} missing", v.code_sha256))
            })?;
        let version = self
            .db
            .publish(p.id, &v.code_sha256, &code, notes, submitted_by, Some(to))
            .await?;
        metrics::global().reverts.inc();
        Ok(json!({"version": version, "revertedFrom": to, "codeSha256": v.code_sha256}))
    }

    pub async fn versions(&self, p: &PlayerRow) -> Result<Value, ApiError> {
        let rows = self.db.versions(p.id).await?;
        let list: Vec<Value> = rows
            .iter()
            .map(|v| {
                json!({"version": v.version, "codeSha256": v.code_sha256, "notes": v.notes,
                    "submittedBy": v.submitted_by, "revertedFrom": v.reverted_from,
                    "createdAt": v.created_ms, "current": Some(v.version) == p.current_version})
            })
            .collect();
        Ok(json!({"currentVersion": p.current_version, "versions": list}))
    }

    pub async fn challenge(&self, me: &PlayerRow, target: i64) -> Result<Value, ApiError> {
        if !me.email_verified {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "email_not_verified",
                "challenges need a verified email: POST /api/agent/email/request, then confirm the token",
            ));
        }
        if target == me.id {
            return Err(ApiError::bad_request(
                "self_challenge",
                "you cannot challenge your own bot",
            ));
        }
        let them = self.player(target).await?;
        let (my_v, my_sha) = self.current_sha(me).await?.ok_or_else(|| {
            ApiError::new(
                StatusCode::CONFLICT,
                "no_code",
                "publish code before challenging",
            )
        })?;
        let (their_v, their_sha) = self.current_sha(&them).await?.ok_or_else(|| {
            ApiError::new(
                StatusCode::CONFLICT,
                "no_code",
                format!("bot {} has no published code yet", them.id),
            )
        })?;
        self.materialize(&my_sha).await?;
        self.materialize(&their_sha).await?;
        let seat = |p: &PlayerRow, sha: &str| Seat {
            name: p.name.clone(),
            sha256: sha.to_string(),
        };
        // 53-bit seeds: exact as JSON numbers in JavaScript clients too.
        let seeds = [
            rand::thread_rng().next_u64() >> 11,
            rand::thread_rng().next_u64() >> 11,
        ];
        let g1 = {
            let farm = self.farm.clone();
            let (b, r) = (seat(me, &my_sha), seat(&them, &their_sha));
            tokio::spawn(async move { farm.play(b, r, seeds[0]).await })
        };
        let g2 = {
            let farm = self.farm.clone();
            let (b, r) = (seat(&them, &their_sha), seat(me, &my_sha));
            tokio::spawn(async move { farm.play(b, r, seeds[1]).await })
        };
        let unavailable =
            |e: String| ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "farm_unavailable", e);
        let join =
            |e: tokio::task::JoinError| ApiError::internal(anyhow::anyhow!("game task: {e}"));
        let r1 = g1.await.map_err(join)?.map_err(unavailable)?;
        let r2 = g2.await.map_err(join)?.map_err(unavailable)?;
        let m = metrics::global();
        m.matches.with_label_values(&["challenge"]).inc_by(2);
        let res1 = GameResult::of(&r1.outcome, Side::Black);
        let res2 = GameResult::of(&r2.outcome, Side::Red);
        let result = combine(res1, res2);

        let _w = self.write_lock.lock().await;
        // Re-read both standings under the lock: other challenges may have settled meanwhile.
        let me_now = self.player(me.id).await?;
        let them_now = self.player(them.id).await?;
        let before = self.db.pair_count(&pair_key(&my_sha, &their_sha)).await?;
        let scored = before < SCORED_PER_PAIR;
        let (a_delta, b_delta, a_rp, b_rp) = if scored {
            let s = settle(me_now.rp.max(0) as u32, them_now.rp.max(0) as u32, result);
            (
                s.a_delta as i64,
                s.b_delta as i64,
                s.a_rp as i64,
                s.b_rp as i64,
            )
        } else {
            (0, 0, me_now.rp, them_now.rp)
        };
        let now = now_ms();
        let row = |rec: &MatchRecord,
                   black: (&PlayerRow, i64, &str),
                   red: (&PlayerRow, i64, &str)| MatchRow {
            url_id: random_hex(8),
            challenge_id: 0,
            black_id: black.0.id,
            red_id: red.0.id,
            black_name: black.0.name.clone(),
            red_name: red.0.name.clone(),
            black_version: black.1,
            red_version: red.1,
            black_sha: black.2.to_string(),
            red_sha: red.2.to_string(),
            seed: rec.seed as i64,
            winner: rec.outcome.winner.map(|s| s.as_str().to_string()),
            reason: reason_str(rec.outcome.reason),
            turns: rec.plies.len() as i64,
            record: rec.to_json(),
            created_ms: now,
        };
        let mut rows = vec![
            row(&r1, (me, my_v, &my_sha), (&them, their_v, &their_sha)),
            row(&r2, (&them, their_v, &their_sha), (me, my_v, &my_sha)),
        ];
        rows[1].created_ms = now + 1;
        let write = ChallengeWrite {
            challenger_id: me.id,
            challenged_id: them.id,
            challenger_sha: my_sha.clone(),
            challenged_sha: their_sha.clone(),
            result: result_str(result).into(),
            scored,
            challenger_delta: a_delta,
            challenged_delta: b_delta,
            challenger_rp: a_rp,
            challenged_rp: b_rp,
            matches: rows.clone(),
        };
        let id = self.db.record_challenge(&write).await?;
        drop(_w);
        m.challenges
            .with_label_values(&[if scored { "scored" } else { "practice" }])
            .inc();
        let games: Vec<Value> = rows
            .iter()
            .zip([(Side::Black, res1), (Side::Red, res2)])
            .map(|(r, (side, res))| {
                json!({"urlId": r.url_id, "url": format!("/match/{}", r.url_id), "yourColour": colour(side),
                    "result": result_str(res), "winner": r.winner, "reason": r.reason, "turns": r.turns, "seed": r.seed})
            })
            .collect();
        Ok(json!({
            "challengeId": id, "result": result_str(result), "scored": scored,
            "scoredChallengesForPair": (before + scored as i64), "scoredLimit": SCORED_PER_PAIR,
            "rpBefore": me_now.rp, "rpDelta": a_delta, "rp": a_rp, "tier": tier_json(a_rp),
            "opponent": {"botId": them.id, "name": them.name, "rpBefore": them_now.rp, "rpDelta": b_delta, "rp": b_rp, "tier": tier_json(b_rp)},
            "matches": games,
        }))
    }

    /// Games summary of one stored match from `player`'s point of view.
    fn game_json(m: &MatchRow, player: i64, with_moves: bool) -> Value {
        let side = if m.black_id == player { "black" } else { "red" };
        let (opp_id, opp_name) = if side == "black" {
            (m.red_id, &m.red_name)
        } else {
            (m.black_id, &m.black_name)
        };
        let result = match m.winner.as_deref() {
            None => "draw",
            Some(w) if w == side => "win",
            Some(_) => "loss",
        };
        let mut v = json!({"urlId": m.url_id, "challengeId": m.challenge_id, "colour": side,
            "opponent": {"botId": opp_id, "name": opp_name}, "result": result, "winner": m.winner,
            "reason": m.reason, "turns": m.turns, "seed": m.seed, "createdAt": m.created_ms,
            "version": if side == "black" { m.black_version } else { m.red_version }});
        if with_moves {
            if let Ok(rec) = MatchRecord::from_json(&m.record) {
                let moves: Vec<String> = rec
                    .plies
                    .iter()
                    .map(|p| match &p.mv {
                        Some(mv) => format!(
                            "{}{},{}>{},{}{}",
                            &p.side.as_str()[..1],
                            mv.from[0],
                            mv.from[1],
                            mv.to[0],
                            mv.to[1],
                            if p.captured.is_empty() { "" } else { "x" }
                        ),
                        None => format!("{}pass", &p.side.as_str()[..1]),
                    })
                    .collect();
                v["moves"] = json!(moves);
            }
        }
        v
    }

    pub async fn my_matches(&self, me: &PlayerRow, limit: i64) -> Result<Value, ApiError> {
        let mut out = Vec::new();
        for c in self.db.challenges_of(me.id, limit).await? {
            let mine = c.challenger_id == me.id;
            let opp = if mine {
                c.challenged_id
            } else {
                c.challenger_id
            };
            let opp_name = self.db.player_by_id(opp).await?.map(|p| p.name);
            let result = match (mine, c.result.as_str()) {
                (true, r) => r.to_string(),
                (false, "win") => "loss".into(),
                (false, "loss") => "win".into(),
                (false, r) => r.to_string(),
            };
            let games: Vec<Value> = self
                .db
                .matches_of_challenge(c.id)
                .await?
                .iter()
                .map(|m| Self::game_json(m, me.id, false))
                .collect();
            out.push(
                json!({"challengeId": c.id, "role": if mine {"challenger"} else {"challenged"},
                "opponent": {"botId": opp, "name": opp_name}, "result": result, "scored": c.scored,
                "rpDelta": if mine { c.challenger_delta } else { c.challenged_delta },
                "rpAfter": if mine { c.challenger_rp } else { c.challenged_rp },
                "createdAt": c.created_ms, "games": games}),
            );
        }
        Ok(json!({"botId": me.id, "challenges": out}))
    }

    pub async fn scout(&self, target: i64, limit: i64) -> Result<Value, ApiError> {
        let p = self.player(target).await?;
        let games: Vec<Value> = self
            .db
            .matches_of(p.id, limit)
            .await?
            .iter()
            .map(|m| Self::game_json(m, p.id, true))
            .collect();
        Ok(
            json!({"bot": {"botId": p.id, "name": p.name, "rp": p.rp, "tier": tier_json(p.rp),
            "currentVersion": p.current_version}, "matches": games}),
        )
    }

    pub async fn leaderboard(&self) -> Result<Value, ApiError> {
        let players = self.db.players().await?;
        let list: Vec<Value> = players
            .iter()
            .enumerate()
            .map(|(i, p)| {
                json!({"rank": i + 1, "botId": p.id, "name": p.name, "rp": p.rp, "tier": tier_json(p.rp),
                    "wins": p.wins, "draws": p.draws, "losses": p.losses, "version": p.current_version})
            })
            .collect();
        Ok(json!({"players": list}))
    }

    pub async fn match_detail(&self, url_id: &str) -> Result<Value, ApiError> {
        let m =
            self.db.match_by_url(url_id).await?.ok_or_else(|| {
                ApiError::not_found("unknown_match", format!("no match {url_id:?}"))
            })?;
        let rec: Value = serde_json::from_str(&m.record)
            .map_err(|e| ApiError::internal(anyhow::anyhow!("stored record {url_id}: {e}")))?;
        Ok(json!({
            "urlId": m.url_id, "challengeId": m.challenge_id, "createdAt": m.created_ms, "seed": m.seed,
            "black": {"botId": m.black_id, "name": m.black_name, "version": m.black_version, "codeSha256": m.black_sha},
            "red": {"botId": m.red_id, "name": m.red_name, "version": m.red_version, "codeSha256": m.red_sha},
            "winner": m.winner, "reason": m.reason, "turns": m.turns,
            "outcome": rec["outcome"], "plies": rec["plies"], "version": rec["version"],
            "initialBoard": games::qianwang::Board::initial(),
        }))
    }

    /// Sends a verification token to `email` (or the stored address).
    pub async fn request_email(
        &self,
        me: &PlayerRow,
        email: Option<String>,
    ) -> Result<Value, ApiError> {
        let email = email.unwrap_or_else(|| me.email.clone());
        let ok = email.len() <= 254
            && email
                .split_once('@')
                .is_some_and(|(a, b)| !a.is_empty() && b.contains('.'))
            && !email.contains(char::is_whitespace);
        if !ok {
            return Err(ApiError::bad_request(
                "invalid_email",
                format!("{email:?} is not an email address"),
            ));
        }
        let token = random_hex(16);
        self.db
            .add_email_token(&key_hash(&token), me.id, &email, now_ms() + EMAIL_TOKEN_MS)
            .await?;
        let mail = Mail {
            to: email.clone(),
            subject: "钳王争霸: verify your email".into(),
            body: format!(
                "Bot {} (botId {}): your verification token is\n\n{token}\n\nConfirm with POST /api/email/verify {{\"token\": \"{token}\"}} within 24 hours.",
                me.name, me.id
            ),
        };
        let mailer = self.mailer.clone();
        tokio::task::spawn_blocking(move || mailer.send(&mail))
            .await
            .map_err(|e| ApiError::internal(anyhow::anyhow!("mail task: {e}")))??;
        Ok(json!({"sent": true, "email": email}))
    }

    pub async fn confirm_email(&self, token: &str) -> Result<Value, ApiError> {
        match self.db.use_email_token(&key_hash(token)).await? {
            Some(id) => Ok(json!({"verified": true, "botId": id})),
            None => Err(ApiError::bad_request(
                "invalid_token",
                "this token is unknown, already used or expired; request a new one",
            )),
        }
    }
}
