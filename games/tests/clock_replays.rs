//! The time bank in replays, without processes: a match recorded with a bank carries its clock
//! and verifies; every way of misstating it (a timeout the bank covered, an answer it could not
//! cover, a doctored balance, a missing entry) is rejected by name; a match without a bank
//! records exactly the replay it always did; and a clock scaled to the host's speed is
//! re-derived from its recorded scaling, which must match the limits played.

mod common;
use common::*;
use games::bomberman::replay::*;
use games::bomberman::*;
use serde_json::Value;
use shared::{Fault, FaultKind};

const CLOCK: ClockSpec = ClockSpec {
    turn_ms: 100,
    bank_ms: 1000,
};

/// Player 1 spends 400 ms on turns 1..=`slow_until`: it draws 300 ms a turn, so its bank runs
/// out on turn 4 (allowance 200 ms) when `slow_until` >= 4, where it times out. Others take 1 ms.
fn banked(clock: Option<ClockSpec>, slow_until: u32) -> Replay {
    played(clock, None, slow_until)
}

/// [`banked`], recording `scaling` too (whose played clock `clock` should be).
fn played(clock: Option<ClockSpec>, scaling: Option<Scaling>, slow_until: u32) -> Replay {
    let (seed, n) = (7, 3);
    let map = generate_map(seed, n).unwrap();
    let params = Params::for_players(n).unwrap();
    let mut game = Game::new(params, &map).unwrap();
    let mut rec = Recorder::new(meta(seed, n, MapSource::Generated), params, &map);
    if let Some(c) = clock {
        rec.set_clock(c);
    }
    if let Some(s) = scaling {
        rec.set_scaling(s);
    }
    let spec = clock.unwrap_or_default();
    let mut banks: Vec<Bank> = (0..n).map(|_| Bank::new(&spec)).collect();
    let mut s = Script(99);
    while !game.is_over() {
        let t = game.turn();
        let mut turn = Vec::with_capacity(n);
        for (p, bank) in banks.iter_mut().enumerate() {
            let a = s.action(6);
            if !game.is_alive(p) {
                turn.push(TurnInput::NotAsked);
                continue;
            }
            let used = if p == 1 && (1..=slow_until).contains(&t) {
                400_000
            } else {
                1_000
            };
            let charge = bank.charge(spec.limit_us(t), used);
            rec.record_time(p, t, used, bank.left_us());
            turn.push(if charge == Charge::Exhausted {
                TurnInput::Fault(Fault {
                    kind: FaultKind::Timeout,
                    turn: t,
                    detail: "out of bank".into(),
                })
            } else {
                TurnInput::Act(a)
            });
        }
        let inputs: Vec<Input> = turn.iter().map(TurnInput::to_input).collect();
        game.step(&inputs);
        rec.record(t, &turn, game.digest());
    }
    rec.finish(&game, vec![String::new(); n], None)
}

/// The document edited by `f`, with its content digest recomputed.
fn doctor(rp: &Replay, f: impl FnOnce(&mut Value)) -> String {
    let mut v: Value = serde_json::from_str(&rp.to_json()).unwrap();
    f(&mut v);
    v["digest"] = content_digest_of(&v).into();
    v.to_string()
}

fn clock_error(json: &str) -> String {
    match verify(json) {
        Err(e @ (VerifyError::Clock { .. } | VerifyError::Bank(_))) => e.to_string(),
        other => panic!("expected a clock error, got {other:?}"),
    }
}

#[test]
fn a_banked_match_verifies_with_its_clock() {
    let rp = banked(Some(CLOCK), 2);
    assert!(
        rp.result.faults[1].is_empty(),
        "the bank covered turns 1 and 2"
    );
    let c = rp.clock.as_ref().unwrap();
    assert_eq!(c.turns[1][2].bank_us, 400_000);
    assert_eq!(verify(&rp.to_json()).unwrap(), rp);

    let out = banked(Some(CLOCK), 10);
    assert_eq!(out.result.faults[1][0].kind, FaultKind::Timeout);
    assert_eq!(out.result.faults[1][0].turn, 4);
    let last = *out.clock.as_ref().unwrap().turns[1].last().unwrap();
    assert_eq!((last.t, last.bank_us), (4, 0));
    verify(&out.to_json()).unwrap();
}

#[test]
fn every_misstated_clock_is_rejected_by_name() {
    let rp = banked(Some(CLOCK), 2);
    // An answer on a turn whose time the bank could not cover.
    let e = clock_error(&doctor(&rp, |v| {
        v["clock"]["turns"][1][2]["used_us"] = 2_000_000.into()
    }));
    assert!(
        e.contains("turn 2") && e.contains("should have timed out"),
        "{e}"
    );
    // A doctored balance.
    let e = clock_error(&doctor(&rp, |v| {
        v["clock"]["turns"][1][1]["bank_us"] = 1_000_000.into()
    }));
    assert!(
        e.contains("turn 1") && e.contains("recorded as 1000000"),
        "{e}"
    );
    // A bigger bank than the match had makes the balances wrong.
    let e = clock_error(&doctor(&rp, |v| v["clock"]["bank_ms"] = 5000.into()));
    assert!(e.contains("time bank is recorded as"), "{e}");
    // A missing entry for a turn the bot answered (one that drew nothing, so the balances
    // still add up).
    let e = clock_error(&doctor(&rp, |v| {
        v["clock"]["turns"][0].as_array_mut().unwrap().remove(1);
    }));
    assert!(
        e.contains("turn 1: player 0") && e.contains("no entry"),
        "{e}"
    );
    // An entry for a player that was not asked (turn past the end).
    let e = clock_error(&doctor(&rp, |v| {
        v["clock"]["turns"][0]
            .as_array_mut()
            .unwrap()
            .push(serde_json::json!({"t": 100_000, "used_us": 1, "bank_us": 1_000_000}))
    }));
    assert!(e.contains("neither an action nor a fault"), "{e}");
    // The wrong number of players.
    let e = clock_error(&doctor(&rp, |v| {
        v["clock"]["turns"].as_array_mut().unwrap().pop();
    }));
    assert!(e.contains("lists 2 players but the match has 3"), "{e}");

    // A timeout the bank covered: the timed-out turn claims less than the bank held.
    let out = banked(Some(CLOCK), 10);
    let e = clock_error(&doctor(&out, |v| {
        let turns = v["clock"]["turns"][1].as_array_mut().unwrap();
        let last = turns.last_mut().unwrap();
        last["used_us"] = 150_000.into();
    }));
    assert!(e.contains("turn 4") && e.contains("covered it"), "{e}");
}

