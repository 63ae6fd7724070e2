//! The ladder's HTTP API over real HTTP against a real `farm ladder serve` process, on SQLite and
//! on a fresh PostgreSQL database: admin CLI and keys, 401s, bad input (400/404/413 with reasons,
//! nothing stored), email verification through the outbox, rate limits (429 + Retry-After), the
//! public leaderboard, pages and metrics. Games are in ladder_games.rs.

mod ladder_support;

use ladder_support::{Backend, Ladder, Opts};
use serde_json::json;

/// Options whose training folder holds only the osc test bot (no game runs in these tests).
fn opts(dir: &tempfile::TempDir) -> Opts {
    std::fs::write(dir.path().join("osc.js"), ladder_support::bot("osc.js")).unwrap();
    Opts {
        training: dir.path().to_path_buf(),
        ..Opts::default()
    }
}

fn admin_and_keys(backend: Backend) {
    let t = tempfile::tempdir().unwrap();
    let l = Ladder::start(backend, opts(&t));
    let (id, key) = l.player("alice", false);
    assert!(key.starts_with("qwk_") && key.len() > 20, "key {key}");

    let info = l.get("/api/agent/bot/info", Some(&key));
    assert_eq!(info.status, 200, "{}", info.text);
    assert_eq!(info.json["botId"], id);
    assert_eq!(info.json["name"], "alice");
    assert_eq!(info.json["email"], "alice@example.org");
    assert_eq!(info.json["emailVerified"], false);
    assert_eq!(info.json["rp"], 0);
    assert_eq!(info.json["tier"]["name"], "Bronze III");
    assert_eq!(info.json["tier"]["nameZh"], "青铜III");
    assert_eq!(info.json["currentVersion"], serde_json::Value::Null);

    // Missing and wrong keys.
    let a = l.get("/api/agent/bot/info", None);
    assert_eq!(a.status, 401);
    assert_eq!(a.json["error"], "missing_key");
    assert!(a.json["detail"].as_str().unwrap().contains("Bearer"));
    let a = l.get("/api/agent/bot/info", Some("qwk_nope"));
    assert_eq!(a.status, 401);
    assert_eq!(a.json["error"], "invalid_key");
    for path in [
        "/api/agent/bot/code/versions",
        "/api/agent/bot/matches",
        "/api/agent/opponents/1/matches",
    ] {
        assert_eq!(l.get(path, Some("wrong")).status, 401, "{path}");
    }
    for path in [
        "/api/agent/bot/code/submit",
        "/api/agent/bot/code/revert",
        "/api/agent/challenge",
        "/api/agent/email/request",
    ] {
        assert_eq!(l.post(path, None, "{}").status, 401, "{path}");
    }

    // Duplicate names are refused; list shows everyone.
    let (ok, _, err) = l.admin_raw(&["create-player", "--name", "alice", "--email", "x@y.z"]);
    assert!(!ok && err.contains("already exists"), "{err}");
    let (bob, _) = l.player("bob", true);
    let list = l.admin(&["list"]);
    assert!(
        list.contains(&format!(
            "{id}\talice\talice@example.org\tno\t0\tBronze III\t-"
        )),
        "{list}"
    );
    assert!(
        list.contains(&format!("{bob}\tbob\tbob@example.org\tyes")),
        "{list}"
    );

    // rotate-key: the old key stops working, the new one works.
    let out = l.admin(&["rotate-key", "--name", "alice"]);
    let new_key = ladder_support::field(&out, "key");
    assert_ne!(new_key, key);
    assert_eq!(l.get("/api/agent/bot/info", Some(&key)).status, 401);
    assert_eq!(l.get("/api/agent/bot/info", Some(&new_key)).status, 200);

    // verify-email by hand; set-rp moves the tier.
    l.admin(&["verify-email", "--name", "alice"]);
    l.set_rp("alice", 750);
    let info = l.get("/api/agent/bot/info", Some(&new_key));
    assert_eq!(info.json["emailVerified"], true);
    assert_eq!(info.json["rp"], 750);
    assert_eq!(info.json["tier"]["name"], "Gold II");
    assert_eq!(info.json["rank"], 1);
    let (ok, _, err) = l.admin_raw(&["set-rp", "--name", "nobody", "--rp", "5"]);
    assert!(!ok && err.contains("no player named \"nobody\""), "{err}");
}
both_backends!(admin_and_keys_work, admin_and_keys);

