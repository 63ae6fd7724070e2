//! The worker self-test on this host: it passes with the real sandbox; with the scratch root on
//! a real noexec tmpfs, or with a compile cache the sandboxed compiler cannot reach, it fails
//! with a message that says what is wrong and how to fix it. The metrics follow.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::*;
use sandbox::{CoreTokens, SandboxConfig, SandboxMode};
use worker::selftest::{self, SelfTestError};
use worker::CompileCache;

/// A tmpfs mounted noexec at a fresh folder, unmounted when dropped (even on a failed test).
struct NoexecTmpfs(tempfile::TempDir);

impl NoexecTmpfs {
    fn new() -> Option<Self> {
        let dir = tempfile::tempdir().ok()?;
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "noexec,size=64m", "tmpfs"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            skip("cannot mount a tmpfs (needs root)");
            return None;
        }
        Some(NoexecTmpfs(dir))
    }

    fn path(&self) -> &Path {
        self.0.path()
    }
}

impl Drop for NoexecTmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(self.0.path())
            .status();
    }
}

fn cache_in(dir: &Path, cfg: &SandboxConfig) -> CompileCache {
    CompileCache::new(dir.to_path_buf(), cfg.clone()).unwrap()
}

/// One test, run in sequence: the self-test metrics are process-wide.
#[test]
fn self_test_passes_here_and_names_what_to_fix_when_it_cannot() {
    let m = worker::metrics::global();
    let tokens = CoreTokens::new(1);
    let mut cfgs = sandboxes();
    cfgs.push(SandboxConfig::plain());
    for cfg in &cfgs {
        let dir = tempfile::tempdir().unwrap();
        let cfg = SandboxConfig {
            scratch_root: dir.path().join("scratch"),
            ..cfg.clone()
        };
        let cache = cache_in(&dir.path().join("cache"), &cfg);
        let report =
            selftest::run(&cache, &cfg, &tokens).unwrap_or_else(|e| panic!("{:?}: {e}", cfg.mode));
        assert_eq!(report.mode, cfg.effective_mode());
        assert!(report.to_string().contains(cfg.effective_mode().as_str()));
        assert_eq!(m.self_test_ok.get(), 1);
        assert!(m.self_test_seconds.get() > 0.0);
        let mode = m
            .sandbox_mode
            .with_label_values(&[cfg.effective_mode().as_str()])
            .get();
        assert_eq!(mode, 1);
        // Nothing of the test bot is left in the scratch root.
        let left: Vec<_> = std::fs::read_dir(&cfg.scratch_root)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }

    // The scratch root on a real noexec mount.
    if let Some(mnt) = NoexecTmpfs::new() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = SandboxConfig {
            scratch_root: mnt.path().join("matchfarm-scratch"),
            ..strongest().unwrap_or_else(SandboxConfig::plain)
        };
        let cache = cache_in(&dir.path().join("cache"), &cfg);
        let err = selftest::run(&cache, &cfg, &tokens).unwrap_err();
        assert!(
            matches!(err, SelfTestError::ScratchNoexec { .. }),
            "{err:?}"
        );
        let msg = err.to_string();
        assert!(msg.contains("noexec"), "{msg}");
        assert!(msg.contains("FARM_SCRATCH_DIR"), "{msg}");
        assert!(msg.contains(&mnt.path().display().to_string()), "{msg}");
        assert_eq!(m.self_test_ok.get(), 0);
    }

    // A cache the sandboxed compiler (a pool uid) cannot reach.
    if let Some(cfg) = sandboxes()
        .into_iter()
        .find(|c| c.effective_mode() == SandboxMode::Full)
    {
        let dir = tempfile::tempdir().unwrap();
        let closed = dir.path().join("closed");
        std::fs::create_dir(&closed).unwrap();
        std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o700)).unwrap();
        let cfg = SandboxConfig {
            scratch_root: dir.path().join("scratch"),
            ..cfg
        };
        let cache = cache_in(&closed.join("cache"), &cfg);
        let err = selftest::run(&cache, &cfg, &tokens).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, SelfTestError::Compile(_)), "{err:?}");
        assert!(msg.contains("cannot create files in"), "{msg}");
        assert!(msg.contains("o+x") && msg.contains("--cache-dir"), "{msg}");
        assert_eq!(m.self_test_ok.get(), 0);
    } else {
        skip("full mode unavailable: the unreachable-cache case needs pool uids");
    }
}
