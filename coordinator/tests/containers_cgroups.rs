//! Two worker containers that share the host's cgroup tree play beside a farm on the host, and
//! nobody loses a bot (issue 21, part 2, the container case; `pid_namespaces.rs` is the
//! `unshare --pid` case).
//!
//! The deploy files give each worker a private cgroup namespace (`cgroup: private`), so its
//! `matchfarm/` cgroups are its own. An operator may run workers as many hosts do instead, with
//! the host's cgroup tree: `--privileged --cgroupns=host` plus the host's `/sys/fs/cgroup`
//! mounted (podman with runc mounts only the container's own subtree there for
//! `--cgroupns=host` alone; a Kubernetes DaemonSet does it with a hostPath). Then every worker
//! sees every other's `matchfarm/bot-*` cgroups, each worker in its own pid namespace (a
//! container's), so no owner's pid is visible to another. Liveness is a lock, so each farm's start-up sweep must leave every live cgroup
//! alone. The order makes every farm sweep while the others' bots run:
//!
//! 1. tournament A on the host (`farm run --sandbox full`), until its bots run;
//! 2. container C1 (the worker image built from deploy/Dockerfile.worker, `farm play` as its
//!    command, the host's uid-lease folder mounted as the README asks of every worker of a
//!    host), until its bots run;
//! 3. container C2 likewise, while A and C1 play;
//! 4. `farm play` B on the host, while the containers play.
//!
//! Every farm must exit 0 (a farm that signalled pid 0 would have killed its own process group:
//! tini and itself in a container, this test on the host) and no replay may record a fault.
//! Needs podman (tools/install-containers.sh) and the full sandbox; skipped with a message
//! without them unless FARM_REQUIRE_BROKER=1 (as the containers test) or FARM_REQUIRE_SANDBOX=1.

// containers_support's phases use these two; this test uses only its podman helpers.
#[allow(unused_imports)]
mod cluster_support;
mod common;
#[allow(unused_imports)]
mod containers_support;
#[allow(unused_imports)]
mod metrics_yaml;
mod neighbours;
#[path = "../../sandbox/tests/common/support.rs"]
mod support;

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::farm;
use containers_support::{build_image, farm_bin, logs, missing_prerequisite, podman, repo, Guard};
use neighbours::{descends_from, faults, BOTS};
use sandbox::SandboxMode;

/// The host's uid-lease folder (a root farm's default), shared with the containers.
const LEASES: &str = "/run/matchfarm/uids";

/// Pids of processes in a `matchfarm/` memory cgroup (bots and their inits, of any farm).
fn bot_pids() -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/cgroup"))
                .is_ok_and(|c| c.lines().any(|l| l.contains(":memory:/matchfarm/")))
        })
        .collect()
}

/// The host pid of a running container's first process (its tini).
fn container_pid(name: &str) -> Option<u32> {
    let (code, out, _) = podman(&["inspect", "--format", "{{.State.Pid}}", name]);
    out.trim().parse().ok().filter(|&p| code == 0 && p > 0)
}

/// Wait until some bot of the farm whose top process is `top` runs.
fn wait_for_bots(what: &str, top: impl Fn() -> Option<u32>, mut alive: impl FnMut() -> bool) {
    wait_for_bots_or(what, top, &mut alive, String::new);
}

