//! Starting one sandboxed process: everything is prepared here in the parent (private program
//! copy, scratch dir, uid lease, cgroups, landlock ruleset, seccomp programs, rlimits, pipes),
//! then one fork-like clone runs `child::child_main`, and the CLOEXEC error pipe tells whether
//! the exec happened. Every failure is classified on the fault boundary ([`crate::error`]): only
//! an exec the program itself makes impossible is the program's.

use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use nix::fcntl::OFlag;

use super::cgroup::BotCgroups;
use super::child::{self, ChildPlan, InitPlan, MountOp, Stage};
use super::error::{classify_child_failure, HostError, StartError};
use super::fdio::{self, PollFd};
use super::folder::{self, LockedDir};
use super::lock::{self, FsPolicy};
use super::process::{Process, Resources};
use super::{seccomp, uids, HostSupport, Limits, SandboxConfig, SandboxMode};

/// What to run and how (bots and the compiler differ in program handling and writable dirs).
pub struct Spec<'a> {
    pub program: &'a Path,
    pub args: &'a [String],
    pub env: Vec<(String, String)>,
    /// Run a private read-only copy of the program (bots) instead of the program in place.
    pub copy_program: bool,
    /// Extra paths beyond /usr, the program and the scratch dir.
    pub extra: FsPolicy,
    /// Working directory (read-write) instead of a fresh scratch dir.
    pub work_dir: Option<PathBuf>,
    /// Mount a tmpfs with the quota over the scratch dir (`Full` mode only).
    pub tmpfs_scratch: bool,
    pub stdin_null: bool,
    /// Start in this directory (not made writable) instead of the scratch / work dir.
    pub cwd: Option<PathBuf>,
    pub limits: Limits,
    pub slot: usize,
}

/// Prefix of bot folders in the scratch root (`bot-<32 hex>`, lock file `bot-<32 hex>.lock`).
pub(crate) const BOT_DIR_PREFIX: &str = "bot-";
/// How often a busy worker re-sweeps its scratch root for abandoned bot folders.
const SWEEP_EVERY: Duration = Duration::from_secs(60);

/// Start `spec` under `cfg`. Errors name the step that failed and whose fault it is.
pub fn start(cfg: &SandboxConfig, spec: &Spec) -> Result<Process, StartError> {
    let mode = cfg.effective_mode();
    let host = HostSupport::get();
    announce(cfg, mode, host);
    let swept = folder::sweep_now_and_then(&cfg.scratch_root, BOT_DIR_PREFIX, SWEEP_EVERY);
    if swept > 0 {
        tracing::warn!(swept, root = %cfg.scratch_root.display(), "removed abandoned bot folders");
    }
    let mut res = Resources {
        mode,
        dir: None,
        uid: None,
        cgroups: None,
    };
    match prepare_and_launch(cfg, spec, mode, host, &mut res) {
        Ok(p) => Ok(p),
        Err(e) => {
            res.release();
            Err(e)
        }
    }
}

/// Once per process and mode: log what the sandbox enforces, and clear what dead workers left.
fn announce(cfg: &SandboxConfig, mode: SandboxMode, host: &HostSupport) {
    static FULL: std::sync::Once = std::sync::Once::new();
    static UNPRIVILEGED: std::sync::Once = std::sync::Once::new();
    static OFF: std::sync::Once = std::sync::Once::new();
    let once = match mode {
        SandboxMode::Full => &FULL,
        SandboxMode::Unprivileged => &UNPRIVILEGED,
        _ => &OFF,
    };
    once.call_once(|| {
        tracing::info!(sandbox = %cfg.describe(), "bot sandbox in force");
        if mode == SandboxMode::Full {
            if let Err(e) = super::cgroup::join_worker_group(host, cfg.cpu_weight) {
                tracing::warn!(error = %e, "could not join the matchfarm cpu cgroup");
            }
            log_sweep(&super::cgroup::sweep_stale(host));
        }
    });
}

