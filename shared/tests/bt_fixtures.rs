//! Bradley–Terry against the reference bt.fit (fixtures from tools/reference/gen_bt.py): batch
//! and incremental ratings to 1e-9, iterations, per-size counts, and the refusals.

use serde_json::Value;
use shared::bt::{self, BtError, Incremental};
use shared::results::GameResult;

struct Case {
    title: String,
    roster: Vec<String>,
    sizes: Vec<usize>,
    anchor: String,
    games: Vec<GameResult>,
    raw: Value,
}

fn cases() -> Vec<Case> {
    let all: Vec<Value> = serde_json::from_str(include_str!("fixtures/bt.json")).unwrap();
    all.into_iter()
        .map(|c| Case {
            title: c["title"].as_str().unwrap().to_string(),
            roster: serde_json::from_value(c["roster"].clone()).unwrap(),
            sizes: serde_json::from_value(c["sizes"].clone()).unwrap(),
            anchor: c["anchor"].as_str().unwrap().to_string(),
            games: c["rows"]
                .as_array()
                .unwrap()
                .iter()
                .enumerate()
                .map(|(i, r)| GameResult::from_results_row(r, i + 1).unwrap())
                .collect(),
            raw: c,
        })
        .collect()
}

/// Which refusal the reference's message stands for.
fn same_refusal(ours: &BtError, reference: &str) -> bool {
    match ours {
        BtError::AnchorNotPlayer(_) => reference.contains("基准"),
        BtError::NoValidGames(_) => reference.contains("有效对局"),
        BtError::UnknownPlayer(_) => reference.contains("未知选手"),
        BtError::NotConnected(_) => reference.contains("连接"),
        BtError::NoConvergence(_) => reference.contains("未收敛"),
        BtError::Malformed { .. } => false,
    }
}

