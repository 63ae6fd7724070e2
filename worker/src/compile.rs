//! The compile cache: a `.cpp` bot becomes an executable once per (source sha256, compiler
//! identity, flags), compiled by `g++ -std=c++20 -O2` inside the same kind of sandbox as bots
//! (no network, the source as a read-only copy, time / memory / output limits), so a source
//! that `#include`s a secret cannot leak it. Concurrent requests for one key compile once
//! (an in-process lock per key plus a flock for other processes) and the result appears by
//! atomic rename.
//!
//! Whose fault is a failed compile? When the compiler rejects a source, a tiny known-good
//! canary is compiled the same way (same sandbox, cache folder and TMPDIR arrangement). If the
//! canary fails too, the host is broken (e.g. the sandboxed compiler's uid cannot reach the
//! cache folder): [`CompileError::Host`], never the bot's `compile_failure`. A passing canary is
//! remembered for [`CANARY_TTL`], so a tournament of broken bots does not pay for it per match.
//!
//! A cached executable is trusted only while it is the file that was compiled: its sha256 is
//! written beside it (`<key>.sha256`, before the executable appears) and checked before first
//! use and again whenever the file's identity (inode, size, mtime, ctime) changes. A file that
//! no longer matches (a bad disk, a stray process, a cache from before the check) is removed
//! and compiled again, so a host's broken cache never becomes a bot's start failure.
//!
//! Build folders are `.build-<random hex>` guarded by a flock (`sandbox::folder`): unique across
//! containers sharing the cache volume, and a folder left by a killed compile is swept (at open
//! and then now and then) instead of blocking later compiles.

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sandbox::capture::HeadTail;
use sandbox::fdio::{self, PollFd};
use sandbox::folder::{self, LockedDir};
use sandbox::lock::FsPolicy;
use sandbox::prepare::{self, Spec};
use sandbox::{Limits, SandboxConfig, StartError};
use sha2::{Digest, Sha256};

/// The flags every bot is compiled with (as the seed does).
pub const FLAGS: [&str; 2] = ["-std=c++20", "-O2"];
/// Bytes of compiler output kept in a `CompileError`.
pub const MESSAGE_KEEP: usize = 8 * 1024;
/// How long a passing canary compile vouches for the host.
pub const CANARY_TTL: Duration = Duration::from_secs(60);
/// The known-good source compiled to tell a broken host from a broken bot.
const CANARY: &str = "#include <iostream>\n#include <string>\nint main() { std::string s; \
                      std::getline(std::cin, s); std::cout << s << std::endl; }\n";
/// Prefix of build folders in the cache.
const BUILD_PREFIX: &str = ".build-";
/// How often a busy cache re-sweeps for abandoned build folders.
const SWEEP_EVERY: Duration = Duration::from_secs(60);

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
    Sandbox(#[from] StartError),
    /// The compiler failed on a known-good canary too: the host is broken, not the bot.
    #[error(
        "the compile host is broken (a known-good program does not compile either): {message}"
    )]
    Host { message: String },
}

impl CompileError {
    /// The bot's own fault (its source does not compile in time): the message for the operator.
    /// `None` for failures of the worker (I/O, no compiler, sandbox, a broken host).
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
    /// When the canary last compiled (it vouches for the host for `CANARY_TTL`).
    canary_ok: Mutex<Option<Instant>>,
    /// The pool uid of the last compiler run (0: none), for host diagnostics.
    last_uid: AtomicU64,
    /// Cached executables whose content was checked, by key: the file identity it had then.
    verified: Mutex<HashMap<String, Stamp>>,
}

/// What identifies one version of a file: any write or replacement changes it (ctime cannot be
/// set back from user space).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    fn of(meta: &std::fs::Metadata) -> Stamp {
        Stamp {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        }
    }
}

/// How one run of the compiler went.
struct Run {
    /// Wait status; None if it had to be killed.
    status: Option<i32>,
    /// stdout + stderr, bounded.
    output: String,
    /// The pool uid it ran under, if any.
    uid: Option<u32>,
}

