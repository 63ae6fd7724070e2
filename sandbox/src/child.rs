//! The code that runs in the sandbox's child processes before the bot's exec: the init (the
//! reaping pid 1 of the bot's namespaces) and the bot's own set-up. Both are clones that share
//! the worker's memory (`CLONE_VM`): a fork-like clone would copy the page tables of a worker
//! that holds hundreds of MiB, per bot. So this code must be async-signal-safe and more: it must
//! not touch thread-local storage either (its thread pointer is a running worker thread's), and
//! it issues every system call through [`super::rawsys`], never libc. Everything is prepared
//! before the clone (`ChildPlan`: C strings, pointer arrays, open fds, the landlock ruleset fd,
//! compiled seccomp programs, the stacks).

use std::ffi::{c_char, c_int, c_void, CString};
use std::os::fd::RawFd;
use std::ptr;

use super::cgroup::Join;
use super::rawsys;

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
    /// The bot's cgroups, joined by the bot before its exec ([`spawn_bot`], [`exec_bot`]).
    pub cgroups: Join,
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
    /// The stack the bot runs on between its clone and its exec ([`start`]).
    pub bot_stack: ChildStack,
}

impl ChildPlan {
    pub(crate) fn new(
        program: CString,
        argv: Vec<CString>,
        envp: Vec<CString>,
        bot_stack: ChildStack,
    ) -> Self {
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
            bot_stack,
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

/// A stack for a child that shares its parent's memory (the init, and the bot until it execs),
/// with an inaccessible guard page below it so that an overflow faults instead of writing over
/// the worker's memory.
pub(crate) struct ChildStack {
    base: *mut c_void,
    len: usize,
}

impl ChildStack {
    /// Far more than the init's loop or `exec_bot` need (no libc call runs on it).
    const LEN: usize = 128 * 1024;
    const GUARD: usize = 4096;

    pub(crate) fn new() -> std::io::Result<Self> {
        // SAFETY: a fresh anonymous mapping, owned by the value returned.
        let base = unsafe {
            libc::mmap(
                ptr::null_mut(),
                Self::LEN,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let stack = ChildStack {
            base,
            len: Self::LEN,
        };
        // SAFETY: the lowest page of the mapping just made.
        if unsafe { libc::mprotect(base, Self::GUARD, libc::PROT_NONE) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(stack)
    }

    /// The highest address, page-aligned (stacks grow down on every target we build for).
    fn top(&self) -> *mut c_void {
        // SAFETY: one past the end of the mapping.
        unsafe { self.base.cast::<u8>().add(self.len).cast() }
    }

    /// Give up the mapping without unmapping it: for a stack a child may still run on.
    pub(crate) fn abandon(self) {
        std::mem::forget(self);
    }
}

impl Drop for ChildStack {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`; no child runs on it any more (see `abandon`).
        unsafe { libc::munmap(self.base, self.len) };
    }
}

// SAFETY: the mapping is owned by the value; the raw pointer is only its address.
unsafe impl Send for ChildStack {}

impl std::fmt::Debug for ChildStack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChildStack")
            .field("len", &self.len)
            .finish()
    }
}

/// Start the child: the init on `init_stack`, or without an init the bot itself. Either shares
/// the caller's memory (`CLONE_VM`), so no page table is copied however large the worker is (a
/// fork-like clone of a worker holding 150 MiB took 12 ms, and every page the worker wrote
/// afterwards was copied while the clone lived). The bot's clone also suspends its parent until
/// it has exec'd or exited (`CLONE_VFORK`, as `posix_spawn` does). Signals stay blocked across
/// the clone so that none of the worker's handlers runs in the child, which resets them.
///
/// # Safety
/// The plan must be complete and outlive the child's use of it: the bot's clone uses it until
/// its exec (this call returns after that), the init until the error pipe closes. The stacks
/// must stay mapped as long as a child runs on them.
pub(crate) unsafe fn start(plan: &ChildPlan, init_stack: Option<&ChildStack>) -> libc::pid_t {
    let mut all: libc::sigset_t = std::mem::zeroed();
    let mut old: libc::sigset_t = std::mem::zeroed();
    libc::sigfillset(&mut all);
    libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
    let arg = (plan as *const ChildPlan).cast_mut().cast();
    let ret = match (&plan.init, init_stack) {
        (Some(init), Some(stack)) => rawsys::clone_on(
            init.clone_flags | libc::CLONE_VM as libc::c_long | libc::SIGCHLD as libc::c_long,
            stack.top(),
            init_entry,
            arg,
        ),
        _ => spawn_bot(plan),
    };
    libc::pthread_sigmask(libc::SIG_SETMASK, &old, ptr::null_mut());
    if ret < 0 {
        *libc::__errno_location() = -ret as c_int;
        return -1;
    }
    ret as libc::pid_t
}

/// The bot's clone (see [`start`]); in the init, or in the worker without one. With a cgroup v2
/// to join, the bot is cloned into it (see [`Join`]); where the kernel refuses that, it is
/// cloned as without one and joins by writing to its `cgroup.procs`.
unsafe fn spawn_bot(plan: &ChildPlan) -> rawsys::Ret {
    let arg = (plan as *const ChildPlan).cast_mut().cast();
    let v2_dir = plan
        .init
        .as_ref()
        .and_then(|i| i.cgroups.v2)
        .map(|(dir, _)| dir);
    if let Some(dir) = v2_dir {
        let args = rawsys::CloneArgs {
            flags: (libc::CLONE_VM | libc::CLONE_VFORK) as u64 | rawsys::CLONE_INTO_CGROUP,
            exit_signal: libc::SIGCHLD as u64,
            stack: plan.bot_stack.base as u64,
            stack_size: plan.bot_stack.len as u64,
            cgroup: dir as u64,
            ..Default::default()
        };
        let ret = rawsys::clone3_on(&args, bot_entry_in_v2, arg);
        if ret >= 0 {
            return ret;
        }
    }
    rawsys::clone_on(
        (libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD) as libc::c_long,
        plan.bot_stack.top(),
        bot_entry,
        arg,
    )
}

unsafe extern "C" fn init_entry(arg: *mut c_void) -> ! {
    rawsys::block_all_signals(true);
    // No SIGCHLD for the bot's stops and continues either (SA_NOCLDSTOP): an ignored SIGCHLD is
    // already dropped, but not when the init is traced (strace -f of a bench), and this states it.
    rawsys::default_signal_handlers(libc::SA_NOCLDSTOP as u64);
    let plan = &*(arg as *const ChildPlan);
    match &plan.init {
        Some(init) => run_init(plan, init),
        None => rawsys::exit(127),
    }
}

unsafe extern "C" fn bot_entry(arg: *mut c_void) -> ! {
    rawsys::default_signal_handlers(0);
    exec_bot(&*(arg as *const ChildPlan), false)
}

/// As [`bot_entry`], for a bot cloned into its cgroup v2.
unsafe extern "C" fn bot_entry_in_v2(arg: *mut c_void) -> ! {
    rawsys::default_signal_handlers(0);
    exec_bot(&*(arg as *const ChildPlan), true)
}

/// Report the failed stage and its errno (`ret` is the call's `-errno`) and exit.
unsafe fn fail(err_w: RawFd, stage: Stage, ret: rawsys::Ret) -> ! {
    let errno = (-ret) as i32;
    let mut msg = [0u8; 5];
    msg[0] = stage as u8;
    msg[1..].copy_from_slice(&errno.to_ne_bytes());
    rawsys::write(err_w, msg.as_ptr(), msg.len());
    rawsys::exit(127)
}

/// Fail with `stage` unless `ret` is a success.
unsafe fn check(err_w: RawFd, stage: Stage, ret: rawsys::Ret) {
    if ret < 0 {
        fail(err_w, stage, ret);
    }
}

/// `in_v2`: the clone started in the bot's cgroup v2 already.
unsafe fn exec_bot(p: &ChildPlan, in_v2: bool) -> ! {
    // Join the bot's cgroups here, not in the init: the init shares the worker's memory, and a
    // cgroup's out-of-memory killer that picked it would kill every process sharing that memory.
    if let Some(init) = &p.init {
        let v2_procs = init.cgroups.v2.filter(|_| !in_v2).map(|(_, procs)| procs);
        for fd in init.cgroups.tasks.iter().chain(v2_procs.as_ref()) {
            let ret = rawsys::write(*fd, b"0".as_ptr(), 1);
            check(
                p.err_w,
                Stage::Cgroup,
                if ret == 1 { 0 } else { ret.min(-1) },
            );
        }
    }
    check(p.err_w, Stage::Setsid, rawsys::setsid());
    for (target, fd) in p.stdio.iter().enumerate() {
        check(p.err_w, Stage::Stdio, rawsys::dup_to(*fd, target as c_int));
    }
    for (resource, limit) in &p.rlimits {
        check(p.err_w, Stage::Rlimit, rawsys::setrlimit(*resource, limit));
    }
    if let Some(cwd) = &p.cwd {
        check(p.err_w, Stage::Chdir, rawsys::chdir(cwd.as_ptr()));
    }
    if let Some((uid, gid)) = p.ids {
        check(p.err_w, Stage::Setgroups, rawsys::drop_groups());
        check(p.err_w, Stage::Setgid, rawsys::setresgid(gid));
        check(p.err_w, Stage::Setuid, rawsys::setresuid(uid));
    }
    // The bot dies with its parent (the init, or the worker without one). Set after the uid
    // change, which clears it.
    rawsys::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as _, 0, 0);
    if p.no_new_privs {
        let ret = rawsys::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0);
        check(p.err_w, Stage::NoNewPrivs, ret);
    }
    if let Some(fd) = p.landlock_fd {
        check(p.err_w, Stage::Landlock, rawsys::landlock_restrict_self(fd));
    }
    // Whatever other fds this process inherited from the worker: gone at exec.
    let ret = rawsys::close_range(3, u32::MAX, libc::CLOSE_RANGE_CLOEXEC);
    check(p.err_w, Stage::CloseFds, ret);
    // The program starts with no signal blocked (the clone blocked them all).
    rawsys::block_all_signals(false);
    for prog in &p.seccomp {
        let fprog = libc::sock_fprog {
            len: prog.len() as u16,
            filter: prog.as_ptr() as *mut _,
        };
        check(p.err_w, Stage::Seccomp, rawsys::seccomp_filter(&fprog));
    }
    // ETXTBSY: the private program copy was just written, and a process forked by another
    // worker thread in the meantime may still hold that write fd until its own exec. Wait it out.
    let mut ret = 0;
    for _ in 0..500 {
        ret = rawsys::execve(p.program.as_ptr(), p.argv.as_ptr(), p.envp.as_ptr());
        if ret != -(libc::ETXTBSY as rawsys::Ret) {
            break;
        }
        rawsys::sleep_ns(1_000_000);
    }
    fail(p.err_w, Stage::Exec, ret)
}

unsafe fn run_init(p: &ChildPlan, init: &InitPlan) -> ! {
    // If the worker dies (even SIGKILL), the init dies, and with it its pid namespace.
    rawsys::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as _, 0, 0);
    check(p.err_w, Stage::Setsid, rawsys::setsid());
    for m in &init.mounts {
        let fstype = m.fstype.as_ref().map_or(ptr::null(), |s| s.as_ptr());
        let data = m.data.as_ref().map_or(ptr::null(), |s| s.as_ptr().cast());
        let ret = rawsys::mount(m.src.as_ptr(), m.target.as_ptr(), fstype, m.flags, data);
        check(p.err_w, Stage::Mount, ret);
    }
    if let (Some((path, access)), Some(ruleset)) = (&init.landlock_after_mount, p.landlock_fd) {
        let flags = libc::O_PATH | libc::O_CLOEXEC | libc::O_DIRECTORY;
        let dir = rawsys::openat(path.as_ptr(), flags);
        check(p.err_w, Stage::Landlock, dir);
        let attr = PathBeneathAttr {
            allowed_access: *access,
            parent_fd: dir as c_int,
        };
        let rule_path_beneath = 1;
        let attr_ptr = (&attr as *const PathBeneathAttr).cast();
        let ret = rawsys::landlock_add_rule(ruleset, rule_path_beneath, attr_ptr);
        check(p.err_w, Stage::Landlock, ret);
        rawsys::close(dir as c_int);
    }
    if !init.pid_namespace {
        let ret = rawsys::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0);
        check(p.err_w, Stage::Subreaper, ret);
    }
    let bot = spawn_bot(p);
    check(p.err_w, Stage::Fork, bot);
    // The bot has exec'd or exited: from here on the init uses only these values, never the
    // plan, which the worker frees once the error pipe has closed.
    reap_bot(bot as libc::pid_t, init.status_w, init.pid_namespace)
}

/// The init's life after the bot's start: wait for the bot's end, report its status, kill and
/// reap what it left, exit.
#[inline(never)]
unsafe fn reap_bot(bot: libc::pid_t, status_w: RawFd, pid_namespace: bool) -> ! {
    // The init keeps only the status pipe: no pipe of this or any other bot stays open here
    // (closing the error pipe tells the worker the start is over).
    let keep = status_w as u32;
    if keep > 0 {
        rawsys::close_range(0, keep - 1, 0);
    }
    rawsys::close_range(keep + 1, u32::MAX, 0);
    // Wait for the bot's end on a pidfd, not in a blocking wait: the parent's wait is woken by
    // every stop and continue of the bot (the fair scheme sends two per turn), which cost two
    // context switches per turn. Orphans left to this init are reaped every second meanwhile.
    // Without pidfds (old kernels), block in the wait as before.
    let pidfd = rawsys::pidfd_open(bot);
    let flags = if pidfd >= 0 {
        libc::WNOHANG | libc::__WALL
    } else {
        libc::__WALL
    };
    loop {
        if pidfd >= 0 {
            rawsys::poll_in(pidfd as c_int, 1000);
        }
        loop {
            let mut status: c_int = 0;
            let pid = rawsys::wait4(-1, &mut status, flags);
            if pid == bot as rawsys::Ret {
                rawsys::write(status_w, (&status as *const c_int).cast(), 4);
                kill_everything_else(pid_namespace);
                rawsys::exit(0);
            }
            if pid < 0 && pid != -(libc::EINTR as rawsys::Ret) {
                rawsys::exit(0);
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
        if pid_namespace && rawsys::getpid() == 1 {
            // Pid 1 of the namespace: reaches every process in it, never the worker. (Checked:
            // anywhere else, kill(-1) would reach every process this one may signal.)
            rawsys::kill(-1, libc::SIGKILL);
        } else {
            kill_children();
        }
        loop {
            let mut status: c_int = 0;
            let pid = rawsys::wait4(-1, &mut status, libc::WNOHANG | libc::__WALL);
            if pid == -(libc::ECHILD as rawsys::Ret) {
                return;
            }
            if pid <= 0 {
                break;
            }
        }
        rawsys::sleep_ns(500_000);
    }
}

/// SIGKILL every pid listed in /proc/<self>/task/<self>/children (orphans are adopted here
/// because this process is a child subreaper).
unsafe fn kill_children() {
    let mut path = [0u8; 64];
    let me = rawsys::getpid() as u64;
    let mut n = 0;
    for part in [&b"/proc/"[..], &[], &b"/task/"[..], &[], &b"/children"[..]]
        .iter()
        .enumerate()
    {
        if part.0 == 1 || part.0 == 3 {
            n += write_decimal(&mut path[n..], me);
        } else {
            path[n..n + part.1.len()].copy_from_slice(part.1);
            n += part.1.len();
        }
    }
    path[n] = 0;
    let fd = rawsys::openat(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC);
    if fd < 0 {
        return;
    }
    let mut buf = [0u8; 4096];
    let len = rawsys::read(fd as c_int, buf.as_mut_ptr(), buf.len());
    rawsys::close(fd as c_int);
    let mut pid: i32 = 0;
    for &b in buf.iter().take(len.max(0) as usize) {
        if b.is_ascii_digit() {
            pid = pid * 10 + (b - b'0') as i32;
        } else {
            if pid > 0 {
                rawsys::kill(pid, libc::SIGKILL);
            }
            pid = 0;
        }
    }
    if pid > 0 {
        rawsys::kill(pid, libc::SIGKILL);
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
