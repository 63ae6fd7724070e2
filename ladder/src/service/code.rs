//! Publishing code: the smoke test against the training bots (fixed seeds, every colour), then
//! publish; revert (the old code again as a new version); the version history.

use axum::http::StatusCode;
use games::qianwang::ladder::PlayerResult;
use games::qianwang::Side;
use serde_json::{json, Value};

use super::{colour, is_fault, reason_str, result_str, Ladder, SMOKE_SEED_BASE};
use crate::code::check_code;
use crate::db::PlayerRow;
use crate::error::{ApiError, Internal};
use crate::farm::Contender;
use crate::metrics;

impl Ladder {
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
        let loaded = tokio::task::spawn_blocking(move || check_code(&owned))
            .await
            .map_err(|source| {
                ApiError::internal(Internal::Task {
                    what: "code check",
                    source,
                })
            })?;
        if let Err(why) = loaded {
            m.submissions.with_label_values(&["rejected"]).inc();
            return Err(ApiError::bad_request("invalid_code", why.to_string()));
        }
        let sha = self.code.put(code)?;
        let mut games = Vec::new();
        for (i, t) in self.training.iter().enumerate() {
            for (c, side) in [Side::Black, Side::Red].into_iter().enumerate() {
                let seed = SMOKE_SEED_BASE + (2 * i + c) as u64;
                let me = Contender {
                    name: p.name.clone(),
                    sha256: sha.clone(),
                };
                let them = Contender {
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
            let rec = handle.await.map_err(|source| {
                ApiError::internal(Internal::Task {
                    what: "smoke game",
                    source,
                })
            })??;
            m.matches.with_label_values(&["smoke"]).inc();
            let o = &rec.outcome;
            let result = PlayerResult::of(o, side);
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
        let code = self
            .db
            .code(&v.code_sha256)
            .await?
            .ok_or_else(|| ApiError::internal(Internal::MissingCode(v.code_sha256.clone())))?;
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
}
