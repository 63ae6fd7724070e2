//! The code that runs between fork and exec. It must be async-signal-safe: the worker is
//! multi-threaded, so after a fork only this thread exists and any lock (malloc's included) may
//! be held forever. Everything is therefore prepared before the fork (`ChildPlan`: C strings,
//! pointer arrays, open fds, the landlock ruleset fd, compiled seccomp programs) and this module
//! only issues raw syscalls. uid/gid changes use raw syscalls because glibc's wrappers try to
//! broadcast to threads that no longer exist in the child.

use std::ffi::{c_char, c_int, CString};
use std::os::fd::RawFd;
use std::ptr;

/// Where the child failed; sent with errno over the CLOEXEC error pipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Stage {
    Setsid = 1,
    Stdio,
    Rlimit,
    Chdir,
    Setgroups,
    Setgid,
    Setuid,
    NoNewPrivs,
    Landlock,
    CloseFds,
    Seccomp,
    Exec,
    Cgroup,
    Mount,
    Subreaper,
    Fork,
}

impl Stage {
    pub(crate) fn from_u8(b: u8) -> &'static str {
        const NAMES: [&str; 17] = [
            "?",
            "setsid",
            "stdio",
            "setrlimit",
            "chdir",
            "setgroups",
            "setresgid",
            "setresuid",
            "no_new_privs",
            "landlock",
            "close_range",
            "seccomp",
            "execve",
            "cgroup",
            "mount",
            "subreaper",
            "fork",
        ];
        NAMES.get(b as usize).copied().unwrap_or("?")
    }
}

/// `struct landlock_path_beneath_attr` (packed in the kernel's uapi).
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// One mount(2) call, prepared.
pub(crate) struct MountOp {
    pub src: CString,
    pub target: CString,
    pub fstype: Option<CString>,
    pub flags: libc::c_ulong,
    pub data: Option<CString>,
}

/// The reaping init between the worker and the bot (modes other than `Off`).
pub(crate) struct InitPlan {
    /// Namespaces to create (0 in the unprivileged mode).
    pub clone_flags: libc::c_long,
    /// Where the init writes the bot's raw wait status (4 bytes, native endian).
    pub status_w: RawFd,
    /// `cgroup.procs` files to join (write "0").
    pub cgroup_procs: Vec<RawFd>,
    pub mounts: Vec<MountOp>,
    /// After the mounts: give the bot full access below this path (the fresh tmpfs scratch,
    /// a new inode the parent could not name in its landlock ruleset), with this access mask.
    pub landlock_after_mount: Option<(CString, u64)>,
    /// Pid 1 of a pid namespace: kill(-1) ends everything. Otherwise: a subreaper that kills
    /// its (adopted) children one by one.
    pub pid_namespace: bool,
}

/// Everything the child needs, prepared before the fork.
pub(crate) struct ChildPlan {
    pub program: CString,
    pub argv_store: Vec<CString>,
    pub envp_store: Vec<CString>,
    pub argv: Vec<*const c_char>,
    pub envp: Vec<*const c_char>,
    pub cwd: Option<CString>,
    /// Child ends for fds 0, 1, 2.
    pub stdio: [RawFd; 3],
    pub err_w: RawFd,
    pub init: Option<InitPlan>,
    pub rlimits: Vec<(libc::__rlimit_resource_t, libc::rlimit)>,
    pub ids: Option<(libc::uid_t, libc::gid_t)>,
    pub no_new_privs: bool,
    pub landlock_fd: Option<RawFd>,
    pub seccomp: Vec<Vec<libc::sock_filter>>,
}

