//! Replays: recording, the JSON document, verification errors for every kind of tampering,
//! start failures, inspect and viewer data.

mod common;
use common::*;
use games::bomberman::replay::*;
use games::bomberman::*;
use serde_json::Value;
use shared::FaultKind;

fn edit(json: &str, f: impl FnOnce(&mut Value)) -> String {
    let mut v: Value = serde_json::from_str(json).unwrap();
    f(&mut v);
    v.to_string()
}

fn verify_err(json: &str) -> String {
    verify(json).unwrap_err().to_string()
}

#[test]
fn a_recorded_match_verifies_and_round_trips() {
    for n in [2, 3, 10] {
        let (rp, game) = record(11, n, 5, &[(1, 3, FaultKind::Timeout)]);
        let json = rp.to_json();
        let back = verify(&json).unwrap();
        assert_eq!(back, rp);
        assert_eq!(rp.turns.len() as u32, game.turn());
        assert_eq!(rp.digest.len(), 64);
        assert_eq!(rp.result.turns, game.turn());
        assert_eq!(
            rp.result.faults[1].len(),
            usize::from(rp.result.death_turns[1] >= 3)
        );
        assert!(rp.result.valid_for_scoring);
        assert_eq!(
            rp.result.timing,
            Some(serde_json::json!({"bot_0": {"wall_ms": 12}}))
        );
        let v: Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["format"], "matchfarm-bomberman-replay");
        assert_eq!(v["version"], VERSION);
        assert_eq!(v["map"]["source"], "generated");
        assert_eq!(v["turns"][0]["actions"].as_array().unwrap().len(), n);
    }
}

#[test]
fn the_result_object_has_exact_and_float_scores() {
    let (rp, game) = record(3, 2, 9, &[]);
    let o = game.outcome();
    let r = &rp.result;
    assert_eq!(r.version, VERSION);
    assert_eq!(r.names, vec!["bot0", "bot1"]);
    assert_eq!(r.hashes["bot_1"], format!("{:064x}", 1));
    assert_eq!(
        r.points_exact,
        o.points.iter().map(|p| p.to_string()).collect::<Vec<_>>()
    );
    for p in 0..2 {
        let exact = o.points[p];
        assert_eq!(r.points[p], *exact.numer() as f64 / *exact.denom() as f64);
        assert_eq!(r.survival_points[p] + r.kill_points[p], r.points[p]);
    }
    assert_eq!(r.death_turns, o.death_turns);
    assert_eq!(r.ranks, o.ranks);
    assert_eq!(r.errors, vec![0, 0]);
    let v = rp.result_json();
    for key in [
        "ranks",
        "points",
        "points_exact",
        "survival_points",
        "kill_points",
        "kill_shares",
        "errors",
        "death_turns",
        "turns",
        "valid_for_scoring",
        "bombs_placed",
        "boxes_broken",
        "faults",
    ] {
        assert!(v.get(key).is_some(), "result.{key}");
    }
}

#[test]
fn a_bot_that_never_started_dies_on_turn_zero_and_voids_the_match() {
    let (rp, game) = record(4, 3, 2, &[(2, 0, FaultKind::StartFailure)]);
    assert_eq!(game.death_turn(2), 0);
    assert!(!rp.result.valid_for_scoring);
    assert_eq!(rp.result.errors, vec![0, 0, 1]);
    assert_eq!(rp.result.faults[2][0].kind, FaultKind::StartFailure);
    assert_eq!(rp.result.faults[2][0].turn, 0);
    verify(&rp.to_json()).unwrap();
    let (rp, _) = record(4, 3, 2, &[(2, 0, FaultKind::CompileFailure)]);
    assert!(!rp.result.valid_for_scoring);
    let (rp, _) = record(4, 3, 2, &[(2, 0, FaultKind::Crash)]);
    assert!(
        rp.result.valid_for_scoring,
        "an ordinary fault does not void the match"
    );
}

#[test]
fn broken_json_is_reported_with_its_position() {
    let (rp, _) = record(1, 2, 1, &[]);
    let json = rp.to_json();
    let cut = &json[..json.len() / 2];
    let e = verify_err(cut);
    assert!(
        e.starts_with("the replay is truncated: the JSON ends early at line 1, column"),
        "{e}"
    );
    assert_eq!(
        verify_err("{\"format\": nope}"),
        "the replay is not valid JSON at line 1, column 13: expected ident"
    );
}

