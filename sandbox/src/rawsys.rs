//! System calls for code that runs on the worker's memory but is not one of its threads: the
//! sandbox init (a clone that shares the worker's address space, so that no page table is
//! copied per bot) and the bot between its clone and its exec.
//!
//! Such code must not touch thread-local storage: its thread pointer is the one of the worker
//! thread that cloned it, a thread that keeps running (and may exit). libc's wrappers write
//! `errno` there, so none is used: these issue the instruction themselves and return the
//! kernel's `-errno`, touching nothing but registers and the memory passed in. [`clone_on`]
//! also starts the child on its own stack inside the same instruction sequence, so the child
//! never runs on a frame of the parent's.
//!
//! x86_64 is what this is built, run and tested on; the aarch64 code follows that ABI (number in
//! x8, arguments in x0-x5, result in x0) but has not been built here, as no aarch64 standard
//! library is installed.

use std::ffi::{c_char, c_int, c_long, c_void};

/// A negative errno on failure, else the call's result.
pub(crate) type Ret = c_long;

#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn syscall6(nr: c_long, a: [c_long; 6]) -> Ret {
    let ret: c_long;
    std::arch::asm!(
        "syscall",
        inlateout("rax") nr => ret,
        in("rdi") a[0], in("rsi") a[1], in("rdx") a[2],
        in("r10") a[3], in("r8") a[4], in("r9") a[5],
        lateout("rcx") _, lateout("r11") _,
        options(nostack),
    );
    ret
}

#[cfg(target_arch = "aarch64")]
#[inline(always)]
unsafe fn syscall6(nr: c_long, a: [c_long; 6]) -> Ret {
    let ret: c_long;
    std::arch::asm!(
        "svc 0",
        in("x8") nr,
        inlateout("x0") a[0] => ret,
        in("x1") a[1], in("x2") a[2], in("x3") a[3], in("x4") a[4], in("x5") a[5],
        options(nostack),
    );
    ret
}

#[inline(always)]
unsafe fn sys(nr: c_long, a0: c_long, a1: c_long, a2: c_long, a3: c_long, a4: c_long) -> Ret {
    syscall6(nr, [a0, a1, a2, a3, a4, 0])
}

/// `clone(flags, stack)`; the child calls `entry(arg)` on `stack_top` and never returns from it.
/// Returns the child's pid in the parent.
///
/// # Safety
/// `stack_top` must be the 16-byte aligned top of a mapping that stays alive as long as the
/// child runs on it, and `entry` must be safe to run there (no thread-local storage, see the
/// module's doc).
pub(crate) unsafe fn clone_on(
    flags: c_long,
    stack_top: *mut c_void,
    entry: unsafe extern "C" fn(*mut c_void) -> !,
    arg: *mut c_void,
) -> Ret {
    start_child(libc::SYS_clone, flags, stack_top as c_long, entry, arg)
}

/// System call `nr` (`clone` or `clone3`) with its first two arguments (the rest 0); in the
/// child (a return of 0) call `entry(arg)` on the stack the call gave it, with no frame above.
#[inline(always)]
unsafe fn start_child(
    nr: c_long,
    a0: c_long,
    a1: c_long,
    entry: unsafe extern "C" fn(*mut c_void) -> !,
    arg: *mut c_void,
) -> Ret {
    let ret: c_long;
    #[cfg(target_arch = "x86_64")]
    std::arch::asm!(
        "syscall",
        "test rax, rax",
        "jnz 2f",
        // The child, on the new stack: no frame above, the argument in rdi.
        "xor ebp, ebp",
        "mov rdi, r12",
        "call r13",
        "ud2",
        "2:",
        inlateout("rax") nr => ret,
        in("rdi") a0, in("rsi") a1, in("rdx") 0, in("r10") 0, in("r8") 0,
        in("r12") arg, in("r13") entry,
        lateout("rcx") _, lateout("r11") _,
        options(nostack),
    );
    #[cfg(target_arch = "aarch64")]
    std::arch::asm!(
        "svc 0",
        "cbnz x0, 2f",
        "mov x29, xzr",
        "mov x30, xzr",
        "mov x0, x19",
        "blr x20",
        "brk #0",
        "2:",
        in("x8") nr,
        inlateout("x0") a0 => ret,
        in("x1") a1, in("x2") 0, in("x3") 0, in("x4") 0,
        in("x19") arg, in("x20") entry,
        options(nostack),
    );
    ret
}