impl ChildPlan {
    pub(crate) fn new(program: CString, argv: Vec<CString>, envp: Vec<CString>) -> Self {
        let mut plan = ChildPlan {
            program,
            argv_store: argv,
            envp_store: envp,
            argv: Vec::new(),
            envp: Vec::new(),
            cwd: None,
            stdio: [-1; 3],
            err_w: -1,
            init: None,
            rlimits: Vec::new(),
            ids: None,
            no_new_privs: false,
            landlock_fd: None,
            seccomp: Vec::new(),
        };
        plan.argv = plan
            .argv_store
            .iter()
            .map(|s| s.as_ptr())
            .chain([ptr::null()])
            .collect();
        plan.envp = plan
            .envp_store
            .iter()
            .map(|s| s.as_ptr())
            .chain([ptr::null()])
            .collect();
        plan
    }
}

/// fork/clone with `flags` (plus SIGCHLD), fork-like: no new stack.
///
/// # Safety
/// In the child only async-signal-safe code may run until exec or `_exit`.
pub(crate) unsafe fn raw_clone(flags: libc::c_long) -> libc::pid_t {
    libc::syscall(
        libc::SYS_clone,
        flags | libc::SIGCHLD as libc::c_long,
        0,
        0,
        0,
        0,
    ) as libc::pid_t
}

/// Runs in the freshly forked child: never returns.
///
/// # Safety
/// Only call in a child right after `raw_clone`, with a fully prepared plan.
pub(crate) unsafe fn child_main(plan: &ChildPlan) -> ! {
    match &plan.init {
        Some(init) => run_init(plan, init),
        None => exec_bot(plan),
    }
}

unsafe fn fail(err_w: RawFd, stage: Stage) -> ! {
    let errno = *libc::__errno_location();
    let mut msg = [0u8; 5];
    msg[0] = stage as u8;
    msg[1..].copy_from_slice(&errno.to_ne_bytes());
    libc::write(err_w, msg.as_ptr().cast(), msg.len());
    libc::_exit(127)
}

unsafe fn exec_bot(p: &ChildPlan) -> ! {
    if libc::setsid() < 0 {
        fail(p.err_w, Stage::Setsid);
    }
    for (target, fd) in p.stdio.iter().enumerate() {
        if libc::dup2(*fd, target as c_int) < 0 {
            fail(p.err_w, Stage::Stdio);
        }
    }
    for (resource, limit) in &p.rlimits {
        if libc::setrlimit(*resource, limit) != 0 {
            fail(p.err_w, Stage::Rlimit);
        }
    }
    if let Some(cwd) = &p.cwd {
        if libc::chdir(cwd.as_ptr()) != 0 {
            fail(p.err_w, Stage::Chdir);
        }
    }
    if let Some((uid, gid)) = p.ids {
        if libc::syscall(libc::SYS_setgroups, 0, ptr::null::<libc::gid_t>()) != 0 {
            fail(p.err_w, Stage::Setgroups);
        }
        if libc::syscall(libc::SYS_setresgid, gid, gid, gid) != 0 {
            fail(p.err_w, Stage::Setgid);
        }
        if libc::syscall(libc::SYS_setresuid, uid, uid, uid) != 0 {
            fail(p.err_w, Stage::Setuid);
        }
    }
    // The bot dies with its parent (the init, or the worker without one). Set after the uid
    // change, which clears it.
    libc::prctl(
        libc::PR_SET_PDEATHSIG,
        libc::SIGKILL as libc::c_ulong,
        0,
        0,
        0,
    );
    if p.no_new_privs && libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
        fail(p.err_w, Stage::NoNewPrivs);
    }
    if let Some(fd) = p.landlock_fd {
        if libc::syscall(libc::SYS_landlock_restrict_self, fd, 0) != 0 {
            fail(p.err_w, Stage::Landlock);
        }
    }
    // Whatever other fds this process inherited from the worker: gone at exec.
    if libc::syscall(
        libc::SYS_close_range,
        3u32,
        u32::MAX,
        libc::CLOSE_RANGE_CLOEXEC,
    ) != 0
    {
        fail(p.err_w, Stage::CloseFds);
    }
    for prog in &p.seccomp {
        let fprog = libc::sock_fprog {
            len: prog.len() as u16,
            filter: prog.as_ptr() as *mut _,
        };
        if libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER,
            &fprog as *const _,
        ) != 0
        {
            fail(p.err_w, Stage::Seccomp);
        }
    }
    // ETXTBSY: the private program copy was just written, and a process forked by another
    // worker thread in the meantime may still hold that write fd until its own exec. Wait it out.
    for _ in 0..500 {
        libc::execve(p.program.as_ptr(), p.argv.as_ptr(), p.envp.as_ptr());
        if *libc::__errno_location() != libc::ETXTBSY {
            break;
        }
        let pause = libc::timespec {
            tv_sec: 0,
            tv_nsec: 1_000_000,
        };
        libc::nanosleep(&pause, ptr::null_mut());
    }
    fail(p.err_w, Stage::Exec)
}

