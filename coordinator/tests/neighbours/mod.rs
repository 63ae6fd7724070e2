//! What the tests of farms side by side on one host share (`pid_namespaces.rs`,
//! `containers_cgroups.rs`): the bots they play, a process's ancestry, a replay's faults.
#![allow(dead_code)]

use std::path::Path;

use crate::common::replay_json;

pub const BOTS: [&str; 4] = [
    "Base=bots/bomberman/baseline.cpp",
    "Greedy=bots/bomberman/greedy.cpp",
    "Random=bots/bomberman/random.cpp",
    "Search=bots/bomberman/search.cpp",
];

/// Whether `pid` descends from `ancestor` (within 16 generations).
pub fn descends_from(mut pid: u32, ancestor: u32) -> bool {
    for _ in 0..16 {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return false;
        };
        // "pid (comm) state ppid ...": comm may hold spaces, so parse after the last ')'.
        let Some(ppid) = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            return false;
        };
        if ppid == ancestor {
            return true;
        }
        if ppid <= 1 {
            return false;
        }
        pid = ppid;
    }
    false
}

/// Every fault recorded in a replay, as "kind turn: message".
pub fn faults(replay: &Path) -> Vec<String> {
    let r = replay_json(replay);
    r["result"]["faults"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|fs| fs.as_array().into_iter().flatten())
        .map(|f| format!("{} {}: {}", f["kind"], f["turn"], f["message"]))
        .collect()
}
