use super::*;
use std::time::{Duration, Instant};

fn row(number: u64, first: &str, second: &str) -> Row {
    Row {
        number,
        size: 2,
        result: Some(serde_json::json!({
            "valid_for_scoring": true,
            "names": [first, second],
            "ranks": [1, 2],
            "survival_points": [1.0, 0.0],
            "kill_points": [0.5, 0.0],
            "points": [1.5, 0.0],
            "errors": [0, 0],
        })),
        failed: None,
    }
}

fn live() -> Live {
    let mut live = Live::new(vec!["a".into(), "b".into()], vec![2], "a".into());
    live.not_compiled = Some(Vec::new());
    for (n, (x, y)) in [("a", "b"), ("b", "a"), ("a", "b"), ("a", "b")]
        .into_iter()
        .enumerate()
    {
        live.add(&row(n as u64 + 1, x, y));
    }
    live
}

#[test]
fn stop_note_in_report_and_bt_json_only_when_set() {
    let mut plain = live();
    // bt.json first: it computes the bootstrap, which the report then shows.
    let bt = plain.bt_json();
    let text = plain.report_text();
    assert!(!text.contains("Stopped early"), "{text}");
    assert!(bt.get("stopped").is_none(), "{bt}");

    let mut stopped = live();
    let note = StopNote {
        reason: "every adjacent pair separated at 95%".into(),
        matches_played: 4,
        matches_scheduled: 12,
        cancelled: 2,
    };
    stopped.set_stop(note.clone());
    let bt2 = stopped.bt_json();
    let text = stopped.report_text();
    let line = "> **Stopped early: every adjacent pair separated at 95%; 4 of 12 scheduled \
                matches played (2 in flight cancelled).**\n\n";
    assert!(
        text.starts_with(&format!("# 对局统计汇总\n\n{line}")),
        "{text}"
    );
    // Everything else is the unstopped report.
    assert_eq!(text.replacen(line, "", 1), plain.report_text());
    assert_eq!(
        bt2["stopped"],
        serde_json::json!({"reason": "every adjacent pair separated at 95%",
            "matches_played": 4, "matches_scheduled": 12, "cancelled": 2})
    );
    let mut without = bt2.clone();
    if let Some(o) = without.as_object_mut() {
        o.remove("stopped");
    }
    assert_eq!(without, bt);
    let back: StopNote = serde_json::from_value(bt2["stopped"].clone()).unwrap();
    assert_eq!(back, note);
}

/// A three-bot, size-2 schedule of `maps` maps (seeds 1..=maps), each map every pair in both
/// seat orders (6 matches), written as identity.json with schedule seed 77; and its rows,
/// where the better bot (earlier in the roster) wins about two games in three.
fn tournament(dir: &Path, maps: u64) -> Vec<Row> {
    let roster = ["a", "b", "c"];
    let mut entries = Vec::new();
    let mut rows = Vec::new();
    let mut state = 12345u64;
    for seed in 1..=maps {
        for (x, y) in [(0, 1), (0, 2), (1, 2)] {
            for (p, q) in [(x, y), (y, x)] {
                entries.push(serde_json::json!({"size": 2, "seed": seed,
                    "roster": [[roster[p], "p"], [roster[q], "q"]]}));
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let better_wins = !(state >> 33).is_multiple_of(3);
                let mut r = row(entries.len() as u64, roster[p], roster[q]);
                if (p < q) != better_wins {
                    r.result.as_mut().unwrap()["ranks"] = serde_json::json!([2, 1]);
                }
                rows.push(r);
            }
        }
    }
    let identity = serde_json::json!({
        "version": "test", "anchor": "a", "sizes": [2], "execution": {"workers": 1},
        "scoring_code": {}, "engine_manifest": {}, "bot_hashes": {"a": "1", "b": "2", "c": "3"},
        "schedule": {"schedule_seed": 77, "entries": entries},
    });
    std::fs::write(dir.join("identity.json"), identity.to_string()).unwrap();
    rows
}

fn three() -> Live {
    Live::new(
        vec!["a".into(), "b".into(), "c".into()],
        vec![2],
        "a".into(),
    )
}

fn games_of(rows: &[Row]) -> Vec<GameResult> {
    rows.iter()
        .map(|r| {
            let v = serde_json::json!({"match": r.number, "size": r.size, "result": r.result});
            GameResult::from_results_row(&v, r.number as usize).unwrap()
        })
        .collect()
}

