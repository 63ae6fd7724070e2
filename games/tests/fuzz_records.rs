//! Fuzzing the game boundary (issue 22): a worker's report carries a record as text, and
//! `games::accept` parses and re-verifies it by its game's rules before anything is scored.
//! Arbitrary text for every game, and valid bomberman replays, 钳王 and Nim records with bytes
//! edited or JSON values replaced, go through `accept`: only errors (or, for an edit that keeps
//! the record valid, the record) come out, never a panic. Bounded, a few seconds.

mod common;

use games::accept::accept;
use games::nim::{self, NimRecord};
use games::qianwang::{self as qw, Game as QwGame, MatchRecord};
use proptest::prelude::*;
use serde_json::Value;
use shared::msg::{
    BombermanJob, GameJob, Job, JobReport, NimJob, ProbojJob, ProgramRef, QianwangJob, SeatSpec,
};

fn job(game: GameJob, names: &[String], hashes: &[String]) -> Job {
    Job {
        tournament: "fuzz".into(),
        number: 1,
        referee_version: "v".into(),
        seats: names
            .iter()
            .zip(hashes)
            .map(|(n, h)| SeatSpec {
                name: n.clone(),
                program: ProgramRef {
                    sha256: h.clone(),
                    file_name: format!("{n}.js"),
                },
            })
            .collect(),
        game,
    }
}

fn report(text: String) -> JobReport {
    JobReport {
        tournament: "fuzz".into(),
        number: 1,
        worker: "fuzz/1".into(),
        seconds: 0.1,
        speed: None,
        outcome: Ok(text),
    }
}

/// A bomberman job and its valid replay.
fn bomberman(seed: u64, n: usize, script: u64) -> (Job, String) {
    let (rp, _) = common::record(seed, n, script, &[(0, 2, shared::FaultKind::Timeout)]);
    let names: Vec<String> = (0..n).map(|i| format!("bot{i}")).collect();
    let hashes: Vec<String> = (0..n).map(|i| format!("{i:064x}")).collect();
    (
        job(
            GameJob::Bomberman(BombermanJob {
                seed,
                manifest_digest: "d".into(),
                clock: None,
            }),
            &names,
            &hashes,
        ),
        rp.to_json(),
    )
}

/// A 钳王 job and a valid record of a game played with `choices`.
fn qianwang(seed: u64, choices: &[u16]) -> (Job, String) {
    let mut g = QwGame::new();
    for c in choices {
        if g.is_over() {
            break;
        }
        let legal = g.legal_moves();
        let m = (!legal.is_empty()).then(|| legal[*c as usize % legal.len()]);
        let points = if m.is_some() { u32::from(*c % 101) } else { 0 };
        g.play_with_points(m, points).expect("a legal move");
    }
    if !g.is_over() {
        g.forfeit(
            qw::Forfeit::Runtime(qw::RuntimeKind::Timeout),
            "fuzz: ran out of moves",
        )
        .expect("game running");
    }
    let player = |name: &str, h: char| qw::Player {
        name: name.into(),
        code_sha256: h.to_string().repeat(64),
    };
    let rec = MatchRecord {
        version: qw::VERSION.to_string(),
        seed,
        black: player("b", '0'),
        red: player("r", '1'),
        plies: g.history().to_vec(),
        outcome: g.outcome().expect("the game is over"),
    };
    let names = ["b".to_string(), "r".to_string()];
    let hashes = ["0".repeat(64), "1".repeat(64)];
    (
        job(GameJob::Qianwang(QianwangJob { seed }), &names, &hashes),
        rec.to_json(),
    )
}

/// A Nim job and a valid record: each seat takes `take % heap + 1` from the first heap left.
fn nim_game(seed: u64, takes: &[u32]) -> (Job, String) {
    let mut heaps = nim::start(seed);
    let mut moves = Vec::new();
    let mut t = takes.iter().cycle();
    while let Some(heap) = heaps.iter().position(|&h| h > 0) {
        let take = t.next().copied().unwrap_or(0) % heaps[heap] + 1;
        let m = nim::Move { heap, take };
        nim::apply(&mut heaps, m).expect("a legal move");
        moves.push(m);
    }
    let players: Vec<nim::Player> = (0..2)
        .map(|i| nim::Player {
            name: format!("n{i}"),
            code_sha256: format!("{i:064x}"),
        })
        .collect();
    let names: Vec<String> = players.iter().map(|p| p.name.clone()).collect();
    let hashes: Vec<String> = players.iter().map(|p| p.code_sha256.clone()).collect();
    let record = |winner| NimRecord {
        version: nim::VERSION.to_string(),
        seed,
        players: players.clone(),
        heaps: nim::start(seed),
        moves: moves.clone(),
        fault: None,
        winner,
    };
    let valid = [record(0), record(1)]
        .into_iter()
        .find(|r| nim::verify(r).is_ok())
        .expect("one winner verifies");
    let text = serde_json::to_string(&valid).expect("a record serializes");
    let game = GameJob::Nim(NimJob { seed, turn_ms: 100 });
    (job(game, &names, &hashes), text)
}

