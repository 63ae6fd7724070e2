//! The compile cache: a `.cpp` bot becomes an executable once per (source sha256, compiler
//! identity, flags), compiled by `g++ -std=c++20 -O2` inside the same kind of sandbox as bots
//! (no network, the source as a read-only copy, time / memory / output limits), so a source
//! that `#include`s a secret cannot leak it. Concurrent requests for one key compile once
//! (an in-process lock per key plus a flock for other processes) and the result appears by
//! atomic rename.

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::os::fd::AsRawFd;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use crate::capture::HeadTail;
use crate::sandbox::lock::FsPolicy;
use crate::sandbox::prepare::{self, Spec};
use crate::sandbox::{Limits, SandboxConfig};

/// The flags every bot is compiled with (as the seed does).
pub const FLAGS: [&str; 2] = ["-std=c++20", "-O2"];
/// Bytes of compiler output kept in a `CompileError`.
pub const MESSAGE_KEEP: usize = 8 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    #[error("{what} {path}: {source}")]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("no usable C++ compiler: {0}")]
    NoCompiler(String),
    #[error("{source_file} does not compile:\n{message}")]
    Compiler {
        source_file: PathBuf,
        message: String,
    },
    #[error("compiling {source_file} took longer than {seconds} s")]
    Timeout { source_file: PathBuf, seconds: u64 },
    #[error("could not run the compiler in the sandbox: {0}")]
    Sandbox(String),
}

impl CompileError {
    /// The bot's own fault (its source does not compile in time): the message for the operator.
    /// `None` for failures of the worker (I/O, no compiler, sandbox).
    pub fn compiler_message(&self) -> Option<String> {
        match self {
            CompileError::Compiler { message, .. } => Some(message.clone()),
            CompileError::Timeout { .. } => Some(self.to_string()),
            _ => None,
        }
    }
}

/// Content-addressed executables compiled from `.cpp` sources.
#[derive(Debug)]
pub struct CompileCache {
    dir: PathBuf,
    cfg: SandboxConfig,
    compiler: PathBuf,
    identity: String,
    timeout: Duration,
    locks: Mutex<HashMap<String, Arc<Mutex<()>>>>,
    compiles: AtomicU64,
}

static BUILD_SEQ: AtomicU64 = AtomicU64::new(0);