impl CompileCache {
    /// A cache in `dir` (created if missing) compiling under `cfg`'s sandbox mode.
    pub fn new(dir: PathBuf, cfg: SandboxConfig) -> Result<Self, CompileError> {
        std::fs::create_dir_all(&dir).map_err(|source| CompileError::Io {
            what: "cache folder",
            path: dir.clone(),
            source,
        })?;
        let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755));
        let swept = folder::sweep(&dir, BUILD_PREFIX);
        if swept > 0 {
            tracing::warn!(swept, cache = %dir.display(), "removed abandoned build folders");
        }
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
            canary_ok: Mutex::new(None),
            last_uid: AtomicU64::new(0),
            verified: Mutex::new(HashMap::new()),
        })
    }

    /// How many times this cache ran the compiler (cache hits do not count).
    pub fn compile_count(&self) -> u64 {
        self.compiles.load(Ordering::Relaxed)
    }

    /// The cache folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The sandbox the compiler runs in.
    pub fn sandbox(&self) -> &SandboxConfig {
        &self.cfg
    }

    /// The compiler identity that is part of every key (path, version, target).
    pub fn compiler_identity(&self) -> &str {
        &self.identity
    }

    /// The cache key of a source text.
    pub fn key_for(&self, source: &[u8]) -> String {
        let mut h = Sha256::new();
        h.update(shared::manifest::sha256_hex(source));
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
        if self.cached(&key, &exe) {
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
        // Released when the file is closed. A lock that cannot be taken only risks a second
        // compile of the same key (the result appears by atomic rename either way).
        let _ = fdio::lock_exclusive(&lock_file);
        if self.cached(&key, &exe) {
            crate::metrics::global().compile_hits.inc();
            return Ok(exe);
        }
        self.compiles.fetch_add(1, Ordering::Relaxed);
        let started = Instant::now();
        let compiled = match self.compile(source, &text, Some(&exe)) {
            Err(e @ CompileError::Compiler { .. }) => Err(self.blame(e)),
            other => other,
        };
        crate::metrics::global().compiled(started.elapsed().as_secs_f64(), compiled.is_ok());
        compiled?;
        Ok(exe)
    }

    /// Whether `exe` is in the cache and still the file that was compiled for `key`. A file that
    /// does not match its recorded sha256 (or has none) is removed, to be compiled again.
    fn cached(&self, key: &str, exe: &Path) -> bool {
        let Ok(meta) = std::fs::metadata(exe) else {
            return false;
        };
        if !meta.is_file() {
            return false;
        }
        let stamp = Stamp::of(&meta);
        let mut verified = self.verified.lock().unwrap_or_else(|e| e.into_inner());
        if verified.get(key) == Some(&stamp) {
            return true;
        }
        let recorded = std::fs::read_to_string(self.dir.join(format!("{key}.sha256")));
        let actual = std::fs::read(exe).map(|b| shared::manifest::sha256_hex(&b));
        match (recorded, actual) {
            (Ok(recorded), Ok(actual)) if recorded.trim() == actual => {
                verified.insert(key.to_owned(), stamp);
                true
            }
            (recorded, actual) => {
                let recorded = recorded.unwrap_or_else(|e| format!("none ({e})"));
                let actual = actual.unwrap_or_else(|e| format!("unreadable ({e})"));
                tracing::error!(
                    exe = %exe.display(),
                    recorded = recorded.trim(),
                    actual = %actual,
                    "a cached executable is not the file that was compiled; compiling it again"
                );
                crate::metrics::global().compile_cache_corrupt.inc();
                verified.remove(key);
                let _ = std::fs::remove_file(exe);
                false
            }
        }
    }

    /// A compiler error is the bot's only if the canary still compiles on this host.
    fn blame(&self, bots: CompileError) -> CompileError {
        match self.check_host() {
            Ok(()) => bots,
            Err(host) => {
                tracing::error!(error = %host, "compile host check failed; not the bot's fault");
                host
            }
        }
    }

    /// Compile the known-good canary the way bots are compiled (result remembered for
    /// [`CANARY_TTL`] when good). `Err` is always a host error ([`CompileError::compiler_message`]
    /// is `None`) whose message says what is wrong and how to fix it.
    pub fn check_host(&self) -> Result<(), CompileError> {
        let fresh = |t: &Option<Instant>| t.is_some_and(|t| t.elapsed() < CANARY_TTL);
        if fresh(&self.canary_ok.lock().unwrap_or_else(|e| e.into_inner())) {
            return Ok(());
        }
        let canary = Path::new("canary.cpp");
        match self.compile(canary, CANARY.as_bytes(), None) {
            Ok(()) => {
                *self.canary_ok.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
                Ok(())
            }
            Err(CompileError::Compiler { message, .. }) => Err(CompileError::Host {
                message: self.diagnose(&message),
            }),
            Err(CompileError::Timeout { seconds, .. }) => Err(CompileError::Host {
                message: format!(
                    "compiling a trivial program took longer than {seconds} s: the host is \
                     overloaded or the compiler hangs"
                ),
            }),
            Err(other) => Err(other),
        }
    }

    /// What the canary's failure says about the host, and how to fix it.
    fn diagnose(&self, output: &str) -> String {
        let uid = self.last_uid.load(Ordering::Relaxed);
        if uid != 0 {
            let uid = uid as u32;
            // The compiler runs as a pool uid: every folder above the cache must let it pass.
            let blocked = self.dir.ancestors().find_map(|a| {
                let m = std::fs::metadata(a).ok()?;
                let reachable = if m.uid() == uid {
                    m.mode() & 0o100 != 0
                } else {
                    m.mode() & 0o001 != 0
                };
                (!reachable).then(|| (a.to_path_buf(), m.mode() & 0o7777))
            });
            if let Some((folder, mode)) = blocked {
                return format!(
                    "the sandboxed compiler (uid {uid}) cannot create files in {}: {} (mode \
                     {mode:o}) does not let it through; make every folder above the cache \
                     reachable (chmod o+x {}) or pick --cache-dir elsewhere. Compiler said: {}",
                    self.dir.display(),
                    folder.display(),
                    folder.display(),
                    first_lines(output)
                );
            }
            return format!(
                "the sandboxed compiler (uid {uid}) fails on a known-good program in {}: check \
                 that the cache folder is writable and reachable by that uid and that the \
                 compiler works (g++ installed with its headers). Compiler said: {}",
                self.dir.display(),
                first_lines(output)
            );
        }
        format!(
            "the compiler fails on a known-good program in {}: check that g++ and its headers \
             are installed and that the cache folder is writable. Compiler said: {}",
            self.dir.display(),
            first_lines(output)
        )
    }

    /// Compile `text` in a fresh build folder; with `exe`, move the result there.
    fn compile(
        &self,
        source_name: &Path,
        text: &[u8],
        exe: Option<&Path>,
    ) -> Result<(), CompileError> {
        let io = |what, path: &Path| {
            let path = path.to_path_buf();
            move |source| CompileError::Io { what, path, source }
        };
        let swept = folder::sweep_now_and_then(&self.dir, BUILD_PREFIX, SWEEP_EVERY);
        if swept > 0 {
            tracing::warn!(swept, cache = %self.dir.display(), "removed abandoned build folders");
        }
        let locked =
            LockedDir::create(&self.dir, BUILD_PREFIX).map_err(io("build folder in", &self.dir))?;
        let build = locked.path().to_path_buf();
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
            let run = self.run(&spec, source_name)?;
            self.last_uid
                .store(run.uid.map_or(0, u64::from), Ordering::Relaxed);
            let ok = run
                .status
                .is_some_and(|st| libc::WIFEXITED(st) && libc::WEXITSTATUS(st) == 0);
            if !ok || !out.is_file() {
                let message = run.output.replace(&build.display().to_string(), "");
                return Err(CompileError::Compiler {
                    source_file: source_name.to_path_buf(),
                    message,
                });
            }
            std::os::unix::fs::chown(&out, Some(0), Some(0)).ok();
            std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o555))
                .map_err(io("chmod", &out))?;
            let Some(exe) = exe else { return Ok(()) };
            // The hash is in place before the executable appears, so a reader never finds an
            // executable of this compile without it.
            let bytes = std::fs::read(&out).map_err(io("read back", &out))?;
            let hash_tmp = build.join("bot.sha256");
            std::fs::write(&hash_tmp, shared::manifest::sha256_hex(&bytes))
                .map_err(io("hash file", &hash_tmp))?;
            let hash = exe.with_extension("sha256");
            std::fs::rename(&hash_tmp, &hash).map_err(io("rename into cache", &hash))?;
            std::fs::rename(&out, exe).map_err(io("rename into cache", exe))
        })();
        if let Some(left) = locked.remove() {
            tracing::warn!(%left, "build folder not removed");
        }
        result
    }

    /// Run the compiler to completion.
    fn run(&self, spec: &Spec, source_name: &Path) -> Result<Run, CompileError> {
        let mut p = prepare::start(&self.cfg, spec)?;
        let uid = p.uid();
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
            let mut pfds = [0, 1].map(|i| PollFd::readable(if open[i] { fds[i] } else { -1 }));
            let wait = Duration::from_millis(left.as_millis().clamp(1, 1000) as u64);
            let _ = fdio::poll(&mut pfds, wait);
            for (i, pfd) in pfds.iter().enumerate() {
                if !pfd.ready() {
                    continue;
                }
                let mut buf = [0u8; 8192];
                match fdio::read(fds[i], &mut buf) {
                    Ok(0) => open[i] = false,
                    Ok(n) => out.push(&buf[..n]),
                    Err(e) if e.kind() != std::io::ErrorKind::WouldBlock => open[i] = false,
                    Err(_) => {}
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
        Ok(Run {
            status,
            output: out.render(),
            uid,
        })
    }
}

/// The first few lines of compiler output (for a one-paragraph message).
fn first_lines(s: &str) -> String {
    let lines: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).take(3).collect();
    if lines.is_empty() {
        "(nothing)".into()
    } else {
        lines.join(" | ")
    }
}
