//! The ladder's HTTP surface (axum): the guide's API table with Bearer bot keys, email
//! verification, the public leaderboard/replay JSON and pages, and `/metrics`. Keys, rate limits
//! and bodies come through the extractors of [`crate::extract`] (bodies as the serde types
//! below), so every bad request gets a JSON `{error, detail}` saying what is wrong.
//!
//! ```text
//! GET  /api/agent/bot/info                   Bearer  botId, name, email(Verified), rp, tier, rank, elo, W/D/L, version, hash
//! POST /api/agent/bot/code/submit            Bearer  {code, notes, submittedBy} -> 200 {version, codeSha256, smokeTest}
//!                                                    400 invalid_code (load check) | 413 code_too_large | 422 smoke_test_failed {failures}
//! POST /api/agent/bot/code/revert            Bearer  {toVersion, notes, submittedBy} -> {version, revertedFrom, codeSha256}
//! GET  /api/agent/bot/code/versions          Bearer  {currentVersion, versions: [...]}
//! POST /api/agent/challenge                  Bearer  {challengedBotId} -> {result, scored, rpDelta, rp, eloDelta, elo, opponent, matches}
//!                                                    403 email_not_verified | 400 self_challenge | 404 unknown_bot | 409 no_code
//! GET  /api/agent/bot/matches?limit=N        Bearer  my challenges (newest first) with both games
//! GET  /api/agent/opponents/{botId}/matches  Bearer  that bot's recent games with compact moves
//! POST /api/agent/email/request              Bearer  {email?} -> a token mailed (outbox)
//! POST /api/email/verify                     public  {token} -> {verified, botId}
//! GET  /api/leaderboard                      public  {players: [{rank, botId, name, rp, tier, elo, ...}]}
//! GET  /api/match/{urlId}                    public  players, seed, outcome, every ply, initialBoard
//! GET  /  and  /match/{urlId}                public  leaderboard and replay pages;  GET /metrics
//! ```
//! 401 missing_key/invalid_key; 429 rate_limited with Retry-After (challenge, submit+revert per
//! key; email requests per key; token confirmations and bad keys per IP). Text fields holding a
//! NUL are 400 bad_field. Whatever axum answers itself (405 method_not_allowed, a path that does
//! not decode, ...) is made `{error, detail}` JSON too ([`crate::error::json_errors`]).

use std::sync::Arc;

use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::Value;

use crate::error::{ApiError, Internal};
use crate::extract::{
    required, short, text, Bot, Challenges, EmailRequests, Int, JsonBody, OptionalJsonBody, PerIp,
    Submissions, WithBody,
};
use crate::pages;
use crate::service::Ladder;

type S = State<Arc<Ladder>>;
type Answer = Result<Json<Value>, ApiError>;

/// Longest `notes` and `submittedBy` in bytes.
const MAX_NOTES: usize = 4096;
const MAX_SUBMITTED_BY: usize = 256;

/// Every route of the ladder.
pub fn router(ladder: Arc<Ladder>) -> Router {
    // Bodies up to 4× the code limit are read (so oversized code gets a precise 413 below).
    let body_limit = ladder.max_code_bytes * 4 + 64 * 1024;
    let routes = Router::new()
        .route("/", get(|| async { Html(pages::LEADERBOARD) }))
        .route("/match/{url_id}", get(|| async { Html(pages::REPLAY) }))
        .route("/metrics", get(metrics))
        .route("/api/agent/bot/info", get(info))
        .route("/api/agent/bot/code/submit", post(submit))
        .route("/api/agent/bot/code/revert", post(revert))
        .route("/api/agent/bot/code/versions", get(versions))
        .route("/api/agent/challenge", post(challenge))
        .route("/api/agent/bot/matches", get(my_matches))
        .route("/api/agent/opponents/{bot_id}/matches", get(scout))
        .route("/api/agent/email/request", post(email_request))
        .route("/api/email/verify", post(email_verify))
        .route("/api/leaderboard", get(leaderboard))
        .route("/api/match/{url_id}", get(match_detail))
        .fallback(|| async {
            ApiError::not_found(
                "not_found",
                "no such endpoint (see the API table in the guide)",
            )
        })
        .layer(DefaultBodyLimit::max(body_limit))
        .with_state(ladder);
    // Around the whole router, not each route: axum adds a 405's Allow header only on the way
    // out of the router, and the JSON detail names the allowed methods from it.
    Router::new()
        .fallback_service(routes)
        .layer(axum::middleware::from_fn(crate::error::json_errors))
}

async fn metrics() -> Response {
    use prometheus::Encoder;
    let mut buf = Vec::new();
    let enc = prometheus::TextEncoder::new();
    if let Err(e) = enc.encode(&prometheus::gather(), &mut buf) {
        return ApiError::internal(Internal::Metrics(e)).into_response();
    }
    ([(header::CONTENT_TYPE, enc.format_type().to_string())], buf).into_response()
}

/// `POST /api/agent/bot/code/submit`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SubmitBody {
    code: Option<String>,
    notes: Option<String>,
    submitted_by: Option<String>,
}

