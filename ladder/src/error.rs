//! The ladder API's error answer: an HTTP status and `{error, detail}` JSON (plus any extra
//! fields, e.g. a smoke test's failures), with Retry-After on 429. Server-side problems are
//! [`Internal`] errors (answered 500 `internal`), a game the farm could not play a
//! [`FarmError`] (503 `farm_unavailable`); both detail their whole chain of causes.

use axum::http::{header, HeaderValue, StatusCode};
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

    /// A server-side problem: logged in full, answered 500.
    pub fn internal(e: impl Into<Internal>) -> ApiError {
        let text = chain(&e.into());
        tracing::error!("ladder request failed: {text}");
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", text)
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

/// A game without a result (the farm's problem, never the bot's): 503 `farm_unavailable`.
impl From<FarmError> for ApiError {
    fn from(e: FarmError) -> ApiError {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "farm_unavailable",
            chain(&e),
        )
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn details_carry_every_cause() {
        let io = std::io::Error::other("disk full");
        let e = ApiError::internal(CodeError::Write {
            path: "/data/code/x.js".into(),
            source: io,
        });
        assert_eq!(
            (e.status, e.error, e.detail.as_str()),
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "writing /data/code/x.js: disk full"
            )
        );
        let e = ApiError::from(FarmError::Upload("reading x.js: gone".into()));
        assert_eq!(
            (e.status, e.error, e.detail.as_str()),
            (
                StatusCode::SERVICE_UNAVAILABLE,
                "farm_unavailable",
                "uploading code for a ladder job: reading x.js: gone"
            )
        );
        let e = ApiError::from(FarmError::Timeout(300));
        assert_eq!(e.detail, "no result from the farm within 300 s");
    }
}
