//! The landlock layer: a bot may read and execute its own (private copy of the) program, read
//! the system libraries under /usr, and read and write its scratch directory; nothing else on
//! any filesystem (procfs included). TCP bind/connect and signals to processes outside the
//! sandbox are refused where the kernel's landlock ABI covers them.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use landlock::{
    Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreatedAttr,
    Scope, ABI,
};

use crate::error::HostError;

/// What one sandboxed process may touch.
#[derive(Debug, Default, Clone)]
pub struct FsPolicy {
    /// Read-only (directories: recursively).
    pub read: Vec<PathBuf>,
    /// Read + execute (files or directories).
    pub exec: Vec<PathBuf>,
    /// Read + write + create + remove below these directories.
    pub write: Vec<PathBuf>,
}

const ABI_USED: ABI = ABI::V6;

/// Build the ruleset now (before the fork); the child only calls `landlock_restrict_self` on the
/// returned fd. `None` when the kernel has no landlock.
pub(crate) fn ruleset(policy: &FsPolicy) -> Result<Option<OwnedFd>, HostError> {
    let err = |e: &dyn std::fmt::Display| HostError::Setup(format!("landlock ruleset: {e}"));
    let mut rs = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(ABI_USED))
        .map_err(|e| err(&e))?
        .handle_access(AccessNet::from_all(ABI_USED))
        .map_err(|e| err(&e))?
        .scope(Scope::from_all(ABI_USED))
        .map_err(|e| err(&e))?
        .create()
        .map_err(|e| err(&e))?;
    let rule = |path: &Path, access| {
        let access = if path.is_dir() {
            access
        } else {
            access & AccessFs::from_file(ABI_USED)
        };
        landlock::PathFd::new(path).map(|fd| landlock::PathBeneath::new(fd, access))
    };
    let read = AccessFs::from_read(ABI_USED) & !AccessFs::Execute;
    let exec = AccessFs::from_read(ABI_USED);
    let write = AccessFs::from_all(ABI_USED);
    for (paths, access) in [
        (&policy.read, read),
        (&policy.exec, exec),
        (&policy.write, write),
    ] {
        for p in paths {
            let r = rule(p, access)
                .map_err(|e| HostError::Setup(format!("landlock rule for {}: {e}", p.display())))?;
            rs = rs.add_rule(r).map_err(|e| err(&e))?;
        }
    }
    Ok(rs.into())
}

/// The landlock access mask for "everything" on this kernel (for rules added in the child).
pub(crate) fn full_access_bits(host_abi: i32) -> u64 {
    let abi = ABI::from(host_abi.min(6));
    AccessFs::from_all(abi).bits()
}

/// The dynamic loader of this system: execve opens it with exec intent, so it needs `exec`.
pub(crate) fn dynamic_loader() -> Option<PathBuf> {
    ["/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1"]
        .iter()
        .find_map(|p| std::fs::canonicalize(p).ok())
}
