//! The pages a tournament leaves, in headless Chromium, from a real `farm run` with real bots: the
//! folder's one viewer page (replays/index.html) lists every match and opens each of them, by
//! address (#N) and by click (tests/browser/index.test.mjs); `farm view` writes one match's
//! self-contained page that passes the viewer's own browser test (tests/browser/viewer.test.mjs).
//! Neither page logs a console error or asks the network for anything.
//!
//! Needs /usr/bin/chromium (or $CHROMIUM), node ≥ 20 and tests/browser/node_modules (see
//! tools/install-browser.sh). Without them the test is skipped with a printed reason, unless
//! FARM_REQUIRE_BROWSER=1, where it fails instead.

#[path = "../../tests/browser/prerequisite.rs"]
mod browser_prerequisite;
mod common;

use std::path::Path;
use std::process::Command;

use common::{farm, repo, run};
use serde_json::{json, Value};

/// Runs a node test script of tests/browser on `page` with `expected`; panics with its output
/// if it fails.
fn node_test(script: &str, page: &Path, expected: &Path) {
    let out = Command::new("node")
        .arg(script)
        .arg(page)
        .arg(expected)
        .current_dir(repo().join("tests/browser"))
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("# fail 0"),
        "{script} on {} failed ({}):\n{stdout}\n{stderr}",
        page.display(),
        out.status
    );
}

/// The JSON of the `<script id="replay-data">` element of a viewer page.
fn embedded_data(page: &str) -> Value {
    let open = "<script id=\"replay-data\" type=\"application/json\">";
    let start = page.find(open).expect("data element") + open.len();
    let end = page[start..].find("</script>").expect("end of data") + start;
    serde_json::from_str(&page[start..end]).expect("embedded data is JSON")
}

#[test]
fn index_and_view_pages_work_in_headless_chromium() {
    let root = repo();
    if !browser_prerequisite::browser_ready(&root, "viewer pages browser test") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    // A bot that ends at once: it faults at turn 0, so its matches have a death by fault, where
    // the page must derive a null landing.
    let mute = tmp.path().join("mute.cpp");
    std::fs::write(&mute, "int main() { return 0; }\n").unwrap();
    let (code, o, e) = run(farm()
        .args(["run", "--bots"])
        .args([
            "Base=bots/bomberman/baseline.cpp",
            "Greedy=bots/bomberman/greedy.cpp",
            "Random=bots/bomberman/random.cpp",
            "</script><b>x=bots/bomberman/random.cpp",
        ])
        .arg(format!("Mute={}", mute.display()))
        .args(["--anchor", "Base", "--sizes", "2", "4", "--seeds", "1"])
        .args(["--seed", "7", "--workers", "2", "--output"])
        .arg(&out));
    assert_eq!(code, 0, "{o}\n{e}");

    // Every match of the run, as the index must show it.
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let mut expected: Vec<Value> = results
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            let n = row["match"].as_u64().unwrap();
            let replay = common::replay_json(&out.join(format!("replays/{n:05}.json.gz")));
            json!({"n": n, "names": row["result"]["names"], "ranks": row["result"]["ranks"],
                   "frames": replay["turns"].as_array().unwrap().len()})
        })
        .collect();
    assert!(expected.len() >= 8, "{} matches", expected.len());
    // For a 2- and a 4-player match, the exact viewer data (as `farm view` embeds it, less the
    // result's timing, which the index leaves out): the page's unpacking must give it back.
    let faulted = results
        .as_array()
        .unwrap()
        .iter()
        .position(|row| row["result"]["names"].to_string().contains("Mute"))
        .expect("a match of the mute bot");
    for i in [0, faulted, expected.len() - 1] {
        let n = expected[i]["n"].as_u64().unwrap();
        let page = tmp.path().join(format!("data-{n}.html"));
        let (code, o, e) = run(farm()
            .arg("view")
            .arg(out.join(format!("replays/{n:05}.json.gz")))
            .arg("--out")
            .arg(&page));
        assert_eq!(code, 0, "{o}\n{e}");
        let mut data = embedded_data(&std::fs::read_to_string(&page).unwrap());
        data["result"].as_object_mut().unwrap().remove("timing");
        expected[i]["data"] = data;
    }
    let exp_path = tmp.path().join("index-expected.json");
    std::fs::write(&exp_path, Value::Array(expected).to_string()).unwrap();
    node_test("index.test.mjs", &out.join("replays/index.html"), &exp_path);

    // One match's page from `farm view`, through the viewer's own browser test.
    let page = tmp.path().join("share/match-2.html");
    let (code, o, e) = run(farm()
        .arg("view")
        .arg(out.join("replays/00002.json.gz"))
        .arg("--out")
        .arg(&page));
    assert_eq!(code, 0, "{o}\n{e}");
    let data = embedded_data(&std::fs::read_to_string(&page).unwrap());
    let data_path = tmp.path().join("view-expected.json");
    std::fs::write(&data_path, data.to_string()).unwrap();
    node_test("viewer.test.mjs", &page, &data_path);
}
