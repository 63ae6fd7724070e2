//! The worker's self-test: before it takes a job, a worker proves it can run a bot here, through
//! the real compile cache and the real sandbox, so that a broken host (a noexec /tmp, an
//! unreachable cache, no compiler, a sandbox layer that cannot be set up) is reported once, to
//! the operator, with what to fix, instead of as a fault of every bot.
//!
//! Steps: the scratch root is creatable, writable and not on a noexec mount (statvfs
//! ST_NOEXEC); the compile cache is writable; a tiny C++ bot (reads a line, answers it) is
//! compiled through the cache (which also runs the host canary); it is spawned through the real
//! [`Bot`] path with the configured sandbox, answers one line correctly, is finished, and
//! nothing of it is left. Sets `farm_worker_self_test_ok` / `_seconds` and the sandbox-mode
//! gauge.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sandbox::{Bot, BotCommand, CoreTokens, HostSupport, SandboxConfig, SandboxMode, SpawnError};

use crate::compile::{CompileCache, CompileError};

/// The bot the self-test compiles and runs.
const ECHO_BOT: &str = "#include <iostream>\n#include <string>\nint main() {\n  std::string s;\n  \
                        while (std::getline(std::cin, s)) std::cout << \"echo \" << s << std::endl;\n}\n";

/// The speed signature's bot: per input line, a fixed chain of 2,000,000 xorshift steps (no
/// memory traffic, nothing the compiler can fold), then the low bits as the answer.
const BENCH_BOT: &str = "#include <cstdint>\n#include <cstdio>\nint main() {\n  char line[64];\n  \
                         while (std::fgets(line, sizeof line, stdin)) {\n    std::uint64_t x = \
                         88172645463325252ull ^ (unsigned char)line[0];\n    for (int i = 0; i < \
                         2000000; i++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; }\n    \
                         std::printf(\"%llu\\n\", (unsigned long long)(x & 1023));\n    \
                         std::fflush(stdout);\n  }\n}\n";

/// Turns the speed signature times (the first is a warm-up and not counted).
const BENCH_TURNS: u32 = 21;

/// What a passed self-test found.
#[derive(Debug, Clone)]
pub struct SelfTestReport {
    /// The sandbox mode in force (`Auto` resolved).
    pub mode: SandboxMode,
    /// `SandboxConfig::describe()`: everything the sandbox enforces.
    pub sandbox: String,
    pub elapsed: Duration,
    /// The speed signature: reference bot-turns per second through the real sandbox (the
    /// median of 20 timed turns of a fixed CPU-bound bot; higher is faster).
    pub speed: f64,
}

impl std::fmt::Display for SelfTestReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "self-test passed in {:.2} s: speed {:.1} reference turns/s; compiled and ran a bot \
             under sandbox mode {} ({})",
            self.elapsed.as_secs_f64(),
            self.speed,
            self.mode.as_str(),
            self.sandbox
        )
    }
}

/// What is wrong with this host, and how to fix it.
#[derive(Debug, thiserror::Error)]
pub enum SelfTestError {
    #[error(
        "the scratch folder {} cannot be used ({what}: {source}): make it writable for the worker \
         or set FARM_SCRATCH_DIR (--scratch-dir) to a writable folder on an exec filesystem",
        dir.display()
    )]
    Scratch {
        dir: PathBuf,
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{} is mounted noexec (the scratch folder {} is on it), so bots cannot run from there: \
         mount it with exec (compose: `tmpfs: - /tmp:exec,size=512m`; podman/docker: \
         `--tmpfs /tmp:rw,exec,size=512m`) or set FARM_SCRATCH_DIR (--scratch-dir) to a folder \
         on an exec filesystem",
        mount.display(), dir.display()
    )]
    ScratchNoexec { dir: PathBuf, mount: PathBuf },
    #[error(
        "the compile cache {} is not writable ({source}): make it writable for the worker or \
         pick --cache-dir elsewhere",
        dir.display()
    )]
    CacheUnwritable {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{} is mounted noexec (the compile cache {} is on it) and the sandbox is off, so bots \
         run from the cache in place: mount it with exec or pick --cache-dir on an exec \
         filesystem",
        mount.display(), dir.display()
    )]
    CacheNoexec { dir: PathBuf, mount: PathBuf },
    #[error(
        "the uid lease folder {} cannot be used ({source}): create it (writable for the worker) \
         or set FARM_UID_LEASE_DIR (--uid-lease-dir); every worker of a host must share it",
        dir.display()
    )]
    UidLeaseDir {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "the worker's folder {} cannot be used ({source}): make it writable for the worker or \
         pick another --scratch",
        dir.display()
    )]
    WorkerFolder {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("g++ not found or not runnable ({0}): install g++ (Debian: `apt-get install g++`)")]
    NoCompiler(String),
    #[error("compiling the self-test bot failed: {0}")]
    Compile(#[source] CompileError),
    #[error("the self-test bot could not start: {0}")]
    Spawn(#[source] SpawnError),
    #[error(
        "the self-test bot ran but {0}: the sandbox ({1}) breaks ordinary programs on this host"
    )]
    Run(String, String),
    #[error(
        "the self-test bot left things behind after it ended: {0}; the sandbox cannot clean up \
         on this host (cgroups? pid namespaces?)"
    )]
    Leftovers(String),
}

