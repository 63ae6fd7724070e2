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
    let list = std::fs::read(out.join("replays/index.js")).unwrap();
    std::fs::remove_file(out.join("bt.json")).unwrap();
    std::fs::remove_file(out.join("汇总.md")).unwrap();
    std::fs::remove_file(out.join("replays/index.html")).unwrap();
    std::fs::remove_file(out.join("replays/index.js")).unwrap();
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
        std::fs::read(out.join("replays/index.html")).unwrap() == index
            && std::fs::read(out.join("replays/index.js")).unwrap() == list,
        "the viewer index is rebuilt byte for byte"
    );
    assert!(
        !stdout.contains("replays verified"),
        "no replay is read again: {stdout}"
    );

    // What it trusts is a match's data file, written when its replay verified on arrival. A
    // missing or empty one is written again from its replay, verified once; a match whose replay is
    // missing cannot be opened, and its line says why.
    let data = std::fs::read(out.join("replays/00005.js")).unwrap();
    std::fs::remove_file(out.join("replays/00005.js")).unwrap();
    std::fs::write(out.join("replays/00006.js"), "").unwrap(); // as a crash may leave it
    std::fs::remove_file(out.join("replays/00007.json.gz")).unwrap();
    let (code, stdout, err) = run(farm().arg("report").arg(&out));
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{err}");
    assert!(
        stdout.contains("(23 of 24 matches openable); 2 replays verified"),
        "{stdout}"
    );
    assert_eq!(
        std::fs::read(out.join("replays/00005.js")).unwrap(),
        data,
        "written again as the run wrote it"
    );
    let list = std::fs::read_to_string(out.join("replays/index.js")).unwrap();
    let line = list
        .lines()
        .find(|l| l.starts_with("matchfarmMatch({\"n\":7,"))
        .unwrap();
    assert!(line.contains("\"failed\":\"replay missing\""), "{line}");
    assert!(!line.contains("\"replay\":"), "{line}");

    // Beside a running coordinator the log may end in the line it is writing: a report reads
    // the whole lines and cuts nothing, and its results.json (streamed row by row) is the one
    // the run wrote.
    let results = std::fs::read(out.join("results.json")).unwrap();
    let log_path = out.join("results.jsonl");
    let mut log = std::fs::read(&log_path).unwrap();
    log.extend_from_slice(b"{\"match\":25,\"size\":3,\"resu");
    std::fs::write(&log_path, &log).unwrap();
    let (code, stdout, err) = run(farm().arg("report").arg(&out));
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{err}");
    assert_eq!(
        std::fs::read(&log_path).unwrap(),
        log,
        "the log's tail was cut"
    );
    assert_eq!(std::fs::read(out.join("results.json")).unwrap(), results);
}

/// The JSON model embedded in a report.html.
fn page_data(html: &str) -> serde_json::Value {
    let open = "<script type=\"application/json\" id=\"report-data\">";
    let at = html.find(open).expect("report.html has its data blob") + open.len();
    let end = at + html[at..].find("</script>").expect("the blob is closed");
    serde_json::from_str(&html[at..end]).expect("the blob is JSON")
}

/// Delete report.html, run `farm report`, and return (before, after).
fn rebuild_page(out: &std::path::Path) -> (String, String) {
    let before =
        std::fs::read_to_string(out.join("report.html")).expect("the run wrote report.html");
    std::fs::remove_file(out.join("report.html")).unwrap();
    let (code, stdout, err) = run(farm().arg("report").arg(out));
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{err}");
    assert!(stdout.contains("report.html"), "{stdout}");
    (
        before,
        std::fs::read_to_string(out.join("report.html")).unwrap(),
    )
}

#[test]
fn report_rebuilds_the_page_of_a_run_cut_by_until_settled() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("settle");
    let (code, stdout, err) = run(farm()
        .args([
            "run",
            "--bots",
            "Base=bots/bomberman/baseline.cpp",
            "Greedy=bots/bomberman/greedy.cpp",
            "Random=bots/bomberman/random.cpp",
        ])
        .args(["--anchor", "Base", "--sizes", "2", "3", "--seeds", "3"])
        .args(["--seed", "11", "--workers", "2", "--report-every", "4"])
        .args([
            "--until-settled",
            "--confidence",
            "0.999",
            "--max-matches",
            "30",
        ])
        .arg("--output")
        .arg(&out));
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{err}");
    assert!(
        out.join("stopped.json").exists(),
        "the run was cut: {stdout}"
    );
    let (before, after) = rebuild_page(&out);
    assert_eq!(after, before, "farm report rebuilds the page the run wrote");
    let data = page_data(&after);
    assert_eq!(data["rule"]["rule"], "until_settled", "{}", data["rule"]);
    assert_eq!(data["rule"]["confidence"], 0.999);
    let stopped: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("stopped.json")).unwrap()).unwrap();
    assert_eq!(data["stop"]["matches_played"], stopped["matches_played"]);
    assert!(after.contains("id=\"stopped\""));
    // The rebuilt 汇总.md says the run stopped early, as the run's did.
    let summary = std::fs::read_to_string(out.join("汇总.md")).unwrap();
    assert!(summary.contains("Stopped early"), "{summary}");
    let arrivals = std::fs::read_to_string(out.join("arrivals.jsonl")).unwrap();
    assert_eq!(
        arrivals.lines().count() as u64,
        stopped["matches_played"].as_u64().unwrap(),
        "one arrival per match played"
    );
}

#[test]
fn report_page_shows_the_sprt_state_that_sprt_json_has() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("sprt");
    let (code, stdout, err) = run(farm()
        .args(["sprt", "--new", "Search=bots/bomberman/search.cpp"])
        .args(["--base", "Base=bots/bomberman/baseline.cpp"])
        .args(["--elo0", "0", "--elo1", "150", "--seed", "31"])
        .args(["--max-pairs", "40", "--workers", "2", "--output"])
        .arg(&out));
    assert!(code == 0, "stdout:\n{stdout}\nstderr:\n{err}");
    let sprt: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("sprt.json")).unwrap()).unwrap();
    let (before, after) = rebuild_page(&out);
    assert_eq!(after, before, "farm report rebuilds the page the run wrote");
    let rule = &page_data(&after)["rule"];
    assert_eq!(rule["rule"], "sprt", "{rule}");
    assert_eq!(rule["verdict"], sprt["verdict"]);
    assert_eq!(rule["pentanomial"], sprt["pentanomial"]["counts"]);
    assert_eq!(rule["llr"], sprt["llr"]);
    assert_eq!(rule["lower"], sprt["lower_bound"]);
    assert_eq!(rule["upper"], sprt["upper_bound"]);
    assert_eq!(rule["pairs"], sprt["pairs_played"]);
    assert_eq!(rule["elo"], sprt["elo"]);
    assert_eq!(rule["elo_ci95"], sprt["elo_ci95"]);
}