#[test]
fn without_a_bank_the_replay_is_as_it_always_was() {
    let none = banked(None, 0);
    let zero = banked(
        Some(ClockSpec {
            turn_ms: 100,
            bank_ms: 0,
        }),
        0,
    );
    assert!(zero.clock.is_none());
    assert_eq!(none.to_json(), zero.to_json());
    let v: Value = serde_json::from_str(&none.to_json()).unwrap();
    assert!(v.get("clock").is_none());
    verify(&none.to_json()).unwrap();
}

#[test]
fn a_scaled_clock_is_rederived_from_its_recorded_scaling() {
    // Stated at 50 ms + 500 ms for a host of speed 240; played on one of speed 120: the
    // limits are doubled to CLOCK (100 ms + 1000 ms).
    let stated = ClockSpec {
        turn_ms: 50,
        bank_ms: 500,
    };
    let scaling = Scaling::new(stated, 240, 120.0).unwrap();
    assert_eq!(scaling.played().unwrap(), CLOCK);
    let rp = played(Some(CLOCK), Some(scaling), 2);
    assert!(rp.result.faults[1].is_empty());
    assert_eq!(verify(&rp.to_json()).unwrap(), rp);
    let v: Value = serde_json::from_str(&rp.to_json()).unwrap();
    assert_eq!(v["scaling"]["reference_speed"], 240);
    assert_eq!(v["scaling"]["speed"], 120.0);

    let scaling_error = |json: &str| match verify(json) {
        Err(e @ VerifyError::Scaling { .. }) => e.to_string(),
        other => panic!("expected a scaling error, got {other:?}"),
    };
    // A host claiming to be slower than it was (a longer clock than it earned).
    let e = scaling_error(&doctor(&rp, |v| v["scaling"]["speed"] = 240.0.into()));
    assert!(
        e.contains("plays as 50 ms + 500 ms") && e.contains("records 100 ms + 1000 ms"),
        "{e}"
    );
    // Another reference, a doctored stated clock, an unusable speed.
    scaling_error(&doctor(&rp, |v| {
        v["scaling"]["reference_speed"] = 480.into()
    }));
    scaling_error(&doctor(&rp, |v| {
        v["scaling"]["stated"]["bank_ms"] = 700.into()
    }));
    let e = scaling_error(&doctor(&rp, |v| v["scaling"]["speed"] = 0.0.into()));
    assert!(e.contains("positive"), "{e}");

    // Without a bank: the scaling is recorded, and a scaling that implies a bank is refused.
    let no_bank = Scaling::new(ClockSpec::default(), 240, 120.0).unwrap();
    let rp = played(None, Some(no_bank), 0);
    assert!(rp.clock.is_none());
    verify(&rp.to_json()).unwrap();
    let e = scaling_error(&doctor(&rp, |v| {
        v["scaling"]["stated"]["bank_ms"] = 100.into()
    }));
    assert!(e.contains("records no time bank"), "{e}");
}

/// A host's measured speed is any `f64`, and a replay's content digest is taken over its JSON
/// text, which verification reads back: every `f64` must come back from that text bit for bit,
/// or the replay fails its own verification (it did, in CI, for a speed serde_json's default
/// parser read one unit in the last place off; `float_roundtrip` reads them exactly).
#[test]
fn any_measured_speed_reads_back_exactly_and_its_replay_verifies() {
    // Speeds as the self-test measures them (bot-turns per second), spread over six decades.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut off = Vec::new();
    for _ in 0..200_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let speed = 10f64.powf(2.0 + 6.0 * (x >> 11) as f64 / (1u64 << 53) as f64);
        let text = serde_json::to_string(&speed).unwrap();
        let back: f64 = serde_json::from_str(&text).unwrap();
        if back.to_bits() != speed.to_bits() {
            off.push(speed);
        }
    }
    assert!(
        off.is_empty(),
        "{} of 200,000 read back off, e.g. {:?}",
        off.len(),
        &off[..off.len().min(3)]
    );

    // Three that serde_json's default parser read back off.
    for speed in [
        1_360.502_408_555_352_5,
        1_129.205_732_470_057_5,
        14_742_881.598_207_941,
    ] {
        let scaling = Scaling::new(ClockSpec::default(), 240, speed).unwrap();
        let rp = played(None, Some(scaling), 0);
        verify(&rp.to_json()).unwrap_or_else(|e| panic!("speed {speed}: {e}"));
    }
}
