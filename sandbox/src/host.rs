//! What this host lets the worker use (detected once): root, CAP_SYS_ADMIN, landlock ABI,
//! cgroup v1 controllers and cgroup v2 `cgroup.kill`.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::Limits;

/// Isolation primitives available to this process.
#[derive(Debug, Clone)]
pub struct HostSupport {
    pub root: bool,
    pub cap_sys_admin: bool,
    /// 0 when landlock is unavailable.
    pub landlock_abi: i32,
    /// Writable cgroup v1 hierarchies for memory, pids and cpuacct, if any.
    pub cg_memory: Option<PathBuf>,
    pub cg_pids: Option<PathBuf>,
    pub cg_cpuacct: Option<PathBuf>,
    /// Writable cgroup v1 cpu hierarchy (cpu.shares: thinking bots before background load).
    pub cg_cpu: Option<PathBuf>,
    /// A writable cgroup v2 hierarchy whose cgroups have `cgroup.kill`.
    pub cg_unified: Option<PathBuf>,
}

impl HostSupport {
    /// Detected once per process, for the default cgroup root.
    pub fn get() -> &'static HostSupport {
        static HOST: OnceLock<HostSupport> = OnceLock::new();
        HOST.get_or_init(|| HostSupport::detect(Path::new("/sys/fs/cgroup")))
    }

    pub fn detect(cgroup_root: &Path) -> HostSupport {
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        let cap_sys_admin = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                let line = s.lines().find(|l| l.starts_with("CapEff:"))?.to_owned();
                u64::from_str_radix(line["CapEff:".len()..].trim(), 16).ok()
            })
            .is_some_and(|caps| caps & (1u64 << 21) /* CAP_SYS_ADMIN */ != 0);
        // SAFETY: LANDLOCK_CREATE_RULESET_VERSION with a null attr only queries the ABI.
        let abi = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<u8>(),
                0usize,
                1u32,
            )
        };
        let v1 = |ctrl: &str| {
            let p = cgroup_root.join(ctrl);
            writable_dir(&p).then_some(p)
        };
        let unified = [cgroup_root.join("unified"), cgroup_root.to_path_buf()]
            .into_iter()
            .find(|p| p.join("cgroup.controllers").exists() && writable_dir(p));
        HostSupport {
            root,
            cap_sys_admin,
            landlock_abi: abi.max(0) as i32,
            cg_memory: v1("memory").filter(|p| p.join("memory.limit_in_bytes").exists()),
            cg_pids: v1("pids").filter(|p| p.join("cgroup.procs").exists()),
            cg_cpuacct: v1("cpuacct").filter(|p| p.join("cpuacct.usage").exists()),
            cg_cpu: v1("cpu").filter(|p| p.join("cpu.shares").exists()),
            cg_unified: unified,
        }
    }

    /// Whether the `Full` mode can work here.
    pub fn full_possible(&self) -> bool {
        self.root && self.cap_sys_admin
    }

    pub(crate) fn cgroup_summary(&self, l: &Limits) -> String {
        let mut have = Vec::new();
        if self.cg_memory.is_some() {
            have.push(format!("v1 memory {} MiB", l.memory >> 20));
        }
        if self.cg_pids.is_some() {
            have.push(format!("v1 pids.max {}", l.processes));
        }
        if self.cg_cpuacct.is_some() {
            have.push("v1 cpuacct".to_owned());
        }
        if self.cg_cpu.is_some() {
            have.push("v1 cpu.shares for thinking bots".to_owned());
        }
        if self.cg_unified.is_some() {
            have.push("v2 cgroup.kill".to_owned());
        }
        if have.is_empty() {
            "cgroups UNAVAILABLE".to_owned()
        } else {
            format!("cgroups: {}", have.join(", "))
        }
    }
}

fn writable_dir(p: &Path) -> bool {
    let Ok(c) = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()) else {
        return false;
    };
    // SAFETY: access() reads a valid NUL-terminated path.
    p.is_dir() && unsafe { libc::access(c.as_ptr(), libc::W_OK) } == 0
}