fn check_fit(case: &Case, fit: &bt::BtFit, exact_iterations: bool, tol: f64) -> f64 {
    let want = &case.raw["expect"];
    let ratings = want["ratings"].as_object().unwrap();
    let names: Vec<&str> = fit.ratings.iter().map(|(n, _)| n.as_str()).collect();
    let want_names: Vec<&str> = ratings.keys().map(String::as_str).collect();
    assert_eq!(names, want_names, "{}: rating order", case.title);
    let mut worst = 0.0f64;
    for (name, value) in &fit.ratings {
        let bits = want["rating_bits"][name].as_u64().unwrap();
        let diff = (value - f64::from_bits(bits)).abs();
        worst = worst.max(diff);
        assert!(
            diff <= tol,
            "{}: {name} ours {value} reference {}",
            case.title,
            f64::from_bits(bits)
        );
    }
    let counts: Vec<(String, u64)> = want["valid_games_by_size"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
        .collect();
    let ours: Vec<(String, u64)> = fit
        .valid_games_by_size
        .iter()
        .map(|(s, c)| (s.to_string(), *c))
        .collect();
    assert_eq!(ours, counts, "{}: valid_games_by_size", case.title);
    if exact_iterations {
        assert_eq!(
            u64::from(fit.iterations),
            want["iterations"].as_u64().unwrap(),
            "{}: iterations",
            case.title
        );
    }
    assert_eq!(fit.rating(&case.anchor), Some(0.0));
    worst
}

#[test]
fn batch_fit_matches_reference() {
    let mut fitted = 0;
    let mut worst = 0.0f64;
    for case in cases() {
        let got = bt::fit(&case.games, &case.roster, &case.sizes, &case.anchor);
        match case.raw.get("error").and_then(Value::as_str) {
            Some(msg) => {
                let err = got.expect_err(&case.title);
                assert!(
                    same_refusal(&err, msg),
                    "{}: ours {err}, reference {msg}",
                    case.title
                );
            }
            None => {
                worst = worst.max(check_fit(&case, &got.unwrap(), true, 1e-9));
                fitted += 1;
            }
        }
    }
    assert!(fitted >= 8);
    eprintln!("batch: worst |ours - bt.py| = {worst:e}");
}

#[test]
fn incremental_exact_fit_matches_reference() {
    for case in cases() {
        let mut inc = Incremental::new(&case.roster, &case.sizes, &case.anchor);
        for g in &case.games {
            inc.push(g);
        }
        assert_eq!(inc.results_seen(), case.games.len());
        let got = inc.fit_exact();
        match case.raw.get("error").and_then(Value::as_str) {
            Some(msg) => {
                let err = got.expect_err(&case.title);
                assert!(
                    same_refusal(&err, msg),
                    "{}: ours {err}, reference {msg}",
                    case.title
                );
            }
            None => {
                let worst = check_fit(&case, &got.unwrap(), true, 1e-9);
                eprintln!("{}: incremental exact worst diff {worst:e}", case.title);
            }
        }
    }
}

#[test]
fn warm_started_refits_equal_batch_after_convergence() {
    // Refit after every seventh of the results, warm-started; at the end compare with a batch
    // fit, both run to a tight stopping threshold so that both sit on the optimum.
    const TIGHT: f64 = 1e-13;
    let mut compared = 0;
    for case in cases()
        .into_iter()
        .filter(|c| c.raw.get("expect").is_some())
    {
        let mut inc = Incremental::new(&case.roster, &case.sizes, &case.anchor);
        inc.set_tolerance(TIGHT);
        let step = (case.games.len() / 7).max(1);
        for (i, g) in case.games.iter().enumerate() {
            inc.push(g);
            if (i + 1) % step == 0 {
                let _ = inc.fit();
            }
        }
        let Ok(batch) =
            bt::fit_with_tolerance(&case.games, &case.roster, &case.sizes, &case.anchor, TIGHT)
        else {
            eprintln!(
                "{}: a cold fit cannot reach 1e-13 within the cap; skipped",
                case.title
            );
            continue;
        };
        let warm = inc.fit().unwrap();
        let reference = bt::fit(&case.games, &case.roster, &case.sizes, &case.anchor).unwrap();
        let mut worst = 0.0f64;
        let mut vs_reference = 0.0f64;
        for ((name, w), ((_, b), (_, r))) in warm
            .ratings
            .iter()
            .zip(batch.ratings.iter().zip(&reference.ratings))
        {
            let d = (w - b).abs();
            assert!(d <= 1e-9, "{}: {name} warm {w} batch {b}", case.title);
            worst = worst.max(d);
            vs_reference = vs_reference.max((w - r).abs());
        }
        eprintln!(
            "{}: warm vs batch (tol 1e-13) {worst:e}; vs the reference's stopping point {vs_reference:e}; last refit {} iterations",
            case.title, warm.iterations
        );
        compared += 1;
    }
    assert!(compared >= 8);
}

#[test]
fn refusals_name_what_is_wrong() {
    let g = |names: &[&str], ranks: &[i64]| GameResult {
        size: names.len(),
        valid_for_scoring: true,
        names: names.iter().map(|s| s.to_string()).collect(),
        ranks: ranks.to_vec(),
        survival_points: vec![],
        kill_points: vec![],
        points: vec![],
        errors: vec![],
    };
    let roster = ["A", "B", "C", "D"];
    let e = bt::fit(&[g(&["A", "B"], &[1, 2])], &roster, &[2, 3], "A").unwrap_err();
    assert_eq!(e, BtError::NoValidGames(vec![3]));
    let e = bt::fit(&[g(&["A", "X"], &[1, 2])], &roster, &[2], "A").unwrap_err();
    assert_eq!(e, BtError::UnknownPlayer("X".into()));
    let e = bt::fit(
        &[g(&["A", "B"], &[1, 2]), g(&["C", "D"], &[1, 1])],
        &roster,
        &[2],
        "A",
    )
    .unwrap_err();
    assert_eq!(e, BtError::NotConnected(vec!["C".into(), "D".into()]));
    assert!(e.to_string().contains("\"C\""), "{e}");
    let mut short = g(&["A", "B"], &[1, 2]);
    short.names.pop();
    let e = bt::fit(&[short], &roster, &[2], "A").unwrap_err();
    assert!(matches!(e, BtError::Malformed { row: 1, .. }), "{e}");
}

#[test]
fn output_has_reference_members_then_intervals() {
    let case = cases()
        .into_iter()
        .find(|c| c.title.starts_with("six players"))
        .unwrap();
    let fit = bt::fit(&case.games, &case.roster, &case.sizes, &case.anchor).unwrap();
    let v = serde_json::to_value(&fit).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "anchor",
            "ratings",
            "valid_games_by_size",
            "iterations",
            "size_weight",
            "scale",
            "smoothing",
            "ci95",
            "ci_method"
        ]
    );
    for (name, r) in &fit.ratings {
        let [lo, hi] = fit.interval(name).unwrap();
        assert!(lo <= *r && *r <= hi, "{name}: {lo} {r} {hi}");
        if name == &case.anchor {
            assert_eq!([lo, hi], [0.0, 0.0]);
        } else {
            assert!(
                hi - lo > 1.0 && hi - lo < 1000.0,
                "{name}: width {}",
                hi - lo
            );
        }
    }
}

#[test]
fn bt_json_text_is_the_reference_text_plus_intervals() {
    let mut compared = 0;
    for case in cases()
        .into_iter()
        .filter(|c| c.raw.get("expect").is_some())
    {
        let fit = bt::fit(&case.games, &case.roster, &case.sizes, &case.anchor);
        let mut doc = bt::bt_json(&fit);
        let ours = doc.as_object_mut().unwrap();
        assert!(ours.remove("ci95").is_some() && ours.remove("ci_method").is_some());
        let text = shared::pyjson::to_string_pretty(&doc, false);
        assert_eq!(
            text,
            case.raw["expect"]["bt_json"].as_str().unwrap(),
            "{}",
            case.title
        );
        compared += 1;
    }
    assert!(compared >= 8);
    let refused = bt::bt_json(&Err(BtError::NoValidGames(vec![4])));
    assert!(refused["unavailable"].as_str().unwrap().contains('4'));
}

#[test]
fn repeated_size_is_handled_like_batch() {
    let case = cases()
        .into_iter()
        .find(|c| c.title.starts_with("six players"))
        .unwrap();
    let sizes = [2, 3, 2, 4];
    let batch = bt::fit(&case.games, &case.roster, &sizes, &case.anchor).unwrap();
    let mut inc = Incremental::new(&case.roster, &sizes, &case.anchor);
    case.games.iter().for_each(|g| inc.push(g));
    let exact = inc.fit_exact().unwrap();
    assert_eq!(batch.iterations, exact.iterations);
    for ((_, x), (_, y)) in batch.ratings.iter().zip(&exact.ratings) {
        assert!((x - y).abs() <= 1e-9, "{x} vs {y}");
    }
}
