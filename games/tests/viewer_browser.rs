//! The HTML viewer in a real browser: renders viewer pages and runs tests/browser/viewer.test.mjs
//! on each in headless Chromium (playwright-core under node).
//!
//! Needs /usr/bin/chromium (or $CHROMIUM), node and tests/browser/node_modules (see
//! tools/install-browser.sh). Without them the test is skipped with a printed reason, unless
//! FARM_REQUIRE_BROWSER=1, where it fails instead.

use std::path::{Path, PathBuf};
use std::process::Command;

use games::bomberman::viewer::render_html;
use serde_json::Value;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("games/ has a parent")
        .to_path_buf()
}

/// Why the browser test cannot run here, if it cannot.
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

/// Writes the page and the expectations to a scratch directory and runs the node test on them.
fn run_in_browser(root: &Path, label: &str, data: &Value, expected: &Value) {
    let dir = std::env::temp_dir().join(format!("viewer-browser-{}-{label}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let html = dir.join("viewer.html");
    let exp = dir.join("expected.json");
    std::fs::write(&html, render_html(data)).unwrap();
    std::fs::write(&exp, expected.to_string()).unwrap();
    let frames = data["frames"].as_array().map_or(0, Vec::len);
    eprintln!(
        "{label}: {frames} frames, page {} bytes",
        render_html(data).len()
    );
    let mut cmd = Command::new("node");
    // VIEWER_SCREENSHOTS=<dir>: keep each game's page and PNGs of it in <dir>/<label>/.
    if let Ok(shots) = std::env::var("VIEWER_SCREENSHOTS") {
        let sub = Path::new(&shots).join(label);
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join("viewer.html"), render_html(data)).unwrap();
        cmd.env("VIEWER_SCREENSHOTS", sub);
    }
    let out = cmd
        .arg("viewer.test.mjs")
        .arg(&html)
        .arg(&exp)
        .current_dir(root.join("tests/browser"))
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "browser test of the {label} game failed ({}):\n{stdout}\n{stderr}\n(page kept at {})",
        out.status,
        html.display()
    );
    assert!(stdout.contains("# fail 0"), "{label}: {stdout}");
    std::fs::remove_dir_all(&dir).ok();
}

/// The repository root if the browser test can run; None (after saying why) if it is skipped.
fn browser_ready() -> Option<PathBuf> {
    let root = repo_root();
    if let Some(why) = missing_prerequisite(&root) {
        if std::env::var("FARM_REQUIRE_BROWSER").as_deref() == Ok("1") {
            panic!("browser test required (FARM_REQUIRE_BROWSER=1) but {why}; run tools/install-browser.sh");
        }
        eprintln!("SKIPPED viewer browser test: {why} (run tools/install-browser.sh)");
        return None;
    }
    Some(root)
}

#[test]
fn viewer_works_in_headless_chromium_on_the_committed_sample() {
    let Some(root) = browser_ready() else { return };
    let path = root.join("tests/browser/sample-data.json");
    let data: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    run_in_browser(&root, "sample", &data, &data);
}