/// Run the self-test (see the module docs). Sets the self-test and sandbox-mode metrics.
pub fn run(
    cache: &CompileCache,
    sandbox: &SandboxConfig,
    tokens: &CoreTokens,
) -> Result<SelfTestReport, SelfTestError> {
    let started = Instant::now();
    let metrics = crate::metrics::global();
    crate::metrics::init_sandbox_mode(sandbox);
    let result = steps(cache, sandbox, tokens);
    let elapsed = started.elapsed();
    metrics.self_test_seconds.set(elapsed.as_secs_f64());
    metrics.self_test_ok.set(i64::from(result.is_ok()));
    let speed = result?;
    metrics.speed.set(speed);
    Ok(SelfTestReport {
        mode: sandbox.effective_mode(),
        sandbox: sandbox.describe(),
        elapsed,
        speed,
    })
}

/// The checks, then the speed signature (reference turns per second).
fn steps(
    cache: &CompileCache,
    sandbox: &SandboxConfig,
    tokens: &CoreTokens,
) -> Result<f64, SelfTestError> {
    let mode = sandbox.effective_mode();
    // Sandboxed bots run from a copy in the scratch root; plain ones from the cache in place.
    check_scratch(&sandbox.scratch_root, mode != SandboxMode::Off)?;
    if mode == SandboxMode::Off && on_noexec(cache.dir()) {
        return Err(SelfTestError::CacheNoexec {
            dir: cache.dir().to_path_buf(),
            mount: mount_point(cache.dir()),
        });
    }
    if mode == SandboxMode::Full && HostSupport::get().root {
        let dir = &sandbox.uid_lock_dir;
        std::fs::create_dir_all(dir)
            .and_then(|()| probe_write(dir))
            .map_err(|source| SelfTestError::UidLeaseDir {
                dir: dir.clone(),
                source,
            })?;
    }
    probe_write(cache.dir()).map_err(|source| SelfTestError::CacheUnwritable {
        dir: cache.dir().to_path_buf(),
        source,
    })?;

    let src_dir = tempfile::Builder::new()
        .prefix("farm-selftest-")
        .tempdir()
        .map_err(|source| SelfTestError::Scratch {
            dir: std::env::temp_dir(),
            what: "a folder for the test source",
            source,
        })?;
    let src = src_dir.path().join("selftest.cpp");
    std::fs::write(&src, ECHO_BOT).map_err(|source| SelfTestError::Scratch {
        dir: src_dir.path().to_path_buf(),
        what: "writing the test source",
        source,
    })?;
    let exe = cache.executable_for(&src).map_err(|e| match e {
        CompileError::NoCompiler(why) => SelfTestError::NoCompiler(why),
        other => SelfTestError::Compile(other),
    })?;
    // The bot path compiles rarely; the canary is what tells whether the cache works for the
    // sandboxed compiler even when the test bot was already cached.
    cache.check_host().map_err(SelfTestError::Compile)?;

    let describe = || sandbox.describe();
    let mut bot =
        Bot::spawn(&BotCommand::new(exe), sandbox, tokens, 0).map_err(SelfTestError::Spawn)?;
    let answer = bot.exchange(0, b"ping 42\n", Duration::from_secs(10));
    let report = bot.finish();
    match answer {
        Ok(line) if line == b"echo ping 42" => {}
        Ok(line) => {
            return Err(SelfTestError::Run(
                format!(
                    "answered {:?} instead of \"echo ping 42\"",
                    String::from_utf8_lossy(&line)
                ),
                describe(),
            ))
        }
        Err(f) => {
            return Err(SelfTestError::Run(
                format!(
                    "did not answer ({}: {}; its stderr: {:?})",
                    f.kind.as_str(),
                    f.detail,
                    report.stderr_tail
                ),
                describe(),
            ))
        }
    }
    if !report.leftovers.is_empty() {
        return Err(SelfTestError::Leftovers(report.leftovers.join("; ")));
    }
    speed_signature(cache, sandbox, tokens, src_dir.path())
}

