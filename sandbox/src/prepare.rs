//! Starting one sandboxed process: everything is prepared here in the parent (private program
//! copy, scratch dir, uid lease, cgroups, landlock ruleset, seccomp programs, rlimits, pipes),
//! then `child::start` clones the child (the init, or in `Off` mode the bot itself; both share
//! this process's memory), and the CLOEXEC error pipe tells whether the exec happened. Every
//! failure is classified on the fault boundary ([`crate::error`]): only an exec the program
//! itself makes impossible is the program's.

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
use super::steps::Steps;
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

/// The steps of a start, in order; each one that takes something puts it in `res` at once, so a
/// failure anywhere gives back everything taken so far.
fn prepare_and_launch(
    cfg: &SandboxConfig,
    spec: &Spec,
    mode: SandboxMode,
    host: &HostSupport,
    res: &mut Resources,
) -> Result<Process, StartError> {
    let full = mode == SandboxMode::Full;
    let sandboxed = mode != SandboxMode::Off;
    let mut steps = Steps::start();
    if full && host.root {
        res.uid = Some(
            uids::lease(&cfg.uid_lock_dir, cfg.uid_base, cfg.uid_count, spec.slot)
                .map_err(|e| HostError::Uid(e.to_string()))?,
        );
    }
    let uid = res.uid.as_ref().map(|l| l.uid);
    steps.end("uid");
    let (dir, id) = bot_folder(cfg, res)?;
    let scratch = scratch_dir(spec, &dir, uid)?;
    steps.end("folder");
    let program = if spec.copy_program && sandboxed {
        program_copy(spec.program, &dir)?
    } else {
        spec.program.to_path_buf()
    };
    steps.end("copy");
    if full {
        res.cgroups = Some(BotCgroups::create(host, &id, &spec.limits, cfg.cpu_weight)?);
    }
    steps.end("cgroups");
    let mut plan = exec_plan(spec, &program, &scratch, full)?;
    let landlock_fd = if sandboxed {
        landlock_ruleset(cfg, spec, &program, &scratch)?
    } else {
        None
    };
    plan.landlock_fd = landlock_fd.as_ref().map(|f| f.as_raw_fd());
    plan.no_new_privs = sandboxed;
    if sandboxed {
        plan.seccomp = seccomp::programs()?.to_vec();
    }
    plan.ids = uid.map(|u| (u, u));
    steps.end("landlock_seccomp");
    let pipes = Pipes::open(spec.stdin_null)?;
    plan.stdio = [
        pipes.child.stdin.as_raw_fd(),
        pipes.child.stdout.as_raw_fd(),
        pipes.child.stderr.as_raw_fd(),
    ];
    plan.err_w = pipes.child.err.as_raw_fd();
    let status_pair = if sandboxed {
        let (status_r, status_w) = pipe()?;
        plan.init = Some(init_plan(spec, full, host, &scratch, uid, res, &status_w)?);
        Some((status_r, status_w))
    } else {
        None
    };
    steps.end("pipes");
    let started = launch(plan, pipes, status_pair, landlock_fd, &program, res);
    steps.end("clone_exec");
    steps.log("start");
    started
}

fn io_err(what: &'static str, p: &Path, e: std::io::Error) -> HostError {
    HostError::io(what, p, e)
}

/// The bot's private folder (`bot-<32 hex>`, held by its lock), and the name its cgroups take.
fn bot_folder(cfg: &SandboxConfig, res: &mut Resources) -> Result<(PathBuf, String), HostError> {
    let root = &cfg.scratch_root;
    std::fs::create_dir_all(root).map_err(|e| io_err("scratch root", root, e))?;
    let _ = std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o711));
    let locked =
        LockedDir::create(root, BOT_DIR_PREFIX).map_err(|e| io_err("bot folder in", root, e))?;
    let dir = locked.path().to_path_buf();
    let id = locked.name();
    res.dir = Some(locked);
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o711))
        .map_err(|e| io_err("chmod", &dir, e))?;
    Ok((dir, id))
}

/// The bot's only writable place: the spec's work dir, or `scratch/` in its folder, owned by its
/// pool uid.
fn scratch_dir(spec: &Spec, dir: &Path, uid: Option<u32>) -> Result<PathBuf, HostError> {
    let chown = |p: &Path| match uid {
        Some(uid) => {
            std::os::unix::fs::chown(p, Some(uid), Some(uid)).map_err(|e| io_err("chown", p, e))
        }
        None => Ok(()),
    };
    if let Some(w) = &spec.work_dir {
        chown(w)?;
        return Ok(w.clone());
    }
    let s = dir.join("scratch");
    std::fs::create_dir(&s).map_err(|e| io_err("scratch", &s, e))?;
    std::fs::set_permissions(&s, std::fs::Permissions::from_mode(0o700))
        .map_err(|e| io_err("chmod", &s, e))?;
    chown(&s)?;
    Ok(s)
}

