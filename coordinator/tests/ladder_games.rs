//! Ladder games as farm jobs, over real HTTP against a real `farm ladder serve` on SQLite and on
//! PostgreSQL: the smoke test (bad code refused with reasons, faults reported with opponent,
//! colour, seed, subtype and turn, nothing stored), challenges and RP across tiers with every
//! clamp, the anti-farming cut-off after 10 challenges per code-hash pair, revert semantics, and
//! the match endpoints (my matches, scouting, replays that re-verify move by move).
//!
//! The test bots (tests/ladder_support/bots) make results certain whatever the seed: two `osc`
//! bots always draw; `quit` always loses to `osc`.

mod ladder_support;

use games::qianwang::MatchRecord;
use ladder_support::{bot, Backend, Ladder, Opts};
use serde_json::{json, Value};

fn smoke_test(backend: Backend) {
    let l = Ladder::start(backend, Opts::default());
    let (_, key) = l.player("smoky", true);

    // Refused before any game: the engine's load check says why.
    let cases = [
        ("syntax", "module.exports = function onTurn(me, opponent, game) { return ; ;; }}}"),
        ("no onTurn", "module.exports = 42;"),
        ("loops at load", "for (;;) {}\nmodule.exports = function onTurn(m, o, g) { return g.legalMoves[0]; };"),
        ("allocates at load", "const a = []; for (;;) { a.push(new Array(100000).fill(1)); }\nmodule.exports = function onTurn(m, o, g) { return g.legalMoves[0]; };"),
    ];
    for (what, code) in cases {
        let a = l.submit(&key, code);
        assert_eq!(a.status, 400, "{what}: {}", a.text);
        assert_eq!(a.json["error"], "invalid_code", "{what}: {}", a.text);
        assert!(
            !a.json["detail"].as_str().unwrap_or("").is_empty(),
            "{what}: {}",
            a.text
        );
    }

    // A bot that throws on its third move: 422 naming opponent, colour, seed, reason and turn.
    let a = l.submit(&key, &bot("thrower.js"));
    assert_eq!(a.status, 422, "{}", a.text);
    assert_eq!(a.json["error"], "smoke_test_failed");
    let failures = a.json["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 6, "every game faults: {}", a.text);
    assert_eq!(a.json["games"].as_array().unwrap().len(), 6);
    let colours: Vec<&str> = failures
        .iter()
        .map(|f| f["colour"].as_str().unwrap())
        .collect();
    assert_eq!(colours.iter().filter(|c| **c == "black").count(), 3);
    let opponents: std::collections::BTreeSet<&str> = failures
        .iter()
        .map(|f| f["opponent"].as_str().unwrap())
        .collect();
    assert_eq!(opponents.len(), 3, "three training bots: {opponents:?}");
    for f in failures {
        assert_eq!(f["reason"], "error", "{f}");
        let turn = f["turn"].as_u64().unwrap();
        let want = if f["colour"] == "black" { 5 } else { 6 };
        assert_eq!(turn, want, "{f}");
        assert!(f["seed"].as_u64().is_some());
        assert!(
            f["detail"].as_str().unwrap().contains("thrower gives up"),
            "{f}"
        );
    }
    let detail = a.json["detail"].as_str().unwrap();
    let first = &failures[0];
    for part in [
        first["opponent"].as_str().unwrap().to_string(),
        first["colour"].as_str().unwrap().to_string(),
        first["seed"].to_string(),
        "error".to_string(),
        format!("turn {}", first["turn"]),
    ] {
        assert!(detail.contains(&part), "{part:?} not in {detail}");
    }
    // The same seeds every time (fixed smoke seeds).
    let again = l.submit(&key, &bot("thrower.js"));
    assert_eq!(again.json["failures"], a.json["failures"]);

    // A bot that loops in onTurn: runtime (timeout).
    let a = l.submit(&key, &bot("spinner.js"));
    assert_eq!(a.status, 422, "{}", a.text);
    let f = &a.json["failures"][0];
    assert_eq!(f["reason"], "runtime", "{f}");
    assert_eq!(f["subtype"], "timeout", "{f}");
    assert!(a.json["detail"]
        .as_str()
        .unwrap()
        .contains("runtime (timeout)"));

    // Malformed moves and unbounded allocation during a game: illegal, runtime (memory).
    let cases = [
        ("module.exports = function onTurn(m, o, g) { return g.turnNumber >= 3 ? {from: 'x', to: [9, 9]} : g.legalMoves[0]; };", "illegal", None),
        ("module.exports = function onTurn(m, o, g) { if (g.turnNumber >= 3) { const a = []; for (;;) a.push(new Array(100000).fill(7)); } return g.legalMoves[0]; };", "runtime", Some("memory")),
    ];
    for (code, reason, subtype) in cases {
        let a = l.submit(&key, code);
        assert_eq!(a.status, 422, "{reason}: {}", a.text);
        let f = &a.json["failures"][0];
        assert_eq!(f["reason"], reason, "{f}");
        if let Some(s) = subtype {
            assert_eq!(f["subtype"], s, "{f}");
        }
        assert!(f["turn"].as_u64().unwrap() >= 3, "{f}");
    }

    // Nothing stored by any failure.
    let v = l.get("/api/agent/bot/code/versions", Some(&key));
    assert_eq!(v.json["versions"], json!([]));

    // A bot that only shuttles passes (losing is allowed) and is published as version 1, 2, ...
    let a = l.submit(&key, &bot("osc.js"));
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.json["version"], 1);
    let games = a.json["smokeTest"].as_array().unwrap();
    assert_eq!(games.len(), 6);
    for g in games {
        assert!(
            !["illegal", "error", "runtime"].contains(&g["reason"].as_str().unwrap()),
            "{g}"
        );
    }
    let seeds: Vec<u64> = games.iter().map(|g| g["seed"].as_u64().unwrap()).collect();
    let fail_seeds: Vec<u64> = failures
        .iter()
        .map(|g| g["seed"].as_u64().unwrap())
        .collect();
    assert_eq!(seeds, fail_seeds, "fixed seeds");
    assert_eq!(l.publish(&key, &bot("quit.js")), 2);
    let v = l.get("/api/agent/bot/code/versions", Some(&key));
    assert_eq!(v.json["currentVersion"], 2);
    assert_eq!(v.json["versions"].as_array().unwrap().len(), 2);
    assert_eq!(v.json["versions"][0]["notes"], "test");
    assert_eq!(v.json["versions"][0]["submittedBy"], "ladder test");
    assert_eq!(v.json["versions"][1]["current"], true);

    let m = l.get("/metrics", None).text;
    assert!(
        m.contains("farm_ladder_submissions_total{outcome=\"published\"} 2"),
        "{m}"
    );
    assert!(
        m.contains("farm_ladder_submissions_total{outcome=\"smoke_failed\"} 5"),
        "{m}"
    );
    assert!(
        m.contains("farm_ladder_matches_total{kind=\"smoke\"} 42"),
        "{m}"
    );
}
both_backends!(smoke_test_reports_and_publishes, smoke_test);