/// Compile [`BENCH_BOT`] through the cache, play [`BENCH_TURNS`] turns with it through the
/// real sandbox (with a core token, as a match's bot), and return 1 / the median turn's wall
/// time: what a bot of this host gets done per second, as a match would see it.
fn speed_signature(
    cache: &CompileCache,
    sandbox: &SandboxConfig,
    tokens: &CoreTokens,
    dir: &Path,
) -> Result<f64, SelfTestError> {
    let src = dir.join("speed.cpp");
    std::fs::write(&src, BENCH_BOT).map_err(|source| SelfTestError::Scratch {
        dir: dir.to_path_buf(),
        what: "writing the speed bot's source",
        source,
    })?;
    let exe = cache.executable_for(&src).map_err(SelfTestError::Compile)?;
    let mut bot =
        Bot::spawn(&BotCommand::new(exe), sandbox, tokens, 0).map_err(SelfTestError::Spawn)?;
    let mut times = Vec::with_capacity(BENCH_TURNS as usize);
    for turn in 0..BENCH_TURNS {
        let t0 = Instant::now();
        let answer = bot.exchange(turn, b"turn\n", Duration::from_secs(10));
        let took = t0.elapsed();
        if let Err(f) = answer {
            let report = bot.finish();
            return Err(SelfTestError::Run(
                format!(
                    "the speed bot did not answer turn {turn} ({}: {}; its stderr: {:?})",
                    f.kind.as_str(),
                    f.detail,
                    report.stderr_tail
                ),
                sandbox.describe(),
            ));
        }
        if turn > 0 {
            times.push(took.as_secs_f64());
        }
    }
    let report = bot.finish();
    if !report.leftovers.is_empty() {
        return Err(SelfTestError::Leftovers(report.leftovers.join("; ")));
    }
    Ok(speed_from(&mut times))
}

/// 1 / the median of turn times (seconds); 0 when there are none.
fn speed_from(times: &mut [f64]) -> f64 {
    times.sort_by(f64::total_cmp);
    match times.get(times.len() / 2) {
        Some(&median) if median > 0.0 => 1.0 / median,
        _ => 0.0,
    }
}

/// Is this host still fit to play, after a match failed on its side? The folders the worker
/// owns (the sandbox's scratch root, the compile cache, `more`: e.g. its artifact cache) exist
/// or can be made again, are writable and, where bots run from them, not noexec. Cheap: no bot
/// is compiled or run.
pub fn host_fit(
    cache: &CompileCache,
    sandbox: &SandboxConfig,
    more: &[&Path],
) -> Result<(), SelfTestError> {
    let mode = sandbox.effective_mode();
    check_scratch(&sandbox.scratch_root, mode != SandboxMode::Off)?;
    for dir in more {
        std::fs::create_dir_all(dir)
            .and_then(|()| probe_write(dir))
            .map_err(|source| SelfTestError::WorkerFolder {
                dir: dir.to_path_buf(),
                source,
            })?;
    }
    std::fs::create_dir_all(cache.dir())
        .and_then(|()| probe_write(cache.dir()))
        .map_err(|source| SelfTestError::CacheUnwritable {
            dir: cache.dir().to_path_buf(),
            source,
        })
}

/// The scratch root exists (or can be made), is writable and (when bots run from it) is not on
/// a noexec mount.
fn check_scratch(dir: &Path, runs_bots: bool) -> Result<(), SelfTestError> {
    let err = |what, source| SelfTestError::Scratch {
        dir: dir.to_path_buf(),
        what,
        source,
    };
    std::fs::create_dir_all(dir).map_err(|e| err("creating it", e))?;
    probe_write(dir).map_err(|e| err("writing a file in it", e))?;
    let st = nix::sys::statvfs::statvfs(dir).map_err(|e| err("statvfs", e.into()))?;
    if runs_bots && st.flags().contains(nix::sys::statvfs::FsFlags::ST_NOEXEC) {
        return Err(SelfTestError::ScratchNoexec {
            dir: dir.to_path_buf(),
            mount: mount_point(dir),
        });
    }
    Ok(())
}

/// Whether `dir` is on a noexec mount (false when that cannot be told).
fn on_noexec(dir: &Path) -> bool {
    nix::sys::statvfs::statvfs(dir)
        .is_ok_and(|st| st.flags().contains(nix::sys::statvfs::FsFlags::ST_NOEXEC))
}

/// Create and remove a file in `dir`.
fn probe_write(dir: &Path) -> std::io::Result<()> {
    let f = tempfile::Builder::new()
        .prefix(".farm-probe-")
        .tempfile_in(dir)?;
    f.close()
}

/// The mount point `dir` lives on (the longest matching entry of /proc/self/mounts).
fn mount_point(dir: &Path) -> PathBuf {
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    mounts
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .map(|m| PathBuf::from(m.replace("\\040", " ")))
        .filter(|m| dir.starts_with(m))
        .max_by_key(|m| m.as_os_str().len())
        .unwrap_or(dir)
}

#[cfg(test)]
mod tests {
    use super::speed_from;

    #[test]
    fn the_speed_is_one_over_the_median_turn() {
        assert_eq!(speed_from(&mut [0.5, 0.01, 0.02, 0.03, 9.0]), 1.0 / 0.03);
        assert_eq!(speed_from(&mut []), 0.0);
        assert_eq!(speed_from(&mut [0.0]), 0.0);
    }
}
