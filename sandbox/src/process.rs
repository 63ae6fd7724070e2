//! A started (possibly sandboxed) process tree: its pipes, the resources held for it (private
//! folder, uid lease, cgroups), signals to its process group, its wait status, and the final
//! kill-reap-verify-remove step that proves nothing is left.

use std::os::fd::{AsRawFd, OwnedFd};
use std::time::{Duration, Instant};

use super::backoff::Backoff;
use super::cgroup::BotCgroups;
use super::child::ChildStack;
use super::fdio::{self, PollFd};
use super::folder::LockedDir;
use super::group::Group;
use super::steps::Steps;
use super::uids::{self, UidLease};
use super::SandboxMode;

/// What a process holds besides its pids and fds.
#[derive(Debug, Default)]
pub(crate) struct Resources {
    pub mode: SandboxMode,
    pub dir: Option<LockedDir>,
    pub uid: Option<UidLease>,
    pub cgroups: Option<BotCgroups>,
}

impl Resources {
    /// Give everything back (used when a start fails before any process exists).
    pub(crate) fn release(&mut self) -> Vec<String> {
        let mut left = Vec::new();
        if let Some(cg) = self.cgroups.take() {
            left.extend(cg.remove());
        }
        if let Some(dir) = self.dir.take() {
            left.extend(dir.remove());
        }
        self.uid = None;
        left
    }
}

/// One started process tree.
#[derive(Debug)]
pub struct Process {
    /// Our direct child: the reaping init, or the bot itself in plain mode.
    leader: i32,
    /// The bot's main process (host pid) = its process group id; None if it was gone too soon.
    pub bot_pid: Option<i32>,
    /// That process group, held by a pidfd (signals never reach a recycled group id).
    group: Option<Group>,
    pub stdin: Option<OwnedFd>,
    pub stdout: OwnedFd,
    pub stderr: OwnedFd,
    status: Option<OwnedFd>,
    /// The bot's raw wait status, once known.
    bot_status: Option<i32>,
    leader_reaped: bool,
    /// The stack the init runs on (it shares the worker's memory): unmapped once it is reaped.
    init_stack: Option<ChildStack>,
    pub(crate) res: Resources,
}

impl Process {
    pub(crate) fn new(
        leader: i32,
        stdin: Option<OwnedFd>,
        stdout: OwnedFd,
        stderr: OwnedFd,
        status: Option<OwnedFd>,
        init_stack: Option<ChildStack>,
        res: Resources,
    ) -> Self {
        let bot_pid = if status.is_none() {
            Some(leader)
        } else {
            first_child(leader)
        };
        let group = bot_pid.and_then(|pid| Group::of(pid, leader));
        Process {
            leader,
            bot_pid,
            group,
            stdin,
            stdout,
            stderr,
            status,
            bot_status: None,
            leader_reaped: false,
            init_stack,
            res,
        }
    }

    /// The pool uid the process runs under (`Full` mode as root), if any.
    pub fn uid(&self) -> Option<u32> {
        self.res.uid.as_ref().map(|l| l.uid)
    }

    /// Send `sig` to the bot's process group (through its pidfd: once the group is gone this
    /// reaches nobody, even if its number now names another group). True if a member got it.
    pub fn signal_group(&self, sig: i32) -> bool {
        self.group.as_ref().is_some_and(|g| g.signal(sig))
    }

    /// Kill every process of the bot now (group, pid namespace, cgroup). Does not wait.
    pub fn kill_now(&self) {
        self.signal_group(libc::SIGKILL);
        if self.res.mode == SandboxMode::Full && !self.leader_reaped && self.leader > 1 {
            // Pid 1 of the bot's pid namespace: its death takes every process in it along.
            fdio::kill_pid(self.leader, libc::SIGKILL);
        }
    }

    /// The bot's raw wait status if it has ended (non-blocking).
    pub fn try_status(&mut self) -> Option<i32> {
        if self.bot_status.is_some() {
            return self.bot_status;
        }
        match &self.status {
            None => {
                let mut st = 0;
                // SAFETY: waitpid on our own child.
                let r = unsafe { libc::waitpid(self.leader, &mut st, libc::WNOHANG) };
                if r == self.leader {
                    self.leader_reaped = true;
                    self.bot_status = Some(st);
                }
            }
            Some(fd) => {
                // The init writes the status once, when the bot has ended: ask the pipe first,
                // a read of it alone would wait for that.
                let mut pfd = [PollFd::readable(fd.as_raw_fd())];
                let ready = matches!(fdio::poll(&mut pfd, Duration::ZERO), Ok(n) if n > 0);
                let mut buf = [0u8; 4];
                if ready && fdio::read(fd.as_raw_fd(), &mut buf).ok() == Some(4) {
                    self.bot_status = Some(i32::from_ne_bytes(buf));
                }
            }
        }
        self.bot_status
    }

