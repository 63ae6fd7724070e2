//! Helpers shared by the coordinator's CLI tests: paths to the repository, the `farm` binary,
//! and running it with a captured result.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use games::bomberman::replay::turn_timing;

/// The repository root (tests run with the crate folder as working directory).
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("crate folder has a parent")
        .to_path_buf()
}

/// A `farm` command run from the repository root.
pub fn farm() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_farm"));
    c.current_dir(repo());
    c.env("CI", "1");
    // Tests share two cores with each other: a longer turn deadline keeps real bots from
    // spurious timeouts (the misbehaving test bots are far past any deadline).
    c.env("FARM_TURN_MS", "1000");
    c
}

/// Run and return (exit code, stdout, stderr).
pub fn run(cmd: &mut Command) -> (i32, String, String) {
    let Output {
        status,
        stdout,
        stderr,
    } = cmd.output().expect("farm starts");
    (
        status.code().unwrap_or(-1),
        String::from_utf8_lossy(&stdout).to_string(),
        String::from_utf8_lossy(&stderr).to_string(),
    )
}

/// results.json of a run: the reference's form, which leaves the farm's (non-reproducible)
/// timing summaries to results.jsonl, so results compare across runs as they are.
pub fn results_without_timing(dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("results.json")).expect("results.json exists");
    let v: serde_json::Value = serde_json::from_str(&text).expect("results.json parses");
    for row in v.as_array().expect("a list") {
        assert!(row["result"].get("timing").is_none(), "timing in {row}");
    }
    v
}

/// The text of a replay file, gunzipped when it is gzip (what `farm run` and `farm play` write).
pub fn replay_text(path: &Path) -> String {
    use std::io::Read;
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut text = String::new();
        flate2::read::GzDecoder::new(bytes.as_slice())
            .read_to_string(&mut text)
            .unwrap_or_else(|e| panic!("gunzip {}: {e}", path.display()));
        text
    } else {
        String::from_utf8(bytes).expect("replay is UTF-8")
    }
}

/// A replay file as JSON.
pub fn replay_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&replay_text(path)).expect("replay parses")
}

/// Checks that a result row's `timing` is the per-bot summary of the replay's per-turn timing:
/// no per-turn list, and turns, totals, maxima, means and deadline misses equal to the replay's.
pub fn assert_timing_summary_of(row_result: &serde_json::Value, replay: &serde_json::Value) {
    let full = replay["result"]["timing"]
        .as_object()
        .expect("the replay has per-bot timing");
    let summary = row_result["timing"]
        .as_object()
        .expect("the row has a timing summary");
    assert_eq!(
        summary.keys().collect::<Vec<_>>(),
        full.keys().collect::<Vec<_>>(),
        "one summary per bot"
    );
    for (bot, t) in full {
        let s = &summary[bot];
        assert!(
            s.get("per_turn").is_none(),
            "{bot}: no per-turn list in a row"
        );
        assert_eq!(
            t["per_turn"]["columns"],
            serde_json::json!(turn_timing::COLUMNS),
            "{bot}: the replay keeps its turns as value lists"
        );
        let turns = turn_timing::turn_entries(t);
        assert!(!turns.is_empty(), "{bot}: per-turn timing in the replay");
        let col = |k: &'static str| turns.iter().map(move |x| x[k].as_u64().expect("a count"));
        assert_eq!(s["turns"].as_u64(), Some(turns.len() as u64), "{bot} turns");
        for k in ["wall_us", "cpu_us", "waited_us"] {
            let total: u64 = col(k).sum();
            assert_eq!(s[k].as_u64(), Some(total), "{bot} total {k}");
        }
        for k in ["wall_us", "cpu_us"] {
            let total: u64 = col(k).sum();
            let max = col(k).max().unwrap_or(0);
            assert_eq!(s[format!("max_{k}")].as_u64(), Some(max), "{bot} max {k}");
            let mean = total.checked_div(turns.len() as u64).unwrap_or(0);
            assert_eq!(
                s[format!("mean_{k}")].as_u64(),
                Some(mean),
                "{bot} mean {k}"
            );
        }
        let misses = turns.iter().filter(|x| x["met"] == false).count() as u64;
        assert_eq!(
            s["deadline_misses"].as_u64(),
            Some(misses),
            "{bot} deadline misses"
        );
        // The worker's own totals agree with the per-turn list they were summed from.
        for k in [
            "turns",
            "wall_us",
            "cpu_us",
            "max_wall_us",
            "deadline_misses",
        ] {
            assert_eq!(s[k], t[k], "{bot} {k} as the worker recorded it");
        }
    }
}

/// A test bot (in the style of bots/test) that answers at once except on `slow` turns, where
/// it sleeps the given milliseconds first.
pub fn lag_bot(dir: &Path, name: &str, slow: &[(u32, u64)]) -> PathBuf {
    let cases: String = slow
        .iter()
        .map(|(t, ms)| format!("            case {t}: ms = {ms}; break;\n"))
        .collect();
    let src = format!(
        r#"// Answers `t S 0` at once, except on chosen turns where it first sleeps.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>

int read_turn() {{
    std::string line;
    int t = -1;
    while (std::getline(std::cin, line)) {{
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.rfind("TURN ", 0) == 0) t = std::atoi(line.c_str() + 5);
        if (line == "END") return t;
    }}
    return -1;
}}

int main() {{
    for (int t; (t = read_turn()) >= 0;) {{
        long ms = 0;
        switch (t) {{
{cases}            default: break;
        }}
        if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
        std::cout << t << " S 0" << std::endl;
    }}
}}
"#
    );
    let path = dir.join(format!("{name}.cpp"));
    std::fs::write(&path, src).unwrap();
    path
}
