//! Turning roster entries into runnable bots on this host: `.cpp` sources go through the
//! worker's compile cache, executables are checked to be executable files and used as they are;
//! plus the sandbox settings and core tokens every local match shares. [`BotPrep::check_roster`]
//! is the up-front check `farm run` makes before its first match (as the reference run.py
//! compiles every entrant first): a bot whose source does not compile is told apart from a host
//! that cannot compile anything, because only the first is the bot's fault.

use std::collections::HashMap;
use std::num::NonZeroUsize;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use sandbox::{BotCommand, CoreTokens, SandboxConfig};
use worker::compile::{CompileCache, CompileError};

use crate::roster::Entry;

/// How bots run on this host (filled by the commands from their flags): the compile cache's
/// folder, how many bots may think at once (None: one per core) and the sandbox settings.
#[derive(Debug, Clone)]
pub struct HostSettings {
    pub cache_dir: PathBuf,
    pub cores: Option<NonZeroUsize>,
    pub sandbox: SandboxConfig,
}

/// Why a bot could not be made runnable.
#[derive(Debug, thiserror::Error)]
pub enum PrepError {
    /// The bot's own fault: its source does not compile (or not in time).
    #[error("bot {name:?} does not compile:\n{message}")]
    Compile { name: String, message: String },
    /// The program is not something this host can execute (and it is not a `.cpp` source).
    #[error(
        "program of bot {name:?} ({}) is not an executable file ({why}); make it executable \
         (chmod +x) or give its .cpp source",
        program.display()
    )]
    NotExecutable {
        name: String,
        program: PathBuf,
        why: String,
    },
    /// Not the bot's fault: this host could not compile it (no compiler, sandbox, disk, a
    /// toolchain that fails even a trivial program).
    #[error(
        "could not compile bot {name:?} because of a problem on this host, not in the bot: \
         {source}\nto fix: {}",
        host_hint(source)
    )]
    Host {
        name: String,
        #[source]
        source: CompileError,
    },
}

/// What an operator can do about a compile failure that is the host's, not the bot's.
fn host_hint(e: &CompileError) -> &'static str {
    match e {
        CompileError::NoCompiler(_) => {
            "install g++ so that /usr/bin/g++ or /usr/local/bin/g++ exists (e.g. apt-get install g++), then run again"
        }
        CompileError::Io { .. } => {
            "check that the compile cache folder (--cache-dir, FARM_CACHE_DIR) is writable and its disk has room, then run again"
        }
        CompileError::Sandbox(_) => {
            "the sandbox could not start the compiler on this host: check the 'bot sandbox' log line for the mode in force, run as root or on a kernel with landlock and seccomp, then run again"
        }
        _ => {
            "the C++ toolchain here cannot build even a trivial program: repair or reinstall g++ and its standard library headers (libstdc++), then run again"
        }
    }
}

/// A roster entry whose `.cpp` source does not compile: the bot's fault.
#[derive(Debug, Clone, thiserror::Error)]
#[error("bot {name:?} ({}) does not compile:\n{message}", program.display())]
pub struct NotCompiled {
    pub name: String,
    pub program: PathBuf,
    /// The compiler's output (bounded), or why the compile was cut short.
    pub message: String,
}

/// Everything needed to start bots on this host.
pub struct BotPrep {
    cache: CompileCache,
    sandbox: SandboxConfig,
    tokens: CoreTokens,
    /// The speed signature of the last passed self-test, given to the runner.
    speed: std::sync::Mutex<Option<f64>>,
}

impl BotPrep {
    pub fn new(host: &HostSettings) -> Result<BotPrep> {
        let dir = &host.cache_dir;
        let sandbox = host.sandbox.clone();
        worker::metrics::init_sandbox_mode(&sandbox);
        tracing::info!(mode = %sandbox.describe(), "bot sandbox");
        let cache = CompileCache::new(dir.join("compile"), sandbox.clone())
            .map_err(|e| anyhow::anyhow!("{e}\nto fix: {}", host_hint(&e)))
            .with_context(|| format!("opening the compile cache in {}", dir.display()))?;
        let tokens = match host.cores {
            Some(n) => CoreTokens::new(n.get()),
            None => CoreTokens::default_for_host(),
        };
        Ok(BotPrep {
            cache,
            sandbox,
            tokens,
            speed: std::sync::Mutex::new(None),
        })
    }

