//! The ladder's HTTP surface (axum): the guide's API table with Bearer bot keys, email
//! verification, the public leaderboard/replay JSON and pages, and `/metrics`. Bodies are read
//! raw and parsed here so every bad request gets a JSON `{error, detail}` saying what is wrong.
//!
//! ```text
//! GET  /api/agent/bot/info                   Bearer  botId, name, email(Verified), rp, tier, rank, W/D/L, version, hash
//! POST /api/agent/bot/code/submit            Bearer  {code, notes, submittedBy} -> 200 {version, codeSha256, smokeTest}
//!                                                    400 invalid_code (load check) | 413 code_too_large | 422 smoke_test_failed {failures}
//! POST /api/agent/bot/code/revert            Bearer  {toVersion, notes, submittedBy} -> {version, revertedFrom, codeSha256}
//! GET  /api/agent/bot/code/versions          Bearer  {currentVersion, versions: [...]}
//! POST /api/agent/challenge                  Bearer  {challengedBotId} -> {result, scored, rpDelta, rp, opponent, matches}
//!                                                    403 email_not_verified | 400 self_challenge | 404 unknown_bot | 409 no_code
//! GET  /api/agent/bot/matches?limit=N        Bearer  my challenges (newest first) with both games
//! GET  /api/agent/opponents/{botId}/matches  Bearer  that bot's recent games with compact moves
//! POST /api/agent/email/request              Bearer  {email?} -> a token mailed (outbox)
//! POST /api/email/verify                     public  {token} -> {verified, botId}
//! GET  /api/leaderboard                      public  {players: [{rank, botId, name, rp, tier, ...}]}
//! GET  /api/match/{urlId}                    public  players, seed, outcome, every ply, initialBoard
//! GET  /  and  /match/{urlId}                public  leaderboard and replay pages;  GET /metrics
//! ```
//! 401 missing_key/invalid_key; 429 rate_limited with Retry-After (challenge, submit+revert per
//! key; email requests per key; token confirmations and bad keys per IP).

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{ConnectInfo, DefaultBodyLimit, Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::db::PlayerRow;
use super::error::ApiError;
use super::pages;
use super::service::Ladder;

type S = State<Arc<Ladder>>;
type Ip = ConnectInfo<SocketAddr>;
type Answer = Result<Json<Value>, ApiError>;

/// Every route of the ladder.
pub fn router(ladder: Arc<Ladder>) -> Router {
    // Bodies up to 4× the code limit are read (so oversized code gets a precise 413 below).
    let body_limit = ladder.max_code_bytes * 4 + 64 * 1024;
    Router::new()
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
        .with_state(ladder)
}

async fn metrics() -> Response {
    use prometheus::Encoder;
    let mut buf = Vec::new();
    let enc = prometheus::TextEncoder::new();
    if let Err(e) = enc.encode(&prometheus::gather(), &mut buf) {
        return ApiError::internal(anyhow::anyhow!("encoding metrics: {e}")).into_response();
    }
    ([(header::CONTENT_TYPE, enc.format_type().to_string())], buf).into_response()
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, key) = v.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then_some(key.trim())
}

async fn auth(l: &Ladder, headers: &HeaderMap, ip: &SocketAddr) -> Result<PlayerRow, ApiError> {
    l.authenticate(bearer(headers), &ip.ip().to_string()).await
}

