//! Fuzzing the ladder's HTTP surface (issue 22): arbitrary bytes and arbitrary JSON objects
//! (the API's field names with values of every type, NULs, extremes) as the bodies of every
//! route, arbitrary methods and paths, with and without a valid key, through the real router
//! (`ladder::api::router`: extractors, validators, service, SQLite). No answer is a 500 or a
//! panic, and every error answer is the API's JSON `{error, detail}`. Bounded, a few seconds.
//!
//! The ladder here has no training bots (a valid submit publishes without games) and a farm
//! that is gone (a game would answer 503 `farm_unavailable`, never reached by these bodies).

mod common;

use std::sync::OnceLock;

use axum::http::StatusCode;
use common::Served;
use proptest::prelude::*;
use serde_json::{json, Map, Value};

fn fixture() -> &'static Served {
    static F: OnceLock<Served> = OnceLock::new();
    F.get_or_init(|| Served::start(false))
}

const ROUTES: [&str; 14] = [
    "/api/agent/bot/info",
    "/api/agent/bot/code/submit",
    "/api/agent/bot/code/revert",
    "/api/agent/bot/code/versions",
    "/api/agent/challenge",
    "/api/agent/bot/matches?limit=5",
    "/api/agent/opponents/1/matches",
    "/api/agent/email/request",
    "/api/email/verify",
    "/api/leaderboard",
    "/api/match/x",
    "/metrics",
    "/",
    "/match/abc",
];

const FIELDS: [&str; 8] = [
    "code",
    "notes",
    "submittedBy",
    "toVersion",
    "challengedBotId",
    "email",
    "token",
    "other",
];

/// Sends one request through the router and checks the answer: no 500, no panic, and an
/// error is `{error, detail}` JSON.
fn send(method: &str, uri: &str, key: bool, body: Vec<u8>) -> Result<(), TestCaseError> {
    let Some((status, bytes)) = fixture().send(method, uri, key, body) else {
        return Ok(());
    };
    let text = String::from_utf8_lossy(&bytes);
    prop_assert_ne!(
        status,
        StatusCode::INTERNAL_SERVER_ERROR,
        "{} {}: {}",
        method,
        uri,
        text
    );
    // (A HEAD answer has no body.)
    if (status.is_client_error() || status.is_server_error()) && method != "HEAD" {
        let v: Value = serde_json::from_slice(&bytes)
            .map_err(|e| TestCaseError::fail(format!("{method} {uri} {status}: {e}: {text}")))?;
        prop_assert!(
            v["error"].is_string() && v["detail"].is_string(),
            "{} {} {}: {}",
            method,
            uri,
            status,
            text
        );
    }
    Ok(())
}

fn odd_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        any::<f64>().prop_map(|x| json!(x)),
        ".{0,12}".prop_map(Value::String),
        "[a-z]{0,4}\u{0}[a-z]{0,4}".prop_map(Value::String),
        Just(json!(
            "module.exports = function onTurn(m, o, g) { return g.legalMoves[0]; };"
        )),
        Just(json!("a@b.example")),
        Just(json!(" 1 ")),
        Just(json!("9223372036854775808")),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,3}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn object() -> impl Strategy<Value = Value> {
    prop::collection::vec((prop::sample::select(FIELDS.to_vec()), odd_value()), 0..5).prop_map(
        |kv| {
            let m: Map<String, Value> = kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
            Value::Object(m)
        },
    )
}

fn method() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => Just("POST".to_string()),
        2 => Just("GET".to_string()),
        1 => prop::sample::select(vec!["PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"]).prop_map(str::to_string),
        1 => "[A-Z]{1,8}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn json_bodies_never_answer_500(route in prop::sample::select(ROUTES.to_vec()), key in any::<bool>(), body in object()) {
        send("POST", route, key, body.to_string().into_bytes())?;
    }

    #[test]
    fn arbitrary_bytes_never_answer_500(
        route in prop::sample::select(ROUTES.to_vec()), key in any::<bool>(),
        body in prop_oneof![
            prop::collection::vec(any::<u8>(), 0..300),
            ".{0,200}".prop_map(String::into_bytes),
        ],
    ) {
        send("POST", route, key, body)?;
    }

    #[test]
    fn any_method_and_path_answers_json_errors(
        m in method(), route in prop::sample::select(ROUTES.to_vec()),
        tail in "[a-zA-Z0-9%/._~?=&-]{0,24}", key in any::<bool>(),
    ) {
        send(&m, &format!("{route}{tail}"), key, b"{}".to_vec())?;
    }
}

/// Regression: what the fuzzers found (and the issue's cases) answer as they should.
#[test]
fn known_cases() {
    let cases: [(&str, &str, &[u8]); 5] = [
        ("GET", "/api/agent/bot/code/submit", b""),
        (
            "POST",
            "/api/agent/bot/code/revert",
            br#"{"toVersion": 1, "notes": "a\u0000"}"#,
        ),
        ("POST", "/api/email/verify", br#"{"token": "\u0000"}"#),
        ("GET", "/api/match/%00", b""),
        ("GET", "/api/match/%FF", b""),
    ];
    for (m, uri, body) in cases {
        send(m, uri, true, body.to_vec()).unwrap_or_else(|e| panic!("{m} {uri}: {e}"));
    }
}
