//! The sweep of `matchfarm/` cgroups judges a cgroup's owner by the lock the owner holds, never
//! by a pid seen through a pid namespace: run from another pid namespace (this test binary
//! re-executed under `unshare --pid --fork --mount-proc`, in its own process group), it leaves a
//! live bot's cgroups alone, clears those of a worker that was SIGKILLed, kills what is left in
//! an abandoned cgroup only through `cgroup.kill` or a pid it can see, never touches a name of
//! another form, and never kills its own process group.

mod common;

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use sandbox::{Bot, CoreTokens, HostSupport, SandboxConfig, SandboxMode};

const ROLE_ENV: &str = "FARM_TEST_CGROUP_ROLE";

/// Child mode. `sweeper`: sweep once and print what the sweep did. `holder`: start a Full bot,
/// print its pid, and hold it until killed.
#[test]
fn child_entry() {
    let Ok(role) = std::env::var(ROLE_ENV) else {
        return;
    };
    match role.as_str() {
        "sweeper" => {
            let s = sandbox::cgroup::sweep_stale(HostSupport::get());
            println!(
                "\nSWEEP swept={} live={} refused={} foreign={}",
                s.swept,
                s.live,
                s.refused.len(),
                s.foreign.len()
            );
            for r in &s.refused {
                println!("REFUSED {r}");
            }
        }
        "holder" => {
            let cfg = SandboxConfig {
                scratch_root: PathBuf::from(std::env::var("FARM_TEST_SCRATCH").unwrap()),
                ..config(SandboxMode::Full)
            };
            let tokens = CoreTokens::new(1);
            let b = Bot::spawn(&bot("test", "answer"), &cfg, &tokens, 0).unwrap();
            println!("\nHELD {}", b.pid().unwrap());
            std::thread::sleep(Duration::from_secs(120));
        }
        other => panic!("unknown role {other}"),
    }
}

/// The sweep, run in a fresh pid namespace in a process group of its own with a sentinel
/// `sleep` in that group: its output, and whether the sentinel is still alive after it.
fn sweep_from_another_pid_namespace() -> String {
    let mut sentinel = Command::new("sleep")
        .arg("60")
        .process_group(0)
        .spawn()
        .unwrap();
    let group = sentinel.id() as i32;
    let out = Command::new("unshare")
        .args(["--pid", "--fork", "--mount-proc"])
        .arg(std::env::current_exe().unwrap())
        .args(["child_entry", "--exact", "--nocapture", "--test-threads=1"])
        .env(ROLE_ENV, "sweeper")
        .process_group(group)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let sentinel_alive = sentinel.try_wait().unwrap().is_none();
    let _ = sentinel.kill();
    let _ = sentinel.wait();
    assert!(
        out.status.success(),
        "the sweeper died ({:?}): it signalled its own process group?\n{text}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(sentinel_alive, "the sweeper's process group was killed");
    text
}

/// `matchfarm/<name>` of every hierarchy `host` uses.
fn dirs_of(name: &str) -> Vec<PathBuf> {
    let h = HostSupport::get();
    [
        &h.cg_memory,
        &h.cg_pids,
        &h.cg_cpuacct,
        &h.cg_cpu,
        &h.cg_unified,
    ]
    .into_iter()
    .flatten()
    .map(|r| r.join("matchfarm").join(name))
    .collect()
}

/// The name of the memory cgroup `pid` is in.
fn cgroup_of(pid: i32) -> String {
    let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap();
    let line = text.lines().find(|l| l.contains(":memory:")).unwrap();
    line.rsplit('/').next().unwrap().to_owned()
}

/// A hand-made cgroup `matchfarm/<name>` in `roots` (nobody holds its lock) with a `sleep` in
/// it; returns the sleep.
fn abandoned_with_a_process(name: &str, roots: &[&Path]) -> std::process::Child {
    let child = Command::new("sleep").arg("60").spawn().unwrap();
    for root in roots {
        let dir = root.join("matchfarm").join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("cgroup.procs"), child.id().to_string()).unwrap();
    }
    child
}

