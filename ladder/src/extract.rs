//! The ladder API's axum extractors, all rejecting with the one [`ApiError`] type (a status and
//! `{error, detail}` JSON saying what is wrong and where):
//!
//! - [`Bot`]: the bot of the `Authorization: Bearer <key>` header (401 `missing_key` /
//!   `invalid_key`; 429 when an IP keeps sending bad keys), optionally rate-limited per bot by its
//!   [`PerBot`] parameter (429 `rate_limited` with Retry-After).
//! - [`PerIp`]: the per-IP limit of the public token confirmation.
//! - [`WithBody<X, B>`]: a header extractor `X` and the body `B`, one of
//!   [`JsonBody<T>`] / [`OptionalJsonBody<T>`]: the request body as a serde type `T`. Like
//!   axum's `Json<T>`, but with the ladder's errors and without demanding
//!   `Content-Type: application/json` (`curl -d` sends form encoding, and the ladder has always
//!   taken any content type): 400 `malformed_json` (not JSON, with line and column, or not an
//!   object), 400 `bad_field` (a field of the wrong type, named with what was expected), 413/400
//!   `bad_body` (unreadable or over the body limit). Required fields are `Option`s checked with
//!   [`required`] (400 `missing_field`), so a missing and a `null` field read the same.
//!
//! A handler `(State, WithBody<Bot<Submissions>, JsonBody<T>>)` answers 401 first, then 429,
//! then any body error, having read the body in every case.

use std::marker::PhantomData;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{ConnectInfo, FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, StatusCode};
use serde::de::{self, DeserializeOwned, Deserializer, Unexpected, Visitor};
use serde_json::Value;

use crate::db::PlayerRow;
use crate::error::{ApiError, Internal};
use crate::service::Ladder;

type St = Arc<Ladder>;

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, key) = v.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then_some(key.trim())
}

/// The client's IP as text (the server is made with connect info).
fn client_ip(parts: &Parts) -> Result<String, ApiError> {
    parts
        .extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(a)| a.ip().to_string())
        .ok_or_else(|| ApiError::internal(Internal::NoClientAddress))
}

/// A per-bot rate limit a [`Bot`] extractor applies after authenticating.
pub trait PerBot {
    fn check(l: &Ladder, bot: &PlayerRow) -> Result<(), ApiError>;
}

/// No limit beyond authentication.
pub struct Unlimited;
/// `--rate-challenge`.
pub struct Challenges;
/// `--rate-submit` (submissions and reverts together).
pub struct Submissions;
/// `--rate-auth` per bot (email requests).
pub struct EmailRequests;

impl PerBot for Unlimited {
    fn check(_: &Ladder, _: &PlayerRow) -> Result<(), ApiError> {
        Ok(())
    }
}

impl PerBot for Challenges {
    fn check(l: &Ladder, bot: &PlayerRow) -> Result<(), ApiError> {
        l.challenge_limit
            .check(&format!("bot:{}", bot.id))
            .map_err(|s| ApiError::too_many("challenge", s))
    }
}

impl PerBot for Submissions {
    fn check(l: &Ladder, bot: &PlayerRow) -> Result<(), ApiError> {
        l.submit_limit
            .check(&format!("bot:{}", bot.id))
            .map_err(|s| ApiError::too_many("submit", s))
    }
}

impl PerBot for EmailRequests {
    fn check(l: &Ladder, bot: &PlayerRow) -> Result<(), ApiError> {
        l.auth_limit
            .check(&format!("bot:{}", bot.id))
            .map_err(|s| ApiError::too_many("auth", s))
    }
}

/// The authenticated bot, within its `L` rate limit.
pub struct Bot<L: PerBot = Unlimited>(pub PlayerRow, pub PhantomData<L>);

impl<L: PerBot> FromRequestParts<St> for Bot<L> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, l: &St) -> Result<Self, ApiError> {
        let ip = client_ip(parts)?;
        let me = l.authenticate(bearer(&parts.headers), &ip).await?;
        L::check(l, &me)?;
        Ok(Bot(me, PhantomData))
    }
}

/// The `--rate-auth` limit per client IP (public token confirmations).
pub struct PerIp;

