//! The ladder's two public pages in headless Chromium against a real `farm ladder serve` with real
//! challenge games: the leaderboard lists every bot with its tier, RP and Elo, the replay viewer
//! steps forward and back through every ply (boards checked point by point), highlights captures
//! and shows the result (tests/browser-ladder/ladder.test.mjs, playwright-core from
//! tests/browser).
//!
//! Needs /usr/bin/chromium (or $CHROMIUM), node ≥ 20 and tests/browser/node_modules (see
//! tools/install-browser.sh). Without them the test is skipped with a printed reason, unless
//! FARM_REQUIRE_BROWSER=1, where it fails instead.

#[path = "../../tests/browser/prerequisite.rs"]
mod browser_prerequisite;
mod ladder_support;

use std::process::Command;

use ladder_support::{repo_root, Backend, Ladder, Opts};
use serde_json::{json, Value};

#[test]
fn leaderboard_and_replay_pages_work_in_headless_chromium() {
    let root = repo_root();
    if !browser_prerequisite::browser_ready(&root, "ladder browser test") {
        return;
    }
    let l = Ladder::start(Backend::Sqlite, Opts::default());
    // Two players with the strongest training bot's code (real games with captures), one osc,
    // one quit (a game that ends on a fault), and a name that must not break the page.
    let mut training: Vec<_> = std::fs::read_dir(root.join("bots/qianwang"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "js"))
        .collect();
    training.sort();
    let strong = std::fs::read_to_string(training.last().unwrap()).unwrap();
    let (_, a) = l.player("</script><b>x", true);
    let (b_id, b) = l.player("strong-b", true);
    let (c_id, c) = l.player("osc-c", true);
    let (d_id, d) = l.player("quit-d", true);
    l.publish(&a, &strong);
    l.publish(&b, &format!("{strong}\n// b\n"));
    l.publish(&c, &ladder_support::bot("osc.js"));
    l.publish(&d, &ladder_support::bot("quit.js"));
    l.set_rp("osc-c", 420);

    let mut urls = Vec::new();
    let mut with_capture = None;
    for _ in 0..5 {
        let r = l.challenge(&a, b_id);
        assert_eq!(r.status, 200, "{}", r.text);
        for g in r.json["matches"].as_array().unwrap() {
            let m = l
                .get(
                    &format!("/api/match/{}", g["urlId"].as_str().unwrap()),
                    None,
                )
                .json;
            let caps = m["plies"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| !p["captured"].as_array().unwrap().is_empty());
            if caps && with_capture.is_none() {
                with_capture = Some(m);
            }
        }
        if with_capture.is_some() {
            break;
        }
    }
    let with_capture =
        with_capture.expect("a game between two training-bot players captures something");
    urls.push(with_capture);
    let r = l.challenge(&d, c_id);
    assert_eq!(r.status, 200, "{}", r.text);
    let quit_game = r.json["matches"][0]["urlId"].as_str().unwrap().to_string();
    urls.push(l.get(&format!("/api/match/{quit_game}"), None).json);
    let r = l.challenge(&c, d_id);
    assert_eq!(r.status, 200);
    let _ = r;

    let lb: Value = l.get("/api/leaderboard", None).json;
    let expected = json!({"leaderboard": lb["players"], "matches": urls});
    let dir = tempfile::tempdir().unwrap();
    let exp = dir.path().join("expected.json");
    std::fs::write(&exp, expected.to_string()).unwrap();
    let mut cmd = Command::new("node");
    if let Ok(shots) = std::env::var("LADDER_SCREENSHOTS") {
        std::fs::create_dir_all(&shots).unwrap();
        cmd.env("LADDER_SCREENSHOTS", shots);
    }
    let out = cmd
        .arg(root.join("coordinator/tests/browser-ladder/ladder.test.mjs"))
        .arg(&l.base)
        .arg(&exp)
        .env("LADDER_PW_ROOT", root.join("tests/browser"))
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "browser test failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    assert!(stdout.contains("# fail 0"), "{stdout}");
    assert!(stdout.contains("# pass 4"), "{stdout}");
}
