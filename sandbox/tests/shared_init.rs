//! The bot's init shares the worker's memory, so that starting a bot copies no page table
//! however large the worker is (`sandbox::child`). That is safe only if three things hold, and
//! each is checked here in every sandboxed mode this host runs:
//! - the init really shares it (a mapping made after the start is seen in the init's map);
//! - the init is in none of the bot's cgroups, so a cgroup's out-of-memory killer, which kills
//!   every process sharing its victim's memory, can never pick it (only the bot is there);
//! - none of the worker's signal handlers runs in the init (it would run on the worker's
//!   memory): a signal the worker catches, sent to the init, leaves the worker untouched.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::*;
use sandbox::{Bot, CoreTokens};

/// The parent of `pid`, from `/proc/<pid>/stat` (the field after the parenthesised name).
fn parent_of(pid: i32) -> i32 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat of the bot");
    let after_name = stat.rsplit_once(')').expect("a stat line").1;
    after_name
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap()
}

static CAUGHT: AtomicUsize = AtomicUsize::new(0);

extern "C" fn count_signal(_: libc::c_int) {
    CAUGHT.fetch_add(1, Ordering::SeqCst);
}

/// A mapping named `name` in this process, made now.
fn named_mapping(name: &str) -> (libc::c_int, *mut libc::c_void) {
    let cname = std::ffi::CString::new(name).unwrap();
    // SAFETY: a fresh memfd of one page, mapped shared; both are the test's own.
    unsafe {
        let fd = libc::memfd_create(cname.as_ptr(), libc::MFD_CLOEXEC);
        assert!(fd >= 0, "memfd_create");
        assert_eq!(libc::ftruncate(fd, 4096), 0);
        let addr = libc::mmap(
            std::ptr::null_mut(),
            4096,
            libc::PROT_READ,
            libc::MAP_SHARED,
            fd,
            0,
        );
        assert_ne!(addr, libc::MAP_FAILED);
        (fd, addr)
    }
}

#[test]
fn the_init_shares_the_workers_memory_but_not_its_cgroups_nor_its_handlers() {
    // SAFETY: a handler that only counts, installed for a signal nothing else here uses.
    unsafe {
        let mut act: libc::sigaction = std::mem::zeroed();
        act.sa_sigaction = count_signal as *const () as usize;
        assert_eq!(
            libc::sigaction(libc::SIGUSR1, &act, std::ptr::null_mut()),
            0
        );
    }
    for cfg in sandboxes() {
        let mode = cfg.mode.as_str();
        let tokens = CoreTokens::new(1);
        let mut b = Bot::spawn(&bot("test", "answer"), &cfg, &tokens, 0).expect("spawn");
        b.exchange(0, &turn_input(0), Duration::from_secs(5))
            .expect("an answer");
        let bot_pid = b.pid().expect("the bot's pid");
        let init = parent_of(bot_pid);
        assert_ne!(
            init,
            std::process::id() as i32,
            "{mode}: the bot runs under an init"
        );

        let name = format!("matchfarm-shared-init-probe-{mode}-{}", std::process::id());
        let (fd, addr) = named_mapping(&name);
        let maps = std::fs::read_to_string(format!("/proc/{init}/maps")).expect("init's maps");
        assert!(
            maps.contains(&name),
            "{mode}: a mapping made after the start is not in the init's memory: it does not \
             share the worker's"
        );

        // The bot's own cgroups: those of its hierarchies where it is not where the worker is.
        let (worker_cg, init_cg) = (cgroups_of("self"), cgroups_of(&init.to_string()));
        let own: Vec<_> = cgroups_of(&bot_pid.to_string())
            .into_iter()
            .filter(|c| !worker_cg.contains(c))
            .collect();
        if cfg.mode == sandbox::SandboxMode::Full {
            assert!(!own.is_empty(), "{mode}: the bot has cgroups of its own");
        }
        for c in &own {
            assert!(
                !init_cg.contains(c),
                "{mode}: the init is in the bot's cgroup {c:?}: {init_cg:?}"
            );
        }

        let before = CAUGHT.load(Ordering::SeqCst);
        // SAFETY: the init is this process's own child (its pid is held: it is not reaped).
        assert_eq!(unsafe { libc::kill(init, libc::SIGUSR1) }, 0);
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(
            CAUGHT.load(Ordering::SeqCst),
            before,
            "{mode}: the worker's handler ran in the init"
        );
        b.exchange(1, &turn_input(1), Duration::from_secs(5))
            .expect("the bot still answers after the signal");
        assert!(b.finish().leftovers.is_empty(), "{mode}: leftovers");
        // SAFETY: the mapping and memfd made above.
        unsafe {
            libc::munmap(addr, 4096);
            libc::close(fd);
        }
    }
}
