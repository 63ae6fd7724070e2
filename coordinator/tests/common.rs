//! Helpers shared by the coordinator's CLI tests: paths to the repository, the `farm` binary,
//! and running it with a captured result.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

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

/// results.json of a run, with the non-reproducible timing removed from every result.
pub fn results_without_timing(dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("results.json")).expect("results.json exists");
    let mut v: serde_json::Value = serde_json::from_str(&text).expect("results.json parses");
    for row in v.as_array_mut().expect("a list") {
        if let Some(r) = row["result"].as_object_mut() {
            r.remove("timing");
        }
    }
    v
}