fn bad_input(backend: Backend) {
    let t = tempfile::tempdir().unwrap();
    let l = Ladder::start(
        backend,
        Opts {
            max_code_bytes: 2000,
            ..opts(&t)
        },
    );
    let (me, key) = l.player("carol", false);
    let (other, _) = l.player("dave", true);
    let k = Some(key.as_str());

    // Malformed bodies: 400 with where/why.
    let a = l.post("/api/agent/bot/code/submit", k, "{\"code\": ");
    assert_eq!(a.status, 400, "{}", a.text);
    assert_eq!(a.json["error"], "malformed_json");
    assert!(
        a.json["detail"].as_str().unwrap().contains("line 1"),
        "{}",
        a.text
    );
    let a = l.post("/api/agent/bot/code/submit", k, "[1,2]");
    assert_eq!(a.json["error"], "malformed_json");
    assert!(
        a.json["detail"].as_str().unwrap().contains("an array"),
        "{}",
        a.text
    );
    let a = l.post("/api/agent/bot/code/submit", k, "{}");
    assert_eq!(
        (a.status, a.json["error"].as_str()),
        (400, Some("missing_field"))
    );
    assert!(a.json["detail"].as_str().unwrap().contains("\"code\""));
    let a = l.post_json("/api/agent/bot/code/submit", k, &json!({"code": 42}));
    assert_eq!(
        (a.status, a.json["error"].as_str()),
        (400, Some("bad_field"))
    );
    let a = l.post_json("/api/agent/bot/code/submit", k, &json!({"code": "   "}));
    assert_eq!(
        (a.status, a.json["error"].as_str()),
        (400, Some("invalid_code"))
    );

    // Oversized code: 413 with the sizes.
    let big = format!(
        "module.exports = function onTurn(m, o, g) {{ return g.legalMoves[0]; }};\n//{}",
        "x".repeat(3000)
    );
    let a = l.submit(&key, &big);
    assert_eq!(a.status, 413, "{}", a.text);
    assert_eq!(a.json["error"], "code_too_large");
    assert!(
        a.json["detail"].as_str().unwrap().contains("2000"),
        "{}",
        a.text
    );
    // A body far past any limit is refused as a whole.
    let huge = format!("{{\"code\": \"{}\"}}", "y".repeat(200_000));
    // (The server answers 413 as soon as the limit is passed; a client still sending may see
    // the connection dropped instead of the answer.)
    match l.try_post("/api/agent/bot/code/submit", k, &huge) {
        Ok(a) => {
            assert_eq!(a.status, 413, "{}", a.text);
            assert_eq!(a.json["error"], "bad_body");
        }
        Err(e) => assert!(
            e.contains("Broken pipe") || e.contains("reset") || e.contains("Connection"),
            "{e}"
        ),
    }

    // Revert: bad and unknown versions.
    let a = l.post_json(
        "/api/agent/bot/code/revert",
        k,
        &json!({"toVersion": "two"}),
    );
    assert_eq!(
        (a.status, a.json["error"].as_str()),
        (400, Some("bad_field"))
    );
    let a = l.post_json("/api/agent/bot/code/revert", k, &json!({"toVersion": 3}));
    assert_eq!(
        (a.status, a.json["error"].as_str()),
        (404, Some("unknown_version"))
    );

    // Challenges: email first, then ids.
    let a = l.challenge(&key, other);
    assert_eq!(
        (a.status, a.json["error"].as_str()),
        (403, Some("email_not_verified"))
    );
    l.admin(&["verify-email", "--name", "carol"]);
    let a = l.challenge(&key, 999_999);
    assert_eq!(
        (a.status, a.json["error"].as_str()),
        (404, Some("unknown_bot"))
    );
    assert!(a.json["detail"].as_str().unwrap().contains("999999"));
    let a = l.challenge(&key, me);
    assert_eq!(
        (a.status, a.json["error"].as_str()),
        (400, Some("self_challenge"))
    );
    let a = l.challenge(&key, other);
    assert_eq!((a.status, a.json["error"].as_str()), (409, Some("no_code")));
    let a = l.post_json("/api/agent/challenge", k, &json!({"challengedBotId": [1]}));
    assert_eq!(
        (a.status, a.json["error"].as_str()),
        (400, Some("bad_field"))
    );
    let a = l.post("/api/agent/challenge", k, "not json");
    assert_eq!(
        (a.status, a.json["error"].as_str()),
        (400, Some("malformed_json"))
    );

    // Unknown ids elsewhere.
    let a = l.get("/api/agent/opponents/424242/matches", k);
    assert_eq!(
        (a.status, a.json["error"].as_str()),
        (404, Some("unknown_bot"))
    );
    let a = l.get("/api/agent/opponents/abc/matches", k);
    assert_eq!(a.status, 404);
    let a = l.get("/api/match/doesnotexist", None);
    assert_eq!(
        (a.status, a.json["error"].as_str()),
        (404, Some("unknown_match"))
    );
    let a = l.get("/api/agent/bot/matches?limit=0", k);
    assert_eq!(
        (a.status, a.json["error"].as_str()),
        (400, Some("bad_query"))
    );
    let a = l.get("/api/nothing/here", None);
    assert_eq!(a.status, 404);
    assert_eq!(a.json["error"], "not_found");

    // Nothing was stored by any of it.
    let v = l.get("/api/agent/bot/code/versions", k);
    assert_eq!(v.status, 200);
    assert_eq!(v.json["versions"], json!([]));
    assert_eq!(v.json["currentVersion"], serde_json::Value::Null);
    let m = l.get("/api/agent/bot/matches", k);
    assert_eq!(m.json["challenges"], json!([]));
    assert_eq!(
        std::fs::read_dir(l.data.path().join("outbox"))
            .unwrap()
            .count(),
        0
    );
}
both_backends!(bad_input_gets_clear_errors_and_stores_nothing, bad_input);