/// [`wait_for_bots`], with `why()` in the message when the farm ends first.
fn wait_for_bots_or(
    what: &str,
    top: impl Fn() -> Option<u32>,
    alive: &mut impl FnMut() -> bool,
    why: impl Fn() -> String,
) {
    let until = Instant::now() + Duration::from_secs(180);
    loop {
        if let Some(top) = top() {
            if bot_pids().into_iter().any(|p| descends_from(p, top)) {
                return;
            }
        }
        assert!(Instant::now() < until, "{what} never started a bot");
        assert!(alive(), "{what} ended before its bots ran\n{}", why());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Start a worker-image container playing `farm play` with the host's cgroup tree.
fn start_container(guard: &Guard, image: &str, name: &str, out: &Path, seed: &str) {
    guard.container(name);
    let bots = format!("{}:/work/bots:ro", repo().join("bots").display());
    let outs = format!("{}:/out", out.display());
    let leases = format!("{LEASES}:{LEASES}");
    let replay = format!("/out/{name}.html");
    let mut args = vec![
        "run",
        "-d",
        "--name",
        name,
        "--privileged",
        "--cgroupns=host",
        "-v",
        "/sys/fs/cgroup:/sys/fs/cgroup",
        "--network",
        "none",
        "--tmpfs",
        "/tmp:exec,size=512m",
        "-v",
        &bots,
        "-v",
        &outs,
        "-v",
        &leases,
        "-e",
        "FARM_TURN_MS=1000",
        "-e",
        "CI=1",
        "-w",
        "/work",
        "--entrypoint",
        "/usr/bin/tini",
        image,
        "--",
        "/usr/local/bin/farm",
        "play",
        "--sandbox",
        "full",
        "--seed",
        seed,
        "--replay",
        &replay,
        "--bots",
    ];
    args.extend(BOTS);
    let (code, o, e) = podman(&args);
    assert_eq!(code, 0, "podman run {name}:\n{o}\n{e}");
}

/// The container's exit code once it ends.
fn wait_container(name: &str) -> i32 {
    let (code, out, err) = podman(&["wait", name]);
    assert_eq!(code, 0, "podman wait {name}: {out}{err}");
    out.trim().parse().unwrap_or(-1)
}

fn running(name: &str) -> bool {
    let (_, out, _) = podman(&["inspect", "--format", "{{.State.Running}}", name]);
    out.trim() == "true"
}

fn host_tournament(out: &Path) -> Child {
    farm()
        .args(["run", "--sandbox", "full", "--bots"])
        .args(BOTS)
        .args(["--anchor", "Base", "--sizes", "4", "--seeds", "3"])
        .args(["--seed", "5", "--workers", "2", "--output"])
        .arg(out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("farm run")
}

fn host_play(replay: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_farm"))
        .args(["play", "--sandbox", "full", "--seed", "9", "--replay"])
        .arg(replay)
        .arg("--bots")
        .args(BOTS)
        .current_dir(repo())
        .env("CI", "1")
        .env("FARM_TURN_MS", "1000")
        .output()
        .expect("farm play")
}

fn assert_no_faults(replay: &Path) {
    let f = faults(replay);
    assert!(f.is_empty(), "{}: a bot was lost: {f:?}", replay.display());
}

#[test]
fn worker_containers_sharing_the_hosts_cgroups_play_beside_the_host() {
    let require = ["FARM_REQUIRE_BROKER", "FARM_REQUIRE_SANDBOX"]
        .iter()
        .any(|v| std::env::var(v).as_deref() == Ok("1"));
    if let Some(why) = missing_prerequisite() {
        assert!(!require, "FARM_REQUIRE_BROKER/SANDBOX=1 but {why}");
        eprintln!("skipped: {why}");
        return;
    }
    if let Some(why) = support::sandbox_unavailable(SandboxMode::Full) {
        support::skip(&format!("full mode: {why}"));
        return;
    }
    std::fs::create_dir_all(LEASES).expect("the host's uid-lease folder");
    let tmp = tempfile::tempdir().expect("tempdir");
    let work = tmp.path().join("image");
    std::fs::create_dir_all(&work).expect("image work folder");
    let image = build_image(&repo(), "worker", &farm_bin(), &work);
    let out = tmp.path().join("out");
    std::fs::create_dir_all(&out).expect("out");
    let guard = Guard::default();
    let stamp = std::process::id();
    let (c1, c2) = (format!("mf-cg-{stamp}-1"), format!("mf-cg-{stamp}-2"));

    let out_a = tmp.path().join("a");
    let mut a = host_tournament(&out_a);
    let a_pid = a.id();
    wait_for_bots(
        "tournament A",
        || Some(a_pid),
        || a.try_wait().ok().flatten().is_none(),
    );
    start_container(&guard, &image, &c1, &out, "3");
    let (mut c1_up, mut c2_up) = (|| running(&c1), || running(&c2));
    wait_for_bots_or("C1", || container_pid(&c1), &mut c1_up, || logs(&c1));
    start_container(&guard, &image, &c2, &out, "4");
    wait_for_bots_or("C2", || container_pid(&c2), &mut c2_up, || logs(&c2));
    let b_replay = tmp.path().join("b.html");
    let b = host_play(&b_replay);

    let codes = [(&c1, wait_container(&c1)), (&c2, wait_container(&c2))];
    let a = a.wait_with_output().expect("tournament A");
    for (name, code) in codes {
        assert_eq!(code, 0, "container {name} failed:\n{}", logs(name));
        assert_no_faults(&out.join(format!("{name}.json.gz")));
    }
    assert!(
        b.status.success(),
        "farm play B on the host failed ({:?}):\n{}",
        b.status,
        String::from_utf8_lossy(&b.stderr)
    );
    assert_no_faults(&tmp.path().join("b.json.gz"));
    assert!(
        a.status.success(),
        "tournament A failed ({:?}):\n{}\n{}",
        a.status,
        String::from_utf8_lossy(&a.stdout),
        String::from_utf8_lossy(&a.stderr)
    );
    let mut replays = 0;
    for e in std::fs::read_dir(out_a.join("replays"))
        .expect("A's replays")
        .flatten()
    {
        if e.file_name().to_string_lossy().ends_with(".json.gz") {
            replays += 1;
            assert_no_faults(&e.path());
        }
    }
    assert!(replays > 0, "tournament A wrote no replay");
}
