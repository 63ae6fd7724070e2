//! The compile cache on a shared, hostile host: a build folder left by a SIGKILLed compile (a
//! real process killed mid-compile) neither breaks later compiles nor stays; two worker
//! processes compiling into one cache both succeed; a cache the sandboxed compiler cannot reach
//! is the host's failure (a known-good canary fails too), never the bot's `compile_failure`.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use sandbox::{SandboxConfig, SandboxMode};
use worker::{CompileCache, CompileError};

const CHILD_ENV: &str = "FARM_TEST_COMPILE_CHILD";

/// A source that takes the compiler a while (the whole standard library at -O2).
const SLOW: &str = "#include <bits/stdc++.h>\nint main() { std::map<int, std::string> m; \
                    m[1] = \"x\"; std::cout << m.size() << std::endl; }\n";

/// Child mode: compile `$FARM_TEST_COMPILE_CHILD` (a source) into the cache `$FARM_TEST_CACHE`
/// with the sandbox mode `$FARM_TEST_MODE`; print `EXE <path>` on success.
#[test]
fn child_entry() {
    let Ok(src) = std::env::var(CHILD_ENV) else {
        return;
    };
    let cache_dir = PathBuf::from(std::env::var("FARM_TEST_CACHE").unwrap());
    let mode = match std::env::var("FARM_TEST_MODE").as_deref() {
        Ok("full") => SandboxMode::Full,
        Ok("unprivileged") => SandboxMode::Unprivileged,
        _ => SandboxMode::Off,
    };
    let cache = CompileCache::new(cache_dir, config(mode)).unwrap();
    let exe = cache.executable_for(Path::new(&src)).unwrap();
    println!("\nEXE {}", exe.display());
}

fn child(src: &Path, cache: &Path, cfg: &SandboxConfig) -> Command {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args(["child_entry", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, src)
        .env("FARM_TEST_CACHE", cache)
        .env("FARM_TEST_MODE", cfg.mode.as_str())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

fn build_folders(cache: &Path) -> Vec<String> {
    std::fs::read_dir(cache)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(".build-"))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_compile_killed_midway_leaves_nothing_that_breaks_later_compiles() {
    let Some(cfg) = strongest() else { return };
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    let src = dir.path().join("slow.cpp");
    std::fs::write(&src, SLOW).unwrap();
    // A leftover of an older worker (pid-derived name, no lock): swept too.
    std::fs::create_dir(cache.join(".build-1-0")).unwrap();

    let mut victim = child(&src, &cache, &cfg).spawn().unwrap();
    let until = Instant::now() + Duration::from_secs(60);
    let fresh = loop {
        let names: Vec<String> = build_folders(&cache)
            .into_iter()
            .filter(|n| n != ".build-1-0" && !n.ends_with(".lock"))
            .collect();
        if !names.is_empty() {
            break names;
        }
        assert!(Instant::now() < until, "no build folder appeared");
        assert!(
            victim.try_wait().unwrap().is_none(),
            "the compile ended early"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    // SIGKILL the worker process mid-compile: its build folder stays behind.
    victim.kill().unwrap();
    victim.wait().unwrap();
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        fresh.iter().all(|n| cache.join(n).exists()),
        "the killed compile's folder is there: {fresh:?}"
    );

    // A new worker opens the cache: the leftovers are swept, and the same source compiles.
    let cache2 = CompileCache::new(cache.clone(), cfg.clone()).unwrap();
    assert!(
        build_folders(&cache).is_empty(),
        "{:?}",
        build_folders(&cache)
    );
    let exe = cache2.executable_for(&src).unwrap();
    let out = Command::new(&exe).output().unwrap();
    assert_eq!(out.stdout, b"1\n");
    assert!(
        build_folders(&cache).is_empty(),
        "{:?}",
        build_folders(&cache)
    );
}

#[test]
fn two_worker_processes_compile_into_one_cache_at_once() {
    let Some(cfg) = strongest() else { return };
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let srcs: Vec<PathBuf> = (0..2)
        .map(|i| {
            let p = dir.path().join(format!("b{i}.cpp"));
            std::fs::write(
                &p,
                format!("#include <cstdio>\nint main() {{ std::puts(\"{i}\"); }}\n"),
            )
            .unwrap();
            p
        })
        .collect();
    // Same source in both (one compiles, one waits on the flock) and different sources.
    for pair in [[&srcs[0], &srcs[0]], [&srcs[0], &srcs[1]]] {
        let kids: Vec<_> = pair
            .iter()
            .map(|s| child(s, &cache, &cfg).spawn().unwrap())
            .collect();
        for (k, src) in kids.into_iter().zip(pair) {
            let out = k.wait_with_output().unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success(),
                "{}: {text}\n{}",
                src.display(),
                String::from_utf8_lossy(&out.stderr)
            );
            let exe = text
                .lines()
                .find_map(|l| l.strip_prefix("EXE "))
                .expect("the child printed its executable");
            let run = Command::new(exe).output().unwrap();
            let want = if *src == srcs[0] { "0\n" } else { "1\n" };
            assert_eq!(String::from_utf8_lossy(&run.stdout), want);
        }
    }
    assert!(
        build_folders(&cache).is_empty(),
        "{:?}",
        build_folders(&cache)
    );
}

#[test]
fn a_cache_the_sandboxed_compiler_cannot_reach_is_the_hosts_failure() {
    let Some(cfg) = sandboxes()
        .into_iter()
        .find(|c| c.effective_mode() == SandboxMode::Full)
    else {
        skip("needs the full sandbox (the compiler runs as a pool uid)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let closed = dir.path().join("closed");
    std::fs::create_dir(&closed).unwrap();
    std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o700)).unwrap();
    let cache = CompileCache::new(closed.join("cache"), cfg).unwrap();
    let src = dir.path().join("hello.cpp");
    std::fs::write(
        &src,
        "#include <cstdio>\nint main() { std::puts(\"hi\"); }\n",
    )
    .unwrap();
    let err = cache.executable_for(&src).unwrap_err();
    assert!(matches!(err, CompileError::Host { .. }), "{err:?}");
    assert!(err.compiler_message().is_none(), "never the bot's: {err}");
    let msg = err.to_string();
    assert!(msg.contains("o+x"), "{msg}");
    assert!(msg.contains(&closed.display().to_string()), "{msg}");
    assert!(msg.contains("--cache-dir"), "{msg}");

    // With the folder opened, a real compile error is the bot's again (canary passes).
    std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o711)).unwrap();
    let broken = dir.path().join("broken.cpp");
    std::fs::write(&broken, "int main() { return undefined_thing; }\n").unwrap();
    let err = cache.executable_for(&broken).unwrap_err();
    let msg = err.compiler_message().expect("the bot's compile error");
    assert!(msg.contains("undefined_thing"), "{msg}");
    // The canary's good result is remembered: a second broken bot does not recompile it.
    let t = Instant::now();
    assert!(cache.check_host().is_ok());
    assert!(t.elapsed() < Duration::from_millis(50), "{:?}", t.elapsed());
    assert!(cache.executable_for(&src).is_ok());
}
