//! Clearing what dead workers left under `matchfarm/`: a bot cgroup is abandoned only when its
//! directory's flock can be taken (its creator holds it for the cgroup's whole life, see the
//! parent module), in every hierarchy it exists in. Only names of the lock-guarded form
//! (`bot-<32 hex>`) are touched: `<pid>-<hex>` cgroups of older farm versions, whose owner cannot
//! be told from here, and anything else are never killed, only listed once.
//!
//! An abandoned cgroup's processes are killed through v2 `cgroup.kill` where the file exists;
//! a pid read from `cgroup.procs` is signalled only when it is > 0 (a process outside this pid
//! namespace reads as 0). A cgroup that still holds processes this sweep cannot reach is left
//! alone and reported.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{is_bot_cgroup_name, open_dir, roots, still_names};
use crate::HostSupport;

/// What one sweep did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Sweep {
    /// Abandoned bot cgroups removed (counted once per name, over every hierarchy).
    pub swept: usize,
    /// Bot cgroups whose lock is held (live, some worker's on this host): left alone.
    pub live: usize,
    /// Entries under `matchfarm/` not of the lock-guarded form (older farm versions, or not the
    /// farm's at all): never touched.
    pub foreign: Vec<PathBuf>,
    /// Abandoned cgroups that could not be cleared, and why.
    pub refused: Vec<String>,
}

/// Sweep `matchfarm/` of every hierarchy of `host`.
pub fn sweep_stale(host: &HostSupport) -> Sweep {
    let mut out = Sweep::default();
    let mut parents: Vec<PathBuf> = Vec::new();
    for root in roots(host).into_iter().flatten() {
        let parent = root.join("matchfarm");
        let same =
            |p: &PathBuf| std::fs::canonicalize(p).ok() == std::fs::canonicalize(&parent).ok();
        if parent.is_dir() && !parents.iter().any(same) {
            parents.push(parent);
        }
    }
    let mut names: Vec<String> = Vec::new();
    for parent in &parents {
        let Ok(entries) = std::fs::read_dir(parent) else {
            continue;
        };
        for e in entries.flatten() {
            if !e.file_type().is_ok_and(|t| t.is_dir()) {
                continue; // the hierarchy's own files (cgroup.procs, cpu.shares, ...)
            }
            let name = e.file_name().to_string_lossy().into_owned();
            if !is_bot_cgroup_name(&name) {
                out.foreign.push(e.path());
            } else if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    for name in names {
        let dirs: Vec<PathBuf> = parents
            .iter()
            .map(|p| p.join(&name))
            .filter(|d| d.is_dir())
            .collect();
        match lock_all(&dirs) {
            None => out.live += 1,
            Some(locks) => match clear(&locks) {
                Ok(()) => out.swept += 1,
                Err(why) => out.refused.push(why.to_string()),
            },
        }
    }
    out
}

/// Every directory of one name opened and flocked by us, or `None` if any lock is held (the
/// cgroup is some live worker's) or a directory cannot be opened.
fn lock_all(dirs: &[PathBuf]) -> Option<Vec<(PathBuf, File)>> {
    let mut locks = Vec::new();
    for dir in dirs {
        let file = match open_dir(dir) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue, // its owner removed it
            Err(_) => return None,
        };
        if !crate::fdio::try_lock_exclusive(&file) {
            return None;
        }
        if still_names(dir, &file) {
            locks.push((dir.clone(), file));
        }
    }
    Some(locks)
}

/// Why an abandoned cgroup was left in place.
#[derive(Debug, thiserror::Error)]
enum ClearError {
    #[error("abandoned cgroup {dir} still holds processes {pids:?}{note}: left alone")]
    Busy {
        dir: String,
        pids: Vec<i32>,
        note: &'static str,
    },
    #[error("abandoned cgroup {0} could not be removed")]
    Stuck(String),
}

/// Kill what is left in the abandoned (locked by us) cgroups and remove them.
fn clear(locks: &[(PathBuf, File)]) -> Result<(), ClearError> {
    let mut killer = false;
    for (dir, _) in locks {
        let kill = dir.join("cgroup.kill");
        if kill.exists() && std::fs::write(&kill, "1").is_ok() {
            killer = true;
        }
    }
    let mut left: Vec<(PathBuf, Vec<i32>)> = Vec::new();
    for _ in 0..250 {
        left = locks
            .iter()
            .map(|(dir, _)| (dir.clone(), procs(dir)))
            .filter(|(_, pids)| !pids.is_empty())
            .collect();
        let unreachable = left.iter().all(|(_, pids)| pids.iter().all(|&p| p <= 0));
        if left.is_empty() || (unreachable && !killer) {
            break;
        }
        for (_, pids) in &left {
            for &pid in pids {
                crate::fdio::kill_pid(pid, libc::SIGKILL);
            }
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    if let Some((dir, pids)) = left.first() {
        let outside = pids.contains(&0);
        return Err(ClearError::Busy {
            dir: dir.display().to_string(),
            pids: pids.clone(),
            note: match (outside, killer) {
                (true, false) => " (0: outside this pid namespace, and no cgroup.kill here)",
                (true, true) => " (0: outside this pid namespace)",
                _ => "",
            },
        });
    }
    for (dir, _) in locks {
        if std::fs::remove_dir(dir).is_err() && dir.exists() {
            return Err(ClearError::Stuck(dir.display().to_string()));
        }
    }
    Ok(())
}

/// The pids `cgroup.procs` of `dir` lists, as this pid namespace sees them (0: outside it).
fn procs(dir: &Path) -> Vec<i32> {
    std::fs::read_to_string(dir.join("cgroup.procs"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}