unsafe fn run_init(p: &ChildPlan, init: &InitPlan) -> ! {
    // If the worker dies (even SIGKILL), the init dies, and with it its pid namespace.
    libc::prctl(
        libc::PR_SET_PDEATHSIG,
        libc::SIGKILL as libc::c_ulong,
        0,
        0,
        0,
    );
    if libc::setsid() < 0 {
        fail(p.err_w, Stage::Setsid);
    }
    for fd in &init.cgroup_procs {
        if libc::write(*fd, b"0".as_ptr().cast(), 1) != 1 {
            fail(p.err_w, Stage::Cgroup);
        }
    }
    for m in &init.mounts {
        let fstype = m.fstype.as_ref().map_or(ptr::null(), |s| s.as_ptr());
        let data = m.data.as_ref().map_or(ptr::null(), |s| s.as_ptr().cast());
        if libc::mount(m.src.as_ptr(), m.target.as_ptr(), fstype, m.flags, data) != 0 {
            fail(p.err_w, Stage::Mount);
        }
    }
    if let (Some((path, access)), Some(ruleset)) = (&init.landlock_after_mount, p.landlock_fd) {
        let dir = libc::open(
            path.as_ptr(),
            libc::O_PATH | libc::O_CLOEXEC | libc::O_DIRECTORY,
        );
        if dir < 0 {
            fail(p.err_w, Stage::Landlock);
        }
        let attr = PathBeneathAttr {
            allowed_access: *access,
            parent_fd: dir,
        };
        let rule_path_beneath = 1;
        if libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset,
            rule_path_beneath,
            &attr as *const _,
            0,
        ) != 0
        {
            fail(p.err_w, Stage::Landlock);
        }
        libc::close(dir);
    }
    if !init.pid_namespace && libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 {
        fail(p.err_w, Stage::Subreaper);
    }
    let bot = raw_clone(0);
    if bot < 0 {
        fail(p.err_w, Stage::Fork);
    }
    if bot == 0 {
        exec_bot(p);
    }
    // The init keeps only the status pipe: no pipe of this or any other bot stays open here.
    let keep = init.status_w as u32;
    if keep > 3 {
        libc::syscall(libc::SYS_close_range, 3u32, keep - 1, 0);
    }
    libc::syscall(libc::SYS_close_range, keep + 1, u32::MAX, 0);
    libc::close(0);
    libc::close(1);
    libc::close(2);
    // Wait for the bot's end on a pidfd, not in a blocking waitpid: the parent's waitpid is woken
    // by every stop and continue of the bot (the fair scheme sends two per turn), which cost two
    // context switches per turn. Orphans left to this init are reaped every second meanwhile.
    // Without pidfds (old kernels), block in waitpid as before.
    // No SIGCHLD for the bot's stops and continues either (SA_NOCLDSTOP): an ignored SIGCHLD is
    // already dropped, but not when the init is traced (strace -f of a bench), and this states it.
    let mut act: libc::sigaction = std::mem::zeroed();
    act.sa_sigaction = libc::SIG_DFL;
    act.sa_flags = libc::SA_NOCLDSTOP;
    libc::sigaction(libc::SIGCHLD, &act, ptr::null_mut());
    let pidfd = libc::syscall(libc::SYS_pidfd_open, bot, 0) as c_int;
    let flags = if pidfd >= 0 {
        libc::WNOHANG | libc::__WALL
    } else {
        libc::__WALL
    };
    loop {
        if pidfd >= 0 {
            let mut pfd = libc::pollfd {
                fd: pidfd,
                events: libc::POLLIN,
                revents: 0,
            };
            libc::poll(&mut pfd, 1, 1000);
        }
        loop {
            let mut status: c_int = 0;
            let pid = libc::waitpid(-1, &mut status, flags);
            if pid == bot {
                libc::write(init.status_w, (&status as *const c_int).cast(), 4);
                kill_everything_else(init.pid_namespace);
                libc::_exit(0);
            }
            if pid < 0 && *libc::__errno_location() != libc::EINTR {
                libc::_exit(0);
            }
            if pid <= 0 || pidfd < 0 {
                break;
            }
        }
    }
}

