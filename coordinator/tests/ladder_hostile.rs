//! Hostile requests to a real `farm ladder serve` (issue 22), on SQLite and PostgreSQL: many
//! players submitting one new program at once, an I/O error on the server's code folder (the
//! answer names no internal path), NUL characters in text fields (400 naming the field before
//! any game, the same on both databases), and the errors axum makes itself (a wrong method, a
//! path that does not decode) in the API's JSON `{error, detail}` shape.

mod ladder_support;

use ladder_support::{Answer, Backend, Ladder, Opts};
use serde_json::{json, Value};

/// Options whose training folder holds only the osc test bot (two quick smoke games a submit).
fn opts(dir: &tempfile::TempDir) -> Opts {
    std::fs::write(dir.path().join("osc.js"), ladder_support::bot("osc.js")).unwrap();
    Opts {
        training: dir.path().to_path_buf(),
        ..Opts::default()
    }
}

/// The osc bot padded to about 60 KB with a comment unique to `round`.
fn big_program(round: usize) -> String {
    let mut code = ladder_support::bot("osc.js");
    code.push_str(&format!("\n// round {round}\n"));
    while code.len() < 60_000 {
        code.push_str("// padding padding padding padding padding padding padding padding\n");
    }
    code
}

/// The value of the `farm_ladder_matches_total{kind="smoke"}` series.
fn smoke_games(l: &Ladder) -> u64 {
    let m = l.get("/metrics", None);
    m.text
        .lines()
        .find_map(|line| line.strip_prefix("farm_ladder_matches_total{kind=\"smoke\"} "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no smoke games series in:\n{}", m.text))
}

/// Eight players submit the same new 60 KB program at the same moment, round after round:
/// every submit is published (the code folder's writers never share a temporary file).
fn concurrent_submits(backend: Backend) {
    let t = tempfile::tempdir().unwrap();
    let l = Ladder::start(backend, opts(&t));
    let keys: Vec<String> = (0..8)
        .map(|i| l.player(&format!("p{i}"), false).1)
        .collect();
    for round in 0..4 {
        let code = big_program(round);
        let answers: Vec<Answer> = std::thread::scope(|s| {
            let handles: Vec<_> = keys
                .iter()
                .map(|k| {
                    let (l, code) = (&l, &code);
                    s.spawn(move || l.submit(k, code))
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for a in &answers {
            assert_eq!(a.status, 200, "round {round}: {}", a.text);
        }
        let sha = &answers[0].json["codeSha256"];
        assert!(answers.iter().all(|a| &a.json["codeSha256"] == sha));
    }
}
both_backends!(
    concurrent_submits_of_one_new_program_all_publish,
    concurrent_submits
);

/// The code folder turned into a file under the running server: storing new code fails with an
/// I/O error, answered 500 with an incident id and no internal path.
#[test]
fn an_io_error_answers_without_a_path() {
    let t = tempfile::tempdir().unwrap();
    let l = Ladder::start(Backend::Sqlite, opts(&t));
    let (_, key) = l.player("ivy", false);
    let folder = l.data.path().join("code");
    std::fs::remove_dir_all(&folder).unwrap();
    std::fs::write(&folder, "not a folder").unwrap();
    let a = l.submit(&key, &big_program(99));
    assert_eq!(a.status, 500, "{}", a.text);
    assert_eq!(a.json["error"], "internal", "{}", a.text);
    let detail = a.json["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("incident"), "{}", a.text);
    let data = l.data.path().display().to_string();
    for internal in [data.as_str(), "/code", ".tmp", "Not a directory"] {
        assert!(!a.text.contains(internal), "{internal:?} in {}", a.text);
    }
}

/// A NUL in any text field: 400 `bad_field` naming it, before any game and with nothing
/// stored, on both databases.
fn nul_characters(backend: Backend) {
    let t = tempfile::tempdir().unwrap();
    let l = Ladder::start(backend, opts(&t));
    let (_, key) = l.player("nul", false);
    let k = Some(key.as_str());
    let code = ladder_support::bot("osc.js");
    let before = smoke_games(&l);
    let refused = |a: Answer, field: &str| {
        assert_eq!(a.status, 400, "{field}: {}", a.text);
        assert_eq!(a.json["error"], "bad_field", "{field}: {}", a.text);
        let detail = a.json["detail"].as_str().unwrap_or_default();
        assert!(
            detail.contains(&format!("{field:?}")) && detail.contains("NUL"),
            "{field}: {}",
            a.text
        );
    };
    let submit = "/api/agent/bot/code/submit";
    let body = json!({"code": code, "notes": "a\u{0}b", "submittedBy": "me"});
    refused(l.post_json(submit, k, &body), "notes");
    let body = json!({"code": code, "notes": "n", "submittedBy": "\u{0}"});
    refused(l.post_json(submit, k, &body), "submittedBy");
    let body = json!({"code": format!("{code}\n// \u{0}"), "notes": "n"});
    refused(l.post_json(submit, k, &body), "code");
    let body = json!({"toVersion": 1, "notes": "x\u{0}"});
    refused(l.post_json("/api/agent/bot/code/revert", k, &body), "notes");
    let body = json!({"email": "a\u{0}b@example.org"});
    refused(l.post_json("/api/agent/email/request", k, &body), "email");
    let body = json!({"token": "\u{0}"});
    refused(l.post_json("/api/email/verify", None, &body), "token");
    let a = l.get("/api/match/a%00b", None);
    assert_eq!(
        (a.status, a.json["error"].as_str()),
        (404, Some("unknown_match")),
        "{}",
        a.text
    );
    assert_eq!(smoke_games(&l), before, "a game was played");
    let v = l.get("/api/agent/bot/code/versions", k);
    assert_eq!(v.json["versions"], json!([]), "{}", v.text);
    assert_eq!(
        std::fs::read_dir(l.data.path().join("outbox"))
            .unwrap()
            .count(),
        0
    );
}
both_backends!(nul_characters_are_refused_naming_the_field, nul_characters);

/// A request of any method, as it comes back (status, Allow header, JSON body).
fn call(l: &Ladder, method: &str, path: &str, body: &str) -> (u16, Option<String>, Value) {
    let req = ureq::request(method, &format!("{}{path}", l.base));
    let r = match req.send_string(body) {
        Ok(r) => r,
        Err(ureq::Error::Status(_, r)) => r,
        Err(e) => panic!("{method} {path}: {e}"),
    };
    let status = r.status();
    let allow = r.header("allow").map(str::to_string);
    let ctype = r.header("content-type").unwrap_or("").to_string();
    let text = r.into_string().unwrap_or_default();
    assert!(
        ctype.starts_with("application/json"),
        "{method} {path}: {ctype:?} {text:?}"
    );
    let json =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{method} {path}: {e} in {text:?}"));
    (status, allow, json)
}

/// Wrong methods, unknown routes and undecodable paths answer the API's JSON shape.
#[test]
fn axum_rejections_answer_json() {
    let t = tempfile::tempdir().unwrap();
    let l = Ladder::start(Backend::Sqlite, opts(&t));
    for (method, path, allowed) in [
        ("GET", "/api/agent/bot/code/submit", "POST"),
        ("PUT", "/api/agent/challenge", "POST"),
        ("POST", "/api/leaderboard", "GET"),
        ("DELETE", "/api/agent/bot/info", "GET"),
        ("PATCH", "/api/match/abc", "GET"),
    ] {
        let (status, allow, j) = call(&l, method, path, "{}");
        assert_eq!(status, 405, "{method} {path}: {j}");
        assert_eq!(j["error"], "method_not_allowed", "{method} {path}: {j}");
        let detail = j["detail"].as_str().unwrap_or_default();
        assert!(
            detail.contains(method) && detail.contains(path) && detail.contains(allowed),
            "{method} {path}: {j}"
        );
        assert!(
            allow.is_some_and(|a| a.contains(allowed)),
            "{method} {path}"
        );
    }
    let (status, _, j) = call(&l, "GET", "/api/nothing/here", "");
    assert_eq!(
        (status, j["error"].as_str()),
        (404, Some("not_found")),
        "{j}"
    );
    let (status, _, j) = call(&l, "GET", "/api/match/%FF%FE", "");
    assert_eq!(
        (status, j["error"].as_str()),
        (400, Some("bad_path")),
        "{j}"
    );
    assert!(j["detail"].as_str().is_some_and(|d| !d.is_empty()), "{j}");
}