fn proboj_job() -> Job {
    let p = ProbojJob {
        manifest_digest: "d".into(),
        config_json: "{}".into(),
        game_json: r#"{"gamefolder": "g", "players": ["a", "b"]}"#.into(),
        files: Vec::new(),
        fair: false,
        server_timeout_ms: None,
    };
    job(GameJob::Proboj(p), &[], &[])
}

/// Byte-level edits of a text (the result read back as text, invalid UTF-8 replaced).
fn edited(text: &str, edits: &[(usize, u8, u8)]) -> String {
    let mut b = text.as_bytes().to_vec();
    for &(at, byte, how) in edits {
        let i = at % (b.len() + 1);
        match how % 4 {
            0 if i < b.len() => b[i] = byte,
            1 => b.insert(i, byte),
            2 if i < b.len() => {
                b.remove(i);
            }
            _ if i > b.len() / 2 => b.truncate(i),
            _ => {}
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

/// Replaces the `pick`-th value (in document order) of `v` with `with`.
fn replace_value(v: &mut Value, pick: &mut usize, with: &Value) -> bool {
    if *pick == 0 {
        *v = with.clone();
        return true;
    }
    *pick -= 1;
    match v {
        Value::Array(a) => a.iter_mut().any(|x| replace_value(x, pick, with)),
        Value::Object(o) => o.values_mut().any(|x| replace_value(x, pick, with)),
        _ => false,
    }
}

/// JSON values that stress a parser's assumptions: extremes, wrong types, deep nesting.
fn odd_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        Just(serde_json::json!(-1)),
        Just(serde_json::json!(u64::MAX)),
        Just(serde_json::json!(i64::MIN)),
        Just(serde_json::json!(1e300)),
        Just(serde_json::json!(0.5)),
        Just(serde_json::json!("")),
        Just(serde_json::json!([])),
        Just(serde_json::json!({})),
        Just(serde_json::json!([[[[[[[[[[0]]]]]]]]]])),
        any::<i64>().prop_map(|n| serde_json::json!(n)),
        any::<u32>().prop_map(|n| serde_json::json!(n)),
        ".{0,8}".prop_map(Value::String),
    ]
}

/// Runs `text` through `accept` for `job`: never a panic.
fn check(job: &Job, text: String) {
    let _ = accept(job, &report(text));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_text_never_panics(text in ".{0,200}", bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let (bm, _) = bomberman(3, 2, 5);
        let (q, _) = qianwang(1, &[]);
        let (n, _) = nim_game(1, &[1]);
        for j in [&bm, &q, &n, &proboj_job()] {
            check(j, text.clone());
            check(j, String::from_utf8_lossy(&bytes).into_owned());
        }
    }

    #[test]
    fn edited_bomberman_replays_never_panic(
        seed in any::<u64>(), n in 2usize..=4, script in any::<u64>(),
        edits in prop::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 1..6),
        pick in any::<usize>(), with in odd_value(),
    ) {
        let (j, text) = bomberman(seed, n, script);
        prop_assert!(accept(&j, &report(text.clone())).is_ok());
        check(&j, edited(&text, &edits));
        let mut v: Value = serde_json::from_str(&text).unwrap();
        let mut at = pick % 400;
        replace_value(&mut v, &mut at, &with);
        check(&j, v.to_string());
    }

    #[test]
    fn edited_qianwang_records_never_panic(
        seed in any::<u64>(), choices in prop::collection::vec(any::<u16>(), 0..300),
        edits in prop::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 1..6),
        pick in any::<usize>(), with in odd_value(),
    ) {
        let (j, text) = qianwang(seed, &choices);
        prop_assert!(accept(&j, &report(text.clone())).is_ok(), "{:?}", accept(&j, &report(text.clone())).err());
        check(&j, edited(&text, &edits));
        let mut v: Value = serde_json::from_str(&text).unwrap();
        let mut at = pick % 600;
        replace_value(&mut v, &mut at, &with);
        check(&j, v.to_string());
    }

    #[test]
    fn edited_nim_records_never_panic(
        seed in any::<u64>(), takes in prop::collection::vec(any::<u32>(), 1..10),
        edits in prop::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 1..6),
        pick in any::<usize>(), with in odd_value(),
    ) {
        let (j, text) = nim_game(seed, &takes);
        prop_assert!(accept(&j, &report(text.clone())).is_ok());
        check(&j, edited(&text, &edits));
        let mut v: Value = serde_json::from_str(&text).unwrap();
        let mut at = pick % 80;
        replace_value(&mut v, &mut at, &with);
        check(&j, v.to_string());
    }
}