/// After the bot's main process ended: kill and reap every other process it left behind.
unsafe fn kill_everything_else(pid_namespace: bool) {
    for _round in 0..10_000 {
        if pid_namespace && libc::getpid() == 1 {
            // Pid 1 of the namespace: reaches every process in it, never the worker. (Checked:
            // anywhere else, kill(-1) would reach every process this one may signal.)
            libc::kill(-1, libc::SIGKILL);
        } else {
            kill_children();
        }
        loop {
            let mut status: c_int = 0;
            let pid = libc::waitpid(-1, &mut status, libc::WNOHANG | libc::__WALL);
            if pid < 0 && *libc::__errno_location() == libc::ECHILD {
                return;
            }
            if pid <= 0 {
                break;
            }
        }
        let pause = libc::timespec {
            tv_sec: 0,
            tv_nsec: 500_000,
        };
        libc::nanosleep(&pause, ptr::null_mut());
    }
}

/// SIGKILL every pid listed in /proc/<self>/task/<self>/children (orphans are adopted here
/// because this process is a child subreaper).
unsafe fn kill_children() {
    let mut path = [0u8; 64];
    let me = libc::getpid();
    let mut n = 0;
    for part in [&b"/proc/"[..], &[], &b"/task/"[..], &[], &b"/children"[..]]
        .iter()
        .enumerate()
    {
        if part.0 == 1 || part.0 == 3 {
            n += write_decimal(&mut path[n..], me as u64);
        } else {
            path[n..n + part.1.len()].copy_from_slice(part.1);
            n += part.1.len();
        }
    }
    path[n] = 0;
    let fd = libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC);
    if fd < 0 {
        return;
    }
    let mut buf = [0u8; 4096];
    let len = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
    libc::close(fd);
    let mut pid: i32 = 0;
    for &b in buf.iter().take(len.max(0) as usize) {
        if b.is_ascii_digit() {
            pid = pid * 10 + (b - b'0') as i32;
        } else {
            if pid > 0 {
                libc::kill(pid, libc::SIGKILL);
            }
            pid = 0;
        }
    }
    if pid > 0 {
        libc::kill(pid, libc::SIGKILL);
    }
}

fn write_decimal(out: &mut [u8], mut v: u64) -> usize {
    let mut digits = [0u8; 20];
    let mut n = 0;
    loop {
        digits[n] = b'0' + (v % 10) as u8;
        n += 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    for i in 0..n {
        out[i] = digits[n - 1 - i];
    }
    n
}

#[cfg(test)]
mod tests {
    #[test]
    fn decimal() {
        let mut b = [0u8; 20];
        let n = super::write_decimal(&mut b, 40321);
        assert_eq!(&b[..n], b"40321");
        let n = super::write_decimal(&mut b, 0);
        assert_eq!(&b[..n], b"0");
    }
}