fn intervals(v: &Value) -> Vec<(String, [f64; 2])> {
    v.as_object()
        .unwrap()
        .iter()
        .map(|(k, i)| (k.clone(), serde_json::from_value(i.clone()).unwrap()))
        .collect()
}

#[test]
fn bt_json_bootstrap_resamples_maps_with_the_schedule_seed_in_any_row_order() {
    let tmp = tempfile::tempdir().unwrap();
    let rows = tournament(tmp.path(), 10);
    let mut live = three();
    for (i, r) in rows.iter().enumerate() {
        live.add(r);
        if i % 7 == 6 {
            live.write_report(tmp.path()).unwrap();
        }
    }
    live.write_report(tmp.path()).unwrap();
    let bt = live.bt_json();

    // The reference's members are untouched and come first; the bootstrap is one new member.
    let mut reference = bt.clone();
    let boot = reference
        .as_object_mut()
        .unwrap()
        .remove("bootstrap")
        .unwrap();
    assert_eq!(
        reference,
        serde_json::to_value(live.bt.fit_exact().unwrap()).unwrap()
    );
    assert_eq!(
        bt.as_object().unwrap().keys().next_back().unwrap(),
        "bootstrap"
    );

    // Units are the maps (size, seed), the seed the schedule's, 1,000 resamples.
    let games = games_of(&rows);
    let maps: Vec<(usize, u64)> = (0..rows.len()).map(|i| (2, i as u64 / 6 + 1)).collect();
    let roster = ["a", "b", "c"];
    let want = bootstrap::bootstrap(&games, &maps, &roster, &[2], "a", 1000, 77).unwrap();
    assert_eq!(intervals(&boot["ci95"]), want.intervals);
    assert_eq!(boot["units"], 10);
    assert_eq!(boot["resamples"], 1000);
    assert_eq!(boot["seed"], 77);
    assert_eq!(boot["fitted"], want.fitted as u64);
    assert_eq!(boot["method"], bootstrap::METHOD);
    // Not the same as resampling single matches.
    let matches: Vec<usize> = (0..rows.len()).collect();
    let single = bootstrap::bootstrap(&games, &matches, &roster, &[2], "a", 1000, 77).unwrap();
    assert_ne!(intervals(&boot["ci95"]), single.intervals);
    let [lo, hi] = want.interval("b").unwrap();
    assert!(lo < hi && lo < 0.0, "b is weaker than a: [{lo}, {hi}]");

    // A rebuild that reads the rows in another order (as `farm report` may) agrees.
    let mut rebuilt = three();
    for r in rows.iter().rev() {
        rebuilt.add(r);
    }
    rebuilt.write_report(tmp.path()).unwrap();
    assert_eq!(rebuilt.bt_json()["bootstrap"], boot);
    let table = |text: &str| {
        let at = text.find("## 配对自助法区间").expect("bootstrap section");
        text[at..text.find("\n已完成 ").unwrap()].to_string()
    };
    let ours = table(&live.report_text());
    assert_eq!(ours, table(&rebuilt.report_text()));
    let [lo, hi] = want.interval("c").unwrap();
    let [wlo, whi] = want.fit.interval("c").unwrap();
    let line = format!("|c|{lo:.2}|{hi:.2}|{:.2}|{:.2}|", hi - lo, whi - wlo);
    assert!(ours.contains(&line), "{line} not in\n{ours}");
    assert!(!ours.contains("本表按前"), "{ours}");
    // The terminal table shows both intervals.
    assert!(live.ratings_table().contains("paired map bootstrap"));
    // And the gauges carry them.
    let text = crate::metrics::render();
    assert!(
        text.contains("farm_rating_bootstrap_upper{bot=\"c\"}"),
        "{text}"
    );
}

#[test]
fn a_live_refresh_reuses_a_recent_bootstrap_and_says_on_how_many_results() {
    let tmp = tempfile::tempdir().unwrap();
    let rows = tournament(tmp.path(), 8);
    let mut live = three();
    live.resampling.refresh = Duration::from_secs(3600);
    for r in &rows[..30] {
        live.add(r);
    }
    live.write_report(tmp.path()).unwrap();
    let first = live.report_text();
    assert!(first.contains("## 配对自助法区间"), "{first}");
    assert!(!first.contains("本表按前"), "{first}");
    for r in &rows[30..] {
        live.add(r);
    }
    // Within the refresh interval of the last one: the table is the one of 30 results, said so.
    live.write_report(tmp.path()).unwrap();
    let stale = live.report_text();
    assert!(
        stale.contains("本表按前 30 局计算（已完成 48 局"),
        "{stale}"
    );
    assert!(!live.ratings_table().contains("bootstrap"));
    // bt.json (the final write, `farm report`) always computes it on every result.
    let boot = live.bt_json()["bootstrap"].clone();
    assert_eq!(boot["units"], 8);
    assert!(!live.report_text().contains("本表按前"));
    assert_eq!(live.bootstrap(tmp.path()).unwrap().units, 8);
}