#[test]
fn another_format_or_version_is_named() {
    let (rp, _) = record(1, 2, 1, &[]);
    let json = rp.to_json();
    let e = verify_err(&edit(&json, |v| v["format"] = "chess-replay".into()));
    assert_eq!(e, "this is not a Bomberman replay: format is \"chess-replay\", expected \"matchfarm-bomberman-replay\"");
    let e = verify_err(&edit(&json, |v| {
        v["version"] = "matchfarm-bomberman/0.4".into()
    }));
    assert_eq!(e, "replay version \"matchfarm-bomberman/0.4\" cannot be checked by this engine, which is \"matchfarm-bomberman/0.5-public-state\"");
    let e = verify_err(&edit(&json, |v| v["extra"] = 1.into()));
    assert!(
        e.starts_with("the replay does not have the expected fields: unknown field `extra`"),
        "{e}"
    );
}

#[test]
fn a_generated_map_must_match_its_regeneration() {
    let (rp, _) = record(8, 2, 1, &[]);
    let json = rp.to_json();
    let row = rp.map.rows[5].clone();
    let i = row.find('+').unwrap();
    let mut edited = row.clone();
    edited.replace_range(i..i + 1, ".");
    let e = verify_err(&edit(&json, |v| {
        v["map"]["rows"][5] = edited.clone().into()
    }));
    assert_eq!(
        e,
        format!("the stored map differs from the one seed 8 generates for 2 players: row 5 is {edited:?} but regenerates as {row:?}")
    );
    let e = verify_err(&edit(&json, |v| v["params"]["turn_limit"] = 301.into()));
    assert_eq!(
        e,
        "params.turn_limit is 301 but 2 players on this map need 300"
    );
}

#[test]
fn the_first_turn_whose_state_differs_is_named() {
    let (rp, _) = record(2, 2, 7, &[]);
    let json = rp.to_json();
    // Flip player 0's bomb flag on turn 0: the bomb appears or disappears.
    let a0 = rp.turns[0].actions[0].clone().unwrap();
    let flipped = format!("{}{}", &a0[..1], if &a0[1..] == "1" { "0" } else { "1" });
    let e = verify_err(&edit(&json, |v| {
        v["turns"][0]["actions"][0] = flipped.into()
    }));
    assert!(
        e.starts_with("turn 0 is the first whose state differs: re-simulated digest "),
        "{e}"
    );
    let e = verify_err(&edit(&json, |v| {
        v["turns"][3]["digest"] = "0123456789abcdef".into()
    }));
    assert!(
        e.starts_with("turn 3 is the first whose state differs"),
        "{e}"
    );
    assert!(e.ends_with("recorded 0123456789abcdef"), "{e}");
    let e = verify_err(&edit(&json, |v| v["turns"][1]["actions"][1] = "Q1".into()));
    assert_eq!(e, "turn 1: player 1's action \"Q1\" is not like \"U1\"");
    let e = verify_err(&edit(&json, |v| {
        v["turns"].as_array_mut().unwrap().pop();
    }));
    assert_eq!(
        e,
        format!(
            "the replay ends after {} turns but the game is not over",
            rp.turns.len() - 1
        )
    );
}

#[test]
fn a_result_field_that_differs_is_named_with_both_values() {
    let (rp, _) = record(2, 2, 7, &[]);
    let json = rp.to_json();
    let e = verify_err(&edit(&json, |v| v["result"]["turns"] = 999.into()));
    assert_eq!(
        e,
        format!(
            "result.turns differs: the replay says 999, re-simulation gives {}",
            rp.result.turns
        )
    );
    let e = verify_err(&edit(&json, |v| v["result"]["points"][0] = 7.5.into()));
    assert!(
        e.starts_with("result.points differs: the replay says [7.5,"),
        "{e}"
    );
    let e = verify_err(&edit(&json, |v| v["names"][1] = "Mallory".into()));
    assert_eq!(e, "result.names differs: the replay says [\"bot0\",\"bot1\"], re-simulation gives [\"bot0\",\"Mallory\"]");
}

#[test]
fn any_other_edit_is_caught_by_the_content_digest() {
    let (rp, _) = record(2, 2, 7, &[]);
    let json = rp.to_json();
    for f in [
        (|v: &mut Value| v["stderr_tails"][0] = "forged".into()) as fn(&mut Value),
        |v| v["result"]["timing"]["bot_0"]["wall_ms"] = 1.into(),
        |v| v["digest"] = "00".repeat(32).into(),
    ] {
        let e = verify_err(&edit(&json, f));
        assert!(
            e.starts_with("content digest mismatch: the replay says "),
            "{e}"
        );
    }
    // A member the typed form would drop is still part of the hashed document.
    let (rp, _) = record(2, 2, 7, &[(0, 1, FaultKind::Timeout)]);
    let e = verify_err(&edit(&rp.to_json(), |v| {
        v["result"]["faults"][0][0]["note"] = "x".into()
    }));
    assert!(e.starts_with("content digest mismatch"), "{e}");
}

