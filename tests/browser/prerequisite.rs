//! Shared by the Rust tests that drive headless Chromium or node (games/tests/viewer_browser.rs,
//! games/tests/viewer_sim.rs, coordinator/tests/ladder_browser.rs; included with `#[path]`):
//! whether the browser, node ≥ 20 and playwright-core (tools/install-browser.sh) are here, and
//! the skip-or-fail rule.

use std::path::Path;
use std::process::Command;

/// Why a browser test cannot run here, if it cannot.
fn missing_prerequisite(root: &Path) -> Option<String> {
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    if !Path::new(&chromium).exists() {
        return Some(format!("{chromium} not found"));
    }
    let pw = root.join("tests/browser/node_modules/playwright-core/package.json");
    if !pw.exists() {
        return Some(format!("{} not found", pw.display()));
    }
    node_missing()
}

/// Why node ≥ 20 cannot run here, if it cannot.
fn node_missing() -> Option<String> {
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

/// True when the node test `what` (node ≥ 20, no browser) can run. Otherwise it is skipped with
/// the reason printed, or fails when FARM_REQUIRE_BROWSER=1.
#[allow(dead_code)]
pub fn node_ready(what: &str) -> bool {
    let Some(why) = node_missing() else {
        return true;
    };
    if std::env::var("FARM_REQUIRE_BROWSER").as_deref() == Ok("1") {
        panic!("node test required (FARM_REQUIRE_BROWSER=1) but {why}");
    }
    eprintln!("SKIPPED {what}: {why}");
    false
}

/// True when the browser test `what` can run under the repository `root`. Otherwise it is
/// skipped with the reason printed, or fails when FARM_REQUIRE_BROWSER=1.
#[allow(dead_code)]
pub fn browser_ready(root: &Path, what: &str) -> bool {
    let Some(why) = missing_prerequisite(root) else {
        return true;
    };
    if std::env::var("FARM_REQUIRE_BROWSER").as_deref() == Ok("1") {
        panic!("browser test required (FARM_REQUIRE_BROWSER=1) but {why}; run tools/install-browser.sh");
    }
    eprintln!("SKIPPED {what}: {why} (run tools/install-browser.sh)");
    false
}