fn email_verification(backend: Backend) {
    let t = tempfile::tempdir().unwrap();
    let l = Ladder::start(backend, opts(&t));
    let (id, key) = l.player("erin", false);
    let k = Some(key.as_str());
    let a = l.post_json(
        "/api/agent/email/request",
        k,
        &json!({"email": "not-an-email"}),
    );
    assert_eq!(
        (a.status, a.json["error"].as_str()),
        (400, Some("invalid_email"))
    );

    let a = l.post_json(
        "/api/agent/email/request",
        k,
        &json!({"email": "erin@new.example"}),
    );
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.json["email"], "erin@new.example");
    let outbox = l.data.path().join("outbox");
    let mails: Vec<_> = std::fs::read_dir(&outbox)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(mails.len(), 1, "{mails:?}");
    let mail = std::fs::read_to_string(&mails[0]).unwrap();
    assert!(mail.starts_with("To: erin@new.example\n"), "{mail}");
    let token = mail
        .lines()
        .map(str::trim)
        .find(|l| l.len() == 32 && l.chars().all(|c| c.is_ascii_hexdigit()))
        .unwrap_or_else(|| panic!("no token in {mail}"))
        .to_string();

    // Not verified until confirmed; wrong tokens are refused.
    assert_eq!(l.get("/api/agent/bot/info", k).json["emailVerified"], false);
    let a = l.post_json(
        "/api/email/verify",
        None,
        &json!({"token": "0123456789abcdef0123456789abcdef"}),
    );
    assert_eq!(
        (a.status, a.json["error"].as_str()),
        (400, Some("invalid_token"))
    );
    let a = l.post_json("/api/email/verify", None, &json!({}));
    assert_eq!(
        (a.status, a.json["error"].as_str()),
        (400, Some("missing_field"))
    );
    let a = l.post_json("/api/email/verify", None, &json!({"token": token}));
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.json, json!({"verified": true, "botId": id}));
    let info = l.get("/api/agent/bot/info", k);
    assert_eq!(info.json["emailVerified"], true);
    assert_eq!(info.json["email"], "erin@new.example");
    // A token works once.
    let a = l.post_json("/api/email/verify", None, &json!({"token": token}));
    assert_eq!(a.status, 400);

    // Without a body the stored address is used.
    let a = l.post("/api/agent/email/request", k, "");
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.json["email"], "erin@new.example");
    assert_eq!(std::fs::read_dir(&outbox).unwrap().count(), 2);
}
both_backends!(
    email_verification_goes_through_the_outbox,
    email_verification
);