/// Sets RPs, runs one challenge, checks both deltas and new RPs (and the stored standing).
#[allow(clippy::too_many_arguments)]
fn step(
    l: &Ladder,
    who: (&str, &str, i64),
    whom: (&str, &str, i64),
    rps: (u32, u32),
    result: &str,
    deltas: (i64, i64),
) -> Value {
    l.set_rp(who.0, rps.0);
    l.set_rp(whom.0, rps.1);
    let a = l.challenge(who.1, whom.2);
    assert_eq!(a.status, 200, "{}", a.text);
    let j = &a.json;
    assert_eq!(j["result"], result, "{j}");
    assert_eq!(j["scored"], true);
    assert_eq!(j["rpBefore"], rps.0);
    assert_eq!(j["rpDelta"], deltas.0, "{} vs {}: {j}", who.0, whom.0);
    assert_eq!(j["opponent"]["rpDelta"], deltas.1, "{j}");
    let want_a = (rps.0 as i64 + deltas.0).max(0);
    let want_b = (rps.1 as i64 + deltas.1).max(0);
    assert_eq!(j["rp"], want_a);
    assert_eq!(j["opponent"]["rp"], want_b);
    assert_eq!(l.get("/api/agent/bot/info", Some(who.1)).json["rp"], want_a);
    assert_eq!(
        l.get("/api/agent/bot/info", Some(whom.1)).json["rp"],
        want_b
    );
    a.json
}

