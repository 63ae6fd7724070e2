//! The ladder API's error answer: an HTTP status and `{error, detail}` JSON (plus any extra
//! fields, e.g. a smoke test's failures), with Retry-After on 429. Server-side problems are
//! [`Internal`] errors (answered 500 `internal`), a game the farm could not play a
//! [`FarmError`] (503 `farm_unavailable`). Their whole chain of causes (paths, database and
//! worker messages) goes to the server's log under an incident id; the answer says only what
//! failed and that id, so no internal path or host detail reaches a client.

use axum::extract::Request;
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::{json, Map, Value};

use crate::code::CodeError;
use crate::db::DbError;
use crate::farm::FarmError;
use crate::mail::MailError;

/// A server-side problem behind a request (never the client's fault).
#[derive(Debug, thiserror::Error)]
pub enum Internal {
    #[error(transparent)]
    Db(#[from] DbError),
    #[error(transparent)]
    Code(#[from] CodeError),
    #[error(transparent)]
    Mail(#[from] MailError),
    /// A task of the request (a game, the load check, sending mail) panicked or was cancelled.
    #[error("{what} task")]
    Task {
        what: &'static str,
        source: tokio::task::JoinError,
    },
    #[error("bot {bot} has no row for its version {version}")]
    MissingVersion { bot: i64, version: i64 },
    #[error("code {0} is missing from the database")]
    MissingCode(String),
    #[error("stored record {url_id}")]
    Record {
        url_id: String,
        source: serde_json::Error,
    },
    #[error("encoding metrics")]
    Metrics(#[source] prometheus::Error),
    #[error("the server has no client addresses")]
    NoClientAddress,
}

/// An error and its causes, outermost first: `what: why: why`.
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub error: &'static str,
    pub detail: String,
    /// More fields of the answer (boxed: errors travel in every `Result`).
    pub extra: Option<Box<Map<String, Value>>>,
    pub retry_after: Option<u64>,
}

impl ApiError {
    pub fn new(status: StatusCode, error: &'static str, detail: impl Into<String>) -> ApiError {
        ApiError {
            status,
            error,
            detail: detail.into(),
            extra: None,
            retry_after: None,
        }
    }

    pub fn bad_request(error: &'static str, detail: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, error, detail)
    }

    pub fn not_found(error: &'static str, detail: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, error, detail)
    }

    pub fn too_many(limit: &'static str, retry_after: u64) -> ApiError {
        crate::metrics::global()
            .rate_limited
            .with_label_values(&[limit])
            .inc();
        let mut e = ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limited",
            format!("too many {limit} requests; retry after {retry_after} s"),
        );
        e.retry_after = Some(retry_after);
        e
    }

    /// A server-side problem: logged in full under an incident id, answered 500 with what
    /// failed and that id (never a cause: causes name paths and hosts).
    pub fn internal(e: impl Into<Internal>) -> ApiError {
        let e = e.into();
        let incident = incident();
        tracing::error!(incident, "ladder request failed: {}", chain(&e));
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            format!(
                "{} (incident {incident}; the cause is in the server's log)",
                e.summary()
            ),
        )
    }

    pub fn with(mut self, key: &str, value: Value) -> ApiError {
        self.extra
            .get_or_insert_with(Default::default)
            .insert(key.to_string(), value);
        self
    }
}

impl From<Internal> for ApiError {
    fn from(e: Internal) -> ApiError {
        ApiError::internal(e)
    }
}

impl From<DbError> for ApiError {
    fn from(e: DbError) -> ApiError {
        ApiError::internal(e)
    }
}

impl From<CodeError> for ApiError {
    fn from(e: CodeError) -> ApiError {
        ApiError::internal(e)
    }
}

impl From<MailError> for ApiError {
    fn from(e: MailError) -> ApiError {
        ApiError::internal(e)
    }
}

/// A game without a result (the farm's problem, never the bot's): 503 `farm_unavailable`,
/// logged in full like [`ApiError::internal`].
impl From<FarmError> for ApiError {
    fn from(e: FarmError) -> ApiError {
        let incident = incident();
        tracing::warn!(incident, "ladder game not played: {}", chain(&e));
        let what = match &e {
            FarmError::DispatcherStopped
            | FarmError::Dropped
            | FarmError::Timeout(_)
            | FarmError::WorkersStopped => e.to_string(),
            FarmError::Upload(_) => "uploading code for a ladder job failed".to_string(),
            FarmError::Publish(_) => "publishing a ladder job failed".to_string(),
            FarmError::Refused(_) => {
                "the farm could not play the game (a worker failed the job or sent a record \
                 that does not verify)"
                    .to_string()
            }
        };
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "farm_unavailable",
            format!("{what} (incident {incident}; the cause is in the server's log)"),
        )
    }
}

/// A short random id tying an answer to its log line.
fn incident() -> String {
    format!("{:08x}", rand::random::<u32>())
}

