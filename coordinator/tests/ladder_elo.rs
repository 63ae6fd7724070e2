//! The ladder's Elo beside RP, over real HTTP against a real `farm ladder serve` on SQLite and on
//! a fresh PostgreSQL database: scored challenges move both bots' Elo by the standard amounts
//! (sweeps and draws), practice challenges past the per-pair limit move nothing, and the rating
//! shows in the challenge answer, bot info, my matches, scouting, the leaderboard (JSON, page)
//! and the admin list. A database made before the ladder kept Elo is migrated in place.
//!
//! Results are certain whatever the seed (tests/ladder_support/bots): `osc` beats `quit` in both
//! games (by `quit`'s error); two `osc` bots draw both.

mod ladder_support;

use games::qianwang::ladder::PlayerResult::{Loss, Win};
use ladder::elo;
use ladder_support::{bot, Backend, Ladder, Opts};
use serde_json::Value;

fn elo_of(l: &Ladder, key: &str) -> i64 {
    let info = l.get("/api/agent/bot/info", Some(key));
    assert_eq!(info.status, 200, "{}", info.text);
    info.json["elo"]
        .as_i64()
        .expect("bot info has an integer elo")
}

fn board_elo(l: &Ladder, id: i64) -> i64 {
    let lb = l.get("/api/leaderboard", None).json;
    lb["players"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["botId"] == id)
        .and_then(|p| p["elo"].as_i64())
        .unwrap_or_else(|| panic!("bot {id} with an elo on the leaderboard: {lb}"))
}

/// One challenge; checks the answer's Elo (before, change, after, both sides) against
/// `want_delta` for the challenger, then bot info and the leaderboard of both.
fn challenge(
    l: &Ladder,
    who: (&str, i64),
    whom: (&str, i64),
    scored: bool,
    want_delta: i64,
) -> Value {
    let (a0, b0) = (elo_of(l, who.0), elo_of(l, whom.0));
    let r = l.challenge(who.0, whom.1);
    assert_eq!(r.status, 200, "{}", r.text);
    let j = r.json;
    assert_eq!(j["scored"], scored, "{j}");
    assert_eq!(j["eloBefore"], a0, "{j}");
    assert_eq!(j["eloDelta"], want_delta, "{j}");
    assert_eq!(j["elo"], a0 + want_delta, "{j}");
    assert_eq!(j["opponent"]["eloBefore"], b0, "{j}");
    assert_eq!(j["opponent"]["eloDelta"], -want_delta, "{j}");
    assert_eq!(j["opponent"]["elo"], b0 - want_delta, "{j}");
    assert_eq!(elo_of(l, who.0), a0 + want_delta);
    assert_eq!(elo_of(l, whom.0), b0 - want_delta);
    assert_eq!(board_elo(l, who.1), a0 + want_delta);
    assert_eq!(board_elo(l, whom.1), b0 - want_delta);
    j
}