fn challenges_and_rp(backend: Backend) {
    let l = Ladder::start(backend, Opts::default());
    let (a_id, a) = l.player("osc-a", true);
    let (b_id, b) = l.player("osc-b", true);
    let (c_id, c) = l.player("quit-c", true);
    l.publish(&a, &bot("osc.js"));
    l.publish(&b, &format!("{}\n// b\n", bot("osc.js")));
    l.publish(&c, &bot("quit.js"));
    let (pa, pb, pc) = (
        ("osc-a", a.as_str(), a_id),
        ("osc-b", b.as_str(), b_id),
        ("quit-c", c.as_str(), c_id),
    );

    // Same major tier: draw +10 each (two osc bots draw both games).
    let j = step(&l, pa, pb, (0, 0), "draw", (10, 10));
    for g in j["matches"].as_array().unwrap() {
        assert_eq!(g["winner"], Value::Null, "{g}");
        assert_eq!(g["reason"], "material", "{g}");
    }
    // Cross-tier draw: Gold (2) vs Bronze (0): 10 - 2*4 and 10 + 2*4.
    step(&l, pa, pb, (700, 50), "draw", (2, 18));
    // Win over a King from Bronze: 25 + 4*8 = 57 clamped to 50; King loses -15 - 32 = -47.
    let j = step(&l, pa, pc, (0, 1300), "win", (50, -47));
    assert_eq!(j["tier"]["name"], "Bronze III");
    // 1300 - 47 = 1253: from King II down to King III.
    assert_eq!(j["opponent"]["tier"]["name"], "King III");
    for g in j["matches"].as_array().unwrap() {
        assert_eq!(g["result"], "win");
        assert_eq!(g["reason"], "error");
    }
    // The challenger loses: King (4) to Bronze (0): -47; Bronze winner +50 (clamped).
    step(&l, pc, pa, (1300, 50), "loss", (-47, 50));
    // Loss to a stronger bot: -15 + 16 = +1 clamped to -3; Gold winner 25 - 16 = 9.
    step(&l, pc, pa, (10, 650), "loss", (-3, 9));
    // Loss at 2 RP in the same tier: -15, RP stays at 0; the winner +25.
    step(&l, pc, pb, (2, 68), "loss", (-15, 25));
    // Win over a much weaker bot: 25 - 32 clamped to 3; loser -15 + 32 = 17 clamped to -3 (0 floor).
    step(&l, pa, pc, (1300, 0), "win", (3, -3));
    // Draws: King vs Bronze 10 - 16 = -6 clamped to 0; Bronze 10 + 16 = 26 clamped to 20.
    step(&l, pa, pb, (1300, 0), "draw", (0, 20));
    // One tier apart: win 25 + 8 = 33 from Silver over Gold; Gold loses -15 - 8 = -23.
    step(&l, pa, pc, (300, 600), "win", (33, -23));

    // Records: wins/draws/losses of scored challenges.
    let info = l.get("/api/agent/bot/info", Some(&a)).json;
    assert_eq!(
        (
            info["wins"].as_i64(),
            info["draws"].as_i64(),
            info["losses"].as_i64()
        ),
        (Some(5), Some(3), Some(0)),
        "{info}"
    );

    // My matches: newest first, both games, my view of results.
    let mine = l.get("/api/agent/bot/matches", Some(&c));
    assert_eq!(mine.status, 200);
    let list = mine.json["challenges"].as_array().unwrap();
    assert_eq!(list.len(), 6);
    assert_eq!(list[0]["role"], "challenged");
    assert_eq!(list[0]["result"], "loss");
    assert_eq!(list[0]["rpDelta"], -23);
    assert_eq!(list[0]["opponent"]["botId"], a_id);
    assert_eq!(list[0]["games"].as_array().unwrap().len(), 2);
    let limited = l.get("/api/agent/bot/matches?limit=2", Some(&c));
    assert_eq!(limited.json["challenges"].as_array().unwrap().len(), 2);

    // Scouting: the opponent's recent games with moves.
    let s = l.get(&format!("/api/agent/opponents/{c_id}/matches"), Some(&b));
    assert_eq!(s.status, 200, "{}", s.text);
    assert_eq!(s.json["bot"]["name"], "quit-c");
    let games = s.json["matches"].as_array().unwrap();
    assert_eq!(games.len(), 12);
    assert!(games.iter().all(|g| g["result"] == "loss"));
    assert!(
        games[0]["moves"].as_array().unwrap().len() >= 6,
        "{}",
        games[0]
    );

    // Replays: public, every ply, and they re-verify through the rules.
    let url = games[0]["urlId"].as_str().unwrap();
    let m = l.get(&format!("/api/match/{url}"), None);
    assert_eq!(m.status, 200, "{}", m.text);
    let rec = json!({
        "version": m.json["version"], "seed": m.json["seed"],
        "black": {"name": m.json["black"]["name"], "code_sha256": m.json["black"]["codeSha256"]},
        "red": {"name": m.json["red"]["name"], "code_sha256": m.json["red"]["codeSha256"]},
        "plies": m.json["plies"], "outcome": m.json["outcome"],
    });
    let rec = MatchRecord::from_json(&rec.to_string()).expect("the replay is a match record");
    games::qianwang::verify(&rec).expect("the replay re-verifies");
    assert_eq!(rec.plies.len() as i64, m.json["turns"].as_i64().unwrap());
    let seed = m.json["seed"].as_u64().unwrap();
    assert!(seed < 1 << 53, "seeds stay exact in JavaScript: {seed}");
    assert_eq!(m.json["initialBoard"][0][3], "black");
    assert_eq!(m.json["initialBoard"][0][0], "red");

    let metrics = l.get("/metrics", None).text;
    assert!(
        metrics.contains("farm_ladder_challenges_total{scoring=\"scored\"} 9"),
        "{metrics}"
    );
    assert!(
        metrics.contains("farm_ladder_matches_total{kind=\"challenge\"} 18"),
        "{metrics}"
    );
}
both_backends!(
    challenges_settle_rp_across_tiers_with_clamps,
    challenges_and_rp
);

