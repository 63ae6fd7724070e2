//! `farm report` rebuilds a run's views from its log with the same bootstrap intervals as the
//! run wrote: bt.json byte for byte, and the same bootstrap table in 汇总.md; the intervals
//! resample the schedule's maps (two sizes × two seeds = four units here).

mod common;

use common::{farm, run};

fn bootstrap_table(text: &str) -> String {
    let at = text
        .find("## 配对自助法区间")
        .unwrap_or_else(|| panic!("no bootstrap section in\n{text}"));
    let end = text[at..].find("\n已完成 ").map_or(text.len(), |i| at + i);
    text[at..end].to_string()
}

#[test]
fn report_rebuilds_the_runs_bootstrap_intervals() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let (code, stdout, err) = run(farm()
        .args([
            "run",
            "--bots",
            "Base=bots/bomberman/baseline.cpp",
            "Greedy=bots/bomberman/greedy.cpp",
            "Random=bots/bomberman/random.cpp",
        ])
        .args(["--anchor", "Base", "--sizes", "2", "3", "--seeds", "2"])
        .args(["--seed", "11", "--workers", "2", "--report-every", "5"])
        .arg("--output")
        .arg(&out));
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{err}");
    assert!(stdout.contains("then paired map bootstrap"), "{stdout}");
    let bt_text = std::fs::read_to_string(out.join("bt.json")).unwrap();
    let bt: serde_json::Value = serde_json::from_str(&bt_text).unwrap();
    let boot = &bt["bootstrap"];
    assert_eq!(boot["units"], 4, "{bt_text}");
    assert_eq!(boot["resamples"], 1000);
    assert_eq!(boot["seed"], 11);
    assert_eq!(boot["ci95"]["Base"], serde_json::json!([0.0, 0.0]));
    for bot in ["Greedy", "Random"] {
        let [lo, hi]: [f64; 2] = serde_json::from_value(boot["ci95"][bot].clone()).unwrap();
        assert!(lo < hi, "{bot}: [{lo}, {hi}]");
    }
    let report = std::fs::read_to_string(out.join("汇总.md")).unwrap();
    let table = bootstrap_table(&report);
    assert!(
        !table.contains("本表按前"),
        "the final report is stale:\n{table}"
    );

    let index = std::fs::read(out.join("replays/index.html")).unwrap();
    std::fs::remove_file(out.join("bt.json")).unwrap();
    std::fs::remove_file(out.join("汇总.md")).unwrap();
    std::fs::remove_file(out.join("replays/index.html")).unwrap();
    let (code, stdout, err) = run(farm().arg("report").arg(&out));
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{err}");
    assert_eq!(
        std::fs::read_to_string(out.join("bt.json")).unwrap(),
        bt_text
    );
    let rebuilt = std::fs::read_to_string(out.join("汇总.md")).unwrap();
    assert_eq!(bootstrap_table(&rebuilt), table);
    assert!(stdout.contains("(24 of 24 matches openable)"), "{stdout}");
    assert!(
        std::fs::read(out.join("replays/index.html")).unwrap() == index,
        "the viewer index is rebuilt byte for byte"
    );
}
