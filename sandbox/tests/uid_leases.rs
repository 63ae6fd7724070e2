//! Distinct host uids across worker processes: two real worker processes (this test binary
//! re-executed), each with its own scratch root (as two containers have their own /tmp) but
//! one shared uid lease folder, run a fork-hog bot each at the same time. They never share a
//! uid, so RLIMIT_NPROC (per uid, host-wide) of one cannot make the other's fork() fail.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use sandbox::{Bot, BotCommand, CoreTokens, SandboxConfig, SandboxMode};

const CHILD_ENV: &str = "FARM_TEST_UID_CHILD";
/// Children each bot forks (each bot also counts itself); the limit is `Limits::processes` (32).
const FORKS: usize = 24;
/// A pool nobody else uses (other tests use the default 60001..).
const UID_BASE: u32 = 61700;

/// Reads a line, forks FORKS children that sleep, answers "uid <uid> forked <ok>".
const HOG: &str = r#"#include <cstdio>
#include <iostream>
#include <string>
#include <unistd.h>
int main() {
  std::string s;
  std::getline(std::cin, s);
  int ok = 0;
  for (int i = 0; i < FORKS; i++) {
    pid_t p = fork();
    if (p == 0) { sleep(60); _exit(0); }
    if (p > 0) ok++;
  }
  std::cout << "uid " << getuid() << " forked " << ok << std::endl;
  std::getline(std::cin, s);
}
"#;

/// Child mode: one worker. Spawn the hog under a Full sandbox with scratch root
/// `$FARM_TEST_SCRATCH` and uid lease folder `$FARM_TEST_UIDS`, wait for the sibling at the
/// barrier folder `$FARM_TEST_BARRIER`, exchange, wait again (both hogs' children alive), end.
#[test]
fn child_entry() {
    let Ok(role) = std::env::var(CHILD_ENV) else {
        return;
    };
    let var = |k: &str| PathBuf::from(std::env::var(k).unwrap());
    let (exe, barrier) = (var("FARM_TEST_EXE"), var("FARM_TEST_BARRIER"));
    let cfg = SandboxConfig {
        mode: SandboxMode::Full,
        scratch_root: var("FARM_TEST_SCRATCH"),
        uid_lock_dir: var("FARM_TEST_UIDS"),
        uid_base: UID_BASE,
        uid_count: 4,
        ..SandboxConfig::default()
    };
    let tokens = CoreTokens::new(1);
    let mut bot = Bot::spawn(&BotCommand::new(exe), &cfg, &tokens, 0).unwrap();
    meet(&barrier, &role, "spawned");
    let line = bot.exchange(0, b"go\n", Duration::from_secs(20)).unwrap();
    println!("\nANSWER {}", String::from_utf8_lossy(&line));
    meet(&barrier, &role, "forked");
    let report = bot.finish();
    assert!(report.leftovers.is_empty(), "{:?}", report.leftovers);
}

/// Mark `role` at `step` and wait until both roles are there.
fn meet(barrier: &Path, role: &str, step: &str) {
    std::fs::write(barrier.join(format!("{step}-{role}")), "").unwrap();
    let until = Instant::now() + Duration::from_secs(60);
    while ["a", "b"]
        .iter()
        .any(|r| !barrier.join(format!("{step}-{r}")).exists())
    {
        assert!(
            Instant::now() < until,
            "the other worker never reached {step}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn two_worker_processes_sharing_the_lease_folder_never_share_a_uid() {
    if let Some(why) = sandbox_unavailable(SandboxMode::Full) {
        skip(&format!("full mode: {why}"));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("hog.cpp");
    std::fs::write(&src, HOG.replace("FORKS", &FORKS.to_string())).unwrap();
    let exe = compile(&src);
    let uids = dir.path().join("uids");
    let barrier = dir.path().join("barrier");
    std::fs::create_dir(&barrier).unwrap();
    let kids: Vec<_> = ["a", "b"]
        .iter()
        .map(|role| {
            Command::new(std::env::current_exe().unwrap())
                .args(["child_entry", "--exact", "--nocapture", "--test-threads=1"])
                .env(CHILD_ENV, role)
                .env("FARM_TEST_EXE", &exe)
                .env(
                    "FARM_TEST_SCRATCH",
                    dir.path().join(format!("scratch-{role}")),
                )
                .env("FARM_TEST_UIDS", &uids)
                .env("FARM_TEST_BARRIER", &barrier)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut answers = Vec::new();
    for k in kids {
        let out = k.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let answer = text
            .lines()
            .find_map(|l| l.strip_prefix("ANSWER "))
            .expect("an answer")
            .to_owned();
        let words: Vec<&str> = answer.split_whitespace().collect();
        let (uid, forked): (u32, usize) = (words[1].parse().unwrap(), words[3].parse().unwrap());
        answers.push((uid, forked));
    }
    assert_ne!(answers[0].0, answers[1].0, "{answers:?}");
    for (uid, forked) in &answers {
        assert!((UID_BASE..UID_BASE + 4).contains(uid), "{answers:?}");
        assert_eq!(*forked, FORKS, "a bot could not fork: {answers:?}");
    }
}