fn anti_farming_and_revert(backend: Backend) {
    let l = Ladder::start(backend, Opts::default());
    let (a_id, a) = l.player("farmer", true);
    let (b_id, b) = l.player("field", true);
    let v1 = l.publish(&a, &bot("osc.js"));
    l.publish(&b, &format!("{}\n// field\n", bot("osc.js")));
    let sha1 = l.get("/api/agent/bot/info", Some(&a)).json["codeSha256"].clone();

    // Ten scored challenges per pair of code hashes, whoever challenges.
    for i in 1..=10 {
        let (k, t) = if i % 3 == 0 { (&b, a_id) } else { (&a, b_id) };
        let r = l.challenge(k, t);
        assert_eq!(r.status, 200, "{}", r.text);
        assert_eq!(r.json["scored"], true, "challenge {i}: {}", r.json);
        assert_eq!(r.json["scoredChallengesForPair"], i);
        assert_eq!(r.json["rpDelta"], 10);
    }
    let rp = l.get("/api/agent/bot/info", Some(&a)).json["rp"].clone();
    assert_eq!(rp, 100);
    // The 11th and later: practice, nothing changes.
    for (k, t) in [(&a, b_id), (&b, a_id)] {
        let r = l.challenge(k, t);
        assert_eq!(r.status, 200, "{}", r.text);
        assert_eq!(r.json["scored"], false, "{}", r.json);
        assert_eq!(r.json["rpDelta"], 0);
        assert_eq!(r.json["opponent"]["rpDelta"], 0);
        assert_eq!(
            r.json["matches"].as_array().unwrap().len(),
            2,
            "practice games are still played and kept"
        );
    }
    let info = l.get("/api/agent/bot/info", Some(&a)).json;
    assert_eq!(info["rp"], 100);
    assert_eq!(info["draws"], 10);
    // The count belongs to the pair of code hashes: a second account with the same code
    // against the same opponent code gets no fresh quota.
    let (_, sock) = l.player("sock", true);
    l.publish(&sock, &bot("osc.js"));
    assert_eq!(
        l.get("/api/agent/bot/info", Some(&sock)).json["codeSha256"],
        sha1
    );
    let r = l.challenge(&sock, b_id);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.json["scored"], false,
        "same hashes, same count: {}",
        r.json
    );

    // A new version (new hash) gets ten more.
    let v2 = l.publish(&a, &format!("{}\n// v2\n", bot("osc.js")));
    assert_eq!(v2, v1 + 1);
    let r = l.challenge(&a, b_id);
    assert_eq!(r.json["scored"], true, "{}", r.json);
    assert_eq!(r.json["scoredChallengesForPair"], 1);

    // A revert publishes the old code again, with the old hash: its count is used up.
    let r = l.post_json(
        "/api/agent/bot/code/revert",
        Some(&a),
        &json!({"toVersion": v1, "notes": "back", "submittedBy": "tester"}),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.json["revertedFrom"], v1);
    assert_eq!(r.json["codeSha256"], sha1);
    let v3 = r.json["version"].as_i64().unwrap();
    assert_eq!(v3, v2 + 1);
    let r = l.challenge(&a, b_id);
    assert_eq!(
        r.json["scored"], false,
        "a revert does not reset: {}",
        r.json
    );
    // Back to v2 (a revert too): its pair has 9 scored challenges left.
    let r = l.post_json(
        "/api/agent/bot/code/revert",
        Some(&a),
        &json!({"toVersion": v2}),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    let r = l.challenge(&a, b_id);
    assert_eq!(r.json["scored"], true, "{}", r.json);
    assert_eq!(r.json["scoredChallengesForPair"], 2);

    let v = l.get("/api/agent/bot/code/versions", Some(&a)).json;
    let list = v["versions"].as_array().unwrap();
    assert_eq!(list.len(), 4);
    assert_eq!(list[2]["revertedFrom"], v1);
    assert_eq!(list[2]["codeSha256"], sha1);
    assert_eq!(list[2]["notes"], "back");
    assert_eq!(list[2]["submittedBy"], "tester");
    assert_eq!(v["currentVersion"], v3 + 1);
    assert_eq!(list[3]["current"], true);
    let info = l.get("/api/agent/bot/info", Some(&a)).json;
    assert_eq!(info["currentVersion"], v3 + 1);
    assert_eq!(info["rp"], 120);
}
both_backends!(
    anti_farming_cut_off_after_ten_and_revert_semantics,
    anti_farming_and_revert
);