/// A private read-only copy of the program in `bin/` of the bot's folder.
fn program_copy(program: &Path, dir: &Path) -> Result<PathBuf, HostError> {
    let bin = dir.join("bin");
    std::fs::create_dir(&bin).map_err(|e| io_err("bin folder", &bin, e))?;
    let name = program.file_name().unwrap_or_else(|| "bot".as_ref());
    let copy = bin.join(name);
    std::fs::copy(program, &copy).map_err(|e| io_err("copy of program", program, e))?;
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o555))
        .map_err(|e| io_err("chmod", &copy, e))?;
    Ok(copy)
}

fn cstr(s: &[u8], what: &str) -> Result<CString, HostError> {
    CString::new(s).map_err(|_| HostError::Setup(format!("{what} contains a NUL byte")))
}

fn path_cstr(p: &Path, what: &str) -> Result<CString, HostError> {
    cstr(p.as_os_str().as_encoded_bytes(), what)
}

/// What the child execs: program, arguments, environment, working directory and rlimits.
fn exec_plan(
    spec: &Spec,
    program: &Path,
    scratch: &Path,
    full: bool,
) -> Result<ChildPlan, HostError> {
    let prog_c = path_cstr(program, "program path")?;
    let mut argv = vec![prog_c.clone()];
    for a in spec.args {
        argv.push(cstr(a.as_bytes(), "argument")?);
    }
    let envp = spec
        .env
        .iter()
        .map(|(k, v)| cstr(format!("{k}={v}").as_bytes(), "environment"))
        .collect::<Result<Vec<_>, _>>()?;
    let stack = child::ChildStack::new().map_err(|source| HostError::Stage {
        stage: "mmap of the bot's clone stack",
        source,
    })?;
    let mut plan = ChildPlan::new(prog_c, argv, envp, stack);
    let cwd = spec.cwd.as_deref().unwrap_or(scratch);
    plan.cwd = Some(path_cstr(cwd, "working directory")?);
    plan.rlimits = rlimits(&spec.limits, full);
    Ok(plan)
}

/// The landlock ruleset: read /usr and the configured paths, exec the program and the loader,
/// write the scratch dir, plus the spec's own.
fn landlock_ruleset(
    cfg: &SandboxConfig,
    spec: &Spec,
    program: &Path,
    scratch: &Path,
) -> Result<Option<OwnedFd>, StartError> {
    let mut policy = spec.extra.clone();
    policy.read.push(PathBuf::from("/usr"));
    policy.read.extend(cfg.extra_read_paths.iter().cloned());
    policy.exec.push(program.to_path_buf());
    policy.exec.extend(lock::dynamic_loader());
    policy.write.push(scratch.to_path_buf());
    Ok(lock::ruleset(&policy)?)
}

/// A CLOEXEC pipe (read end, write end).
fn pipe() -> Result<(OwnedFd, OwnedFd), HostError> {
    nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(|e| HostError::Setup(format!("pipe: {e}")))
}

fn nonblock(fd: &OwnedFd) -> Result<(), HostError> {
    nix::fcntl::fcntl(
        fd.as_raw_fd(),
        nix::fcntl::FcntlArg::F_SETFL(OFlag::O_NONBLOCK),
    )
    .map(|_| ())
    .map_err(|e| HostError::Setup(format!("fcntl: {e}")))
}

/// The child's stdio and error pipe, both ends of each; the parent's ends are non-blocking, all
/// are CLOEXEC.
struct Pipes {
    parent: ParentEnds,
    child: ChildEnds,
}

/// What the parent keeps: the bot's stdin (none for /dev/null), stdout, stderr, and the error
/// pipe that tells whether the exec happened.
struct ParentEnds {
    stdin: Option<OwnedFd>,
    stdout: OwnedFd,
    stderr: OwnedFd,
    err: OwnedFd,
}

/// What the child gets as fds 0, 1 and 2, and its end of the error pipe; closed here once the
/// child is cloned.
struct ChildEnds {
    stdin: OwnedFd,
    stdout: OwnedFd,
    stderr: OwnedFd,
    err: OwnedFd,
}

