//! The uid pool: a root worker runs each concurrent bot under its own unprivileged uid, so that
//! RLIMIT_NPROC (counted per uid) and kill permissions separate bots from each other and from
//! the worker. A uid is leased with an exclusive flock on a file, which also keeps several worker
//! processes on one host from handing out the same uid.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::path::Path;

/// A uid held until dropped.
#[derive(Debug)]
pub(crate) struct UidLease {
    pub uid: u32,
    _lock: File,
}

/// Lease a free uid from `base..base+count`, trying `base + slot % count` first.
pub(crate) fn lease(
    lock_dir: &Path,
    base: u32,
    count: u32,
    slot: usize,
) -> Result<UidLease, String> {
    std::fs::create_dir_all(lock_dir)
        .map_err(|e| format!("uid lock dir {}: {e}", lock_dir.display()))?;
    let count = count.max(1);
    let first = (slot as u64 % count as u64) as u32;
    for i in 0..count {
        let uid = base + (first + i) % count;
        let path = lock_dir.join(format!("{uid}.lock"));
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| format!("uid lock {}: {e}", path.display()))?;
        // SAFETY: flock on an fd we own.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            return Ok(UidLease { uid, _lock: file });
        }
    }
    Err(format!("all {count} uids from {base} are in use"))
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
        assert!(lease(dir.path(), 70000, 2, 0).is_err());
        let freed = a.uid;
        drop(a);
        assert_eq!(lease(dir.path(), 70000, 2, 5).unwrap().uid, freed);
    }
}