    /// A runnable command for the entry (compiling a `.cpp` source if needed).
    pub fn prepare(&self, entry: &Entry) -> Result<BotCommand, PrepError> {
        let program = if entry.is_source() {
            self.cache
                .executable_for(&entry.program)
                .map_err(|e| match e.compiler_message() {
                    Some(msg) => PrepError::Compile {
                        name: entry.name.clone(),
                        message: msg.to_string(),
                    },
                    None => PrepError::Host {
                        name: entry.name.clone(),
                        source: e,
                    },
                })?
        } else {
            check_executable(entry)?;
            entry.program.clone()
        };
        Ok(BotCommand {
            program,
            args: Vec::new(),
        })
    }

    /// Make every entry runnable before a tournament: each distinct `.cpp` source (by its
    /// sha256, `hashes[i]` for `entries[i]`) is compiled once through the compile cache under
    /// the sandbox, each other program must be an executable file. Returns the entries whose
    /// source does not compile, in roster order (copies of one source are each listed); a host
    /// problem or a program that is not executable is an error, whatever the caller allows.
    pub fn check_roster(
        &self,
        entries: &[Entry],
        hashes: &[String],
    ) -> Result<Vec<NotCompiled>, PrepError> {
        let mut by_hash: HashMap<&str, Option<String>> = HashMap::new();
        let mut out = Vec::new();
        for (entry, hash) in entries.iter().zip(hashes) {
            let failed = match by_hash.get(hash.as_str()) {
                Some(known) if entry.is_source() => known.clone(),
                _ => {
                    let failed = match self.prepare(entry) {
                        Ok(_) => None,
                        Err(PrepError::Compile { message, .. }) => {
                            Some(message.trim_end().to_string())
                        }
                        Err(other) => return Err(other),
                    };
                    if entry.is_source() {
                        by_hash.insert(hash, failed.clone());
                    }
                    failed
                }
            };
            if let Some(message) = failed {
                out.push(NotCompiled {
                    name: entry.name.clone(),
                    program: entry.program.clone(),
                    message,
                });
            }
        }
        Ok(out)
    }

    /// Hand the cache, sandbox settings and tokens to a job runner.
    pub fn into_runner(self, worker_id: String) -> worker::job::JobRunner {
        worker::job::JobRunner {
            cache: self.cache,
            sandbox: self.sandbox,
            tokens: self.tokens,
            worker_id,
            speed: self.speed.into_inner().ok().flatten(),
            js_program: None,
        }
    }

    pub fn sandbox(&self) -> &SandboxConfig {
        &self.sandbox
    }

    /// Compile and play a tiny bot through the real sandbox, scratch and cache as configured:
    /// proof that this host can run bots. The error says what is wrong and how to fix it.
    pub fn self_test(&self) -> Result<worker::selftest::SelfTestReport> {
        let report =
            worker::selftest::run(&self.cache, &self.sandbox, &self.tokens).map_err(|e| {
                anyhow::anyhow!("self-test failed: this host cannot run bots as configured: {e}")
            })?;
        if let Ok(mut s) = self.speed.lock() {
            *s = Some(report.speed);
        }
        Ok(report)
    }

    pub fn tokens(&self) -> &CoreTokens {
        &self.tokens
    }
}

/// An executable that is not a `.cpp` source must be a regular file with an execute bit.
fn check_executable(entry: &Entry) -> Result<(), PrepError> {
    let refuse = |why: String| PrepError::NotExecutable {
        name: entry.name.clone(),
        program: entry.program.clone(),
        why,
    };
    let meta = std::fs::metadata(&entry.program).map_err(|e| refuse(e.to_string()))?;
    if !meta.is_file() {
        return Err(refuse("not a regular file".to_string()));
    }
    let mode = meta.permissions().mode();
    if mode & 0o111 == 0 {
        return Err(refuse(format!("mode {:o}, no execute bit", mode & 0o7777)));
    }
    Ok(())
}

/// The default folder for caches (when --cache-dir / FARM_CACHE_DIR is not given).
pub fn default_cache_dir() -> PathBuf {
    if nix::unistd::geteuid().is_root() {
        return PathBuf::from("/var/cache/matchfarm");
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(d).join("matchfarm");
    }
    if let Some(h) = std::env::var_os("HOME") {
        return PathBuf::from(h).join(".cache/matchfarm");
    }
    PathBuf::from(".farm-cache")
}

/// sha256 (hex) of a file's bytes: the bot hash recorded in results.
pub fn file_sha256(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(shared::manifest::sha256_hex(&bytes))
}
