//! A bot's process group, addressed through a pidfd of its main process instead of by number.
//!
//! A group id is a pid: once every member of the group is gone the number is free, and after
//! the host's pids wrap (`pid_max` is 32768 on many hosts, a busy worker forks thousands of
//! processes a minute) it can name a stranger's group: another match's bot, another farm's, a
//! shell. `kill(-pgid, SIGSTOP)` from a stale handle would then stop a bot in the middle of its
//! turn (a "timeout" with no CPU used), `SIGKILL` would kill it. The pidfd is opened while the
//! bot is provably ours (our child, or our init's child) and pins its `struct pid`; with
//! `PIDFD_SIGNAL_PROCESS_GROUP` (Linux 6.9) the kernel signals the members of *that* group, never
//! a later group with the same number. On older kernels a group is signalled by number only
//! while the pidfd says its leader has not ended (the leader cannot be recycled while it runs).

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

use crate::fdio::{self, PollFd};

/// `PIDFD_SIGNAL_PROCESS_GROUP` of `<linux/pidfd.h>` (not in the libc crate yet).
const PIDFD_SIGNAL_PROCESS_GROUP: libc::c_uint = 1 << 2;

/// The process group of a bot's main process.
#[derive(Debug)]
pub(crate) struct Group {
    pgid: i32,
    pidfd: OwnedFd,
}

impl Group {
    /// The group led by `pid`, if `pid` is (still) a child of `parent` (or `parent` itself):
    /// checked after the pidfd is open, so the pidfd names our process and no recycled pid.
    pub(crate) fn of(pid: i32, parent: i32) -> Option<Group> {
        if pid <= 1 {
            return None;
        }
        // SAFETY: pidfd_open has no memory-safety preconditions; the fd it returns is ours.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        if fd < 0 {
            return None;
        }
        // SAFETY: a fresh fd from pidfd_open that nothing else owns.
        let pidfd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
        if pid != parent && parent_of(pid) != Some(parent) {
            return None;
        }
        Some(Group { pgid: pid, pidfd })
    }

    /// Send `sig` (0: only ask) to every member of the group. True if some member got it.
    pub(crate) fn signal(&self, sig: i32) -> bool {
        // SAFETY: pidfd_send_signal with a pidfd we own, no siginfo (NULL), and a flags word.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                self.pidfd.as_raw_fd(),
                sig,
                std::ptr::null::<libc::siginfo_t>(),
                PIDFD_SIGNAL_PROCESS_GROUP,
            )
        };
        if rc == 0 {
            return true;
        }
        if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINVAL) {
            return false; // ESRCH: no member left
        }
        // A kernel without the flag: by number, only while the leader has not ended.
        if self.leader_ended() {
            return false;
        }
        // SAFETY: kill has no memory-safety preconditions; pgid > 1 never means "everyone".
        unsafe { libc::kill(-self.pgid, sig) == 0 }
    }

    /// Whether the group's leader has ended (its pidfd is readable).
    fn leader_ended(&self) -> bool {
        let mut fds = [PollFd::readable(self.pidfd.as_raw_fd())];
        matches!(fdio::poll(&mut fds, Duration::ZERO), Ok(n) if n > 0)
    }
}

/// The parent pid of `pid` from `/proc/<pid>/stat` (the field after the state letter).
fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
    let close = stat.iter().rposition(|&b| b == b')')?;
    let rest = std::str::from_utf8(stat.get(close + 1..)?).ok()?;
    rest.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parent_of_self() {
        let me = std::process::id() as i32;
        // SAFETY: getppid has no preconditions.
        let ppid = unsafe { libc::getppid() };
        assert_eq!(parent_of(me), Some(ppid));
    }

    #[test]
    fn a_stranger_is_no_group_of_ours() {
        // pid 1 is never a bot's group; our parent is not our child.
        assert!(Group::of(1, std::process::id() as i32).is_none());
        // SAFETY: getppid has no preconditions.
        let ppid = unsafe { libc::getppid() };
        assert!(Group::of(ppid, std::process::id() as i32).is_none());
    }
}
