//! The seccomp layer: syscalls a bot never needs. Three filters, compiled once per process
//! with `seccompiler` (plus one hand-written guard against x32 syscall numbers):
//! - KILL the process (reported as `forbidden_syscall`): debugging other processes, kernel and
//!   mount administration, keyrings, eBPF, namespaces;
//! - EPERM: sockets other than AF_UNIX, `kill(-1, ..)`, setsid/setpgid (a bot's processes stay
//!   in its process group), io_uring, clone with namespace flags;
//! - ENOSYS: clone3 (so libc falls back to clone, whose flags the EPERM filter can inspect).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use crate::error::HostError;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// Syscalls that kill the bot.
pub(crate) const KILLED: &[(&str, libc::c_long)] = &[
    ("ptrace", libc::SYS_ptrace),
    ("process_vm_readv", libc::SYS_process_vm_readv),
    ("process_vm_writev", libc::SYS_process_vm_writev),
    ("pidfd_getfd", libc::SYS_pidfd_getfd),
    ("kcmp", libc::SYS_kcmp),
    ("kexec_load", libc::SYS_kexec_load),
    ("kexec_file_load", libc::SYS_kexec_file_load),
    ("reboot", libc::SYS_reboot),
    ("init_module", libc::SYS_init_module),
    ("finit_module", libc::SYS_finit_module),
    ("delete_module", libc::SYS_delete_module),
    ("mount", libc::SYS_mount),
    ("umount2", libc::SYS_umount2),
    ("pivot_root", libc::SYS_pivot_root),
    ("chroot", libc::SYS_chroot),
    ("move_mount", libc::SYS_move_mount),
    ("open_tree", libc::SYS_open_tree),
    ("fsopen", libc::SYS_fsopen),
    ("fsconfig", libc::SYS_fsconfig),
    ("fsmount", libc::SYS_fsmount),
    ("fspick", libc::SYS_fspick),
    ("mount_setattr", libc::SYS_mount_setattr),
    ("unshare", libc::SYS_unshare),
    ("setns", libc::SYS_setns),
    ("keyctl", libc::SYS_keyctl),
    ("add_key", libc::SYS_add_key),
    ("request_key", libc::SYS_request_key),
    ("bpf", libc::SYS_bpf),
    ("perf_event_open", libc::SYS_perf_event_open),
    ("userfaultfd", libc::SYS_userfaultfd),
    ("open_by_handle_at", libc::SYS_open_by_handle_at),
    ("swapon", libc::SYS_swapon),
    ("swapoff", libc::SYS_swapoff),
    ("acct", libc::SYS_acct),
    ("quotactl", libc::SYS_quotactl),
    ("syslog", libc::SYS_syslog),
    ("settimeofday", libc::SYS_settimeofday),
    ("clock_settime", libc::SYS_clock_settime),
    ("clock_adjtime", libc::SYS_clock_adjtime),
    ("adjtimex", libc::SYS_adjtimex),
    ("iopl", libc::SYS_iopl),
    ("ioperm", libc::SYS_ioperm),
    ("fanotify_init", libc::SYS_fanotify_init),
    ("vhangup", libc::SYS_vhangup),
];

const NAMESPACE_FLAGS: [i32; 7] = [
    libc::CLONE_NEWNS,
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWNET,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWCGROUP,
];

/// One line for the start log.
pub(crate) fn describe() -> String {
    format!(
        "seccomp: kill on {} syscalls (ptrace, process_vm_*, kexec, mount, keyctl, bpf, ...) and x32; \
         EPERM on non-AF_UNIX sockets, kill(-1), setsid/setpgid, io_uring, namespace clone flags; ENOSYS on clone3",
        KILLED.len()
    )
}