impl CompileCache {
    /// A cache in `dir` (created if missing) compiling under `cfg`'s sandbox mode.
    pub fn new(dir: PathBuf, cfg: SandboxConfig) -> Result<Self, CompileError> {
        std::fs::create_dir_all(&dir).map_err(|source| CompileError::Io {
            what: "cache folder",
            path: dir.clone(),
            source,
        })?;
        let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755));
        let compiler = ["/usr/bin/g++", "/usr/local/bin/g++"]
            .iter()
            .map(PathBuf::from)
            .find(|p| p.exists())
            .ok_or_else(|| {
                CompileError::NoCompiler("g++ not found in /usr/bin or /usr/local/bin".into())
            })?;
        let compiler = std::fs::canonicalize(&compiler).unwrap_or(compiler);
        let run = |arg: &str| -> Result<String, CompileError> {
            let out = std::process::Command::new(&compiler)
                .arg(arg)
                .env_clear()
                .output()
                .map_err(|e| {
                    CompileError::NoCompiler(format!("{} {arg}: {e}", compiler.display()))
                })?;
            Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
        };
        let identity = format!(
            "{}\n{}\n{}",
            compiler.display(),
            run("--version")?,
            run("-dumpmachine")?
        );
        Ok(CompileCache {
            dir,
            cfg,
            compiler,
            identity,
            timeout: Duration::from_secs(120),
            locks: Mutex::new(HashMap::new()),
            compiles: AtomicU64::new(0),
        })
    }

    /// How many times this cache ran the compiler (cache hits do not count).
    pub fn compile_count(&self) -> u64 {
        self.compiles.load(Ordering::Relaxed)
    }

    /// The compiler identity that is part of every key (path, version, target).
    pub fn compiler_identity(&self) -> &str {
        &self.identity
    }

    /// The cache key of a source text.
    pub fn key_for(&self, source: &[u8]) -> String {
        let mut h = Sha256::new();
        h.update(hex::encode(Sha256::digest(source)));
        h.update([0]);
        h.update(&self.identity);
        h.update([0]);
        h.update(FLAGS.join(" "));
        hex::encode(h.finalize())
    }

    /// `.cpp` source -> path of its cached executable, compiling it (once) if needed.
    pub fn executable_for(&self, source: &Path) -> Result<PathBuf, CompileError> {
        let text = std::fs::read(source).map_err(|e| CompileError::Io {
            what: "source",
            path: source.to_path_buf(),
            source: e,
        })?;
        let key = self.key_for(&text);
        let exe = self.dir.join(format!("{key}.bin"));
        if exe.is_file() {
            crate::metrics::global().compile_hits.inc();
            return Ok(exe);
        }
        let key_lock = {
            let mut map = self.locks.lock().unwrap_or_else(|e| e.into_inner());
            Arc::clone(map.entry(key.clone()).or_default())
        };
        let _in_process = key_lock.lock().unwrap_or_else(|e| e.into_inner());
        let lock_path = self.dir.join(format!("{key}.lock"));
        let lock_file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| CompileError::Io {
                what: "lock",
                path: lock_path.clone(),
                source: e,
            })?;
        // SAFETY: flock on an fd we own; released when the file is closed.
        unsafe { libc::flock(lock_file.as_raw_fd(), libc::LOCK_EX) };
        if exe.is_file() {
            crate::metrics::global().compile_hits.inc();
            return Ok(exe);
        }
        self.compiles.fetch_add(1, Ordering::Relaxed);
        let started = Instant::now();
        let compiled = self.compile(source, &text, &exe);
        crate::metrics::global().compiled(started.elapsed().as_secs_f64(), compiled.is_ok());
        compiled?;
        Ok(exe)
    }

    fn compile(&self, source_name: &Path, text: &[u8], exe: &Path) -> Result<(), CompileError> {
        let io = |what, path: &Path| {
            let path = path.to_path_buf();
            move |source| CompileError::Io { what, path, source }
        };
        let build = self.dir.join(format!(
            ".build-{}-{}",
            std::process::id(),
            BUILD_SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir(&build).map_err(io("build folder", &build))?;
        let result = (|| {
            let src = build.join("bot.cpp");
            std::fs::write(&src, text).map_err(io("source copy", &src))?;
            std::fs::set_permissions(&src, std::fs::Permissions::from_mode(0o444))
                .map_err(io("chmod", &src))?;
            let out = build.join("bot");
            let args: Vec<String> = FLAGS
                .iter()
                .map(|s| s.to_string())
                .chain([
                    "-o".into(),
                    out.display().to_string(),
                    src.display().to_string(),
                ])
                .collect();
            let limits = Limits {
                address_space: 4 << 30,
                memory: 2 << 30,
                cpu_seconds: self.timeout.as_secs(),
                processes: 64,
                open_files: 256,
                file_size: 256 << 20,
                scratch_quota: 256 << 20,
            };
            let spec = Spec {
                program: &self.compiler,
                args: &args,
                env: vec![
                    ("PATH".into(), "/usr/bin:/bin".into()),
                    ("TMPDIR".into(), build.display().to_string()),
                ],
                copy_program: false,
                extra: FsPolicy {
                    exec: vec![PathBuf::from("/usr")],
                    ..FsPolicy::default()
                },
                work_dir: Some(build.clone()),
                tmpfs_scratch: false,
                cwd: None,
                stdin_null: true,
                limits,
                slot: usize::MAX / 2,
            };
            let (status, message) = self.run(&spec, source_name)?;
            let ok = status.is_some_and(|st| libc::WIFEXITED(st) && libc::WEXITSTATUS(st) == 0);
            if !ok || !out.is_file() {
                let message = message.replace(&build.display().to_string(), "");
                return Err(CompileError::Compiler {
                    source_file: source_name.to_path_buf(),
                    message,
                });
            }
            std::os::unix::fs::chown(&out, Some(0), Some(0)).ok();
            std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o555))
                .map_err(io("chmod", &out))?;
            std::fs::rename(&out, exe).map_err(io("rename into cache", exe))
        })();
        let _ = std::fs::remove_dir_all(&build);
        result
    }

    /// Run the compiler to completion: its wait status (None if it had to be killed) and its
    /// output (stdout + stderr, bounded).
    fn run(&self, spec: &Spec, source_name: &Path) -> Result<(Option<i32>, String), CompileError> {
        let mut p = prepare::start(&self.cfg, spec).map_err(CompileError::Sandbox)?;
        let mut out = HeadTail::new(MESSAGE_KEEP);
        let until = Instant::now() + self.timeout;
        let mut open = [true, true];
        let mut timed_out = false;
        while open[0] || open[1] {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                timed_out = true;
                break;
            }
            let fds = [p.stdout.as_raw_fd(), p.stderr.as_raw_fd()];
            let mut pfds: Vec<libc::pollfd> = fds
                .iter()
                .zip(open)
                .map(|(fd, o)| libc::pollfd {
                    fd: if o { *fd } else { -1 },
                    events: libc::POLLIN,
                    revents: 0,
                })
                .collect();
            // SAFETY: two valid pollfds.
            unsafe { libc::poll(pfds.as_mut_ptr(), 2, left.as_millis().clamp(1, 1000) as i32) };
            for (i, pfd) in pfds.iter().enumerate() {
                if pfd.revents == 0 {
                    continue;
                }
                let mut buf = [0u8; 8192];
                // SAFETY: reading into a local buffer.
                let n = unsafe { libc::read(fds[i], buf.as_mut_ptr().cast(), buf.len()) };
                if n > 0 {
                    out.push(&buf[..n as usize]);
                } else if n == 0
                    || std::io::Error::last_os_error().kind() != std::io::ErrorKind::WouldBlock
                {
                    open[i] = false;
                }
            }
        }
        let status = if timed_out {
            None
        } else {
            p.wait_status(until.saturating_duration_since(Instant::now()))
        };
        let left = p.cleanup();
        if !left.is_empty() {
            tracing::warn!(?left, "compiler left processes or files behind");
        }
        if timed_out || status.is_none() {
            return Err(CompileError::Timeout {
                source_file: source_name.to_path_buf(),
                seconds: self.timeout.as_secs(),
            });
        }
        Ok((status, out.render()))
    }
}