/// The JSON object of a request body, or a 400/413 saying what is wrong with it.
fn object(body: Result<Bytes, BytesRejection>) -> Result<Map<String, Value>, ApiError> {
    let body = body.map_err(|e| {
        ApiError::new(
            e.status(),
            "bad_body",
            format!("could not read the request body: {e}"),
        )
    })?;
    let v: Value = serde_json::from_slice(&body).map_err(|e| {
        ApiError::bad_request(
            "malformed_json",
            format!(
                "the body is not valid JSON (line {}, column {}): {e}",
                e.line(),
                e.column()
            ),
        )
    })?;
    match v {
        Value::Object(m) => Ok(m),
        other => Err(ApiError::bad_request(
            "malformed_json",
            format!("the body must be a JSON object, not {}", kind(&other)),
        )),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn string_field(m: &Map<String, Value>, key: &str, required: bool) -> Result<String, ApiError> {
    match m.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        None | Some(Value::Null) if !required => Ok(String::new()),
        None | Some(Value::Null) => Err(ApiError::bad_request(
            "missing_field",
            format!("the body needs the field {key:?}"),
        )),
        Some(other) => Err(ApiError::bad_request(
            "bad_field",
            format!("field {key:?} must be a string, not {}", kind(other)),
        )),
    }
}

fn int_field(m: &Map<String, Value>, key: &str) -> Result<i64, ApiError> {
    match m.get(key) {
        Some(Value::Number(n)) => n.as_i64().ok_or_else(|| {
            ApiError::bad_request(
                "bad_field",
                format!("field {key:?} must be an integer, not {n}"),
            )
        }),
        Some(Value::String(s)) => s.trim().parse().map_err(|_| {
            ApiError::bad_request(
                "bad_field",
                format!("field {key:?} must be an integer, not {s:?}"),
            )
        }),
        None | Some(Value::Null) => Err(ApiError::bad_request(
            "missing_field",
            format!("the body needs the field {key:?}"),
        )),
        Some(other) => Err(ApiError::bad_request(
            "bad_field",
            format!("field {key:?} must be an integer, not {}", kind(other)),
        )),
    }
}

fn short(s: String, key: &str, max: usize) -> Result<String, ApiError> {
    if s.len() > max {
        return Err(ApiError::bad_request(
            "bad_field",
            format!("field {key:?} is {} bytes; at most {max}", s.len()),
        ));
    }
    Ok(s)
}

async fn info(State(l): S, ConnectInfo(ip): Ip, h: HeaderMap) -> Answer {
    let me = auth(&l, &h, &ip).await?;
    Ok(Json(l.info(&me).await?))
}

async fn submit(
    State(l): S,
    ConnectInfo(ip): Ip,
    h: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    let me = auth(&l, &h, &ip).await?;
    l.submit_limit
        .check(&format!("bot:{}", me.id))
        .map_err(|s| ApiError::too_many("submit", s))?;
    let m = object(body)?;
    let code = string_field(&m, "code", true)?;
    if code.len() > l.max_code_bytes {
        super::metrics::global()
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
    let notes = short(string_field(&m, "notes", false)?, "notes", 4096)?;
    let by = short(string_field(&m, "submittedBy", false)?, "submittedBy", 256)?;
    Ok(Json(l.submit(&me, &code, &notes, &by).await?))
}

async fn revert(
    State(l): S,
    ConnectInfo(ip): Ip,
    h: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    let me = auth(&l, &h, &ip).await?;
    l.submit_limit
        .check(&format!("bot:{}", me.id))
        .map_err(|s| ApiError::too_many("submit", s))?;
    let m = object(body)?;
    let to = int_field(&m, "toVersion")?;
    let notes = short(string_field(&m, "notes", false)?, "notes", 4096)?;
    let by = short(string_field(&m, "submittedBy", false)?, "submittedBy", 256)?;
    Ok(Json(l.revert(&me, to, &notes, &by).await?))
}

async fn versions(State(l): S, ConnectInfo(ip): Ip, h: HeaderMap) -> Answer {
    let me = auth(&l, &h, &ip).await?;
    Ok(Json(l.versions(&me).await?))
}

async fn challenge(
    State(l): S,
    ConnectInfo(ip): Ip,
    h: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    let me = auth(&l, &h, &ip).await?;
    l.challenge_limit
        .check(&format!("bot:{}", me.id))
        .map_err(|s| ApiError::too_many("challenge", s))?;
    let m = object(body)?;
    let target = int_field(&m, "challengedBotId")?;
    Ok(Json(l.challenge(&me, target).await?))
}

#[derive(Deserialize)]
struct Limit {
    limit: Option<String>,
}

fn limit(q: &Limit, default: i64) -> Result<i64, ApiError> {
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
    ConnectInfo(ip): Ip,
    h: HeaderMap,
    Query(q): Query<Limit>,
) -> Answer {
    let me = auth(&l, &h, &ip).await?;
    Ok(Json(l.my_matches(&me, limit(&q, 20)?).await?))
}

async fn scout(
    State(l): S,
    ConnectInfo(ip): Ip,
    h: HeaderMap,
    Path(bot): Path<String>,
    Query(q): Query<Limit>,
) -> Answer {
    auth(&l, &h, &ip).await?;
    let id: i64 = bot
        .parse()
        .map_err(|_| ApiError::not_found("unknown_bot", format!("no bot with botId {bot:?}")))?;
    Ok(Json(l.scout(id, limit(&q, 20)?).await?))
}

async fn email_request(
    State(l): S,
    ConnectInfo(ip): Ip,
    h: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    let me = auth(&l, &h, &ip).await?;
    l.auth_limit
        .check(&format!("bot:{}", me.id))
        .map_err(|s| ApiError::too_many("auth", s))?;
    // The body is optional: {} or nothing uses the stored address.
    let email = match &body {
        Ok(b) if b.iter().all(u8::is_ascii_whitespace) => None,
        _ => {
            let m = object(body)?;
            Some(string_field(&m, "email", false)?).filter(|s| !s.is_empty())
        }
    };
    Ok(Json(l.request_email(&me, email).await?))
}

async fn email_verify(
    State(l): S,
    ConnectInfo(ip): Ip,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    l.auth_limit
        .check(&format!("ip:{}", ip.ip()))
        .map_err(|s| ApiError::too_many("auth", s))?;
    let m = object(body)?;
    let token = string_field(&m, "token", true)?;
    Ok(Json(l.confirm_email(token.trim()).await?))
}

async fn leaderboard(State(l): S) -> Answer {
    Ok(Json(l.leaderboard().await?))
}

async fn match_detail(State(l): S, Path(url_id): Path<String>) -> Answer {
    Ok(Json(l.match_detail(&url_id).await?))
}