/// The compiled filters (installed in order, all apply; the strictest verdict wins).
pub(crate) fn programs() -> Result<&'static [Vec<libc::sock_filter>], HostError> {
    // Built once; a failure is kept as its message (seccompiler's error is not Clone).
    static PROGRAMS: OnceLock<Result<Vec<Vec<libc::sock_filter>>, String>> = OnceLock::new();
    PROGRAMS
        .get_or_init(|| build().map_err(|e| format!("seccomp filter: {e}")))
        .as_deref()
        .map_err(|e| HostError::Setup(e.clone()))
}

fn build() -> Result<Vec<Vec<libc::sock_filter>>, seccompiler::Error> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)?;
    let cond = |arg: u8, op: SeccompCmpOp, v: u64| {
        SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, v)
    };

    let killed: BTreeMap<i64, Vec<SeccompRule>> =
        KILLED.iter().map(|(_, nr)| (*nr, vec![])).collect();
    let kill = SeccompFilter::new(
        killed,
        SeccompAction::Allow,
        SeccompAction::KillProcess,
        arch,
    )?;

    let mut eperm: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    let not_unix = || -> Result<Vec<SeccompRule>, seccompiler::Error> {
        Ok(vec![SeccompRule::new(vec![cond(
            0,
            SeccompCmpOp::Ne,
            libc::AF_UNIX as u64,
        )?])?])
    };
    eperm.insert(libc::SYS_socket, not_unix()?);
    eperm.insert(libc::SYS_socketpair, not_unix()?);
    eperm.insert(
        libc::SYS_kill,
        vec![SeccompRule::new(vec![cond(
            0,
            SeccompCmpOp::Eq,
            u32::MAX as u64,
        )?])?],
    );
    let mut clone_rules = Vec::new();
    for flag in NAMESPACE_FLAGS {
        let f = flag as u32 as u64;
        clone_rules.push(SeccompRule::new(vec![cond(
            0,
            SeccompCmpOp::MaskedEq(f),
            f,
        )?])?);
    }
    eperm.insert(libc::SYS_clone, clone_rules);
    // setsid/setpgid: a bot's processes stay in the bot's process group and session, so one
    // signal to the group stops (between turns) or kills all of them.
    for nr in [
        libc::SYS_setsid,
        libc::SYS_setpgid,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
    ] {
        eperm.insert(nr, vec![]);
    }
    let eperm = SeccompFilter::new(
        eperm,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )?;

    let enosys: BTreeMap<i64, Vec<SeccompRule>> =
        [(libc::SYS_clone3, vec![])].into_iter().collect();
    let enosys = SeccompFilter::new(
        enosys,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )?;

    let mut out = vec![x32_guard()];
    for f in [kill, eperm, enosys] {
        let prog: BpfProgram = f.try_into()?;
        out.push(
            prog.into_iter()
                .map(|i| libc::sock_filter {
                    code: i.code,
                    jt: i.jt,
                    jf: i.jf,
                    k: i.k,
                })
                .collect(),
        );
    }
    Ok(out)
}

/// On x86_64 the x32 ABI reaches the same kernel entry points with bit 30 set in the syscall
/// number, which would slip past number-based rules: kill on any such number.
fn x32_guard() -> Vec<libc::sock_filter> {
    let stmt = |code: u32, k: u32| libc::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    };
    let jump = |code: u32, k: u32, jt: u8, jf: u8| libc::sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    };
    if cfg!(not(target_arch = "x86_64")) {
        return vec![stmt(libc::BPF_RET | libc::BPF_K, libc::SECCOMP_RET_ALLOW)];
    }
    vec![
        stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, 0), // seccomp_data.nr
        jump(
            libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K,
            0x4000_0000,
            0,
            1,
        ),
        stmt(libc::BPF_RET | libc::BPF_K, libc::SECCOMP_RET_KILL_PROCESS),
        stmt(libc::BPF_RET | libc::BPF_K, libc::SECCOMP_RET_ALLOW),
    ]
}

#[cfg(test)]
mod tests {
    #[test]
    fn filters_compile() {
        let progs = super::programs().unwrap();
        assert_eq!(progs.len(), 4);
        assert!(progs.iter().all(|p| !p.is_empty() && p.len() < 4096));
    }
}
