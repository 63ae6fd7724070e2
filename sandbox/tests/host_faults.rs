//! The fault boundary of a bot's start with real processes: what the host causes (a program
//! file the farm laid out without exec permission, a script whose interpreter this host lacks)
//! is a host error, never the bot's `start_failure`; and bot folders a dead worker left behind
//! are swept while live ones are kept. (A noexec scratch mount, and what the referee and the
//! job runner make of host errors, are in the worker's `host_faults` tests.)

mod common;

use std::os::unix::fs::PermissionsExt;

use common::*;
use sandbox::{Bot, BotCommand, CoreTokens, SandboxConfig, SpawnError};

#[test]
fn a_program_file_without_exec_permission_is_the_hosts_in_plain_mode() {
    // Plain mode runs the farm's file in place: its modes are the farm's doing.
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("bot");
    std::fs::copy(bot("test", "answer").program, &exe).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o644)).unwrap();
    let tokens = CoreTokens::new(1);
    match Bot::spawn(&BotCommand::new(&exe), &SandboxConfig::plain(), &tokens, 0) {
        Err(SpawnError::Host { source, .. }) => {
            assert_eq!(source.raw_os_error(), Some(libc::EACCES))
        }
        other => panic!("{other:?}"),
    }
    // A directory where the program should be: the host's too.
    match Bot::spawn(
        &BotCommand::new(dir.path()),
        &SandboxConfig::plain(),
        &tokens,
        0,
    ) {
        Err(SpawnError::Host { .. }) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_script_whose_interpreter_is_missing_is_the_hosts() {
    // The worker cannot tell a nonsense interpreter from one this host lacks: the host's.
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("bot.sh");
    std::fs::write(&script, "#!/nonexistent/interpreter\necho hi\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let tokens = CoreTokens::new(1);
    for cfg in modes() {
        match Bot::spawn(&BotCommand::new(&script), &cfg, &tokens, 0) {
            Err(SpawnError::Host { source, .. }) => {
                assert_eq!(source.raw_os_error(), Some(libc::ENOENT), "{source}")
            }
            other => panic!("{:?}: {other:?}", cfg.mode),
        }
    }
}

#[test]
fn bot_folders_left_by_a_dead_worker_are_swept_live_ones_kept() {
    let tokens = CoreTokens::new(1);
    for cfg in modes() {
        let root = tempfile::tempdir().unwrap();
        let cfg = SandboxConfig {
            scratch_root: root.path().to_path_buf(),
            ..cfg
        };
        // A dead worker's folder: its lock file exists but nobody holds the lock (any pid
        // namespace, any container: a flock dies with its holder).
        let dead = root.path().join("bot-0123456789abcdef0123456789abcdef");
        std::fs::create_dir_all(dead.join("scratch")).unwrap();
        std::fs::write(
            root.path()
                .join("bot-0123456789abcdef0123456789abcdef.lock"),
            "",
        )
        .unwrap();
        // Something else in the root is not ours to remove.
        std::fs::create_dir(root.path().join("1234-0")).unwrap();
        let b = Bot::spawn(&bot("test", "answer"), &cfg, &tokens, 0).unwrap();
        assert!(
            !dead.exists(),
            "{:?}: the dead folder was not swept",
            cfg.mode
        );
        assert!(root.path().join("1234-0").exists());
        let live: Vec<String> = std::fs::read_dir(root.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("bot-") && !n.ends_with(".lock"))
            .collect();
        assert_eq!(live.len(), 1, "{live:?}");
        assert_eq!(live[0].len(), "bot-".len() + 32, "{live:?}");
        assert!(b.finish().leftovers.is_empty());
        assert!(!root.path().join(&live[0]).exists());
    }
}
