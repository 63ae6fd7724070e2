//! A size-limited tmpfs mounted on a folder the farm made (root only), so that what an untrusted
//! process may write there is bounded by the kernel (ENOSPC past the size, and the writer's
//! memory cgroup pays for the pages), not by a look after the fact. Used for a proboj player's
//! private copy of its folder, which it may write into during its game.
//!
//! The mount lives in the worker's mount namespace and is detached when its [`SizedTmpfs`] is
//! dropped. A worker that dies leaves it mounted: the sweep of its abandoned folder
//! ([`crate::folder::sweep`], which holds that folder's lock, so the folder is provably ours to
//! clear) detaches every mount below the folder first ([`detach_under`]).

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// A tmpfs of a fixed size on a folder; detached when dropped.
#[derive(Debug)]
pub struct SizedTmpfs {
    path: PathBuf,
}

impl SizedTmpfs {
    /// Mount a tmpfs of at most `bytes` bytes and `inodes` files and folders on `path` (an
    /// existing folder), root mode `mode`, without devices or set-uid programs.
    pub fn mount(path: &Path, bytes: u64, inodes: u64, mode: u32) -> std::io::Result<SizedTmpfs> {
        let target = c_path(path)?;
        let data = CString::new(format!("size={bytes},nr_inodes={inodes},mode={mode:o}"))
            .map_err(std::io::Error::other)?;
        // SAFETY: mount(2) with NUL-terminated strings that outlive the call.
        let rc = unsafe {
            libc::mount(
                c"tmpfs".as_ptr(),
                target.as_ptr(),
                c"tmpfs".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV,
                data.as_ptr().cast(),
            )
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(SizedTmpfs {
            path: path.to_path_buf(),
        })
    }

    /// Where it is mounted.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for SizedTmpfs {
    fn drop(&mut self) {
        if let Err(e) = detach(&self.path) {
            tracing::warn!(path = %self.path.display(), error = %e, "could not detach a tmpfs");
        }
    }
}

fn c_path(path: &Path) -> std::io::Result<CString> {
    CString::new(path.as_os_str().as_bytes()).map_err(std::io::Error::other)
}

/// Detach the mount on `path` (lazily: it goes once nothing uses it).
fn detach(path: &Path) -> std::io::Result<()> {
    let target = c_path(path)?;
    // SAFETY: umount2(2) with a NUL-terminated path that outlives the call.
    let rc = unsafe { libc::umount2(target.as_ptr(), libc::MNT_DETACH) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Detach every mount of this mount namespace at or below `root`, deepest first. Returns how
/// many were detached. Only for a folder the caller provably owns (it holds its lock).
pub fn detach_under(root: &Path) -> usize {
    let Ok(info) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return 0;
    };
    let mut points = mount_points_under(&info, root);
    points.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
    points.iter().filter(|p| detach(p).is_ok()).count()
}

/// The mount points at or below `root` in a `/proc/<pid>/mountinfo` text (field 5, with the
/// kernel's octal escapes of space, tab, newline and backslash undone).
pub fn mount_points_under(mountinfo: &str, root: &Path) -> Vec<PathBuf> {
    mountinfo
        .lines()
        .filter_map(|line| line.split(' ').nth(4))
        .map(|p| PathBuf::from(unescape(p)))
        .filter(|p| p.starts_with(root))
        .collect()
}

fn unescape(field: &str) -> String {
    field
        .replace("\\040", " ")
        .replace("\\011", "\t")
        .replace("\\012", "\n")
        .replace("\\134", "\\")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_points_below_a_folder() {
        let info = "22 1 0:21 / / rw - ext4 /dev/vda rw\n\
            90 22 0:50 / /scratch/proboj-ab/p/0 rw,nosuid - tmpfs tmpfs rw,size=1024k\n\
            91 22 0:51 / /scratch/proboj-ab/my\\040player/0 rw - tmpfs tmpfs rw\n\
            92 22 0:52 / /scratch/proboj-abc/p/0 rw - tmpfs tmpfs rw\n";
        let got = mount_points_under(info, Path::new("/scratch/proboj-ab"));
        assert_eq!(
            got,
            vec![
                PathBuf::from("/scratch/proboj-ab/p/0"),
                PathBuf::from("/scratch/proboj-ab/my player/0")
            ]
        );
    }
}