/// What the sweep of `matchfarm/` cgroups found, said once.
fn log_sweep(s: &super::cgroup::Sweep) {
    if s.swept > 0 {
        tracing::warn!(swept = s.swept, "removed cgroups left by workers that died");
    }
    for why in &s.refused {
        tracing::warn!("{why}");
    }
    if let Some(first) = s.foreign.first() {
        tracing::info!(
            count = s.foreign.len(),
            first = %first.display(),
            "cgroups under matchfarm/ that no lock guards (older farm versions, or not the \
             farm's) are left alone"
        );
    }
}

fn prepare_and_launch(
    cfg: &SandboxConfig,
    spec: &Spec,
    mode: SandboxMode,
    host: &HostSupport,
    res: &mut Resources,
) -> Result<Process, StartError> {
    let io = |what: &'static str, p: &Path, e: std::io::Error| HostError::io(what, p, e);
    let full = mode == SandboxMode::Full;
    let sandboxed = mode != SandboxMode::Off;

    if full && host.root {
        res.uid = Some(
            uids::lease(&cfg.uid_lock_dir, cfg.uid_base, cfg.uid_count, spec.slot)
                .map_err(|e| HostError::Uid(e.to_string()))?,
        );
    }
    let uid = res.uid.as_ref().map(|l| l.uid);

    // Private folder: bin/ (read-only program copy) and scratch/ (the bot's only writable place).
    std::fs::create_dir_all(&cfg.scratch_root)
        .map_err(|e| io("scratch root", &cfg.scratch_root, e))?;
    let _ = std::fs::set_permissions(&cfg.scratch_root, std::fs::Permissions::from_mode(0o711));
    let locked = LockedDir::create(&cfg.scratch_root, BOT_DIR_PREFIX)
        .map_err(|e| io("bot folder in", &cfg.scratch_root, e))?;
    let dir = locked.path().to_path_buf();
    // The bot's cgroups take its folder's name (`bot-<32 hex>`): owned by a lock, like it.
    let id = locked.name();
    res.dir = Some(locked);
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o711))
        .map_err(|e| io("chmod", &dir, e))?;
    let scratch = match &spec.work_dir {
        Some(w) => {
            if let Some(uid) = uid {
                std::os::unix::fs::chown(w, Some(uid), Some(uid)).map_err(|e| io("chown", w, e))?;
            }
            w.clone()
        }
        None => {
            let s = dir.join("scratch");
            std::fs::create_dir(&s).map_err(|e| io("scratch", &s, e))?;
            std::fs::set_permissions(&s, std::fs::Permissions::from_mode(0o700))
                .map_err(|e| io("chmod", &s, e))?;
            if let Some(uid) = uid {
                std::os::unix::fs::chown(&s, Some(uid), Some(uid))
                    .map_err(|e| io("chown", &s, e))?;
            }
            s
        }
    };
    let program = if spec.copy_program && sandboxed {
        let bin = dir.join("bin");
        std::fs::create_dir(&bin).map_err(|e| io("bin folder", &bin, e))?;
        let name = spec.program.file_name().unwrap_or_else(|| "bot".as_ref());
        let copy = bin.join(name);
        std::fs::copy(spec.program, &copy).map_err(|e| io("copy of program", spec.program, e))?;
        std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o555))
            .map_err(|e| io("chmod", &copy, e))?;
        copy
    } else {
        spec.program.to_path_buf()
    };

    if full {
        res.cgroups = Some(BotCgroups::create(host, &id, &spec.limits, cfg.cpu_weight)?);
    }

    let cstr = |s: &[u8], what: &str| {
        CString::new(s).map_err(|_| HostError::Setup(format!("{what} contains a NUL byte")))
    };
    let prog_c = cstr(program.as_os_str().as_encoded_bytes(), "program path")?;
    let mut argv = vec![prog_c.clone()];
    for a in spec.args {
        argv.push(cstr(a.as_bytes(), "argument")?);
    }
    let envp = spec
        .env
        .iter()
        .map(|(k, v)| cstr(format!("{k}={v}").as_bytes(), "environment"))
        .collect::<Result<Vec<_>, _>>()?;
    let mut plan = ChildPlan::new(prog_c, argv, envp);
    let cwd = spec.cwd.as_ref().unwrap_or(&scratch);
    plan.cwd = Some(cstr(
        cwd.as_os_str().as_encoded_bytes(),
        "working directory",
    )?);
    plan.rlimits = rlimits(&spec.limits, full);

    let landlock_fd = if sandboxed {
        let mut policy = spec.extra.clone();
        policy.read.push(PathBuf::from("/usr"));
        policy.read.extend(cfg.extra_read_paths.iter().cloned());
        policy.exec.push(program.clone());
        policy.exec.extend(lock::dynamic_loader());
        policy.write.push(scratch.clone());
        lock::ruleset(&policy)?
    } else {
        None
    };
    plan.landlock_fd = landlock_fd.as_ref().map(|f| f.as_raw_fd());
    plan.no_new_privs = sandboxed;
    if sandboxed {
        plan.seccomp = seccomp::programs()?.to_vec();
    }
    plan.ids = uid.map(|u| (u, u));

    // Pipes: the parent's ends are non-blocking; all are CLOEXEC.
    let pipe =
        || nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(|e| HostError::Setup(format!("pipe: {e}")));
    let nonblock = |fd: &OwnedFd| {
        nix::fcntl::fcntl(
            fd.as_raw_fd(),
            nix::fcntl::FcntlArg::F_SETFL(OFlag::O_NONBLOCK),
        )
        .map(|_| ())
        .map_err(|e| HostError::Setup(format!("fcntl: {e}")))
    };
    let (stdin_child, stdin_parent) = if spec.stdin_null {
        let null =
            std::fs::File::open("/dev/null").map_err(|e| io("open", Path::new("/dev/null"), e))?;
        (OwnedFd::from(null), None)
    } else {
        let (r, w) = pipe()?;
        nonblock(&w)?;
        (r, Some(w))
    };
    let (stdout_r, stdout_w) = pipe()?;
    let (stderr_r, stderr_w) = pipe()?;
    let (err_r, err_w) = pipe()?;
    nonblock(&stdout_r)?;
    nonblock(&stderr_r)?;
    plan.stdio = [
        stdin_child.as_raw_fd(),
        stdout_w.as_raw_fd(),
        stderr_w.as_raw_fd(),
    ];
    plan.err_w = err_w.as_raw_fd();

    let mut status_pair = None;
    if sandboxed {
        let (status_r, status_w) = pipe()?;
        let mut mounts = Vec::new();
        if full {
            let c = |s: &str| {
                CString::new(s).map_err(|_| HostError::Setup("NUL in mount argument".into()))
            };
            mounts.push(MountOp {
                src: c("none")?,
                target: c("/")?,
                fstype: None,
                flags: libc::MS_REC | libc::MS_PRIVATE,
                data: None,
            });
            mounts.push(MountOp {
                src: c("proc")?,
                target: c("/proc")?,
                fstype: Some(c("proc")?),
                flags: libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                data: Some(c("hidepid=invisible,subset=pid")?),
            });
            if spec.tmpfs_scratch {
                let owner = uid.unwrap_or(0);
                mounts.push(MountOp {
                    src: c("tmpfs")?,
                    target: cstr(scratch.as_os_str().as_encoded_bytes(), "scratch path")?,
                    fstype: Some(c("tmpfs")?),
                    flags: libc::MS_NOSUID | libc::MS_NODEV,
                    data: Some(c(&format!(
                        "size={},nr_inodes=4096,mode=0700,uid={owner},gid={owner}",
                        spec.limits.scratch_quota
                    ))?),
                });
            }
        }
        plan.init = Some(InitPlan {
            clone_flags: if full {
                (libc::CLONE_NEWNET
                    | libc::CLONE_NEWPID
                    | libc::CLONE_NEWNS
                    | libc::CLONE_NEWIPC
                    | libc::CLONE_NEWUTS) as libc::c_long
            } else {
                0
            },
            status_w: status_w.as_raw_fd(),
            cgroup_procs: res
                .cgroups
                .as_ref()
                .map(|c| c.procs_fds())
                .unwrap_or_default(),
            landlock_after_mount: if full && spec.tmpfs_scratch && host.landlock_abi > 0 {
                Some((
                    cstr(scratch.as_os_str().as_encoded_bytes(), "scratch path")?,
                    lock::full_access_bits(host.landlock_abi),
                ))
            } else {
                None
            },
            mounts,
            pid_namespace: full,
        });
        status_pair = Some((status_r, status_w));
    }

    let flags = plan.init.as_ref().map_or(0, |i| i.clone_flags);
    // SAFETY: the child runs only `child_main`, which is async-signal-safe and never returns.
    let pid = unsafe { child::raw_clone(flags) };
    if pid == 0 {
        // SAFETY: we are the fresh child and the plan is complete.
        unsafe { child::child_main(&plan) }
    }
    if pid < 0 {
        return Err(HostError::Stage {
            stage: "clone",
            source: std::io::Error::last_os_error(),
        }
        .into());
    }
    drop((stdin_child, stdout_w, stderr_w, err_w, landlock_fd));
    let status_r = status_pair.map(|(r, w)| {
        drop(w);
        r
    });

    // The error pipe closes without a word once the bot has exec'd.
    let mut report = [0u8; 5];
    let n = read_with_timeout(&err_r, &mut report, Duration::from_secs(10));
    let proc_ = Process::new(
        pid,
        stdin_parent,
        stdout_r,
        stderr_r,
        status_r,
        std::mem::take(res),
    );
    if n != 0 {
        let err = if n == 5 {
            let errno = i32::from_ne_bytes([report[1], report[2], report[3], report[4]]);
            classify_child_failure(Stage::from_u8(report[0]), errno, program.clone())
        } else {
            HostError::Setup("the sandboxed child did not report within 10 s".into()).into()
        };
        let leftovers = proc_.cleanup();
        if !leftovers.is_empty() {
            tracing::error!(?leftovers, error = %err, "a failed start left things behind");
        }
        return Err(err);
    }
    Ok(proc_)
}

