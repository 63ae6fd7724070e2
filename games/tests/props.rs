//! Property tests over random matches: determinism, replay round trips, tamper detection,
//! no shared cells, and the points identity n(n-1)/2 + kills/2.

mod common;
use common::*;
use games::bomberman::replay::verify;
use games::bomberman::*;
use num_rational::Ratio;
use proptest::prelude::*;
use serde_json::Value;
use shared::FaultKind;

fn fault_kind(i: usize) -> FaultKind {
    FaultKind::ALL[i % FaultKind::ALL.len()]
}

/// Applies edit number `which` (chosen with `pick`) to a replay document; each one changes it.
fn tamper(v: &mut Value, which: usize, pick: u64) {
    let n = v["players"].as_u64().unwrap() as usize;
    let p = (pick % n as u64) as usize;
    let turns = v["turns"].as_array().unwrap().len();
    let t = (pick as usize / 7) % turns;
    let bump = |x: &mut Value| {
        *x = match x.clone() {
            Value::Number(num) if num.is_u64() => (num.as_u64().unwrap() + 1).into(),
            Value::Number(num) if num.is_i64() => (num.as_i64().unwrap() + 1).into(),
            Value::Number(num) => (num.as_f64().unwrap() + 0.5).into(),
            Value::Bool(b) => (!b).into(),
            Value::String(s) => format!("{s}x").into(),
            other => other,
        }
    };
    match which {
        0 => {
            let a = &mut v["turns"][t]["actions"][p];
            *a = match a.as_str() {
                Some("S0") | None => "S1".into(),
                Some(_) => "S0".into(),
            };
        }
        1 => {
            let d = v["turns"][t]["digest"].as_str().unwrap().to_string();
            let first = if d.starts_with('0') { "1" } else { "0" };
            v["turns"][t]["digest"] = format!("{first}{}", &d[1..]).into();
        }
        2 => {
            let keys = [
                "points",
                "survival_points",
                "kill_points",
                "death_turns",
                "ranks",
                "bombs_placed",
                "boxes_broken",
                "errors",
                "kill_shares",
                "points_exact",
            ];
            bump(&mut v["result"][keys[(pick as usize >> 20) % keys.len()]][p]);
        }
        3 => bump(&mut v["result"]["turns"]),
        4 => bump(&mut v["names"][p]),
        5 => bump(&mut v["result"]["names"][p]),
        6 => bump(&mut v["hashes"][format!("bot_{p}")]),
        7 => bump(&mut v["result"]["hashes"][format!("bot_{p}")]),
        8 => bump(&mut v["seed"]),
        9 => bump(&mut v["stderr_tails"][p]),
        10 => {
            let d = v["digest"].as_str().unwrap().to_string();
            let first = if d.starts_with('0') { "1" } else { "0" };
            v["digest"] = format!("{first}{}", &d[1..]).into();
        }
        11 => v["result"]["timing"] = serde_json::json!({"bot_0": {"wall_ms": pick}}),
        12 => bump(&mut v["params"]["range"]),
        13 => bump(&mut v["map"]["spawns"][p][0]),
        14 => bump(&mut v["result"]["valid_for_scoring"]),
        15 => {
            // A fault's detail if any, else the first turn's first action.
            let all = v["turns"].as_array_mut().unwrap();
            match all.iter_mut().find(|r| r.get("faults").is_some()) {
                Some(r) => bump(&mut r["faults"][0]["detail"]),
                None => all[0]["actions"][0] = "D1".into(),
            }
        }
        _ => bump(&mut v["result"]["players"]),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn matches_are_deterministic(seed in any::<u64>(), n in 2usize..=10, script in any::<u64>()) {
        let (a, _) = record(seed, n, script, &[]);
        let (b, _) = record(seed, n, script, &[]);
        prop_assert_eq!(a.to_json(), b.to_json());
    }

    #[test]
    fn recorded_replays_verify(
        seed in any::<u64>(), n in 2usize..=10, script in any::<u64>(),
        fp in 0usize..10, ft in 0u32..12, fk in 0usize..11,
    ) {
        let faults = [(fp % n, ft, fault_kind(fk))];
        let (rp, _) = record(seed, n, script, &faults);
        let back = verify(&rp.to_json());
        prop_assert!(back.is_ok(), "{:?}", back.err());
        prop_assert_eq!(back.unwrap(), rp);
    }

    #[test]
    fn any_single_edit_is_rejected(
        seed in any::<u64>(), n in 2usize..=5, script in any::<u64>(),
        which in 0usize..17, pick in any::<u64>(),
    ) {
        let (rp, _) = record(seed, n, script, &[(0, 1, FaultKind::Timeout)]);
        let json = rp.to_json();
        let mut v: Value = serde_json::from_str(&json).unwrap();
        tamper(&mut v, which, pick);
        let edited = v.to_string();
        prop_assert_ne!(&edited, &json);
        let r = verify(&edited);
        prop_assert!(r.is_err(), "edit {} was not caught", which);
    }

    #[test]
    fn invariants_hold_every_turn(
        seed in any::<u64>(), n in 2usize..=10, script in any::<u64>(), bomb_one_in in 2u64..40,
    ) {
        let map = generate_map(seed, n).unwrap();
        let mut g = Game::new(Params::for_players(n).unwrap(), &map).unwrap();
        let mut s = Script(script | 1);
        let mut events = Vec::new();
        let mut kills = 0i64;
        while !g.is_over() {
            let inputs: Vec<Input> = (0..n).map(|_| Input::Act(s.action(bomb_one_in))).collect();
            events.clear();
            g.step_with_events(&inputs, &mut events);
            kills += events.iter().filter(|e| matches!(e, Event::Death { killers, .. } if !killers.is_empty())).count() as i64;
            let living: Vec<(u16, u16)> = (0..n).filter(|&p| g.is_alive(p)).map(|p| g.position(p)).collect();
            let mut sorted = living.clone();
            sorted.sort();
            sorted.dedup();
            prop_assert_eq!(sorted.len(), living.len(), "two living players share a cell on turn {}", g.turn() - 1);
            for &(x, y) in &living {
                prop_assert_eq!(g.tile(x as usize, y as usize), Tile::Empty);
            }
        }
        let o = g.outcome();
        let total: Ratio<i64> = o.points.iter().sum();
        let nn = n as i64;
        prop_assert_eq!(total, Ratio::new(nn * (nn - 1), 2) + Ratio::new(kills, 2));
        prop_assert!(o.turns <= g.params().turn_limit);
        prop_assert!(g.alive_count() <= 1 || o.turns == g.params().turn_limit);
    }
}
