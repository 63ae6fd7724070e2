//! Turning roster entries into runnable bots on this host: `.cpp` sources go through the
//! worker's compile cache, executables are used as they are; plus the sandbox settings and core
//! tokens every local match shares.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use sha2::{Digest, Sha256};

use worker::bot::{BotCommand, CoreTokens, SandboxConfig};
use worker::compile::{CompileCache, CompileError};

use crate::roster::Entry;

/// Command-line settings for local bot execution.
#[derive(Args, Debug, Clone)]
pub struct SandboxArgs {
    /// Folder for compiled bots (content-addressed; safe to share between runs).
    /// Default: $FARM_CACHE_DIR, else /var/cache/matchfarm as root (the sandboxed compiler's
    /// uid must be able to reach it), else $XDG_CACHE_HOME/matchfarm or ~/.cache/matchfarm.
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// How many bots may think at once on this host (default: number of cores).
    #[arg(long, value_name = "N")]
    pub cores: Option<usize>,
}

/// Why a bot could not be made runnable.
#[derive(Debug, thiserror::Error)]
pub enum PrepError {
    #[error("bot {name:?} does not compile:\n{message}")]
    Compile { name: String, message: String },
    #[error("bot {name:?}: {source}")]
    Other {
        name: String,
        #[source]
        source: CompileError,
    },
}

/// Everything needed to start bots on this host.
pub struct BotPrep {
    cache: CompileCache,
    sandbox: SandboxConfig,
    tokens: CoreTokens,
}

impl BotPrep {
    pub fn new(args: &SandboxArgs) -> Result<BotPrep> {
        let dir = args.cache_dir.clone().unwrap_or_else(default_cache_dir);
        let sandbox = SandboxConfig::default();
        tracing::info!(mode = %sandbox.describe(), "bot sandbox");
        let cache = CompileCache::new(dir.join("compile"), sandbox.clone())
            .with_context(|| format!("opening the compile cache in {}", dir.display()))?;
        let tokens = match args.cores {
            Some(n) if n > 0 => CoreTokens::new(n),
            Some(_) => anyhow::bail!("--cores must be positive"),
            None => CoreTokens::default_for_host(),
        };
        Ok(BotPrep {
            cache,
            sandbox,
            tokens,
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
                    None => PrepError::Other {
                        name: entry.name.clone(),
                        source: e,
                    },
                })?
        } else {
            entry.program.clone()
        };
        Ok(BotCommand {
            program,
            args: Vec::new(),
        })
    }

    /// Hand the cache, sandbox settings and tokens to a job runner.
    pub fn into_runner(self, worker_id: String) -> worker::job::JobRunner {
        worker::job::JobRunner {
            cache: self.cache,
            sandbox: self.sandbox,
            tokens: self.tokens,
            worker_id,
        }
    }

    pub fn sandbox(&self) -> &SandboxConfig {
        &self.sandbox
    }

    pub fn tokens(&self) -> &CoreTokens {
        &self.tokens
    }
}

/// The default folder for caches.
pub fn default_cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("FARM_CACHE_DIR") {
        return PathBuf::from(d);
    }
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
    Ok(hex::encode(Sha256::digest(&bytes)))
}
