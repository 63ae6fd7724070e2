//! Text fields at the boundary (issue 22), on SQLite and on PostgreSQL: a NUL character in any
//! text field of a request is 400 `bad_field` naming the field, the same on both databases
//! (PostgreSQL's text cannot hold it, and once answered 500 after the smoke games), and nothing
//! is stored. Also the answers axum makes itself (405, an undecodable path) in the JSON shape.

mod common;

use axum::http::StatusCode;
use common::Served;
use serde_json::{json, Value};

fn answer(l: &Served, method: &str, uri: &str, body: &Value) -> (StatusCode, Value) {
    let (status, bytes) = l
        .send(method, uri, true, body.to_string().into_bytes())
        .expect("a request");
    let v = serde_json::from_slice(&bytes)
        .unwrap_or_else(|e| panic!("{method} {uri} {status}: {e}: {bytes:?}"));
    (status, v)
}

fn nul_fields(postgres: bool) {
    let l = Served::start(postgres);
    let code = "module.exports = function onTurn(me, o, g) { return g.legalMoves[0]; };";
    let cases = [
        (
            "/api/agent/bot/code/submit",
            json!({"code": code, "notes": "a\u{0}b"}),
            "notes",
        ),
        (
            "/api/agent/bot/code/submit",
            json!({"code": code, "submittedBy": "\u{0}"}),
            "submittedBy",
        ),
        (
            "/api/agent/bot/code/submit",
            json!({"code": format!("{code}//\u{0}")}),
            "code",
        ),
        (
            "/api/agent/bot/code/revert",
            json!({"toVersion": 1, "notes": "x\u{0}"}),
            "notes",
        ),
        (
            "/api/agent/bot/code/revert",
            json!({"toVersion": 1, "submittedBy": "\u{0}"}),
            "submittedBy",
        ),
        (
            "/api/agent/email/request",
            json!({"email": "a\u{0}b@example.org"}),
            "email",
        ),
        ("/api/email/verify", json!({"token": "t\u{0}"}), "token"),
    ];
    for (uri, body, field) in cases {
        let (status, v) = answer(&l, "POST", uri, &body);
        assert_eq!(status, StatusCode::BAD_REQUEST, "{uri} {field}: {v}");
        assert_eq!(v["error"], "bad_field", "{uri} {field}: {v}");
        let detail = v["detail"].as_str().unwrap_or_default();
        assert!(
            detail.contains(&format!("{field:?}")) && detail.contains("NUL"),
            "{uri} {field}: {v}"
        );
    }
    let (status, v) = answer(&l, "GET", "/api/match/a%00b", &json!({}));
    assert_eq!(
        (status, v["error"].as_str()),
        (StatusCode::NOT_FOUND, Some("unknown_match")),
        "{v}"
    );
    let (status, v) = answer(&l, "GET", "/api/agent/bot/code/versions", &json!({}));
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["versions"], json!([]), "{v}");
    let outbox = std::fs::read_dir(l.dir.path().join("outbox"))
        .unwrap()
        .count();
    assert_eq!(outbox, 0, "a mail was sent");
    // That the same code without the NUL publishes needs the JS child (`farm __js-bot`), which
    // this crate's tests do not have: coordinator/tests/ladder_*.rs submit through a real farm.
}

#[test]
fn nul_characters_are_refused_on_sqlite() {
    nul_fields(false);
}

#[test]
fn nul_characters_are_refused_on_postgres() {
    if common::postgres_available() {
        nul_fields(true);
    }
}

#[test]
fn axum_rejections_are_json() {
    let l = Served::start(false);
    for (method, uri, allowed) in [
        ("GET", "/api/agent/bot/code/submit", "POST"),
        ("DELETE", "/api/agent/bot/info", "GET"),
        ("POST", "/api/leaderboard", "GET"),
    ] {
        let (status, v) = answer(&l, method, uri, &json!({}));
        assert_eq!(
            status,
            StatusCode::METHOD_NOT_ALLOWED,
            "{method} {uri}: {v}"
        );
        assert_eq!(v["error"], "method_not_allowed", "{v}");
        let detail = v["detail"].as_str().unwrap_or_default();
        assert!(detail.contains(method) && detail.contains(allowed), "{v}");
    }
    let (status, v) = answer(&l, "GET", "/api/match/%FF", &json!({}));
    assert_eq!(
        (status, v["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("bad_path")),
        "{v}"
    );
    let (status, v) = answer(&l, "GET", "/nowhere", &json!({}));
    assert_eq!(
        (status, v["error"].as_str()),
        (StatusCode::NOT_FOUND, Some("not_found")),
        "{v}"
    );
}
