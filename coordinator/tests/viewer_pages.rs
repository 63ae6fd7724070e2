//! The pages a tournament leaves, in headless Chromium, from a real `farm run` with real bots: the
//! folder's one viewer page (replays/index.html) lists every match and opens each of them, by
//! address (#N) and by click (tests/browser/index.test.mjs), each handing the viewer exactly
//! the viewer data `farm view` embeds (every data file keeps only the moves, so the page's own
//! engine re-plays every match of a run of 2 and 4 players and one of 10; one file is rewritten in the
//! older packed-frames form, which the page reads too); `farm view` writes one match's
//! self-contained page that passes the viewer's own browser test (tests/browser/viewer.test.mjs).
//! Neither page logs a console error or asks the network for anything.
//!
//! Needs /usr/bin/chromium (or $CHROMIUM), node ≥ 20 and tests/browser/node_modules (see
//! tools/install-browser.sh). Without them the test is skipped with a printed reason, unless
//! FARM_REQUIRE_BROWSER=1, where it fails instead.

#[path = "../../tests/browser/prerequisite.rs"]
mod browser_prerequisite;
mod common;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::Path;
use std::process::Command;

use common::{farm, repo, run};
use games::bomberman::viewer;
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

/// Match `n`'s data file of the output folder `out`, as stored (ungzipped).
fn data_file(out: &Path, n: u64) -> Value {
    let file = std::fs::read(out.join(format!("replays/{n:05}.js"))).unwrap();
    let (number, gz) = viewer::parse_match_script(&file).expect("a match script");
    assert_eq!(number, n);
    let mut text = String::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_string(&mut text)
        .unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The JSON of the `<script id="replay-data">` element of a viewer page.
fn embedded_data(page: &str) -> Value {
    let open = "<script id=\"replay-data\" type=\"application/json\">";
    let start = page.find(open).expect("data element") + open.len();
    let end = page[start..].find("</script>").expect("end of data") + start;
    serde_json::from_str(&page[start..end]).expect("embedded data is JSON")
}

/// Plays a tournament of `bots` (Name=program) at `sizes` into `out`; the rows of its results.
fn tournament(out: &Path, bots: &[String], sizes: &[&str]) -> Vec<Value> {
    let (code, o, e) = run(farm()
        .args(["run", "--bots"])
        .args(bots)
        .args(["--anchor", "Base", "--sizes"])
        .args(sizes)
        .args(["--seeds", "1", "--seed", "7", "--workers", "2", "--output"])
        .arg(out));
    assert_eq!(code, 0, "{o}\n{e}");
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    results.as_array().unwrap().clone()
}

/// Every match of the folder `out`, as its index must show it, with the exact viewer data (as
/// `farm view` embeds it, less the result's timing, which the index leaves out): the page must
/// give it back, re-played by its own engine from the moves of the compact data file. Counts
/// the frames' events into `cover`.
fn expected_matches(
    tmp: &Path,
    out: &Path,
    rows: &[Value],
    cover: &mut BTreeMap<String, usize>,
) -> Vec<Value> {
    let mut expected = Vec::new();
    for row in rows {
        let n = row["match"].as_u64().unwrap();
        let replay = common::replay_json(&out.join(format!("replays/{n:05}.json.gz")));
        let page = tmp.join(format!("data-{n}.html"));
        let (code, o, e) = run(farm()
            .arg("view")
            .arg(out.join(format!("replays/{n:05}.json.gz")))
            .arg("--out")
            .arg(&page));
        assert_eq!(code, 0, "{o}\n{e}");
        let mut data = embedded_data(&std::fs::read_to_string(&page).unwrap());
        data["result"].as_object_mut().unwrap().remove("timing");
        let stored = data_file(out, n);
        assert!(
            stored.get("sim").is_some(),
            "match {n}: the data file keeps only the moves"
        );
        assert!(stored.get("frames").is_none() && stored.get("columns").is_none());
        let frames = data["frames"].as_array().unwrap();
        for e in frames.iter().flat_map(|f| f["events"].as_array().unwrap()) {
            let cause = e["cause"].as_str().or(e["reason"].as_str()).unwrap_or("");
            let what = format!("{} {cause}", e["type"].as_str().unwrap());
            *cover.entry(what).or_default() += 1;
            if e["chained"] == true {
                *cover.entry("chained explosion".into()).or_default() += 1;
            }
        }
        expected.push(json!({"n": n, "names": row["result"]["names"],
            "ranks": row["result"]["ranks"], "frames": replay["turns"].as_array().unwrap().len(),
            "data": data}));
    }
    expected
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
    let mut bots: Vec<String> = [
        "Base=bots/bomberman/baseline.cpp",
        "Greedy=bots/bomberman/greedy.cpp",
        "Random=bots/bomberman/random.cpp",
        "</script><b>x=bots/bomberman/random.cpp",
    ]
    .map(String::from)
    .into();
    bots.push(format!("Mute={}", mute.display()));
    let results = tournament(&out, &bots, &["2", "4"]);
    // Ten players: a run of that size alone (with the other sizes and ten entrants it would be
    // thousands of matches; 3 to 9 players are games/tests/viewer_sim.rs's).
    let out10 = tmp.path().join("run10");
    for b in [
        "Greedy2=greedy",
        "Random2=random",
        "Random3=random",
        "Base2=baseline",
        "Random4=random",
    ] {
        let (name, program) = b.split_once('=').unwrap();
        bots.push(format!("{name}=bots/bomberman/{program}.cpp"));
    }
    let results10 = tournament(&out10, &bots, &["10"]);
    let mut cover = BTreeMap::new();
    let expected = expected_matches(tmp.path(), &out, &results, &mut cover);
    let expected10 = expected_matches(tmp.path(), &out10, &results10, &mut cover);
    assert!(expected.len() >= 8, "{} matches", expected.len());
    eprintln!(
        "events over {} matches: {cover:?}",
        expected.len() + expected10.len()
    );
    for what in [
        "shrink ",
        "death flame",
        "death shrink",
        "death fault",
        "bomb ",
        "explosion ",
        "box ",
    ] {
        assert!(
            cover.contains_key(what),
            "no {what:?} in the runs: {cover:?}"
        );
    }
    let sizes: Vec<usize> = expected
        .iter()
        .chain(&expected10)
        .map(|m| m["names"].as_array().unwrap().len())
        .collect();
    assert!(sizes.contains(&10) && sizes.contains(&2), "{sizes:?}");
    // A data file in the packed-frames form (as folders before the compact form have them, and
    // as data the moves do not explain is stored) opens the same.
    let faulted = results
        .iter()
        .position(|row| row["result"]["names"].to_string().contains("Mute"))
        .expect("a match of the mute bot");
    let n = expected[faulted]["n"].as_u64().unwrap();
    let old_form = viewer::pack_frames(expected[faulted]["data"].clone());
    assert!(old_form.get("columns").is_some());
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(viewer::viewer_json(&old_form).as_bytes())
        .unwrap();
    let file = viewer::match_script(n, &gz.finish().unwrap());
    std::fs::write(out.join(format!("replays/{n:05}.js")), file).unwrap();
    let exp10 = tmp.path().join("index-expected-10.json");
    std::fs::write(&exp10, Value::Array(expected10).to_string()).unwrap();
    node_test("index.test.mjs", &out10.join("replays/index.html"), &exp10);
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