impl Pipes {
    fn open(stdin_null: bool) -> Result<Pipes, HostError> {
        let (stdin_child, stdin_parent) = if stdin_null {
            let null = std::fs::File::open("/dev/null")
                .map_err(|e| io_err("open", Path::new("/dev/null"), e))?;
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
        let parent = ParentEnds {
            stdin: stdin_parent,
            stdout: stdout_r,
            stderr: stderr_r,
            err: err_r,
        };
        let child = ChildEnds {
            stdin: stdin_child,
            stdout: stdout_w,
            stderr: stderr_w,
            err: err_w,
        };
        Ok(Pipes { parent, child })
    }
}

/// The reaping init's part: namespaces, mounts (`Full`), cgroups to join, and where to report
/// the bot's wait status.
fn init_plan(
    spec: &Spec,
    full: bool,
    host: &HostSupport,
    scratch: &Path,
    uid: Option<u32>,
    res: &Resources,
    status_w: &OwnedFd,
) -> Result<InitPlan, HostError> {
    let mounts = if full {
        mounts(spec, scratch, uid)?
    } else {
        Vec::new()
    };
    let namespaces = libc::CLONE_NEWNET
        | libc::CLONE_NEWPID
        | libc::CLONE_NEWNS
        | libc::CLONE_NEWIPC
        | libc::CLONE_NEWUTS;
    let landlock_after_mount = if full && spec.tmpfs_scratch && host.landlock_abi > 0 {
        Some((
            path_cstr(scratch, "scratch path")?,
            lock::full_access_bits(host.landlock_abi),
        ))
    } else {
        None
    };
    Ok(InitPlan {
        clone_flags: if full { namespaces as libc::c_long } else { 0 },
        status_w: status_w.as_raw_fd(),
        cgroups: res.cgroups.as_ref().map(|c| c.join()).unwrap_or_default(),
        landlock_after_mount,
        mounts,
        pid_namespace: full,
    })
}

/// `Full` mode's mounts: a private tree, a /proc of the bot's own pid namespace, and the quota
/// tmpfs over the scratch dir when asked.
fn mounts(spec: &Spec, scratch: &Path, uid: Option<u32>) -> Result<Vec<MountOp>, HostError> {
    let c = |s: &str| CString::new(s).map_err(|_| HostError::Setup("NUL in mount argument".into()));
    let mut mounts = vec![
        MountOp {
            src: c("none")?,
            target: c("/")?,
            fstype: None,
            flags: libc::MS_REC | libc::MS_PRIVATE,
            data: None,
        },
        MountOp {
            src: c("proc")?,
            target: c("/proc")?,
            fstype: Some(c("proc")?),
            flags: libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            data: Some(c("hidepid=invisible,subset=pid")?),
        },
    ];
    if spec.tmpfs_scratch {
        let owner = uid.unwrap_or(0);
        mounts.push(MountOp {
            src: c("tmpfs")?,
            target: path_cstr(scratch, "scratch path")?,
            fstype: Some(c("tmpfs")?),
            flags: libc::MS_NOSUID | libc::MS_NODEV,
            data: Some(c(&format!(
                "size={},nr_inodes=4096,mode=0700,uid={owner},gid={owner}",
                spec.limits.scratch_quota
            ))?),
        });
    }
    Ok(mounts)
}

/// Clone the child, close its ends here, and wait for the error pipe: it closes without a word
/// once the program has exec'd, or carries the stage and errno that failed.
///
/// The children share this process's memory and read the plan until that pipe has closed (see
/// `child::start`), so the plan is freed only after it has; if it never closes, the plan is
/// leaked rather than freed under a child that may still read it.
fn launch(
    plan: ChildPlan,
    pipes: Pipes,
    status_pair: Option<(OwnedFd, OwnedFd)>,
    landlock_fd: Option<OwnedFd>,
    program: &Path,
    res: &mut Resources,
) -> Result<Process, StartError> {
    let init_stack = match &plan.init {
        Some(_) => Some(child::ChildStack::new().map_err(|source| HostError::Stage {
            stage: "mmap of the init's stack",
            source,
        })?),
        None => None,
    };
    // SAFETY: the plan is complete, and lives until the error pipe has closed (below); the
    // init's stack lives in the `Process` until the init is reaped.
    let pid = unsafe { child::start(&plan, init_stack.as_ref()) };
    if pid < 0 {
        return Err(HostError::Stage {
            stage: "clone",
            source: std::io::Error::last_os_error(),
        }
        .into());
    }
    let Pipes { parent, child } = pipes;
    drop((child, landlock_fd));
    let status_r = status_pair.map(|(r, w)| {
        drop(w);
        r
    });
    let mut report = [0u8; 5];
    let n = read_with_timeout(&parent.err, &mut report, Duration::from_secs(10));
    let proc_ = Process::new(
        pid,
        parent.stdin,
        parent.stdout,
        parent.stderr,
        status_r,
        init_stack,
        std::mem::take(res),
    );
    if n == 0 {
        drop(plan);
        return Ok(proc_);
    }
    let err = if n == 5 {
        let errno = i32::from_ne_bytes([report[1], report[2], report[3], report[4]]);
        classify_child_failure(Stage::from_u8(report[0]), errno, program.to_path_buf())
    } else {
        HostError::Setup("the sandboxed child did not report within 10 s".into()).into()
    };
    let leftovers = proc_.cleanup();
    if !leftovers.is_empty() {
        tracing::error!(?leftovers, error = %err, "a failed start left things behind");
    }
    let mut rest = [0u8; 1];
    if read_with_timeout(&parent.err, &mut rest, Duration::from_secs(2)) == 0 {
        drop(plan);
    } else {
        tracing::error!(error = %err, "a failed start's child did not close its error pipe: its plan is left in memory");
        std::mem::forget(plan);
    }
    Err(err)
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
