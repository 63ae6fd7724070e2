//! Unique, self-healing work folders (bot folders in the scratch root, build folders in the
//! compile cache).
//!
//! Names are never derived from pids: in containers every worker is pid 1 and several of them
//! may share one volume, so `<pid>-<seq>` names collide and a pid-liveness check means nothing
//! across pid namespaces. Instead each folder is `<prefix><32 hex digits>` (128 bits from the OS
//! RNG), made with `create_dir` (a new name on EEXIST), and guarded by an exclusive flock on a
//! lock file beside it (`<name>.lock`) held for the folder's whole life. A flock dies with its
//! holder (even on SIGKILL), in whatever pid namespace or container it lived, as long as the
//! kernel is the same; so a sweep that can take a folder's lock knows that folder is abandoned and
//! removes it.
//!
//! Protocol: create and lock `<name>.lock` (O_EXCL), check that the path still names the locked
//! inode (a sweeper may have unlinked it between the create and the flock), then `create_dir`.
//! Release: remove the folder, unlink the lock file, close (unlock). A sweeper takes the lock
//! non-blockingly; with it, it removes the folder and the lock file. A folder with no lock file
//! at all is a leftover too (the creator always makes the lock file first).

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A folder that exists (and is locked) until dropped.
#[derive(Debug)]
pub struct LockedDir {
    path: PathBuf,
    lock_path: PathBuf,
    _lock: File,
}

impl LockedDir {
    /// Make a fresh `<root>/<prefix><hex>` folder (`root` must exist).
    pub fn create(root: &Path, prefix: &str) -> std::io::Result<LockedDir> {
        for _ in 0..64 {
            let name = format!("{prefix}{}", random_hex()?);
            let path = root.join(&name);
            let lock_path = root.join(format!("{name}.lock"));
            let lock = match OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&lock_path)
            {
                Ok(f) => f,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            };
            if !try_lock(&lock) {
                continue;
            }
            // A sweeper may have taken and unlinked the fresh lock file before our flock.
            let same = std::fs::metadata(&lock_path)
                .ok()
                .zip(lock.metadata().ok())
                .is_some_and(|(a, b)| a.ino() == b.ino() && a.dev() == b.dev());
            if !same {
                continue;
            }
            match std::fs::create_dir(&path) {
                Ok(()) => {
                    return Ok(LockedDir {
                        path,
                        lock_path,
                        _lock: lock,
                    })
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    // A leftover without a lock file happened to have this name: leave it to the
                    // sweep and take another name.
                    let _ = std::fs::remove_file(&lock_path);
                    continue;
                }
                Err(e) => {
                    let _ = std::fs::remove_file(&lock_path);
                    return Err(e);
                }
            }
        }
        Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            format!("no free folder name in {} after 64 tries", root.display()),
        ))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The random part of the name (for other resources of the same bot, e.g. cgroups).
    pub(crate) fn name(&self) -> String {
        self.path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// Remove the folder and its lock file; what could not be removed is returned.
    pub fn remove(self) -> Option<String> {
        let left = match std::fs::remove_dir_all(&self.path) {
            Err(e) if self.path.exists() => {
                Some(format!("folder {} not removed: {e}", self.path.display()))
            }
            _ => None,
        };
        if left.is_none() {
            let _ = std::fs::remove_file(&self.lock_path);
        }
        left
    }
}

/// Remove every `<prefix>*` folder (and lock file) in `root` whose lock nobody holds.
/// Returns how many folders were removed.
pub fn sweep(root: &Path, prefix: &str) -> usize {
    let Ok(entries) = std::fs::read_dir(root) else {
        return 0;
    };
    let mut swept = 0;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.starts_with(prefix) {
            continue;
        }
        let (dir_name, is_lock) = match name.strip_suffix(".lock") {
            Some(d) => (d.to_owned(), true),
            None => (name.clone(), false),
        };
        let dir = root.join(&dir_name);
        let lock_path = root.join(format!("{dir_name}.lock"));
        if !is_lock && lock_path.exists() {
            continue; // handled through its lock file
        }
        match OpenOptions::new().write(true).open(&lock_path) {
            Ok(lock) => {
                if !try_lock(&lock) {
                    continue; // in use
                }
                if dir.exists() && remove_abandoned(&dir) {
                    swept += 1;
                }
                if !dir.exists() {
                    let _ = std::fs::remove_file(&lock_path);
                }
            }
            Err(_) if !is_lock && dir.is_dir() => {
                // No lock file: the creator always makes it first, so this is a leftover.
                if remove_abandoned(&dir) {
                    swept += 1;
                }
            }
            Err(_) => {}
        }
    }
    swept
}

/// [`sweep`] at the first call for `root` and then at most once per `every`.
pub fn sweep_now_and_then(root: &Path, prefix: &str, every: Duration) -> usize {
    static LAST: Mutex<Vec<(PathBuf, Instant)>> = Mutex::new(Vec::new());
    {
        let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        match last.iter_mut().find(|(p, _)| p == root) {
            Some((_, t)) if now.duration_since(*t) < every => return 0,
            Some((_, t)) => *t = now,
            None => last.push((root.to_path_buf(), now)),
        }
    }
    sweep(root, prefix)
}

/// Remove an abandoned folder: first detach what its dead owner left mounted below it (a
/// [`crate::sized_tmpfs::SizedTmpfs`]), then the files.
fn remove_abandoned(dir: &Path) -> bool {
    crate::sized_tmpfs::detach_under(dir);
    std::fs::remove_dir_all(dir).is_ok()
}

fn try_lock(f: &File) -> bool {
    crate::fdio::try_lock_exclusive(f)
}

/// 32 hex digits from the OS RNG.
pub(crate) fn random_hex() -> std::io::Result<String> {
    let mut buf = [0u8; 16];
    let mut got = 0;
    while got < buf.len() {
        // SAFETY: writing into the unfilled tail of a local buffer.
        let n = unsafe { libc::getrandom(buf[got..].as_mut_ptr().cast(), buf.len() - got, 0) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        got += n as usize;
    }
    Ok(hex::encode(buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_locked_and_swept_only_when_abandoned() {
        let root = tempfile::tempdir().unwrap();
        let a = LockedDir::create(root.path(), "x-").unwrap();
        let b = LockedDir::create(root.path(), "x-").unwrap();
        assert_ne!(a.path(), b.path());
        assert!(a.name().starts_with("x-") && a.name().len() == 34);
        // A leftover of a killed holder: a folder whose lock file nobody holds...
        let dead = root.path().join("x-dead");
        std::fs::create_dir(&dead).unwrap();
        std::fs::write(dead.join("f"), "x").unwrap();
        std::fs::write(root.path().join("x-dead.lock"), "").unwrap();
        // ... and one with no lock file at all; something of another prefix stays.
        let bare = root.path().join("x-bare");
        std::fs::create_dir(&bare).unwrap();
        let other = root.path().join("keep");
        std::fs::create_dir(&other).unwrap();
        assert_eq!(sweep(root.path(), "x-"), 2);
        assert!(!dead.exists() && !bare.exists() && other.exists());
        assert!(!root.path().join("x-dead.lock").exists());
        assert!(a.path().is_dir() && b.path().is_dir(), "held folders stay");
        let pa = a.path().to_path_buf();
        assert!(a.remove().is_none());
        assert!(!pa.exists() && !root.path().join(format!("{}.lock", pa.display())).exists());
        drop(b); // dropped without remove (as by a crash): the next sweep clears it
        assert_eq!(sweep(root.path(), "x-"), 1);
        let left: Vec<_> = std::fs::read_dir(root.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "only `keep` is left");
    }
}
