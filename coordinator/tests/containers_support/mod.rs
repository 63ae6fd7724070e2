//! Podman helpers for `containers.rs`: running podman, a guard that removes every container and
//! volume a test started (by exact name, never by pattern), and reading containers (logs,
//! processes, metrics). Images built from deploy/Dockerfile.* are in `images`, the deploy files
//! as `podman run` flags in `flags`, what the phases share in `site`; the phases themselves are
//! `workers` (2), `tournament` and `checks` (3), `coordinator_image` (4).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// podman's default crun fails on this kind of host's hybrid cgroups (CONTAINERS-NOTES.md).
pub const RUNC: &str = "/usr/sbin/runc";
pub const BASE_IMAGE: &str = "docker.io/library/debian:bookworm-slim";
/// Where the test keeps the exact names of the images it built (to replace them, by name).
pub const IMAGE_RECORD_DIR: &str = "/var/cache/matchfarm-ci/containers-test";

/// `podman --runtime runc ARGS...`: (exit code, stdout, stderr).
pub fn podman(args: &[&str]) -> (i32, String, String) {
    let out = Command::new("podman")
        .arg("--runtime")
        .arg(RUNC)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("podman {args:?}: {e}"));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

/// Like `podman`, panicking with its output when it fails.
pub fn podman_ok(args: &[&str]) -> String {
    let (code, out, err) = podman(args);
    assert_eq!(code, 0, "podman {args:?} failed ({code}):\n{out}\n{err}");
    out
}

/// Why this machine cannot run the test (None: it can).
pub fn missing_prerequisite() -> Option<String> {
    match Command::new("podman").arg("--version").output() {
        Ok(o) if o.status.success() => {}
        _ => return Some("podman is not installed (bash tools/install-containers.sh)".into()),
    }
    if !Path::new(RUNC).exists() {
        return Some(format!(
            "{RUNC} is missing (bash tools/install-containers.sh)"
        ));
    }
    if podman(&["image", "exists", BASE_IMAGE]).0 != 0 {
        return Some(format!(
            "no {BASE_IMAGE} image (bash tools/install-containers.sh imports the stand-in)"
        ));
    }
    None
}

mod checks;
mod coordinator_image;
mod flags;
mod images;
mod run;
mod site;
mod tournament;
mod workers;

pub use checks::*;
pub use coordinator_image::*;
pub use flags::*;
pub use images::*;
pub use run::*;
pub use site::*;
pub use tournament::*;
pub use workers::*;

// ---------------------------------------------------------------------------------------------
// Containers

/// Removes, when dropped, every container and volume registered with it (by exact name).
#[derive(Default)]
pub struct Guard {
    pub containers: std::sync::Mutex<Vec<String>>,
    pub volumes: std::sync::Mutex<Vec<String>>,
}

impl Guard {
    pub fn container(&self, name: &str) {
        self.containers.lock().unwrap().push(name.to_string());
    }

    /// A fresh podman volume registered for removal; its name.
    pub fn volume(&self, name: &str) -> String {
        self.volumes.lock().unwrap().push(name.to_string());
        podman_ok(&["volume", "create", name]);
        name.to_string()
    }

    pub fn remove_containers(&self) {
        let names: Vec<String> = self.containers.lock().unwrap().drain(..).collect();
        for n in names.iter().rev() {
            let _ = podman(&["rm", "-f", "-t", "0", n]);
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.remove_containers();
        let vols: Vec<String> = self.volumes.lock().unwrap().drain(..).collect();
        for v in vols {
            let _ = podman(&["volume", "rm", "-f", &v]);
        }
    }
}

/// A volume's folder on the host.
pub fn volume_path(name: &str) -> PathBuf {
    PathBuf::from(
        podman_ok(&["volume", "inspect", "--format", "{{.Mountpoint}}", name])
            .trim()
            .to_string(),
    )
}

/// Wait until `podman logs NAME` contains `what`; panics with the logs when the container
/// ends first or `limit` passes.
pub fn wait_for_log(name: &str, what: &str, limit: Duration) -> String {
    let t0 = Instant::now();
    loop {
        let (_, out, err) = podman(&["logs", name]);
        let logs = format!("{out}{err}");
        if logs.contains(what) {
            return logs;
        }
        let state = podman(&["inspect", "-f", "{{.State.Status}}", name]).1;
        assert!(
            state.trim() == "running" || state.trim() == "created",
            "container {name} is {} before logging {what:?}:\n{}",
            state.trim(),
            tail(&logs, 40)
        );
        assert!(
            t0.elapsed() < limit,
            "container {name}: no {what:?} in its log after {limit:?}:\n{}",
            tail(&logs, 40)
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

pub fn logs(name: &str) -> String {
    let (_, out, err) = podman(&["logs", name]);
    format!("{out}{err}")
}

/// The container's full id (for matching host processes by cgroup).
pub fn container_id(name: &str) -> String {
    podman_ok(&["inspect", "-f", "{{.Id}}", name])
        .trim()
        .to_string()
}

/// (pid, uid, cgroup text) of every host process whose real uid is in `uids`.
pub fn processes_in_uid_range(uids: std::ops::Range<u32>) -> Vec<(i32, u32, String)> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(status) = std::fs::read_to_string(e.path().join("status")) else {
            continue;
        };
        let uid = status
            .lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|r| r.split_whitespace().next())
            .and_then(|u| u.parse::<u32>().ok());
        if let Some(uid) = uid.filter(|u| uids.contains(u)) {
            let cg = std::fs::read_to_string(e.path().join("cgroup")).unwrap_or_default();
            out.push((pid, uid, cg));
        }
    }
    out
}

/// GET http://127.0.0.1:PORT/PATH: (status, body); None if nothing answers.
pub fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    let agent = ureq::AgentBuilder::new()
        .timeout(Duration::from_secs(5))
        .build();
    match agent.get(&format!("http://127.0.0.1:{port}{path}")).call() {
        Ok(r) => Some((r.status(), r.into_string().unwrap_or_default())),
        Err(ureq::Error::Status(code, r)) => Some((code, r.into_string().unwrap_or_default())),
        Err(_) => None,
    }
}

/// The value of a metric series (sum over its label sets) in a Prometheus text page.
pub fn metric(page: &str, name: &str) -> f64 {
    page.lines()
        .filter(|l| !l.starts_with('#'))
        .filter(|l| {
            l.strip_prefix(name)
                .is_some_and(|r| r.starts_with(' ') || r.starts_with('{'))
        })
        .filter_map(|l| l.rsplit(' ').next().and_then(|v| v.parse::<f64>().ok()))
        .sum()
}