/// `clone3`'s `struct clone_args` (its second version, with `cgroup`: Linux 5.7).
#[repr(C)]
#[derive(Default)]
pub(crate) struct CloneArgs {
    pub flags: u64,
    pub pidfd: u64,
    pub child_tid: u64,
    pub parent_tid: u64,
    pub exit_signal: u64,
    /// The lowest address of the child's stack.
    pub stack: u64,
    pub stack_size: u64,
    pub tls: u64,
    pub set_tid: u64,
    pub set_tid_size: u64,
    /// With [`CLONE_INTO_CGROUP`]: a file descriptor of the cgroup v2 directory to start in.
    pub cgroup: u64,
}

/// Start the child in the cgroup v2 directory `CloneArgs::cgroup` (libc's constant is a
/// deprecated `c_int` that overflows).
pub(crate) const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;

/// `clone3(args)`, as [`clone_on`]: the child calls `entry(arg)` on the stack `args` gives (the
/// kernel starts it at `stack + stack_size`) and never returns from it. Returns the child's pid
/// in the parent, or `-errno` (`-ENOSYS` where `clone3` is missing or filtered, as container
/// runtimes' seccomp profiles do).
///
/// # Safety
/// As [`clone_on`]: the stack must be a 16-byte aligned mapping that stays alive as long as the
/// child runs on it, and `entry` must be safe to run there.
pub(crate) unsafe fn clone3_on(
    args: &CloneArgs,
    entry: unsafe extern "C" fn(*mut c_void) -> !,
    arg: *mut c_void,
) -> Ret {
    let size = std::mem::size_of::<CloneArgs>() as c_long;
    start_child(
        libc::SYS_clone3,
        args as *const CloneArgs as c_long,
        size,
        entry,
        arg,
    )
}

pub(crate) unsafe fn write(fd: c_int, buf: *const u8, len: usize) -> Ret {
    sys(libc::SYS_write, fd as _, buf as _, len as _, 0, 0)
}

pub(crate) unsafe fn read(fd: c_int, buf: *mut u8, len: usize) -> Ret {
    sys(libc::SYS_read, fd as _, buf as _, len as _, 0, 0)
}

pub(crate) unsafe fn openat(path: *const c_char, flags: c_int) -> Ret {
    sys(
        libc::SYS_openat,
        libc::AT_FDCWD as _,
        path as _,
        flags as _,
        0,
        0,
    )
}

pub(crate) unsafe fn close(fd: c_int) -> Ret {
    sys(libc::SYS_close, fd as _, 0, 0, 0, 0)
}

pub(crate) unsafe fn close_range(first: u32, last: u32, flags: u32) -> Ret {
    sys(
        libc::SYS_close_range,
        first as _,
        last as _,
        flags as _,
        0,
        0,
    )
}

/// `dup2`, for `old != new` (what `dup3` accepts on every architecture).
pub(crate) unsafe fn dup_to(old: c_int, new: c_int) -> Ret {
    if old == new {
        // dup2 of an fd onto itself only checks it is open; so does this.
        return sys(libc::SYS_fcntl, old as _, libc::F_GETFD as _, 0, 0, 0);
    }
    sys(libc::SYS_dup3, old as _, new as _, 0, 0, 0)
}

pub(crate) unsafe fn exit(code: c_int) -> ! {
    sys(libc::SYS_exit_group, code as _, 0, 0, 0, 0);
    // exit_group does not return; if it did, trap rather than run on.
    #[cfg(target_arch = "x86_64")]
    std::arch::asm!("ud2", options(noreturn));
    #[cfg(target_arch = "aarch64")]
    std::arch::asm!("brk #0", options(noreturn));
}

pub(crate) unsafe fn prctl(option: c_int, a2: c_long, a3: c_long, a4: c_long) -> Ret {
    sys(libc::SYS_prctl, option as _, a2, a3, a4, 0)
}

pub(crate) unsafe fn setsid() -> Ret {
    sys(libc::SYS_setsid, 0, 0, 0, 0, 0)
}

pub(crate) unsafe fn chdir(path: *const c_char) -> Ret {
    sys(libc::SYS_chdir, path as _, 0, 0, 0, 0)
}

pub(crate) unsafe fn setrlimit(resource: libc::__rlimit_resource_t, limit: &libc::rlimit) -> Ret {
    let new = limit as *const libc::rlimit;
    sys(libc::SYS_prlimit64, 0, resource as _, new as _, 0, 0)
}

pub(crate) unsafe fn drop_groups() -> Ret {
    sys(libc::SYS_setgroups, 0, 0, 0, 0, 0)
}

pub(crate) unsafe fn setresgid(gid: libc::gid_t) -> Ret {
    sys(libc::SYS_setresgid, gid as _, gid as _, gid as _, 0, 0)
}

pub(crate) unsafe fn setresuid(uid: libc::uid_t) -> Ret {
    sys(libc::SYS_setresuid, uid as _, uid as _, uid as _, 0, 0)
}

