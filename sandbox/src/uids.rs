//! The uid pool: a root worker runs each concurrent bot under its own unprivileged uid, so that
//! RLIMIT_NPROC (counted per uid, host-wide) and kill permissions separate bots from each other
//! and from the worker.
//!
//! # Distinct host uids across workers
//!
//! A uid inside a privileged container is the same uid on the host, so every worker of a host
//! must agree on who uses which uid. Two ways, either is enough:
//! * **Shared leases** (the default): a uid is leased with an exclusive flock on
//!   `<uid_lock_dir>/<uid>.lock`. `uid_lock_dir` must be one host-wide folder that every worker
//!   on the host shares: the default `/run/matchfarm/uids` on a plain host; in containers,
//!   mount the same host path (or volume) there in every worker container. A folder inside a
//!   container's private /tmp protects nothing across containers.
//! * **Disjoint ranges**: give each worker its own `uid_base..uid_base+uid_count` (e.g. from a
//!   pod ordinal: base 60001 + 1024 * ordinal), then private lock folders are harmless.
//!
//! Defence in depth: before a leased uid is used, it is refused (and the next one tried) if any
//! live process of that uid is visible in /proc (a bot of a worker that does not share the lock
//! folder, or a leftover). Processes in other pid namespaces are invisible to that check, which
//! is why the lock folder (or disjoint ranges) is the real guarantee.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// A uid held until dropped.
#[derive(Debug)]
pub(crate) struct UidLease {
    pub uid: u32,
    _lock: File,
}

/// Why no uid could be leased.
#[derive(Debug, thiserror::Error)]
pub(crate) enum UidError {
    #[error("uid lock folder {}: {source}", dir.display())]
    Dir {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("uid lock {}: {source}", path.display())]
    Lock {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("all {count} uids from {base} are in use (leased in {}{})", dir.display(),
        if *busy > 0 { format!(", {busy} of them by processes outside the leases") } else { String::new() })]
    Exhausted {
        base: u32,
        count: u32,
        dir: PathBuf,
        busy: u32,
    },
}

/// Lease a free uid from `base..base+count`, trying `base + slot % count` first; a uid that
/// live processes already use is skipped.
pub(crate) fn lease(
    lock_dir: &Path,
    base: u32,
    count: u32,
    slot: usize,
) -> Result<UidLease, UidError> {
    std::fs::create_dir_all(lock_dir).map_err(|source| UidError::Dir {
        dir: lock_dir.to_path_buf(),
        source,
    })?;
    let count = count.max(1);
    let first = (slot as u64 % count as u64) as u32;
    let mut busy = 0;
    for i in 0..count {
        let uid = base + (first + i) % count;
        let path = lock_dir.join(format!("{uid}.lock"));
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|source| UidError::Lock {
                path: path.clone(),
                source,
            })?;
        if !crate::fdio::try_lock_exclusive(&file) {
            continue;
        }
        if has_processes(uid) {
            busy += 1;
            tracing::warn!(
                uid,
                lock_dir = %lock_dir.display(),
                "uid is free in the lease folder but processes run under it: skipped (does \
                 another worker on this host use other leases?)"
            );
            continue;
        }
        return Ok(UidLease { uid, _lock: file });
    }
    Err(UidError::Exhausted {
        base,
        count,
        dir: lock_dir.to_path_buf(),
        busy,
    })
}

/// Whether any visible process runs under `uid` (the owner of /proc/<pid> is its euid).
fn has_processes(uid: u32) -> bool {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return false;
    };
    dir.flatten().any(|e| {
        e.file_name()
            .to_str()
            .is_some_and(|s| s.bytes().all(|b| b.is_ascii_digit()))
            && e.metadata().is_ok_and(|m| m.uid() == uid)
    })
}

/// Pids of live processes whose real uid is `uid` (a scan of /proc).
pub(crate) fn processes_of(uid: u32) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(status) = std::fs::read_to_string(entry.path().join("status")) else {
            continue;
        };
        let real = status
            .lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|rest| rest.split_whitespace().next()?.parse::<u32>().ok());
        if real == Some(uid) {
            out.push(pid);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leases_are_exclusive_until_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let a = lease(dir.path(), 70000, 2, 0).unwrap();
        let b = lease(dir.path(), 70000, 2, 0).unwrap();
        assert_ne!(a.uid, b.uid);
        assert!(matches!(
            lease(dir.path(), 70000, 2, 0),
            Err(UidError::Exhausted { busy: 0, .. })
        ));
        let freed = a.uid;
        drop(a);
        assert_eq!(lease(dir.path(), 70000, 2, 5).unwrap().uid, freed);
    }

    #[test]
    fn a_uid_with_live_processes_is_skipped() {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("SKIPPED: needs root to run a process under another uid");
            return;
        }
        use std::os::unix::process::CommandExt;
        let mut other = std::process::Command::new("/bin/sleep")
            .arg("30")
            .uid(70100)
            .gid(70100)
            .spawn()
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        // The lease folder knows nothing of that process (another worker's): still skipped.
        let got = lease(dir.path(), 70100, 2, 0).map(|l| l.uid);
        let one = lease(dir.path(), 70100, 1, 0).map(|l| l.uid);
        let _ = other.kill();
        let _ = other.wait();
        assert_eq!(got.unwrap(), 70101);
        assert!(
            matches!(one, Err(UidError::Exhausted { busy: 1, .. })),
            "{one:?}"
        );
    }
}