impl FromRequestParts<St> for PerIp {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, l: &St) -> Result<Self, ApiError> {
        let ip = client_ip(parts)?;
        l.auth_limit
            .check(&format!("ip:{ip}"))
            .map_err(|s| ApiError::too_many("auth", s))?;
        Ok(PerIp)
    }
}

/// The body as `T` (a JSON object).
pub struct JsonBody<T>(pub T);

/// The body as `T`, or `None` when it is empty (or only whitespace).
pub struct OptionalJsonBody<T>(pub Option<T>);

/// A body kind: how read bytes become the extractor.
pub trait FromBytes: Sized {
    fn from_bytes(body: &[u8]) -> Result<Self, ApiError>;
}

impl<T: DeserializeOwned> FromBytes for JsonBody<T> {
    fn from_bytes(body: &[u8]) -> Result<Self, ApiError> {
        Ok(JsonBody(parse(body)?))
    }
}

impl<T: DeserializeOwned> FromBytes for OptionalJsonBody<T> {
    fn from_bytes(body: &[u8]) -> Result<Self, ApiError> {
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(OptionalJsonBody(None));
        }
        Ok(OptionalJsonBody(Some(parse(body)?)))
    }
}

/// `X` (a header extractor: [`Bot`] or [`PerIp`]) and the body as `B`, answered in that order
/// (401/429 before any body error). The body is read (within the body limit) before `X` runs
/// even when `X` refuses: answering without reading it would make the server drop the
/// connection, and a client's next request on it would fail.
pub struct WithBody<X, B>(pub X, pub B);

impl<X, B> FromRequest<St> for WithBody<X, B>
where
    X: FromRequestParts<St, Rejection = ApiError> + Send,
    B: FromBytes + Send,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &St) -> Result<Self, ApiError> {
        let (mut parts, body) = req.into_parts();
        let mut reading = Request::new(body);
        *reading.headers_mut() = parts.headers.clone();
        *reading.extensions_mut() = parts.extensions.clone();
        let bytes = Bytes::from_request(reading, state).await;
        let x = X::from_request_parts(&mut parts, state).await?;
        let bytes = bytes.map_err(|e| {
            ApiError::new(
                e.status(),
                "bad_body",
                format!("could not read the request body: {e}"),
            )
        })?;
        Ok(WithBody(x, B::from_bytes(&bytes)?))
    }
}

/// Parses a body: JSON first (syntax errors with their place), an object second, then `T`
/// with the path of a field that does not fit.
pub fn parse<T: DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    let v: Value = serde_json::from_slice(body).map_err(|e| {
        ApiError::bad_request(
            "malformed_json",
            format!(
                "the body is not valid JSON (line {}, column {}): {e}",
                e.line(),
                e.column()
            ),
        )
    })?;
    if !v.is_object() {
        return Err(ApiError::bad_request(
            "malformed_json",
            format!("the body must be a JSON object, not {}", kind(&v)),
        ));
    }
    serde_path_to_error::deserialize(v).map_err(|e| {
        ApiError::bad_request(
            "bad_field",
            format!("field {:?}: {}", e.path().to_string(), e.inner()),
        )
    })
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

/// A required field: 400 `missing_field` naming it when it is missing or null.
pub fn required<T>(v: Option<T>, name: &str) -> Result<T, ApiError> {
    v.ok_or_else(|| {
        ApiError::bad_request(
            "missing_field",
            format!("the body needs the field {name:?}"),
        )
    })
}

/// A string field of at most `max` bytes (400 `bad_field` otherwise) holding no NUL (see
/// [`text`]); missing or null is "".
pub fn short(v: Option<String>, name: &str, max: usize) -> Result<String, ApiError> {
    let s = v.unwrap_or_default();
    if s.len() > max {
        return Err(ApiError::bad_request(
            "bad_field",
            format!("field {name:?} is {} bytes; at most {max}", s.len()),
        ));
    }
    text(&s, name)?;
    Ok(s)
}