/// `POST /api/agent/bot/code/revert`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RevertBody {
    to_version: Option<Int>,
    notes: Option<String>,
    submitted_by: Option<String>,
}

/// `POST /api/agent/challenge`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ChallengeBody {
    challenged_bot_id: Option<Int>,
}

/// `POST /api/agent/email/request` (the body itself is optional).
#[derive(Deserialize)]
struct EmailBody {
    email: Option<String>,
}

/// `POST /api/email/verify`.
#[derive(Deserialize)]
struct TokenBody {
    token: Option<String>,
}

async fn info(State(l): S, Bot(me, ..): Bot) -> Answer {
    Ok(Json(l.info(&me).await?))
}

async fn submit(
    State(l): S,
    WithBody(Bot(me, ..), JsonBody(b)): WithBody<Bot<Submissions>, JsonBody<SubmitBody>>,
) -> Answer {
    let code = required(b.code, "code")?;
    if code.len() > l.max_code_bytes {
        crate::metrics::global()
            .submissions
            .with_label_values(&["rejected"])
            .inc();
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "code_too_large",
            format!(
                "code is {} bytes; the limit is {} bytes",
                code.len(),
                l.max_code_bytes
            ),
        ));
    }
    if code.trim().is_empty() {
        return Err(ApiError::bad_request("invalid_code", "code is empty"));
    }
    text(&code, "code")?;
    let notes = short(b.notes, "notes", MAX_NOTES)?;
    let by = short(b.submitted_by, "submittedBy", MAX_SUBMITTED_BY)?;
    Ok(Json(l.submit(&me, &code, &notes, &by).await?))
}

async fn revert(
    State(l): S,
    WithBody(Bot(me, ..), JsonBody(b)): WithBody<Bot<Submissions>, JsonBody<RevertBody>>,
) -> Answer {
    let Int(to) = required(b.to_version, "toVersion")?;
    let notes = short(b.notes, "notes", MAX_NOTES)?;
    let by = short(b.submitted_by, "submittedBy", MAX_SUBMITTED_BY)?;
    Ok(Json(l.revert(&me, to, &notes, &by).await?))
}

async fn versions(State(l): S, Bot(me, ..): Bot) -> Answer {
    Ok(Json(l.versions(&me).await?))
}

async fn challenge(
    State(l): S,
    WithBody(Bot(me, ..), JsonBody(b)): WithBody<Bot<Challenges>, JsonBody<ChallengeBody>>,
) -> Answer {
    let Int(target) = required(b.challenged_bot_id, "challengedBotId")?;
    Ok(Json(l.challenge(&me, target).await?))
}

#[derive(Deserialize)]
struct Limit {
    limit: Option<String>,
}

fn limit(q: Result<Query<Limit>, QueryRejection>, default: i64) -> Result<i64, ApiError> {
    let Query(q) = q?;
    match &q.limit {
        None => Ok(default),
        Some(s) => match s.parse::<i64>() {
            Ok(n) if (1..=200).contains(&n) => Ok(n),
            _ => Err(ApiError::bad_request(
                "bad_query",
                format!("limit={s:?}: expected an integer from 1 to 200"),
            )),
        },
    }
}

async fn my_matches(
    State(l): S,
    Bot(me, ..): Bot,
    q: Result<Query<Limit>, QueryRejection>,
) -> Answer {
    Ok(Json(l.my_matches(&me, limit(q, 20)?).await?))
}

async fn scout(
    State(l): S,
    _: Bot,
    bot: Result<Path<String>, PathRejection>,
    q: Result<Query<Limit>, QueryRejection>,
) -> Answer {
    let Path(bot) = bot?;
    let id: i64 = bot
        .parse()
        .map_err(|_| ApiError::not_found("unknown_bot", format!("no bot with botId {bot:?}")))?;
    Ok(Json(l.scout(id, limit(q, 20)?).await?))
}

async fn email_request(
    State(l): S,
    WithBody(Bot(me, ..), OptionalJsonBody(b)): WithBody<
        Bot<EmailRequests>,
        OptionalJsonBody<EmailBody>,
    >,
) -> Answer {
    // No body, {} or an empty address: the stored address.
    let email = b.and_then(|b| b.email).filter(|s| !s.is_empty());
    if let Some(e) = &email {
        text(e, "email")?;
    }
    Ok(Json(l.request_email(&me, email).await?))
}

async fn email_verify(
    State(l): S,
    WithBody(PerIp, JsonBody(b)): WithBody<PerIp, JsonBody<TokenBody>>,
) -> Answer {
    let token = required(b.token, "token")?;
    text(&token, "token")?;
    Ok(Json(l.confirm_email(token.trim()).await?))
}

async fn leaderboard(State(l): S) -> Answer {
    Ok(Json(l.leaderboard().await?))
}

async fn match_detail(State(l): S, url_id: Result<Path<String>, PathRejection>) -> Answer {
    let Path(url_id) = url_id?;
    Ok(Json(l.match_detail(&url_id).await?))
}
