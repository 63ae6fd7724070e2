//! The ladder's two public pages in headless Chromium against a real `farm ladder serve` with real
//! challenge games: the leaderboard lists every bot with its tier, the replay viewer steps forward
//! and back through every ply (boards checked point by point), highlights captures and shows the
//! result (tests/browser-ladder/ladder.test.mjs, playwright-core from tests/browser).
//!
//! Needs /usr/bin/chromium (or $CHROMIUM), node ≥ 20 and tests/browser/node_modules (see
//! tools/install-browser.sh). Without them the test is skipped with a printed reason, unless
//! FARM_REQUIRE_BROWSER=1, where it fails instead.

mod ladder_support;

use std::path::Path;
use std::process::Command;

use ladder_support::{repo_root, Backend, Ladder, Opts};
use serde_json::{json, Value};

fn missing_prerequisite(root: &Path) -> Option<String> {
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    if !Path::new(&chromium).exists() {
        return Some(format!("{chromium} not found"));
    }
    let pw = root.join("tests/browser/node_modules/playwright-core/package.json");
    if !pw.exists() {
        return Some(format!("{} not found", pw.display()));
    }
    match Command::new("node").arg("--version").output() {
        Ok(out) if out.status.success() => {
            let v = String::from_utf8_lossy(&out.stdout);
            let major: u32 = v
                .trim()
                .trim_start_matches('v')
                .split('.')
                .next()
                .and_then(|m| m.parse().ok())
                .unwrap_or(0);
            (major < 20).then(|| format!("node {} is older than 20", v.trim()))
        }
        _ => Some("node not found".into()),
    }
}

#[test]
fn leaderboard_and_replay_pages_work_in_headless_chromium() {
    let root = repo_root();
    if let Some(why) = missing_prerequisite(&root) {
        if std::env::var("FARM_REQUIRE_BROWSER").as_deref() == Ok("1") {
            panic!("browser test required (FARM_REQUIRE_BROWSER=1) but {why}; run tools/install-browser.sh");
        }
        eprintln!("SKIPPED ladder browser test: {why} (run tools/install-browser.sh)");
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