fn rate_limits(backend: Backend) {
    let t = tempfile::tempdir().unwrap();
    let l = Ladder::start(
        backend,
        Opts {
            rate_challenge: "2/600".into(),
            rate_submit: "3/600".into(),
            rate_auth: "4/600".into(),
            ..opts(&t)
        },
    );
    let (_, key) = l.player("frank", true);
    let (_, key2) = l.player("grace", true);

    // Challenges: two answers (404 here), then 429 with Retry-After; another key is not limited.
    for _ in 0..2 {
        assert_eq!(l.challenge(&key, 777).status, 404);
    }
    let a = l.challenge(&key, 777);
    assert_eq!(a.status, 429, "{}", a.text);
    assert_eq!(a.json["error"], "rate_limited");
    let secs: u64 = a
        .retry_after
        .as_deref()
        .expect("Retry-After")
        .parse()
        .unwrap();
    assert!((1..=600).contains(&secs), "Retry-After {secs}");
    assert_eq!(l.challenge(&key2, 777).status, 404);

    // Submissions (and reverts share the limit).
    for _ in 0..2 {
        assert_eq!(
            l.post("/api/agent/bot/code/submit", Some(&key), "{").status,
            400
        );
    }
    assert_eq!(
        l.post("/api/agent/bot/code/revert", Some(&key), "{").status,
        400
    );
    let a = l.post("/api/agent/bot/code/submit", Some(&key), "{");
    assert_eq!(a.status, 429);
    assert!(a.retry_after.is_some());

    // Bad keys from one IP: 401 four times, then 429.
    for _ in 0..4 {
        assert_eq!(l.get("/api/agent/bot/info", Some("qwk_guess")).status, 401);
    }
    let a = l.get("/api/agent/bot/info", Some("qwk_guess"));
    assert_eq!(a.status, 429);
    assert!(a.retry_after.is_some());
    // A good key still works.
    assert_eq!(l.get("/api/agent/bot/info", Some(&key)).status, 200);

    // Email requests per key.
    for _ in 0..4 {
        assert_eq!(
            l.post("/api/agent/email/request", Some(&key2), "").status,
            200
        );
    }
    assert_eq!(
        l.post("/api/agent/email/request", Some(&key2), "").status,
        429
    );
}
both_backends!(rate_limits_answer_429_with_retry_after, rate_limits);

fn public_endpoints(backend: Backend) {
    let t = tempfile::tempdir().unwrap();
    let l = Ladder::start(backend, opts(&t));
    let (a, _) = l.player("hana", false);
    let (b, _) = l.player("ivan", false);
    let (c, _) = l.player("jun", false);
    l.set_rp("ivan", 1450);
    l.set_rp("jun", 320);
    let lb = l.get("/api/leaderboard", None);
    assert_eq!(lb.status, 200, "{}", lb.text);
    let players = lb.json["players"].as_array().unwrap();
    let order: Vec<i64> = players
        .iter()
        .map(|p| p["botId"].as_i64().unwrap())
        .collect();
    assert_eq!(order, vec![b, c, a]);
    assert_eq!(players[0]["tier"]["name"], "King I");
    assert_eq!(players[0]["tier"]["nameZh"], "王者I");
    assert_eq!(players[1]["tier"]["name"], "Silver III");
    assert_eq!(players[1]["tier"]["nameZh"], "白银III");
    assert_eq!(players[2]["tier"]["name"], "Bronze III");
    assert_eq!(players[0]["rank"], 1);

    let page = l.get("/", None);
    assert_eq!(page.status, 200);
    assert!(
        page.content_type.starts_with("text/html"),
        "{}",
        page.content_type
    );
    assert!(page.text.contains("/api/leaderboard"));
    assert!(
        !page.text.contains("http://") && !page.text.contains("https://"),
        "no external URLs"
    );
    let page = l.get("/match/anything", None);
    assert_eq!(page.status, 200);
    assert!(page.text.contains("/api/match/"));
    assert!(!page.text.contains("http://") && !page.text.contains("https://"));

    let m = l.get("/metrics", None);
    assert_eq!(m.status, 200);
    assert!(
        m.text.contains("farm_ladder_submissions_total"),
        "{}",
        m.text
    );
    assert!(m.text.contains("farm_ladder_challenges_total"));

    // The state survives a restart (same data, same database).
    let mut l = l;
    l.restart(&opts(&t));
    let lb2 = l.get("/api/leaderboard", None);
    assert_eq!(lb2.json, lb.json);
}
both_backends!(public_leaderboard_pages_and_metrics, public_endpoints);
