//! The compile cache: content addressing, compile-once under concurrency, compiler messages,
//! and the compile sandbox (a source cannot `#include` secrets or other bots' files).

mod common;

use std::sync::Arc;

use common::*;
use sandbox::SandboxConfig;
use worker::{CompileCache, CompileError};

fn fresh_cache(cfg: SandboxConfig) -> (tempfile::TempDir, CompileCache) {
    let dir = tempfile::tempdir().unwrap();
    let cache = CompileCache::new(dir.path().join("cache"), cfg).unwrap();
    (dir, cache)
}

fn source(dir: &tempfile::TempDir, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    p
}

const HELLO: &str = "#include <cstdio>\nint main() { std::puts(\"1 S 0\"); }\n";

#[test]
fn same_source_same_executable_compiled_once_even_concurrently() {
    for cfg in modes() {
        let (dir, cache) = fresh_cache(cfg.clone());
        let cache = Arc::new(cache);
        let src = source(&dir, "a.cpp", HELLO);
        let copy = source(&dir, "b.cpp", HELLO);
        let threads: Vec<_> = (0..4)
            .map(|i| {
                let (cache, src) = (
                    Arc::clone(&cache),
                    if i % 2 == 0 {
                        src.clone()
                    } else {
                        copy.clone()
                    },
                );
                std::thread::spawn(move || cache.executable_for(&src).unwrap())
            })
            .collect();
        let paths: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        assert!(paths.windows(2).all(|w| w[0] == w[1]), "{paths:?}");
        assert_eq!(cache.compile_count(), 1, "{:?}", cfg.mode);
        let out = std::process::Command::new(&paths[0]).output().unwrap();
        assert_eq!(out.stdout, b"1 S 0\n");
        // The name is the content key, and a different source gets another one.
        assert!(paths[0]
            .to_string_lossy()
            .contains(&cache.key_for(HELLO.as_bytes())));
        assert_ne!(
            cache.key_for(HELLO.as_bytes()),
            cache.key_for(b"int main() {}")
        );
        // No build folder or stray file is left: the executable and its recorded hash.
        let mut names: Vec<String> = std::fs::read_dir(dir.path().join("cache"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| !n.ends_with(".lock"))
            .collect();
        names.sort();
        let key = cache.key_for(HELLO.as_bytes());
        assert_eq!(names, [format!("{key}.bin"), format!("{key}.sha256")]);
    }
}

/// Overwrite `exe` (0555, so make it writable first) in place with `bytes`.
fn overwrite(exe: &std::path::Path, bytes: &[u8]) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(exe, bytes).unwrap();
}

#[test]
fn a_corrupted_cached_executable_is_compiled_again_not_run() {
    let cfg = modes().remove(0);
    let (dir, cache) = fresh_cache(cfg.clone());
    let src = source(&dir, "a.cpp", HELLO);
    let exe = cache.executable_for(&src).unwrap();
    assert_eq!(cache.compile_count(), 1);
    // A hit on the same file compiles nothing.
    assert_eq!(cache.executable_for(&src).unwrap(), exe);
    assert_eq!(cache.compile_count(), 1);
    let run = |exe: &std::path::Path| std::process::Command::new(exe).output().unwrap().stdout;

    // Changed in place (same inode, same size): found and compiled again.
    let len = std::fs::metadata(&exe).unwrap().len() as usize;
    overwrite(&exe, &vec![0u8; len]);
    assert_eq!(cache.executable_for(&src).unwrap(), exe);
    assert_eq!(cache.compile_count(), 2);
    assert_eq!(run(&exe), b"1 S 0\n");

    // Replaced by another file (a rename over it): the same.
    let tmp = exe.with_extension("tmp");
    std::fs::write(&tmp, b"\x7fELF but not really\n").unwrap();
    std::fs::rename(&tmp, &exe).unwrap();
    assert_eq!(cache.executable_for(&src).unwrap(), exe);
    assert_eq!(cache.compile_count(), 3);
    assert_eq!(run(&exe), b"1 S 0\n");

    // Another process (a second cache on the folder) checks before its first use too: a file
    // without its recorded hash (a cache from before the check) is not trusted.
    std::fs::remove_file(exe.with_extension("sha256")).unwrap();
    let other = CompileCache::new(dir.path().join("cache"), cfg).unwrap();
    assert_eq!(other.executable_for(&src).unwrap(), exe);
    assert_eq!(other.compile_count(), 1);
    assert!(exe.with_extension("sha256").is_file());
    assert_eq!(run(&exe), b"1 S 0\n");
    // And a good file is trusted by a fresh cache without a compile.
    let third = CompileCache::new(dir.path().join("cache"), modes().remove(0)).unwrap();
    assert_eq!(third.executable_for(&src).unwrap(), exe);
    assert_eq!(third.compile_count(), 0);
}

#[test]
fn a_compile_error_keeps_the_compilers_message() {
    for cfg in modes() {
        let (dir, cache) = fresh_cache(cfg);
        let src = source(
            &dir,
            "broken.cpp",
            "int main() { return undefined_thing; }\n",
        );
        let err = cache.executable_for(&src).unwrap_err();
        let msg = err.compiler_message().expect("a compiler message");
        assert!(msg.contains("undefined_thing"), "{msg}");
        assert!(msg.contains("error"), "{msg}");
        assert!(matches!(err, CompileError::Compiler { .. }));
    }
}

#[test]
fn a_huge_compiler_message_is_truncated() {
    let (dir, cache) = fresh_cache(SandboxConfig::plain());
    let body: String = (0..3000)
        .map(|i| format!("int f{i}() {{ return nope{i}; }}\n"))
        .collect();
    let src = source(&dir, "noisy.cpp", &body);
    let msg = cache
        .executable_for(&src)
        .unwrap_err()
        .compiler_message()
        .unwrap();
    assert!(
        msg.len() < 2 * worker::compile::MESSAGE_KEEP,
        "{}",
        msg.len()
    );
    assert!(msg.contains("omitted"));
}

#[test]
fn a_missing_source_is_an_io_error_naming_it() {
    let (_dir, cache) = fresh_cache(SandboxConfig::plain());
    let err = cache
        .executable_for(std::path::Path::new("/nonexistent/bot.cpp"))
        .unwrap_err();
    assert!(err.compiler_message().is_none());
    assert!(err.to_string().contains("/nonexistent/bot.cpp"), "{err}");
}

#[test]
fn including_secrets_or_other_bots_does_not_leak_them() {
    let shadow = std::fs::read_to_string("/etc/shadow").unwrap_or_default();
    let secret_line = shadow.lines().next().unwrap_or("root:").to_owned();
    let other_bot = repo().join("bots/test/answer.cpp");
    for cfg in sandboxes() {
        let (dir, cache) = fresh_cache(cfg.clone());
        for target in ["/etc/shadow".to_owned(), other_bot.display().to_string()] {
            let src = source(&dir, "spy.cpp", &format!("#include \"{target}\"\n"));
            let err = cache.executable_for(&src).unwrap_err();
            let msg = err
                .compiler_message()
                .unwrap_or_else(|| panic!("{:?}: {err}", cfg.mode));
            assert!(
                msg.contains("Permission denied") || msg.contains("No such file"),
                "{:?}: {msg}",
                cfg.mode
            );
            assert!(
                secret_line.len() < 6 || !msg.contains(&secret_line),
                "{:?} leaked /etc/shadow: {msg}",
                cfg.mode
            );
            assert!(
                !msg.contains("read_turn"),
                "{:?} leaked another bot: {msg}",
                cfg.mode
            );
        }
    }
}