fn rlimits(l: &Limits, per_uid_nproc: bool) -> Vec<(libc::__rlimit_resource_t, libc::rlimit)> {
    let lim = |soft: u64, hard: u64| libc::rlimit {
        rlim_cur: soft,
        rlim_max: hard,
    };
    let mut v = vec![
        (libc::RLIMIT_AS, lim(l.address_space, l.address_space)),
        (libc::RLIMIT_CPU, lim(l.cpu_seconds, l.cpu_seconds + 1)),
        (libc::RLIMIT_NOFILE, lim(l.open_files, l.open_files)),
        (libc::RLIMIT_FSIZE, lim(l.file_size, l.file_size)),
        (libc::RLIMIT_CORE, lim(0, 0)),
    ];
    if per_uid_nproc {
        v.push((libc::RLIMIT_NPROC, lim(l.processes, l.processes)));
    }
    v
}

/// Read up to `buf.len()` bytes (until EOF) from a blocking pipe, waiting at most `timeout`.
fn read_with_timeout(fd: &OwnedFd, buf: &mut [u8], timeout: Duration) -> usize {
    let deadline = std::time::Instant::now() + timeout;
    let mut got = 0;
    while got < buf.len() {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        // Whole milliseconds, as before (a poll in ms truncated the wait).
        let left = Duration::from_millis(left.as_millis().min(i32::MAX as u128) as u64);
        match fdio::poll(&mut [PollFd::readable(fd.as_raw_fd())], left) {
            Ok(0) => return got.max(1), // no answer in time: treat as a failure
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return got.max(1),
        }
        match fdio::read(fd.as_raw_fd(), &mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return got.max(1),
        }
    }
    got
}