fn scored_only(backend: Backend) {
    let l = Ladder::start(backend, Opts::default());
    let (a_id, a) = l.player("osc-a", true);
    let (b_id, b) = l.player("osc-b", true);
    let (c_id, c) = l.player("quit-c", true);
    l.publish(&a, &bot("osc.js"));
    l.publish(&b, &format!("{}\n// b\n", bot("osc.js")));
    l.publish(&c, &bot("quit.js"));
    let (pa, pb, pc) = ((a.as_str(), a_id), (b.as_str(), b_id), (c.as_str(), c_id));
    for k in [&a, &b, &c] {
        assert_eq!(elo_of(&l, k), elo::INITIAL);
    }

    // A sweep between equal ratings: K/2 = 16 each way.
    let j = challenge(&l, pa, pc, true, 16);
    assert_eq!(j["result"], "win");
    assert_eq!(
        (j["elo"].as_i64(), j["opponent"]["elo"].as_i64()),
        (Some(1516), Some(1484))
    );
    // RP is settled as before, beside it.
    assert_eq!(j["rpDelta"], 25);
    // The loser challenges back and is swept again: 1484 vs 1516, E = 0.454, 32 · −0.454 = −15.
    challenge(&l, pc, pa, true, -15);
    // A draw moves ratings that differ: 1531 vs 1500, E = 0.545, 32 · (0.5 − 0.545) = −1.4 -> −1.
    let j = challenge(&l, pa, pb, true, -1);
    assert_eq!(j["result"], "draw");
    assert_eq!(
        (j["elo"].as_i64(), j["opponent"]["elo"].as_i64()),
        (Some(1530), Some(1501))
    );
    // Setting RP by hand does not touch Elo.
    l.set_rp("osc-a", 900);
    assert_eq!(elo_of(&l, &a), 1530);

    // The rest of the pair's ten scored challenges, each by the standard update.
    for i in 3..=10 {
        let (who, whom, games) = if i % 2 == 0 {
            (pc, pa, (Loss, Loss))
        } else {
            (pa, pc, (Win, Win))
        };
        let want = elo::update(elo_of(&l, who.0), elo_of(&l, whom.0), games.0, games.1).a_delta;
        let j = challenge(&l, who, whom, true, want);
        assert_eq!(j["scoredChallengesForPair"], i);
    }
    let (ea, eb, ec) = (elo_of(&l, &a), elo_of(&l, &b), elo_of(&l, &c));
    assert_eq!(ea + eb + ec, 3 * elo::INITIAL, "Elo is zero-sum");
    assert!(ea > 1530 && ec < 1484, "{ea} {ec}");

    // Practice (the 11th and 12th of the pair): played and stored, Elo unmoved either way.
    let j = challenge(&l, pa, pc, false, 0);
    assert_eq!(j["result"], "win");
    assert_eq!(j["rpDelta"], 0);
    challenge(&l, pc, pa, false, 0);
    assert_eq!((elo_of(&l, &a), elo_of(&l, &c)), (ea, ec));

    // My matches: each challenge's Elo change and rating after, from my side.
    let mine = l.get("/api/agent/bot/matches?limit=3", Some(&c)).json;
    let list = mine["challenges"].as_array().unwrap();
    assert_eq!(list[0]["scored"], false);
    assert_eq!(list[0]["eloDelta"], 0);
    assert_eq!(list[0]["eloAfter"], ec);
    assert_eq!(list[2]["scored"], true);
    assert_eq!(list[2]["eloAfter"], ec);
    assert!(list[2]["eloDelta"].as_i64().unwrap() != 0, "{}", list[2]);
    let theirs = l.get("/api/agent/bot/matches?limit=1", Some(&a)).json;
    assert_eq!(theirs["challenges"][0]["eloAfter"], ea);

    // Scouting, the page and the admin list show it too.
    let s = l
        .get(&format!("/api/agent/opponents/{a_id}/matches"), Some(&b))
        .json;
    assert_eq!(s["bot"]["elo"], ea);
    let page = l.get("/", None).text;
    assert!(
        page.contains(">Elo<") && page.contains("p.elo"),
        "the leaderboard page shows Elo"
    );
    let list = l.admin(&["list"]);
    assert!(list.lines().next().unwrap().ends_with("\telo"), "{list}");
    assert!(
        list.lines()
            .any(|line| line.starts_with(&format!("{c_id}\tquit-c\t"))
                && line.ends_with(&format!("\t{ec}"))),
        "{list}"
    );
}
both_backends!(elo_moves_on_scored_challenges_only, scored_only);

/// A database of a ladder from before Elo: the same tables without the Elo columns.
fn migrates(backend: Backend) {
    let l = Ladder::start(backend, Opts::default());
    let (a_id, a) = l.player("old-a", true);
    let (c_id, c) = l.player("old-c", true);
    l.publish(&a, &bot("osc.js"));
    l.publish(&c, &bot("quit.js"));
    let r = l.challenge(&a, c_id);
    assert_eq!(r.status, 200, "{}", r.text);
    let mut l = l;
    l.stop();
    l.sql(
        "ALTER TABLE ladder_players DROP COLUMN elo;
         ALTER TABLE ladder_challenges DROP COLUMN elo_delta;
         ALTER TABLE ladder_challenges DROP COLUMN challenger_elo;
         ALTER TABLE ladder_challenges DROP COLUMN challenged_elo;",
    );
    // The admin CLI opens (and migrates) the database too; both may run first.
    let list = l.admin(&["list"]);
    assert!(list.contains(&format!("{a_id}\told-a\t")), "{list}");
    l.restart(&Opts::default());
    // The old bots start from the initial rating; their RP and records are kept.
    let info = l.get("/api/agent/bot/info", Some(&a)).json;
    assert_eq!(info["elo"], elo::INITIAL);
    assert_eq!(
        (info["rp"].as_i64(), info["wins"].as_i64()),
        (Some(25), Some(1))
    );
    assert_eq!(board_elo(&l, c_id), elo::INITIAL);
    // The old challenge has no Elo figures; a new one moves both from the initial rating.
    let old = l.get("/api/agent/bot/matches", Some(&a)).json;
    assert_eq!(old["challenges"][0]["eloDelta"], Value::Null);
    assert_eq!(old["challenges"][0]["eloAfter"], Value::Null);
    challenge(&l, (a.as_str(), a_id), (c.as_str(), c_id), true, 16);
    // Opening the migrated database again changes nothing.
    l.restart(&Opts::default());
    assert_eq!(elo_of(&l, &a), elo::INITIAL + 16);
    assert_eq!(elo_of(&l, &c), elo::INITIAL - 16);
}
both_backends!(a_database_from_before_elo_is_migrated_in_place, migrates);
