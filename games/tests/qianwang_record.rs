//! Match records: the JSON shape other components read, clear errors on malformed JSON, and
//! `verify` on fault endings, truncated records, plies after the end and a wrong version.

use games::qianwang::{
    verify, EndReason, Forfeit, Game, MatchRecord, Move, Player, PlyMismatch, RuntimeKind, Side,
    VerifyError, VERSION,
};

fn player(name: &str) -> Player {
    Player {
        name: name.to_string(),
        code_sha256: format!("{:064x}", name.len()),
    }
}

fn mv(from: [u8; 2], to: [u8; 2]) -> Move {
    Move { from, to }
}

/// Three real plies from the start, then red returns an illegal move.
fn faulted_game() -> Game {
    let mut g = Game::new();
    g.play_with_points(Some(mv([0, 2], [1, 2])), 12).unwrap();
    g.play_with_points(Some(mv([0, 1], [1, 1])), 100).unwrap();
    g.play_with_points(Some(mv([1, 2], [0, 2])), 0).unwrap();
    g.forfeit(Forfeit::Illegal, "returned {from:[0,0],to:[0,0]}")
        .unwrap();
    g
}

fn record(g: &Game) -> MatchRecord {
    MatchRecord {
        version: VERSION.to_string(),
        seed: 42,
        black: player("alpha"),
        red: player("be"),
        plies: g.history().to_vec(),
        outcome: g.outcome().expect("game over"),
    }
}

#[test]
fn record_json_shape() {
    let rec = record(&faulted_game());
    let v: serde_json::Value = serde_json::from_str(&rec.to_json()).unwrap();
    assert_eq!(v["version"], "matchfarm-qianwang/1");
    assert_eq!(v["seed"], 42);
    assert_eq!(v["black"]["name"], "alpha");
    assert_eq!(v["red"]["code_sha256"].as_str().unwrap().len(), 64);
    assert_eq!(v["plies"][0]["side"], "black");
    assert_eq!(v["plies"][0]["move"]["from"], serde_json::json!([0, 2]));
    assert_eq!(v["plies"][0]["move"]["to"], serde_json::json!([1, 2]));
    assert_eq!(v["plies"][0]["captured"], serde_json::json!([]));
    assert_eq!(v["plies"][1]["points_used"], 100);
    assert_eq!(v["outcome"]["winner"], "black");
    assert_eq!(v["outcome"]["reason"], "illegal");
    assert_eq!(v["outcome"]["turn"], 4, "red faulted on turn 4");
    assert!(
        v["outcome"].get("runtime").is_none(),
        "no subtype unless runtime"
    );
    assert_eq!(verify(&rec), Ok(()));
}

#[test]
fn a_pass_is_null_in_json() {
    let full = {
        let mut b = games::qianwang::Board::empty();
        for x in 0..4 {
            for y in 0..4 {
                b.set(x, y, Some(if y % 2 == 0 { Side::Red } else { Side::Black }));
            }
        }
        b
    };
    let mut g = Game::from_position(full, Side::Black);
    g.play(None).unwrap();
    let v = serde_json::to_value(&g.history()[0]).unwrap();
    assert!(v["move"].is_null(), "{v}");
    let back: games::qianwang::Ply = serde_json::from_value(v).unwrap();
    assert_eq!(back.mv, None);
}

#[test]
fn malformed_json_names_the_place() {
    let e = MatchRecord::from_json("{\"version\": \"x\",\n \"seed\": -1}").unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("line 2"), "{msg}");
    let good = record(&faulted_game()).to_json();
    let missing = good.replace("\"outcome\"", "\"outcom\"");
    let e = MatchRecord::from_json(&missing).unwrap_err();
    assert!(e.to_string().contains("outcome"), "{e}");
    let bad_side = good.replacen("\"side\":\"black\"", "\"side\":\"blue\"", 1);
    let e = MatchRecord::from_json(&bad_side).unwrap_err();
    assert!(e.to_string().contains("blue"), "{e}");
}

#[test]
fn verify_fault_endings() {
    let mut rec = record(&faulted_game());
    rec.outcome.winner = Some(Side::Red);
    let e = verify(&rec).unwrap_err();
    assert!(
        matches!(e, VerifyError::Outcome { .. }),
        "the faulting side is red: {e}"
    );
    assert!(
        e.to_string().contains("black wins by illegal at turn 4"),
        "{e}"
    );

    let mut rec = record(&faulted_game());
    rec.outcome.reason = EndReason::Runtime;
    assert!(verify(&rec).is_err(), "runtime without a subtype");
    rec.outcome.runtime = Some(RuntimeKind::Memory);
    assert_eq!(verify(&rec), Ok(()));
    rec.outcome.reason = EndReason::Error;
    assert!(verify(&rec).is_err(), "subtype without runtime");
}

#[test]
fn verify_rejects_a_natural_ending_that_did_not_happen() {
    let mut rec = record(&faulted_game());
    rec.outcome.reason = EndReason::Material;
    rec.outcome.winner = None;
    let e = verify(&rec).unwrap_err();
    assert!(e.to_string().contains("still running"), "{e}");
}

#[test]
fn verify_rejects_plies_after_the_end() {
    // A 20-move quiet game ends by material on turn 20; a 21st ply is invalid.
    let mut g = Game::new();
    let quiet = [
        mv([0, 2], [1, 2]),
        mv([3, 1], [2, 1]),
        mv([1, 2], [0, 2]),
        mv([2, 1], [3, 1]),
    ];
    for i in 0..20 {
        g.play(Some(quiet[i % 4])).unwrap();
    }
    let mut rec = record(&g);
    assert_eq!(verify(&rec), Ok(()));
    assert_eq!(rec.outcome.reason, EndReason::Material);
    let mut extra = rec.plies[0].clone();
    extra.side = Side::Black;
    rec.plies.push(extra);
    let e = verify(&rec).unwrap_err();
    assert_eq!(e.ply_index(), Some(20));
    assert!(
        matches!(
            e,
            VerifyError::Ply {
                what: PlyMismatch::AfterEnd,
                turn: 21,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn verify_rejects_points_on_a_pass_and_a_wrong_version() {
    let mut rec = record(&faulted_game());
    rec.version = "matchfarm-qianwang/0".into();
    let e = verify(&rec).unwrap_err();
    assert!(matches!(e, VerifyError::Version { .. }), "{e}");
    assert!(e.to_string().contains("matchfarm-qianwang/0"));

    let mut rec = record(&faulted_game());
    rec.plies[0].mv = None;
    let e = verify(&rec).unwrap_err();
    assert_eq!(e.ply_index(), Some(0));
    assert!(
        matches!(
            e,
            VerifyError::Ply {
                what: PlyMismatch::PassWithPoints { used: 12 },
                ..
            }
        ),
        "{e}"
    );
    rec.plies[0].points_used = 0;
    let e = verify(&rec).unwrap_err();
    assert!(
        matches!(
            e,
            VerifyError::Ply {
                what: PlyMismatch::Illegal(_),
                ..
            }
        ),
        "black has moves, so it may not pass: {e}"
    );
    assert!(e.to_string().contains("passed but has 4 legal move"), "{e}");
}
