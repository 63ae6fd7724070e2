//! A sandboxed bot joins its cgroups without the kernel's global threadgroup lock (see
//! `sandbox::cgroup::Join`): it is cloned into its cgroup v2 and moves itself into each v1
//! hierarchy through the `tasks` file. Checked here on both paths the start can take: where
//! `clone3` works, and where it is refused (as container runtimes' seccomp profiles refuse it),
//! which falls back to writing the v2 `cgroup.procs`. Either way the bot must be in its own
//! cgroup in every hierarchy the host has, the same one everywhere (what those cgroups hold it
//! to, the hostile suite checks).

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::*;
use sandbox::{Bot, CoreTokens, HostSupport, SandboxMode};

/// Start a bot in the full sandbox and check where it is: its own `matchfarm/bot-<hex>` cgroup
/// in each of memory, pids, cpuacct, cpu and v2 (those this host has), one name for all.
fn check_bot_joins_every_hierarchy(how: &str) {
    let Some(cfg) = strongest().filter(|c| c.mode == SandboxMode::Full) else {
        return skip("the full sandbox is not available");
    };
    let host = HostSupport::get();
    let tokens = CoreTokens::new(1);
    let mut b = Bot::spawn(&bot("test", "answer"), &cfg, &tokens, 0).expect("spawn");
    b.exchange(0, &turn_input(0), Duration::from_secs(5))
        .expect("an answer");
    let pid = b.pid().expect("the bot's pid");
    let cgroups = cgroups_of(&pid.to_string());
    let mut expected = vec![
        ("memory", host.cg_memory.is_some()),
        ("pids", host.cg_pids.is_some()),
        ("cpuacct", host.cg_cpuacct.is_some()),
        ("cpu", host.cg_cpu.is_some()),
        ("", host.cg_unified.is_some()),
    ];
    expected.retain(|(_, present)| *present);
    let mut names = BTreeMap::new();
    for (hierarchy, _) in &expected {
        let path = cgroups
            .iter()
            .find(|(h, _)| h.split(',').any(|c| c == *hierarchy))
            .map(|(_, p)| p.clone())
            .unwrap_or_else(|| panic!("{how}: no line for {hierarchy:?} in {cgroups:?}"));
        let name = path
            .strip_prefix("/matchfarm/bot-")
            .unwrap_or_else(|| panic!("{how}: the bot is in {path} of {hierarchy:?}, not its own"));
        names.insert(*hierarchy, name.to_string());
    }
    let distinct: std::collections::BTreeSet<_> = names.values().collect();
    assert_eq!(
        distinct.len(),
        1,
        "{how}: the bot's cgroups differ: {names:?}"
    );
    b.exchange(1, &turn_input(1), Duration::from_secs(5))
        .expect("the bot answers from its cgroups");
    assert!(b.finish().leftovers.is_empty(), "{how}: leftovers");
}

#[test]
fn a_bot_is_cloned_into_its_cgroups() {
    check_bot_joins_every_hierarchy("clone3");
}

#[test]
fn where_clone3_is_refused_a_bot_joins_its_cgroups_all_the_same() {
    use seccompiler::{BpfProgram, SeccompAction, SeccompFilter, TargetArch};
    if strongest()
        .filter(|c| c.mode == SandboxMode::Full)
        .is_none()
    {
        return skip("the full sandbox is not available");
    }
    // As Docker's and podman's default profiles do: clone3 fails with ENOSYS, on this thread
    // and on every process it clones (the bot's init among them).
    let arch = if cfg!(target_arch = "aarch64") {
        TargetArch::aarch64
    } else {
        TargetArch::x86_64
    };
    let filter = SeccompFilter::new(
        BTreeMap::from([(libc::SYS_clone3, vec![])]),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )
    .expect("a filter");
    let program: BpfProgram = filter.try_into().expect("compiled");
    seccompiler::apply_filter(&program).expect("filter applied to this thread");
    // SAFETY: clone3 with no arguments; the filter answers before the kernel reads them.
    let ret = unsafe { libc::syscall(libc::SYS_clone3, std::ptr::null::<u8>(), 0usize) };
    assert_eq!(
        (ret, std::io::Error::last_os_error().raw_os_error()),
        (-1, Some(libc::ENOSYS)),
        "clone3 is refused on this thread"
    );
    check_bot_joins_every_hierarchy("clone3 refused");
}
