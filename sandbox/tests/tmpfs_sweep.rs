//! The sweep of an abandoned folder detaches a size-limited tmpfs its dead owner left mounted
//! below it, then removes the folder (root only: mounting needs CAP_SYS_ADMIN). It lives here,
//! not beside `sized_tmpfs`, because it drives `folder::sweep`, which uses `sized_tmpfs`.

mod common;

use common::*;
use sandbox::folder;
use sandbox::sized_tmpfs::{mount_points_under, SizedTmpfs};

#[test]
fn a_sweep_detaches_what_a_dead_owner_left_mounted() {
    if !nix::unistd::geteuid().is_root() {
        skip("mounting a tmpfs needs root");
        return;
    }
    let root = tempfile::tempdir().expect("tempdir");
    // A leftover: the folder of a worker that died (no lock file any more).
    let dir = root.path().join("t-0123456789abcdef0123456789abcdef");
    let inner = dir.join("player");
    std::fs::create_dir_all(&inner).expect("folders");
    let mount = SizedTmpfs::mount(&inner, 1 << 20, 64, 0o711).expect("mount");
    // The kernel bounds it: 2 MiB do not fit in 1 MiB.
    let too_much = std::fs::write(inner.join("big"), vec![0u8; 2 << 20]);
    assert!(too_much.is_err(), "a 1 MiB tmpfs took 2 MiB");
    std::mem::forget(mount); // its owner died without detaching it
    let info = std::fs::read_to_string("/proc/self/mountinfo").expect("mountinfo");
    assert_eq!(mount_points_under(&info, &dir), vec![inner.clone()]);
    assert_eq!(folder::sweep(root.path(), "t-"), 1);
    assert!(!dir.exists(), "the leftover folder is still there");
    let info = std::fs::read_to_string("/proc/self/mountinfo").expect("mountinfo");
    assert!(mount_points_under(&info, &dir).is_empty(), "still mounted");
}