pub(crate) unsafe fn mount(
    src: *const c_char,
    target: *const c_char,
    fstype: *const c_char,
    flags: libc::c_ulong,
    data: *const c_void,
) -> Ret {
    sys(
        libc::SYS_mount,
        src as _,
        target as _,
        fstype as _,
        flags as _,
        data as _,
    )
}

pub(crate) unsafe fn landlock_add_rule(ruleset: c_int, kind: c_int, attr: *const c_void) -> Ret {
    sys(
        libc::SYS_landlock_add_rule,
        ruleset as _,
        kind as _,
        attr as _,
        0,
        0,
    )
}

pub(crate) unsafe fn landlock_restrict_self(ruleset: c_int) -> Ret {
    sys(libc::SYS_landlock_restrict_self, ruleset as _, 0, 0, 0, 0)
}

pub(crate) unsafe fn seccomp_filter(prog: &libc::sock_fprog) -> Ret {
    let p = prog as *const libc::sock_fprog;
    sys(
        libc::SYS_prctl,
        libc::PR_SET_SECCOMP as _,
        libc::SECCOMP_MODE_FILTER as _,
        p as _,
        0,
        0,
    )
}

pub(crate) unsafe fn execve(
    path: *const c_char,
    argv: *const *const c_char,
    envp: *const *const c_char,
) -> Ret {
    sys(libc::SYS_execve, path as _, argv as _, envp as _, 0, 0)
}

pub(crate) unsafe fn sleep_ns(ns: c_long) -> Ret {
    let t = libc::timespec {
        tv_sec: 0,
        tv_nsec: ns,
    };
    let tp = &t as *const libc::timespec;
    sys(libc::SYS_nanosleep, tp as _, 0, 0, 0, 0)
}

pub(crate) unsafe fn getpid() -> Ret {
    sys(libc::SYS_getpid, 0, 0, 0, 0, 0)
}

pub(crate) unsafe fn kill(pid: libc::pid_t, sig: c_int) -> Ret {
    sys(libc::SYS_kill, pid as _, sig as _, 0, 0, 0)
}

pub(crate) unsafe fn pidfd_open(pid: libc::pid_t) -> Ret {
    sys(libc::SYS_pidfd_open, pid as _, 0, 0, 0, 0)
}

pub(crate) unsafe fn wait4(pid: libc::pid_t, status: &mut c_int, options: c_int) -> Ret {
    let st = status as *mut c_int;
    sys(libc::SYS_wait4, pid as _, st as _, options as _, 0, 0)
}

/// Wait up to `ms` for `fd` to become readable.
pub(crate) unsafe fn poll_in(fd: c_int, ms: c_long) -> Ret {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let t = libc::timespec {
        tv_sec: ms / 1000,
        tv_nsec: (ms % 1000) * 1_000_000,
    };
    let p = &mut pfd as *mut libc::pollfd;
    let tp = &t as *const libc::timespec;
    sys(libc::SYS_ppoll, p as _, 1, tp as _, 0, 0)
}

/// The kernel's `struct sigaction` (not libc's, whose mask is 128 bytes).
#[repr(C)]
struct KernelSigaction {
    handler: usize,
    flags: u64,
    restorer: usize,
    mask: u64,
}

/// Every caught signal back to its default action (ignored ones stay ignored, as across an
/// exec), and `SIGCHLD` set to `extra_chld_flags`: the worker's handlers would run on the
/// memory the caller shares with it.
pub(crate) unsafe fn default_signal_handlers(chld_flags: u64) {
    for sig in 1..65 {
        let mut old = KernelSigaction {
            handler: 0,
            flags: 0,
            restorer: 0,
            mask: 0,
        };
        let op = &mut old as *mut KernelSigaction;
        if sys(libc::SYS_rt_sigaction, sig, 0, op as _, 8, 0) != 0 {
            continue;
        }
        let catches = old.handler != libc::SIG_DFL && old.handler != libc::SIG_IGN;
        if catches || sig == libc::SIGCHLD as c_long {
            let dfl = KernelSigaction {
                handler: libc::SIG_DFL,
                flags: if sig == libc::SIGCHLD as c_long {
                    chld_flags
                } else {
                    0
                },
                restorer: 0,
                mask: 0,
            };
            let dp = &dfl as *const KernelSigaction;
            sys(libc::SYS_rt_sigaction, sig, dp as _, 0, 8, 0);
        }
    }
}

/// Set this task's signal mask: all blocked (`true`) or none.
pub(crate) unsafe fn block_all_signals(block: bool) -> Ret {
    let set: u64 = if block { !0 } else { 0 };
    let sp = &set as *const u64;
    sys(
        libc::SYS_rt_sigprocmask,
        libc::SIG_SETMASK as _,
        sp as _,
        0,
        8,
        0,
    )
}
