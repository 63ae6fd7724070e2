//! report.html of a real embedded run, opened from disk in headless Chromium
//! (tests/browser-report/report.test.mjs, playwright-core from tests/browser): no console
//! errors and no request besides the page; the ratings, Wald and bootstrap intervals shown
//! equal bt.json; the match counts, per-size games, head-to-head counts, faults by bot and
//! kind, and the viewer links equal results.json; a bot name with `< & "` and multi-byte
//! characters stays text. The same checks hold for a `--game qianwang` run (钳王's win/draw/loss
//! table, a bot that plays an illegal move for faults), and its replays/index.html lists every
//! match and re-plays each on the board (browser-report/qianwang-index.test.mjs). A `--game nim`
//! run's replays/index.html lists every game with its players, winner, moves and fault and
//! re-plays each heap by heap, a bot named like HTML shown as text
//! (browser-report/nim-index.test.mjs).
//! REPORT_SCREENSHOT=<file.png> keeps a
//! screenshot of the page (QIANWANG_REPORT_SCREENSHOT of the 钳王 run's).
//!
//! Needs /usr/bin/chromium (or $CHROMIUM), node ≥ 20 and tests/browser/node_modules (see
//! tools/install-browser.sh). Without them the test is skipped with a printed reason, unless
//! FARM_REQUIRE_BROWSER=1, where it fails instead.

#[path = "../../tests/browser/prerequisite.rs"]
mod browser_prerequisite;
mod common;

use std::process::Command;

use common::{farm, repo, run};

#[test]
fn report_page_shows_the_runs_numbers_in_headless_chromium() {
    let root = repo();
    if !browser_prerequisite::browser_ready(&root, "report page browser test") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let (code, stdout, err) = run(farm()
        .args([
            "run",
            "--bots",
            "Base=bots/bomberman/baseline.cpp",
            "贪心<&\"x>=bots/bomberman/greedy.cpp",
            "Random=bots/bomberman/random.cpp",
            "Crash=bots/test/crasher.cpp",
        ])
        .args(["--anchor", "Base", "--sizes", "2", "3", "--seeds", "2"])
        .args(["--seed", "5", "--workers", "2", "--report-every", "5"])
        .arg("--output")
        .arg(&out));
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{err}");
    check_page(&root, &out, "REPORT_SCREENSHOT");
}

#[test]
fn a_qianwang_report_page_shows_its_runs_numbers_too() {
    let root = repo();
    if !browser_prerequisite::browser_ready(&root, "report page browser test") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let illegal = tmp.path().join("illegal.js");
    std::fs::write(
        &illegal,
        "module.exports = function onTurn(me, opponent, game) { return {from: [0, 0], to: [3, 3]}; };\n",
    )
    .unwrap();
    let out = tmp.path().join("qianwang");
    let (code, stdout, err) = run(farm()
        .env_remove("FARM_TURN_MS")
        .args(["run", "--game", "qianwang", "--bots"])
        .args([
            "Search=bots/qianwang/search.js",
            "贪心<&\"x>=bots/qianwang/greedy.js",
            "Random=bots/qianwang/random.js",
        ])
        .arg(format!("Illegal={}", illegal.display()))
        .args([
            "--anchor",
            "Random",
            "--seeds",
            "3",
            "--seed",
            "5",
            "--workers",
            "2",
        ])
        .args(["--report-every", "5", "--output"])
        .arg(&out));
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{err}");
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(page.contains("a win 1, a draw 0.5"), "worded for 钳王");
    check_page(&root, &out, "QIANWANG_REPORT_SCREENSHOT");
    // The folder's own viewer: every match listed, each opens on its board.
    let res = Command::new("node")
        .arg(root.join("coordinator/tests/browser-report/qianwang-index.test.mjs"))
        .arg(&out)
        .env("REPORT_PW_ROOT", root.join("tests/browser"))
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&res.stdout);
    assert!(
        res.status.success() && stdout.contains("# pass 3") && stdout.contains("# fail 0"),
        "viewer index test failed ({}):\n{stdout}\n{}",
        res.status,
        String::from_utf8_lossy(&res.stderr)
    );
}

#[test]
fn a_nim_runs_viewer_index_lists_and_replays_its_games() {
    let root = repo();
    if !browser_prerequisite::browser_ready(&root, "Nim viewer index browser test") {
        return;
    }
    // A roster name cannot hold `=` (it ends the name), so no attribute value: still HTML.
    let hostile = "<img src onerror>&\"</script>";
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("nim");
    let (code, stdout, err) = run(farm()
        .args(["run", "--game", "nim", "--bots", "Xor=bots/nim/xor.cpp"])
        .arg(format!("{hostile}=bots/nim/first.cpp"))
        .args(["Cheat=bots/nim/cheat.cpp", "--anchor", "Xor"])
        .args(["--seeds", "2", "--seed", "3", "--workers", "2", "--output"])
        .arg(&out));
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{err}");
    assert!(
        out.join("replays/index.html").is_file(),
        "the run wrote its viewer"
    );
    let res = Command::new("node")
        .arg(root.join("coordinator/tests/browser-report/nim-index.test.mjs"))
        .arg(&out)
        .arg(hostile)
        .env("REPORT_PW_ROOT", root.join("tests/browser"))
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&res.stdout);
    assert!(
        res.status.success() && stdout.contains("# pass 4") && stdout.contains("# fail 0"),
        "Nim viewer index test failed ({}):\n{stdout}\n{}",
        res.status,
        String::from_utf8_lossy(&res.stderr)
    );
}

/// Run the page checks of tests/browser-report on the run folder `out` (a screenshot where the
/// environment variable `shot_var` names a file).
fn check_page(root: &std::path::Path, out: &std::path::Path, shot_var: &str) {
    // The match box opens the folder's viewer page; a stand-in until the run writes one.
    let viewer = out.join("replays/index.html");
    if !viewer.exists() {
        std::fs::write(&viewer, "<!DOCTYPE html><title>viewer</title>\n").unwrap();
    }
    let mut cmd = Command::new("node");
    if let Ok(shot) = std::env::var(shot_var) {
        cmd.env("REPORT_SCREENSHOT", shot);
    }
    let res = cmd
        .arg(root.join("coordinator/tests/browser-report/report.test.mjs"))
        .arg(out)
        .env("REPORT_PW_ROOT", root.join("tests/browser"))
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&res.stdout);
    let stderr = String::from_utf8_lossy(&res.stderr);
    assert!(
        res.status.success(),
        "browser test failed ({}):\n{stdout}\n{stderr}",
        res.status
    );
    assert!(stdout.contains("# fail 0"), "{stdout}");
    assert!(stdout.contains("# pass 4"), "{stdout}");
}