#[test]
fn a_hand_made_map_replay_verifies() {
    let m = parse_map("#######\n#0....#\n#.+.+.#\n#.....#\n#.+.+.#\n#....1#\n#######\n").unwrap();
    let params = Params::for_map(&m).unwrap();
    let (rp, _) = record_on(0, &m, MapSource::File, params, 3, &[]);
    assert_eq!(rp.result.map_source, MapSource::File);
    let json = rp.to_json();
    verify(&json).unwrap();
    let e = verify_err(&edit(&json, |v| v["map"]["rows"][2] = "#.....#".into()));
    assert!(e.starts_with("turn ") || e.starts_with("result."), "{e}");
}

#[test]
fn inspect_shows_boards_answers_and_fault_details() {
    let (rp, _) = record(6, 3, 4, &[(1, 2, FaultKind::Timeout)]);
    let text = inspect(&rp, 2, 1).unwrap();
    for want in [
        "===== turn 1 =====",
        "===== turn 2 =====",
        "===== turn 3 =====",
        "-- state at the start of turn 2 --",
        "P1: FAULT timeout on turn 2: timeout of bot1",
        "P1 dies (fault)",
        "-- answers --",
        "     012345678901234\n",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
    assert!(!text.contains("===== turn 0 ====="));
    assert!(!text.contains("===== turn 4 ====="));
    assert_eq!(
        inspect(&rp, 5000, 0).unwrap_err().to_string(),
        format!(
            "turn 5000 is not in this replay, which has turns 0..={}",
            rp.turns.len() - 1
        )
    );
}

#[test]
fn viewer_data_has_one_frame_per_turn_in_the_agreed_shape() {
    let (rp, game) = record(6, 3, 4, &[(1, 2, FaultKind::Timeout)]);
    let v = viewer_data(&rp);
    assert!(v.get("error").is_none(), "{v}");
    assert_eq!(v["meta"]["players"], 3);
    assert_eq!(v["meta"]["side"], 15);
    assert_eq!(v["initial"]["board"].as_array().unwrap().len(), 15);
    let frames = v["frames"].as_array().unwrap();
    assert_eq!(frames.len(), rp.turns.len());
    let f2 = &frames[2];
    assert_eq!(f2["t"], 2);
    assert_eq!(
        f2["actions"][1],
        serde_json::json!({"fault": "timeout", "detail": "timeout of bot1"})
    );
    assert_eq!(f2["landed"][1], Value::Null);
    assert_eq!(
        f2["events"][0],
        serde_json::json!({"type": "fault", "player": 1, "kind": "timeout", "detail": "timeout of bot1"})
    );
    assert!(f2["events"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["type"] == "death" && e["cause"] == "fault"));
    assert_eq!(f2["status"][1]["death_turn"], 2);
    let last = frames.last().unwrap();
    for p in 0..3 {
        let (x, y) = game.position(p);
        assert_eq!(
            last["players"][p],
            serde_json::json!({"x": x, "y": y, "alive": game.is_alive(p)})
        );
    }
    assert_eq!(v["result"], rp.result_json());
}

/// A result row's timing: per bot, every total and the turns, maxima, means and deadline misses
/// of the per-turn list, without the list; everything else of the result as in the replay.
#[test]
fn a_row_keeps_the_per_turn_timing_summed_up() {
    let (mut rp, _) = record(5, 2, 4, &[]);
    let turn = |t: u32, wall: u64, cpu: u64, waited: u64, met: bool| serde_json::json!({"turn": t, "wall_us": wall, "cpu_us": cpu, "waited_us": waited, "met": met});
    rp.result.timing = Some(serde_json::json!({
        "bot_0": {"turns": 3, "wall_us": 700, "cpu_us": 60, "max_wall_us": 400, "deadline_misses": 1,
                  "cpu_per_mille": 85, "per_turn": [turn(0, 100, 10, 5, true), turn(1, 400, 30, 0, false),
                  turn(2, 200, 20, 7, true)]},
        "bot_1": {"turns": 0, "wall_us": 0, "cpu_us": 0, "max_wall_us": 0, "deadline_misses": 0,
                  "cpu_per_mille": 0, "per_turn": []},
    }));
    let row = rp.row_result_json();
    assert_eq!(
        row["timing"],
        serde_json::json!({
            "bot_0": {"turns": 3, "wall_us": 700, "cpu_us": 60, "max_wall_us": 400, "deadline_misses": 1,
                      "cpu_per_mille": 85, "max_cpu_us": 30, "waited_us": 12,
                      "mean_wall_us": 233, "mean_cpu_us": 20},
            "bot_1": {"turns": 0, "wall_us": 0, "cpu_us": 0, "max_wall_us": 0, "deadline_misses": 0,
                      "cpu_per_mille": 0, "max_cpu_us": 0, "waited_us": 0,
                      "mean_wall_us": 0, "mean_cpu_us": 0},
        })
    );
    let mut full = rp.result_json();
    let mut compact = row.clone();
    full.as_object_mut().unwrap().remove("timing");
    compact.as_object_mut().unwrap().remove("timing");
    assert_eq!(compact, full, "only the timing differs");
    // The same turns as value lists (as the worker writes them) sum up the same.
    let objects = rp.result.timing.clone().unwrap();
    rp.result.timing = Some(games::bomberman::replay::turn_timing::columnar(objects));
    assert!(rp.result.timing.as_ref().unwrap()["bot_0"]["per_turn"]["rows"].is_array());
    assert_eq!(rp.row_result_json()["timing"], row["timing"]);
    // Timing without a per-turn list (or not the worker's shape) is kept as it is.
    let odd = serde_json::json!({"bot_0": {"wall_ms": 12}, "x": 3});
    assert_eq!(timing_summary(&odd), odd);
    rp.result.timing = None;
    assert_eq!(rp.row_result_json(), rp.result_json());
}

/// The index stores a match's viewer data in the compact form (the moves, which it re-plays)
/// when that gives back exactly the data, else with its frames packed; both turn back into
/// exactly the viewer data.
#[test]
fn packed_viewer_data_unpacks_to_the_same_frames() {
    use games::bomberman::viewer::{pack_for_index, pack_frames, unpack_index_data};
    for n in [2, 5, 10] {
        let (rp, _) = record(17, n, 3, &[(1, 4, FaultKind::Timeout)]);
        let data = viewer_data(&rp);
        let compact = pack_for_index(data.clone());
        assert!(compact.get("frames").is_none() && compact.get("columns").is_none());
        let moves = compact["moves"].as_str().unwrap();
        assert_eq!(
            moves.len(),
            n * data["frames"].as_array().unwrap().len(),
            "{n} players"
        );
        assert!(moves.chars().all(|c| "UDLRSudlrs.".contains(c)), "{moves}");
        assert_eq!(
            compact["faults"],
            serde_json::json!([[4, 1, "timeout", "timeout of bot1"]]),
            "{n} players"
        );
        assert!(
            compact.to_string().len() < pack_frames(data.clone()).to_string().len(),
            "{n} players: smaller than the frames packed"
        );
        assert_eq!(unpack_index_data(compact.clone()), data, "{n} players");
        // A compact form whose moves do not re-play is not turned into anything else.
        let mut odd = compact.clone();
        odd["moves"] = serde_json::json!(format!("{moves}S"));
        assert_eq!(unpack_index_data(odd.clone()), odd, "{n} players");

        let packed = pack_frames(data.clone());
        assert!(packed.get("frames").is_none() && packed.get("columns").is_some());
        assert!(
            packed.to_string().len() < data.to_string().len(),
            "{n} players: smaller"
        );
        // Where each player landed is left for the page to derive (the timed-out player's
        // landing is null from turn 4), and players and status are stored as value lists.
        assert_eq!(
            packed["derived"],
            serde_json::json!(["landed"]),
            "{n} players"
        );
        assert_eq!(
            packed["shapes"]["players"],
            serde_json::json!(["x", "y", "alive"])
        );
        assert_eq!(
            packed["shapes"]["status"],
            serde_json::json!(["death_turn", "kill_share"])
        );
        assert_eq!(unpack_index_data(packed), data, "{n} players");
        // Frames the moves do not explain keep the packed-frames form; so does an error.
        let mut odd = data.clone();
        odd["frames"][0]["landed"][0] = serde_json::json!([99, 99]);
        let packed = pack_for_index(odd.clone());
        assert!(packed.get("sim").is_none() && packed.get("columns").is_some());
        assert!(packed.get("derived").is_none(), "{n} players");
        assert_eq!(unpack_index_data(packed), odd, "{n} players");
        let mut failed = data.clone();
        failed["error"] =
            serde_json::json!("turn 9: player 0 is alive but has neither an action nor a fault");
        let packed = pack_for_index(failed.clone());
        assert!(packed.get("sim").is_none() && packed.get("columns").is_some());
        assert_eq!(unpack_index_data(packed), failed, "{n} players");
    }
}
