//! The fault boundary with real processes and real mounts, up to the match and the job: what
//! the host causes (a noexec scratch mount, a proboj program's host-side start failure) is a
//! host error that fails the match and the job as infrastructure; only what the program itself
//! is (not an executable format) is the bot's `start_failure`. (The bot-level cases without a
//! match are in the sandbox's `host_faults` tests.)

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use common::*;
use sandbox::{Bot, BotCommand, CoreTokens, HostError, SandboxConfig, SpawnError};
use sha2::{Digest, Sha256};
use shared::msg::{GameJob, Job, JobFailure, ProgramRef, SeatSpec};
use shared::FaultKind;
use worker::job::{JobRunner, LocalArtifacts};
use worker::referee::{self, MapChoice, MatchSpec, RefereeError, Seat};
use worker::CompileCache;

/// A tmpfs mounted with `opts` at a fresh folder, unmounted (lazily) when dropped, even when
/// the test fails.
pub struct TmpfsMount {
    pub dir: tempfile::TempDir,
}

impl TmpfsMount {
    /// None (with a printed skip) when this process cannot mount.
    pub fn new(opts: &str) -> Option<TmpfsMount> {
        let dir = tempfile::tempdir().ok()?;
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", opts, "tmpfs"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            skip("cannot mount a tmpfs (needs root)");
            return None;
        }
        Some(TmpfsMount { dir })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for TmpfsMount {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

#[test]
fn a_noexec_scratch_mount_is_a_host_error_not_a_start_failure() {
    let Some(mnt) = TmpfsMount::new("noexec,size=64m") else {
        return;
    };
    let tokens = CoreTokens::new(1);
    for cfg in sandboxes() {
        let cfg = SandboxConfig {
            scratch_root: mnt.path().join("scratch"),
            ..cfg
        };
        let err = Bot::spawn(&bot("test", "answer"), &cfg, &tokens, 0).unwrap_err();
        match &err {
            SpawnError::Host {
                source: source @ HostError::Exec { .. },
                ..
            } => assert_eq!(source.raw_os_error(), Some(libc::EACCES), "{err}"),
            other => panic!("{:?}: {other:?}", cfg.mode),
        }
        assert!(err.bot_fault().is_none());
        assert!(err.to_string().contains("noexec"), "{err}");
        assert_eq!(tokens.available(), 1);
        // Nothing is left in the scratch root (folder and lock file are gone).
        let left: Vec<_> = std::fs::read_dir(&cfg.scratch_root)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(left.is_empty(), "{left:?}");

        // The referee fails the match instead of recording a fault.
        let spec = MatchSpec {
            seed: 1,
            seats: vec![
                seat("a", Ok(bot("test", "answer"))),
                seat("b", Ok(bot("test", "answer"))),
            ],
            map: MapChoice::Generated,
        };
        match referee::play(spec, &cfg, &tokens) {
            Err(e @ RefereeError::Host { .. }) => assert!(e.is_host()),
            Err(e) => panic!("{:?}: {e}", cfg.mode),
            Ok(r) => panic!(
                "{:?}: the match was played: {:?}",
                cfg.mode, r.result.faults
            ),
        }

        // And the job is an infrastructure failure, never a result.
        let dir = tempfile::tempdir().unwrap();
        let runner = JobRunner {
            cache: CompileCache::new(dir.path().join("cache"), cfg.clone()).unwrap(),
            sandbox: cfg.clone(),
            tokens: tokens.clone(),
            worker_id: "test/1".into(),
            speed: None,
            js_program: None,
        };
        let mut arts = LocalArtifacts::new();
        let src = repo().join("bots/test/answer.cpp");
        let seats = vec![
            seat_spec(&mut arts, "a", &src),
            seat_spec(&mut arts, "b", &src),
        ];
        let report = runner.execute(&bomberman_job(seats), &arts);
        match report.outcome {
            Err(JobFailure::Infrastructure(why)) => assert!(why.contains("noexec"), "{why}"),
            other => panic!("{:?}: {other:?}", cfg.mode),
        }
    }
}

#[test]
fn a_non_executable_format_is_the_bots_start_failure_in_a_match() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk");
    std::fs::write(&junk, [0x7f, b'E', b'L', b'F', 0, 1, 2, 3]).unwrap();
    std::fs::set_permissions(&junk, std::fs::Permissions::from_mode(0o755)).unwrap();
    let tokens = CoreTokens::new(2);
    for cfg in modes() {
        let spec = MatchSpec {
            seed: 3,
            seats: vec![
                seat("good", Ok(bot("test", "answer"))),
                seat("junk", Ok(BotCommand::new(&junk))),
            ],
            map: MapChoice::Generated,
        };
        let replay = referee::play_with(spec, &cfg, &tokens, long_deadlines())
            .unwrap_or_else(|e| panic!("{:?}: {e}", cfg.mode));
        let faults = &replay.result.faults[1];
        assert_eq!(faults.len(), 1, "{:?}: {faults:?}", cfg.mode);
        assert_eq!(faults[0].kind, FaultKind::StartFailure);
        assert!(faults[0].detail.contains("Exec format error"), "{faults:?}");
        assert!(replay.result.faults[0].is_empty());
    }
}

fn long_deadlines() -> referee::Deadlines {
    referee::Deadlines {
        first: FIRST,
        turn: TURN,
    }
}

fn seat(name: &str, program: Result<BotCommand, shared::Fault>) -> Seat {
    Seat {
        name: name.into(),
        hash: "0".repeat(64),
        program,
    }
}

fn seat_spec(arts: &mut LocalArtifacts, name: &str, path: &Path) -> SeatSpec {
    let sha = hex::encode(Sha256::digest(std::fs::read(path).unwrap()));
    arts.insert(sha.clone(), PathBuf::from(path));
    SeatSpec {
        name: name.into(),
        program: ProgramRef::for_file(&sha, path),
    }
}

fn bomberman_job(seats: Vec<SeatSpec>) -> Job {
    let game = GameJob::Bomberman(shared::msg::BombermanJob {
        seed: 9,
        manifest_digest: String::new(),
        clock: None,
    });
    games::job::job("host-test", 1, seats, game)
}

#[test]
fn proboj_processes_split_host_and_program_start_failures() {
    use sandbox::StartError;
    use worker::proboj::process::{Launch, SandboxedProcess};
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("player");
    std::fs::write(&junk, "not a program").unwrap();
    std::fs::set_permissions(&junk, std::fs::Permissions::from_mode(0o755)).unwrap();
    let launch = |program: &Path| Launch {
        program: program.to_path_buf(),
        args: Vec::new(),
        cwd: dir.path().to_path_buf(),
        read: Vec::new(),
        write: Vec::new(),
        limits: sandbox::Limits::default(),
    };
    let blocker = dir.path().join("a-file");
    std::fs::write(&blocker, "").unwrap();
    for cfg in modes() {
        // The program's own: not an executable format.
        match SandboxedProcess::start(&cfg, &launch(&junk), 0) {
            Err(StartError::Program { source, .. }) => {
                assert_eq!(source.raw_os_error(), Some(libc::ENOEXEC))
            }
            other => panic!("{:?}: {:?}", cfg.mode, other.map(|_| ())),
        }
        // The host's: the scratch root cannot be made (a file is in the way).
        let broken = SandboxConfig {
            scratch_root: blocker.join("scratch"),
            ..cfg.clone()
        };
        let sleeper = launch(Path::new("/bin/true"));
        match SandboxedProcess::start(&broken, &sleeper, 0) {
            Err(StartError::Host(HostError::Io { .. })) => {}
            other => panic!("{:?}: {:?}", cfg.mode, other.map(|_| ())),
        }
    }
}