/// A text field as both databases store it: 400 `bad_field` naming it when it holds a NUL
/// character (PostgreSQL's text cannot, SQLite's can; the ladder refuses it on both, before
/// anything is stored or played).
pub fn text(s: &str, name: &str) -> Result<(), ApiError> {
    match s.find('\0') {
        None => Ok(()),
        Some(at) => Err(ApiError::bad_request(
            "bad_field",
            format!("field {name:?} contains a NUL character (U+0000) at byte {at}; text fields cannot hold it"),
        )),
    }
}

/// An integer field given as a JSON integer or as a string holding one (`3`, `"3"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Int(pub i64);

impl<'de> de::Deserialize<'de> for Int {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Int, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Int;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an integer")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Int, E> {
                Ok(Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Int, E> {
                i64::try_from(v)
                    .map(Int)
                    .map_err(|_| E::invalid_value(Unexpected::Unsigned(v), &self))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Int, E> {
                v.trim()
                    .parse()
                    .map(Int)
                    .map_err(|_| E::invalid_value(Unexpected::Str(v), &self))
            }
        }
        d.deserialize_any(V)
    }
}

/// 400 `bad_path` for a path segment that does not decode (e.g. `%FF`, not UTF-8).
impl From<axum::extract::rejection::PathRejection> for ApiError {
    fn from(e: axum::extract::rejection::PathRejection) -> ApiError {
        ApiError::new(e.status(), "bad_path", e.body_text())
    }
}

/// 400 `bad_query` for a query string that does not parse.
impl From<axum::extract::rejection::QueryRejection> for ApiError {
    fn from(e: axum::extract::rejection::QueryRejection) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_query", e.body_text())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct B {
        code: Option<String>,
        to_version: Option<Int>,
    }

    fn err(body: &str) -> (StatusCode, &'static str, String) {
        let e = parse::<B>(body.as_bytes()).unwrap_err();
        (e.status, e.error, e.detail)
    }

    #[test]
    fn bodies_parse_into_their_types() {
        let b: B = parse(br#"{"code": "x", "toVersion": 3, "other": [1]}"#).unwrap();
        assert_eq!((b.code.as_deref(), b.to_version), (Some("x"), Some(Int(3))));
        let b: B = parse(br#"{"toVersion": " 12 ", "code": null}"#).unwrap();
        assert_eq!((b.code, b.to_version), (None, Some(Int(12))));
    }

    #[test]
    fn bad_bodies_say_what_and_where() {
        let (s, e, d) = err("{\"code\": ");
        assert_eq!((s, e), (StatusCode::BAD_REQUEST, "malformed_json"));
        assert!(d.contains("line 1, column 9"), "{d}");
        let (_, e, d) = err("[1, 2]");
        assert_eq!(e, "malformed_json");
        assert!(d.contains("not an array"), "{d}");
        let (_, e, d) = err(r#"{"code": 42}"#);
        assert_eq!(e, "bad_field");
        assert!(
            d.contains("\"code\"") && d.contains("expected a string"),
            "{d}"
        );
        for bad in [r#""two""#, "[1]", "3.5", "18446744073709551615"] {
            let (_, e, d) = err(&format!("{{\"toVersion\": {bad}}}"));
            assert_eq!(e, "bad_field", "{bad}");
            assert!(
                d.contains("\"toVersion\"") && d.contains("an integer"),
                "{d}"
            );
        }
        let e = required(None::<String>, "code").unwrap_err();
        assert_eq!(
            (e.error, e.detail.as_str()),
            ("missing_field", "the body needs the field \"code\"")
        );
        assert_eq!(short(Some("abc".into()), "notes", 3).unwrap(), "abc");
        assert_eq!(short(None, "notes", 3).unwrap(), "");
        assert_eq!(
            short(Some("abcd".into()), "notes", 3).unwrap_err().error,
            "bad_field"
        );
        let e = short(Some("a\0b".into()), "submittedBy", 9).unwrap_err();
        assert_eq!(
            (e.status, e.error, e.detail.as_str()),
            (
                StatusCode::BAD_REQUEST,
                "bad_field",
                "field \"submittedBy\" contains a NUL character (U+0000) at byte 1; text fields cannot hold it"
            )
        );
    }
}