fn gone(child: &mut std::process::Child) -> bool {
    let until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < until {
        if child.try_wait().unwrap().is_some() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

#[test]
fn a_sweep_from_another_pid_namespace_spares_live_cgroups_and_clears_abandoned_ones() {
    if let Some(why) = sandbox_unavailable(SandboxMode::Full) {
        skip(&format!("full mode: {why}"));
        return;
    }
    let host = HostSupport::get();
    let memory = host.cg_memory.clone().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let cfg = SandboxConfig {
        scratch_root: scratch.path().to_path_buf(),
        ..config(SandboxMode::Full)
    };
    let tokens = CoreTokens::new(1);
    // A live bot of this process (in this pid namespace, which the sweeper does not see).
    let mut live = Bot::spawn(&bot("test", "answer"), &cfg, &tokens, 0).unwrap();
    let live_name = cgroup_of(live.pid().unwrap());
    // A worker that dies: SIGKILLed with its bot running; its cgroups stay behind unlocked.
    let mut holder = Command::new(std::env::current_exe().unwrap())
        .args(["child_entry", "--exact", "--nocapture", "--test-threads=1"])
        .env(ROLE_ENV, "holder")
        .env("FARM_TEST_SCRATCH", scratch.path())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let held = {
        use std::io::BufRead;
        let mut lines = std::io::BufReader::new(holder.stdout.take().unwrap()).lines();
        let line = lines
            .find_map(|l| l.unwrap().strip_prefix("HELD ").map(str::to_owned))
            .expect("the holder started its bot");
        line.parse::<i32>().unwrap()
    };
    let dead_name = cgroup_of(held);
    holder.kill().unwrap();
    holder.wait().unwrap();
    assert!(dirs_of(&dead_name).iter().all(|d| d.is_dir()));
    // Abandoned, hand-made, with a process in it: in v1 and v2 (cgroup.kill reaches it), and in
    // v1 only (its pid reads 0 from the sweeper's namespace: it must not be signalled).
    let hex = |c: char| format!("bot-{}", c.to_string().repeat(32));
    let both = hex('a');
    let mut in_both = host
        .cg_unified
        .as_ref()
        .map(|u| abandoned_with_a_process(&both, &[memory.as_path(), u.as_path()]));
    let v1_only = hex('b');
    let mut in_v1 = abandoned_with_a_process(&v1_only, &[memory.as_path()]);
    // A name of an older farm version (`<pid>-<seq>`, that pid unseen from the sweeper): never
    // touched, whatever is in it.
    let old = format!("{}-0", std::process::id());
    let mut in_old = abandoned_with_a_process(&old, &[memory.as_path()]);

    let text = sweep_from_another_pid_namespace();

    assert!(text.contains("SWEEP "), "{text}");
    assert!(
        dirs_of(&live_name).iter().all(|d| d.is_dir()),
        "a live bot's cgroups were removed\n{text}"
    );
    let answer = live.exchange(0, &turn_input(0), FIRST).unwrap();
    assert!(!answer.is_empty(), "the live bot still answers");
    assert!(
        dirs_of(&dead_name).iter().all(|d| !d.exists()),
        "the dead worker's cgroups stay\n{text}"
    );
    if let Some(c) = in_both.as_mut() {
        assert!(
            gone(c),
            "cgroup.kill did not clear an abandoned cgroup\n{text}"
        );
        assert!(!memory.join("matchfarm").join(&both).exists(), "{text}");
    }
    assert!(
        in_v1.try_wait().unwrap().is_none(),
        "a pid read as 0 was signalled?"
    );
    assert!(memory.join("matchfarm").join(&v1_only).is_dir(), "{text}");
    assert!(
        text.contains(&format!(
            "REFUSED abandoned cgroup {}",
            memory.join("matchfarm").join(&v1_only).display()
        )),
        "{text}"
    );
    assert!(
        in_old.try_wait().unwrap().is_none(),
        "an old-style cgroup was killed"
    );
    assert!(memory.join("matchfarm").join(&old).is_dir());

    // From this pid namespace the v1-only cgroup's process is visible: cleared then.
    let s = sandbox::cgroup::sweep_stale(host);
    assert!(gone(&mut in_v1), "{s:?}");
    assert!(!memory.join("matchfarm").join(&v1_only).exists(), "{s:?}");
    assert!(in_old.try_wait().unwrap().is_none());
    // Clean up the hand-made old-style cgroup (the process back to the root first).
    std::fs::write(memory.join("cgroup.procs"), in_old.id().to_string()).unwrap();
    in_old.kill().unwrap();
    in_old.wait().unwrap();
    std::fs::remove_dir(memory.join("matchfarm").join(&old)).unwrap();
    let report = live.finish();
    assert!(report.leftovers.is_empty(), "{:?}", report.leftovers);
    assert!(dirs_of(&live_name).iter().all(|d| !d.exists()));
}
