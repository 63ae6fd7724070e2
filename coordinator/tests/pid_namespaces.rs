//! Two farms on one host, in different pid namespaces, play side by side without touching each
//! other (issue 21): a tournament in this pid namespace, and `farm play` started from a shell
//! script under `unshare --pid --fork --mount-proc` while the tournament's bots run, with a
//! sentinel process in the script's process group. The second farm's start-up sweep of
//! `matchfarm/` cgroups must neither kill the first farm's bots (whose owner it cannot see)
//! nor signal pid 0 (its own process group: the script and the sentinel).

mod common;
mod neighbours;
#[path = "../../sandbox/tests/common/support.rs"]
mod support;

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::farm;
use neighbours::{descends_from, faults, BOTS};
use sandbox::SandboxMode;

/// The farm in the other pid namespace, the sentinel beside it in the script's process group.
const SCRIPT: &str = r#"
sleep 600 &
sentinel=$!
unshare --pid --fork --mount-proc "$@"
code=$?
if kill -0 "$sentinel"; then echo SENTINEL-ALIVE; fi
kill "$sentinel"
echo "FARM-B-EXIT $code"
"#;

/// Whether some process under `farm` (its bots' inits and bots) is in a `matchfarm/` cgroup.
fn has_bots(farm: u32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|e| {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            return false;
        };
        let in_farm_cgroup = std::fs::read_to_string(format!("/proc/{pid}/cgroup"))
            .is_ok_and(|c| c.lines().any(|l| l.contains(":memory:/matchfarm/")));
        in_farm_cgroup && descends_from(pid, farm)
    })
}

#[test]
fn farms_in_two_pid_namespaces_play_side_by_side_and_nobody_dies() {
    if let Some(why) = support::sandbox_unavailable(SandboxMode::Full) {
        support::skip(&format!("full mode: {why}"));
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out_a = tmp.path().join("a");
    let mut a = farm()
        .args(["run", "--sandbox", "full", "--bots"])
        .args(BOTS)
        .args([
            "--anchor",
            "Base",
            "--sizes",
            "4",
            "--seeds",
            "2",
            "--seed",
            "5",
            "--workers",
            "2",
        ])
        .arg("--output")
        .arg(&out_a)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(120);
    while !has_bots(a.id()) {
        assert!(Instant::now() < until, "the tournament never started a bot");
        assert!(
            a.try_wait().unwrap().is_none(),
            "the tournament ended early"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let b_replay = tmp.path().join("b.html");
    let script = tmp.path().join("farm-b.sh");
    std::fs::write(&script, SCRIPT).unwrap();
    let b = Command::new("sh")
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_farm"))
        .args(["play", "--sandbox", "full", "--seed", "3", "--replay"])
        .arg(&b_replay)
        .arg("--bots")
        .args(BOTS)
        .current_dir(common::repo())
        .env("CI", "1")
        .env("FARM_TURN_MS", "1000")
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let a = a.wait_with_output().unwrap();
    let (b_out, b_err) = (
        String::from_utf8_lossy(&b.stdout),
        String::from_utf8_lossy(&b.stderr),
    );
    assert!(
        b.status.success() && b_out.contains("SENTINEL-ALIVE") && b_out.contains("FARM-B-EXIT 0"),
        "the script, its sentinel or the farm in the other pid namespace died ({:?}):\n\
         {b_out}\n{b_err}",
        b.status
    );
    assert!(
        faults(&tmp.path().join("b.json.gz")).is_empty(),
        "{:?}",
        faults(&tmp.path().join("b.json.gz"))
    );
    assert!(
        a.status.success(),
        "the tournament failed ({:?}):\n{}\n{}",
        a.status,
        String::from_utf8_lossy(&a.stdout),
        String::from_utf8_lossy(&a.stderr)
    );
    let mut replays = 0;
    for e in std::fs::read_dir(out_a.join("replays")).unwrap().flatten() {
        if e.file_name().to_string_lossy().ends_with(".json.gz") {
            replays += 1;
            let f = faults(&e.path());
            assert!(
                f.is_empty(),
                "{}: a bot was lost: {f:?}",
                e.path().display()
            );
        }
    }
    assert!(replays > 0, "the tournament wrote no replay");
}
