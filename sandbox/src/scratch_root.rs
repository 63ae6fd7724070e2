//! Where bots' private folders go when no scratch root is configured: `/dev/shm` when the full
//! sandbox is in force and it is a usable tmpfs, else `$TMPDIR`. Every bot start makes a folder,
//! a `bin/` and a program copy there and every teardown removes them; on a disk filesystem that
//! is inode allocation (ext4 scans its recently deleted inodes on every `mkdir`) and, on a disk
//! mounted `discard`, a synchronous discard per deleted copy (BENCHMARKS.md, issue 26). In
//! the full sandbox a bot writes only to its own sized tmpfs, so the folder holds only the
//! program copy: a few pages of memory. Without it the bot's scratch is a plain folder there,
//! and on a tmpfs its writes would take memory, not disk: then the default stays on `$TMPDIR`.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Name of the scratch root folder in its parent (the same under `/dev/shm` and `$TMPDIR`).
pub const NAME: &str = "matchfarm-scratch";

/// The tmpfs tried first.
pub const SHM: &str = "/dev/shm";

/// Free space `/dev/shm` must have to be chosen (a small container `/dev/shm` is not).
pub const MIN_FREE: u64 = 256 << 20;

/// What the host says about `/dev/shm` and the folder the farm would use in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShmFacts {
    pub tmpfs: bool,
    pub noexec: bool,
    pub read_only: bool,
    /// Bytes free for an unprivileged writer.
    pub free: u64,
    /// `/dev/shm/matchfarm-scratch`: absent, or present as a real folder (not a symlink) owned
    /// by this process's user, or present as anything else (someone else's: never used).
    pub folder: Folder,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Folder {
    Absent,
    Ours,
    NotOurs,
}

/// The choice, and why `/dev/shm` was not taken (None when it was).
pub fn choose(full: bool, shm: Option<ShmFacts>, tmp: &Path) -> (PathBuf, Option<&'static str>) {
    let fallback = |why| (tmp.join(NAME), Some(why));
    if !full {
        return fallback("the full sandbox is not in force (a bot's scratch would be in memory)");
    }
    let Some(f) = shm else {
        return fallback("/dev/shm cannot be read");
    };
    let why = if !f.tmpfs {
        "/dev/shm is not a tmpfs"
    } else if f.noexec {
        "/dev/shm is mounted noexec"
    } else if f.read_only {
        "/dev/shm is read-only"
    } else if f.free < MIN_FREE {
        "/dev/shm has less than 256 MiB free"
    } else if f.folder == Folder::NotOurs {
        "/dev/shm/matchfarm-scratch belongs to another user or is not a folder"
    } else {
        return (Path::new(SHM).join(NAME), None);
    };
    fallback(why)
}

/// The facts about `/dev/shm` on this host (None when it cannot be read).
pub fn shm_facts() -> Option<ShmFacts> {
    let fs = nix::sys::statfs::statfs(SHM).ok()?;
    let vfs = nix::sys::statvfs::statvfs(SHM).ok()?;
    let flags = vfs.flags();
    let folder = match std::fs::symlink_metadata(Path::new(SHM).join(NAME)) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Folder::Absent,
        Err(_) => Folder::NotOurs,
        Ok(m) if m.file_type().is_dir() && m.uid() == nix::unistd::geteuid().as_raw() => {
            Folder::Ours
        }
        Ok(_) => Folder::NotOurs,
    };
    Some(ShmFacts {
        tmpfs: fs.filesystem_type() == nix::sys::statfs::TMPFS_MAGIC,
        noexec: flags.contains(nix::sys::statvfs::FsFlags::ST_NOEXEC),
        read_only: flags.contains(nix::sys::statvfs::FsFlags::ST_RDONLY),
        free: (vfs.blocks_available() as u64).saturating_mul(vfs.fragment_size() as u64),
        folder,
    })
}

/// The default scratch root on this host for a sandbox whose mode in force is full (`full`)
/// or not, and why it is not on `/dev/shm` (for the start-up log).
pub fn default_root(full: bool) -> (PathBuf, Option<&'static str>) {
    choose(full, shm_facts(), &std::env::temp_dir())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn good() -> ShmFacts {
        ShmFacts {
            tmpfs: true,
            noexec: false,
            read_only: false,
            free: 1 << 30,
            folder: Folder::Absent,
        }
    }

    #[test]
    fn a_usable_tmpfs_is_chosen_only_with_the_full_sandbox() {
        let tmp = Path::new("/var/tmp");
        assert_eq!(
            choose(true, Some(good()), tmp),
            (PathBuf::from("/dev/shm/matchfarm-scratch"), None)
        );
        let ours = ShmFacts {
            folder: Folder::Ours,
            ..good()
        };
        assert_eq!(choose(true, Some(ours), tmp).1, None);
        let (root, why) = choose(false, Some(good()), tmp);
        assert_eq!(root, PathBuf::from("/var/tmp/matchfarm-scratch"));
        assert!(why.unwrap().contains("full sandbox"));
    }

    #[test]
    fn every_unusable_tmpfs_falls_back_to_tmpdir_and_says_why() {
        let tmp = Path::new("/var/tmp");
        let cases = [
            (None, "cannot be read"),
            (
                Some(ShmFacts {
                    tmpfs: false,
                    ..good()
                }),
                "not a tmpfs",
            ),
            (
                Some(ShmFacts {
                    noexec: true,
                    ..good()
                }),
                "noexec",
            ),
            (
                Some(ShmFacts {
                    read_only: true,
                    ..good()
                }),
                "read-only",
            ),
            (
                Some(ShmFacts {
                    free: MIN_FREE - 1,
                    ..good()
                }),
                "256 MiB",
            ),
            (
                Some(ShmFacts {
                    folder: Folder::NotOurs,
                    ..good()
                }),
                "another user",
            ),
        ];
        for (facts, said) in cases {
            let (root, why) = choose(true, facts, tmp);
            assert_eq!(
                root,
                PathBuf::from("/var/tmp/matchfarm-scratch"),
                "{facts:?}"
            );
            assert!(why.is_some_and(|w| w.contains(said)), "{facts:?}: {why:?}");
        }
    }

    #[test]
    fn this_hosts_dev_shm_is_read_as_the_mount_table_says() {
        let facts = shm_facts().expect("/dev/shm readable");
        let mounts = std::fs::read_to_string("/proc/self/mounts").expect("mount table");
        // The last mount on /dev/shm is the one in force.
        let Some(line) = mounts.lines().rfind(|l| l.split(' ').nth(1) == Some(SHM)) else {
            return; // not a mount point of its own here: nothing to compare with
        };
        let fields: Vec<&str> = line.split(' ').collect();
        assert_eq!(facts.tmpfs, fields[2] == "tmpfs", "{line}: {facts:?}");
        let options: Vec<&str> = fields[3].split(',').collect();
        assert_eq!(
            facts.noexec,
            options.contains(&"noexec"),
            "{line}: {facts:?}"
        );
        assert_eq!(
            facts.read_only,
            options.contains(&"ro"),
            "{line}: {facts:?}"
        );
    }
}