    /// Wait up to `timeout` for the bot's wait status.
    pub fn wait_status(&mut self, timeout: Duration) -> Option<i32> {
        let until = Instant::now() + timeout;
        loop {
            if let Some(s) = self.try_status() {
                return Some(s);
            }
            if Instant::now() >= until {
                return None;
            }
            match &self.status {
                Some(fd) => {
                    let mut pfd = [PollFd::readable(fd.as_raw_fd())];
                    let wait = until
                        .saturating_duration_since(Instant::now())
                        .max(Duration::from_millis(1));
                    let _ = fdio::poll(&mut pfd, wait);
                    let ev = pfd[0].revents();
                    if ev & fdio::HUP != 0 && ev & fdio::IN == 0 {
                        // The init is gone without a word: it was killed (by us).
                        return self.try_status();
                    }
                }
                None => std::thread::sleep(Duration::from_micros(200)),
            }
        }
    }

    /// Reap our direct child, killing it if it does not end within `timeout`.
    fn reap_leader(&mut self, timeout: Duration) {
        if self.leader_reaped {
            return;
        }
        let until = Instant::now() + timeout;
        // A pidfd becomes readable when the child ends: no sleeping in steps.
        // SAFETY: pidfd_open on our own (unreaped, so still valid) child.
        let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, self.leader, 0) } as i32;
        loop {
            if pidfd >= 0 {
                let wait = until
                    .saturating_duration_since(Instant::now())
                    .clamp(Duration::from_millis(1), Duration::from_millis(100));
                let _ = fdio::poll(&mut [PollFd::readable(pidfd)], wait);
            }
            let mut st = 0;
            // SAFETY: waitpid on our own child.
            let r = unsafe { libc::waitpid(self.leader, &mut st, libc::WNOHANG) };
            if r == self.leader || r < 0 {
                self.leader_reaped = true;
                self.init_stack = None;
                if self.status.is_none() && r == self.leader && self.bot_status.is_none() {
                    self.bot_status = Some(st);
                }
                if pidfd >= 0 {
                    // SAFETY: closing the pidfd we opened.
                    unsafe { libc::close(pidfd) };
                }
                return;
            }
            if Instant::now() >= until {
                fdio::kill_pid(self.leader, libc::SIGKILL); // our own child
            }
            if pidfd < 0 {
                std::thread::sleep(Duration::from_micros(200));
            }
        }
    }

    /// Kill everything, reap, verify nothing is left, remove the private folder and cgroups.
    /// Returns a description of every leftover (empty when clean).
    pub fn cleanup(mut self) -> Vec<String> {
        let mut steps = Steps::start();
        self.kill_now();
        if let Some(cg) = &self.res.cgroups {
            cg.kill_all(Duration::from_secs(2));
        }
        steps.end("kill");
        self.reap_leader(Duration::from_secs(2));
        steps.end("reap");
        let _ = self.try_status();
        let mut left = Vec::new();
        // The process group: members may linger as zombies for a moment until adopted and reaped.
        if let Some(group) = &self.group {
            let until = Instant::now() + Duration::from_secs(2);
            let mut backoff = Backoff::up_to(Duration::from_millis(1));
            while group.signal(0) {
                if Instant::now() > until {
                    let pgid = self.bot_pid.unwrap_or(0);
                    left.push(format!("process group {pgid} still has members"));
                    break;
                }
                group.signal(libc::SIGKILL);
                backoff.pause();
            }
        }
        if let Some(cg) = &self.res.cgroups {
            let pids = cg.pids();
            if !pids.is_empty() {
                left.push(format!("cgroup still holds pids {pids:?}"));
            }
        }
        // Without cgroups (which no process can leave) the bot's uid is the other witness.
        if let Some(lease) = self.res.uid.as_ref().filter(|_| self.res.cgroups.is_none()) {
            let until = Instant::now() + Duration::from_secs(2);
            loop {
                let pids = uids::processes_of(lease.uid);
                if pids.is_empty() {
                    break;
                }
                if Instant::now() > until {
                    left.push(format!("uid {} still runs pids {pids:?}", lease.uid));
                    break;
                }
                for pid in pids {
                    fdio::kill_pid(pid, libc::SIGKILL); // they run under the bot's private uid
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        steps.end("verify");
        left.extend(self.res.release());
        steps.end("remove");
        steps.log("teardown");
        left
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        // An init that was never reaped may still run on its stack: leave that mapped.
        if !self.leader_reaped {
            if let Some(stack) = self.init_stack.take() {
                stack.abandon();
            }
        }
    }
}

/// The first child of `pid` (the bot under its init), from /proc/<pid>/task/<pid>/children.
fn first_child(pid: i32) -> Option<i32> {
    let path = format!("/proc/{pid}/task/{pid}/children");
    for _ in 0..1000 {
        let text = std::fs::read_to_string(&path).ok()?;
        if let Some(first) = text.split_whitespace().next().and_then(|s| s.parse().ok()) {
            return Some(first);
        }
        std::thread::sleep(Duration::from_micros(100));
    }
    None
}
