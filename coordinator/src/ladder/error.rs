//! The ladder API's error answer: an HTTP status and `{error, detail}` JSON (plus any extra
//! fields, e.g. a smoke test's failures), with Retry-After on 429.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Map, Value};

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
        super::metrics::global()
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
    pub fn internal(e: anyhow::Error) -> ApiError {
        tracing::error!("ladder request failed: {e:#}");
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            format!("{e:#}"),
        )
    }

    pub fn with(mut self, key: &str, value: Value) -> ApiError {
        self.extra
            .get_or_insert_with(Default::default)
            .insert(key.to_string(), value);
        self
    }
}

impl From<anyhow::Error> for ApiError {
    fn from(e: anyhow::Error) -> ApiError {
        ApiError::internal(e)
    }
}

/// A game without a result (the farm's problem, never the bot's): 503 `farm_unavailable`.
impl From<super::farm::FarmError> for ApiError {
    fn from(e: super::farm::FarmError) -> ApiError {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "farm_unavailable",
            e.to_string(),
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