impl Internal {
    /// What failed, without its causes (which name paths, URLs and hosts).
    pub fn summary(&self) -> String {
        match self {
            Internal::Db(_) => "the ladder database failed".into(),
            Internal::Code(_) => "storing the bot's code failed".into(),
            Internal::Mail(_) => "sending the mail failed".into(),
            Internal::Task { what, .. } => format!("the {what} task failed"),
            Internal::Record { url_id, .. } => format!("stored record {url_id} does not parse"),
            Internal::Metrics(_) => "encoding metrics failed".into(),
            Internal::MissingVersion { .. }
            | Internal::MissingCode(_)
            | Internal::NoClientAddress => self.to_string(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut body = Map::new();
        body.insert("error".into(), json!(self.error));
        body.insert("detail".into(), json!(self.detail));
        if let Some(extra) = self.extra {
            body.extend(*extra);
        }
        let mut resp = (self.status, axum::Json(Value::Object(body))).into_response();
        if let Some(s) = self.retry_after {
            if let Ok(v) = HeaderValue::from_str(&s.to_string()) {
                resp.headers_mut().insert(header::RETRY_AFTER, v);
            }
        }
        resp
    }
}

/// The longest part of an axum error text or a request path put in a detail.
const MAX_ECHO: usize = 300;

/// Middleware giving every error answer the API's JSON `{error, detail}` shape, including
/// those axum makes itself: 405 for a wrong method (empty otherwise; the detail names the
/// allowed ones, as the Allow header does), a path segment or header that does not decode, a
/// body an extractor could not take. Answers that are already JSON pass unchanged; headers
/// (Allow, Retry-After) are kept.
pub async fn json_errors(req: Request, next: Next) -> Response {
    let method = req.method().clone();
    let path = clip(req.uri().path());
    let resp = next.run(req).await;
    let status = resp.status();
    let json = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if json || !(status.is_client_error() || status.is_server_error()) {
        return resp;
    }
    let (parts, body) = resp.into_parts();
    let said = axum::body::to_bytes(body, 64 * 1024)
        .await
        .map(|b| clip(String::from_utf8_lossy(&b).trim()))
        .unwrap_or_default();
    let reason = status.canonical_reason().unwrap_or("error");
    let detail = if status == StatusCode::METHOD_NOT_ALLOWED {
        let allow = parts
            .headers
            .get(header::ALLOW)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("another method");
        format!("{method} is not allowed on {path}; it takes {allow}")
    } else if said.is_empty() {
        format!("{reason} ({path})")
    } else {
        said
    };
    let mut out = ApiError::new(status, error_code(status), detail).into_response();
    for (name, value) in &parts.headers {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            out.headers_mut().insert(name.clone(), value.clone());
        }
    }
    out
}

/// At most [`MAX_ECHO`] bytes of `s` (cut at a character boundary), marked when cut.
fn clip(s: &str) -> String {
    if s.len() <= MAX_ECHO {
        return s.to_string();
    }
    let mut end = MAX_ECHO;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}

/// The `error` of an answer axum made (the ladder's own answers name theirs).
fn error_code(status: StatusCode) -> &'static str {
    match status {
        StatusCode::NOT_FOUND => "not_found",
        StatusCode::METHOD_NOT_ALLOWED => "method_not_allowed",
        StatusCode::PAYLOAD_TOO_LARGE => "bad_body",
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "unsupported_media_type",
        StatusCode::REQUEST_TIMEOUT => "timeout",
        s if s.is_server_error() => "internal",
        _ => "bad_request",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No cause (a path, a worker's message) reaches the answer; the incident id does.
    #[test]
    fn details_name_what_failed_but_no_cause() {
        let io = std::io::Error::other("disk full");
        let e = ApiError::internal(CodeError::Write {
            path: "/data/code/x.js".into(),
            source: io,
        });
        assert_eq!(
            (e.status, e.error),
            (StatusCode::INTERNAL_SERVER_ERROR, "internal")
        );
        assert!(
            e.detail
                .starts_with("storing the bot's code failed (incident "),
            "{}",
            e.detail
        );
        assert!(
            !e.detail.contains("/data") && !e.detail.contains("disk full"),
            "{}",
            e.detail
        );
        let e = ApiError::from(FarmError::Upload("reading /srv/x.js: gone".into()));
        assert_eq!(
            (e.status, e.error),
            (StatusCode::SERVICE_UNAVAILABLE, "farm_unavailable")
        );
        assert!(
            e.detail
                .starts_with("uploading code for a ladder job failed (incident "),
            "{}",
            e.detail
        );
        assert!(!e.detail.contains("/srv"), "{}", e.detail);
        let e = ApiError::from(FarmError::Timeout(300));
        assert!(
            e.detail
                .starts_with("no result from the farm within 300 s (incident "),
            "{}",
            e.detail
        );
    }
}
