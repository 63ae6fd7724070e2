//! Helpers shared by the worker's tests: the bots of `bots/` compiled through the compile
//! cache, plus the sandbox tests' `support` (the modes this host can run, skips, the
//! checkout's root, the test deadlines, a check that no process is left).
#![allow(dead_code)]

#[path = "../../../sandbox/tests/common/support.rs"]
mod support;

use std::path::PathBuf;
use std::sync::OnceLock;

use sandbox::{BotCommand, SandboxMode};
use worker::CompileCache;

pub use support::*;

/// One cache for the whole test binary (and across runs: it lives in the target dir).
pub fn cache() -> &'static CompileCache {
    static CACHE: OnceLock<CompileCache> = OnceLock::new();
    CACHE.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bot-cache");
        CompileCache::new(dir, config(SandboxMode::Auto)).expect("compile cache")
    })
}

/// `bots/<folder>/<name>.cpp` compiled.
pub fn bot(folder: &str, name: &str) -> BotCommand {
    let src = repo().join("bots").join(folder).join(format!("{name}.cpp"));
    let exe = cache()
        .executable_for(&src)
        .unwrap_or_else(|e| panic!("{}: {e}", src.display()));
    BotCommand::new(exe)
}