#[test]
fn without_identity_json_the_bootstrap_says_why() {
    let tmp = tempfile::tempdir().unwrap();
    let rows = tournament(tmp.path(), 4);
    std::fs::remove_file(tmp.path().join("identity.json")).unwrap();
    let mut live = three();
    rows.iter().for_each(|r| live.add(r));
    live.write_report(tmp.path()).unwrap();
    let text = live.report_text();
    assert!(text.contains("暂时无法给出自助法区间"), "{text}");
    let why = live.bt_json()["bootstrap"]["unavailable"].clone();
    assert!(why.as_str().unwrap().contains("identity.json"), "{why}");
    // The reference's BT table is there all the same.
    assert!(
        text.contains("|选手|BT 实力值|95% 下限|95% 上限|"),
        "{text}"
    );
}

/// `cargo test --release -p coordinator --lib -- --ignored --nocapture time_report_refreshes`:
/// what the bootstrap adds to a formal-sized run's report refreshes (8,930 results, 10 bots,
/// sizes 2..10, maps of 6 matches, 汇总.md every 25 results as `--report-every` defaults).
#[test]
#[ignore]
fn time_report_refreshes_of_a_formal_sized_run() {
    let names: Vec<String> = (0..10).map(|i| format!("bot{i}")).collect();
    let sizes: Vec<i64> = (2..=10).collect();
    let mut state = 0x9e3779b97f4a7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let (mut rows, mut entries) = (Vec::new(), Vec::new());
    for n in 1..=8_930u64 {
        let map = (n - 1) / 6;
        let size = 2 + (map % 9) as usize;
        let mut seats: Vec<usize> = (0..10).collect();
        for i in (1..10).rev() {
            seats.swap(i, (next() % (i as u64 + 1)) as usize);
        }
        let seats = &seats[..size];
        // Lower-numbered bots are stronger: rank by index plus noise.
        let mut keyed: Vec<(u64, usize)> = seats
            .iter()
            .map(|&s| (s as u64 * 3 + next() % 12, s))
            .collect();
        keyed.sort_unstable();
        let ranks: Vec<i64> = seats
            .iter()
            .map(|s| 1 + keyed.iter().position(|k| k.1 == *s).unwrap() as i64)
            .collect();
        entries.push(serde_json::json!({"size": size, "seed": map + 1, "roster": []}));
        rows.push(Row {
            number: n,
            size: size as u32,
            result: Some(serde_json::json!({"valid_for_scoring": true,
                "names": seats.iter().map(|&s| names[s].clone()).collect::<Vec<_>>(),
                "ranks": ranks})),
            failed: None,
        });
    }
    for with_maps in [false, true] {
        let tmp = tempfile::tempdir().unwrap();
        if with_maps {
            let identity =
                serde_json::json!({"schedule": {"schedule_seed": 1, "entries": entries}});
            std::fs::write(tmp.path().join("identity.json"), identity.to_string()).unwrap();
        }
        let mut live = Live::new(names.clone(), sizes.clone(), "bot9".into());
        let (mut reports, mut computed) = (Duration::ZERO, 0);
        let started = Instant::now();
        for (i, r) in rows.iter().enumerate() {
            live.add(r);
            if (i + 1) % 25 == 0 {
                let before = live.resampling.boot.as_ref().map(|b| b.at);
                let t = Instant::now();
                live.write_report(tmp.path()).unwrap();
                reports += t.elapsed();
                computed += usize::from(live.resampling.boot.as_ref().map(|b| b.at) != before);
            }
        }
        let t = Instant::now();
        let bt = live.bt_json();
        let last = t.elapsed();
        println!(
            "{}: {} report refreshes in {:.2} s ({} bootstraps), ingest+reports {:.2} s; \
             final bt.json {:.0} ms ({} units)",
            if with_maps {
                "bootstrap"
            } else {
                "no maps (bootstrap unavailable)"
            },
            rows.len() / 25,
            reports.as_secs_f64(),
            computed,
            started.elapsed().as_secs_f64(),
            last.as_secs_f64() * 1e3,
            bt["bootstrap"]["units"]
        );
    }
}
