//! 汇总.md against the reference report() (fixtures from tools/reference/gen_report.py): the
//! statistics table rows must be identical cell for cell, the BT table must list the same
//! players in the same order with the same values, and the closing counts must agree.

use serde_json::Value;
use shared::bt;
use shared::report::{render, Tally};
use shared::results::GameResult;

fn numbers(line: &str) -> Vec<u64> {
    line.split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect()
}

fn table_rows(md: &str) -> Vec<Vec<String>> {
    md.lines()
        .filter(|l| l.starts_with('|') && !l.starts_with("|---"))
        .map(|l| l.trim_matches('|').split('|').map(str::to_string).collect())
        .collect()
}

/// Statistics rows (first cell is a size) and BT rows (name, value) of a report.
fn parts(md: &str) -> (Vec<Vec<String>>, Vec<(String, String)>) {
    let rows = table_rows(md);
    let stats = rows
        .iter()
        .filter(|r| r.len() == 9 && r[0].parse::<u32>().is_ok())
        .cloned()
        .collect();
    let bt = rows
        .iter()
        .filter(|r| r.len() == 2 || r.len() == 4)
        .skip(1)
        .map(|r| (r[0].clone(), r[1].clone()))
        .collect();
    (stats, bt)
}

#[test]
fn report_tables_match_reference() {
    let cases: Vec<Value> = serde_json::from_str(include_str!("fixtures/report.json")).unwrap();
    assert_eq!(cases.len(), 4);
    for case in &cases {
        let title = case["title"].as_str().unwrap();
        let roster: Vec<String> = serde_json::from_value(case["roster"].clone()).unwrap();
        let sizes: Vec<usize> = serde_json::from_value(case["sizes"].clone()).unwrap();
        let anchor = case["anchor"].as_str();
        let games: Vec<GameResult> = case["rows"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .map(|(i, r)| GameResult::from_results_row(r, i + 1).unwrap())
            .collect();
        let fit = anchor.map(|a| bt::fit(&games, &roster, &sizes, a));
        let ours = render(&games, &roster, &sizes, fit.as_ref());
        let theirs = case["markdown"].as_str().unwrap();

        let (our_stats, our_bt) = parts(&ours);
        let (their_stats, their_bt) = parts(theirs);
        assert!(!their_stats.is_empty(), "{title}");
        assert_eq!(our_stats, their_stats, "{title}: statistics table");
        assert_eq!(our_bt, their_bt, "{title}: BT table");
        if matches!(fit, Some(Ok(_))) {
            assert_eq!(their_bt.len(), roster.len(), "{title}: BT rows parsed");
        }
        assert_eq!(ours.contains("Bradley–Terry"), anchor.is_some(), "{title}");
        assert_eq!(
            ours.contains("暂时无法给出实力值"),
            theirs.contains("暂不可汇总"),
            "{title}"
        );

        let our_counts = numbers(ours.lines().rev().nth(1).unwrap());
        let their_counts = numbers(theirs.lines().rev().nth(1).unwrap());
        assert_eq!(our_counts, their_counts, "{title}: closing counts");

        // The live tally, fed one result at a time, renders the same text.
        let mut tally = Tally::new(&roster, &sizes);
        for g in &games {
            tally.push(g);
        }
        assert_eq!(tally.render(fit.as_ref()), ours, "{title}: tally");
    }
}

#[test]
fn bt_rows_carry_intervals_around_the_rating() {
    let cases: Vec<Value> = serde_json::from_str(include_str!("fixtures/report.json")).unwrap();
    let case = &cases[0];
    let roster: Vec<String> = serde_json::from_value(case["roster"].clone()).unwrap();
    let games: Vec<GameResult> = case["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| GameResult::from_results_row(r, 1).unwrap())
        .collect();
    let fit = bt::fit(&games, &roster, &[2, 5, 10], "Base");
    let md = render(&games, &roster, &[2, 5, 10], Some(&fit));
    let bt_rows: Vec<Vec<String>> = table_rows(&md)
        .into_iter()
        .filter(|r| r.len() == 4)
        .skip(1)
        .collect();
    assert_eq!(bt_rows.len(), 10);
    for r in bt_rows {
        let [v, lo, hi] = [&r[1], &r[2], &r[3]].map(|s| s.parse::<f64>().unwrap());
        assert!(lo <= v && v <= hi, "{r:?}");
    }
}
