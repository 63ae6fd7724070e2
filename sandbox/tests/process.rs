//! Plain process faults, in every sandbox mode this host supports: each misbehaving bot gets
//! the right fault on the right turn while a well-behaved bot next to it plays on, and no
//! process of either survives.

mod common;

use std::os::unix::fs::PermissionsExt;

use common::*;
use sandbox::{Bot, BotCommand, CoreTokens, SandboxConfig, SpawnError};
use shared::FaultKind;

fn expect_fault(bad: &BotCommand, kind: FaultKind, turn: u32) {
    for cfg in modes() {
        let pair = play_pair(bad, &cfg, 4);
        let fault = pair
            .fault
            .unwrap_or_else(|| panic!("{:?}: no fault; answers {:?}", cfg.mode, pair.bad_answers));
        assert_eq!(
            (fault.kind, fault.turn),
            (kind, turn),
            "{:?}: {fault:?}\nstderr: {}",
            cfg.mode,
            pair.bad.stderr_tail
        );
        assert_eq!(pair.good.timing.turns, 4);
        assert_eq!(pair.good.timing.deadline_misses, 0);
    }
}

#[test]
fn answerer_plays_every_turn() {
    for cfg in modes() {
        let pair = play_pair(&bot("test", "answer"), &cfg, 6);
        assert!(pair.fault.is_none(), "{:?}: {:?}", cfg.mode, pair.fault);
        assert_eq!(pair.bad_answers.len(), 6);
        let t = &pair.bad.timing;
        assert_eq!((t.turns, t.deadline_misses, t.per_turn.len()), (6, 0, 6));
        assert!(t.per_turn.iter().all(|p| p.met && p.wall_us > 0), "{t:?}");
    }
}

#[test]
fn sleeper_times_out() {
    expect_fault(
        &with_args(bot("test", "sleeper"), &["2"]),
        FaultKind::Timeout,
        2,
    );
}

#[test]
fn crasher_crashes() {
    for cfg in modes() {
        let pair = play_pair(&bot("test", "crasher"), &cfg, 3);
        let f = pair.fault.expect("a fault");
        assert_eq!(
            (f.kind, f.turn),
            (FaultKind::Crash, 1),
            "{:?}: {f:?}",
            cfg.mode
        );
        assert!(f.detail.contains("SIGSEGV"), "{f:?}");
    }
}

#[test]
fn garbage_is_bad_output() {
    expect_fault(&bot("test", "garbage"), FaultKind::BadOutput, 1);
}

#[test]
fn early_answer_is_early_output() {
    expect_fault(&bot("test", "early"), FaultKind::EarlyOutput, 0);
}

#[test]
fn exit_is_exit() {
    for cfg in modes() {
        let pair = play_pair(&with_args(bot("test", "exiter"), &["3"]), &cfg, 5);
        let f = pair.fault.expect("a fault");
        assert_eq!(
            (f.kind, f.turn),
            (FaultKind::Exit, 3),
            "{:?}: {f:?}",
            cfg.mode
        );
        assert!(f.detail.contains("status 3"), "{f:?}");
    }
}

#[test]
fn a_faulted_bot_keeps_its_fault() {
    let tokens = CoreTokens::new(1);
    let mut b = Bot::spawn(&bot("test", "crasher"), &SandboxConfig::plain(), &tokens, 0).unwrap();
    b.exchange(0, &turn_input(0), FIRST).unwrap();
    let first = b.exchange(1, &turn_input(1), TURN).unwrap_err();
    let again = b.exchange(2, &turn_input(2), TURN).unwrap_err();
    assert_eq!(
        (first.kind, again.kind, again.turn),
        (FaultKind::Crash, FaultKind::Crash, 2)
    );
    assert!(b.finish().leftovers.is_empty());
}

#[test]
fn an_unrunnable_program_is_a_start_failure_a_missing_one_the_hosts() {
    let tokens = CoreTokens::new(1);
    for cfg in modes() {
        // The program path comes from the cache / artifact store: its absence is the host's.
        let missing = BotCommand::new("/nonexistent/bot");
        match Bot::spawn(&missing, &cfg, &tokens, 0).unwrap_err() {
            e @ SpawnError::Host { .. } => assert!(e.to_string().contains("/nonexistent/bot")),
            other => panic!(
                "{:?}: a missing program is not the bot's: {other:?}",
                cfg.mode
            ),
        }

        // An executable file that is not a program the kernel can run (ENOEXEC): the bot's.
        let dir = tempfile::tempdir().unwrap();
        let text = dir.path().join("not-a-program.txt");
        std::fs::write(&text, "hello").unwrap();
        std::fs::set_permissions(&text, std::fs::Permissions::from_mode(0o755)).unwrap();
        let f = match Bot::spawn(&BotCommand::new(&text), &cfg, &tokens, 0).unwrap_err() {
            SpawnError::Bot(f) => f,
            other => panic!("{:?}: {other:?}", cfg.mode),
        };
        assert_eq!(f.kind, FaultKind::StartFailure, "{:?}", cfg.mode);
        assert!(f.detail.contains("execve"), "{:?}: {f:?}", cfg.mode);
        assert!(
            f.detail.contains("Exec format error"),
            "{:?}: {f:?}",
            cfg.mode
        );
        // The token came back.
        assert_eq!(tokens.available(), 1);
    }
}

#[test]
fn pondering_between_turns_gets_no_cpu() {
    for cfg in modes() {
        let tokens = CoreTokens::new(2);
        let mut b = Bot::spawn(&bot("test", "ponder"), &cfg, &tokens, 0).unwrap();
        for t in 0..4 {
            b.exchange(t, &turn_input(t), deadline(t)).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(150));
        }
        let report = b.finish();
        let pondered: Vec<u64> = report
            .stderr_tail
            .lines()
            .filter_map(|l| l.strip_prefix("ponder_cpu_us ")?.parse().ok())
            .collect();
        assert_eq!(pondered.len(), 3, "{}", report.stderr_tail);
        // Between turns it was stopped for 3 x 150 ms; only the moments between its answer and
        // the stop (a loaded host may delay the worker's SIGSTOP a little) slip through.
        assert!(
            pondered.iter().sum::<u64>() < 90_000,
            "{:?}: pondered {pondered:?} µs",
            cfg.mode
        );
    }
}

#[test]
fn without_stops_a_bot_ponders() {
    // The control for the test above: the same bot, not stopped between turns, does burn CPU.
    let cfg = SandboxConfig {
        stop_between_turns: false,
        ..SandboxConfig::plain()
    };
    let tokens = CoreTokens::new(2);
    let mut b = Bot::spawn(&bot("test", "ponder"), &cfg, &tokens, 0).unwrap();
    for t in 0..3 {
        b.exchange(t, &turn_input(t), deadline(t)).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(150));
    }
    let report = b.finish();
    let total: u64 = report
        .stderr_tail
        .lines()
        .filter_map(|l| l.strip_prefix("ponder_cpu_us ")?.parse::<u64>().ok())
        .sum();
    assert!(
        total > 30_000,
        "pondered only {total} µs in 300 ms: {}",
        report.stderr_tail
    );
}

#[test]
fn stderr_is_kept_bounded() {
    let tokens = CoreTokens::new(1);
    let cfg = SandboxConfig {
        stderr_keep: 64,
        ..SandboxConfig::plain()
    };
    let mut b = Bot::spawn(&bot("test", "ponder"), &cfg, &tokens, 0).unwrap();
    for t in 0..30 {
        b.exchange(t, &turn_input(t), deadline(t)).unwrap();
    }
    let r = b.finish();
    assert!(r.stderr_bytes > 64, "{}", r.stderr_bytes);
    assert!(
        r.stderr_tail.contains("bytes of stderr omitted"),
        "{}",
        r.stderr_tail
    );
    assert!(r.stderr_tail.len() < 200);
}

/// Whether `pid` has ended (gone, or a zombie waiting to be reaped).
fn ended(pid: i32) -> bool {
    matches!(state(pid), None | Some('Z'))
}

/// A match's end kills all its bots first (`Bot::kill`) and then finishes each: the kill alone
/// ends every bot, one stopped between turns and one pondering included, and the finish that
/// follows still reaps, removes and finds nothing left.
#[test]
fn killing_every_bot_first_ends_them_and_finish_leaves_nothing() {
    for cfg in modes() {
        let tokens = CoreTokens::new(2);
        let mut bots: Vec<Bot> = ["answer", "ponder", "answer"]
            .iter()
            .enumerate()
            .map(|(seat, name)| Bot::spawn(&bot("test", name), &cfg, &tokens, seat).unwrap())
            .collect();
        for b in &mut bots {
            b.exchange(0, &turn_input(0), deadline(0)).unwrap();
        }
        let pids: Vec<i32> = bots.iter().map(|b| b.pid().unwrap()).collect();
        for b in &bots {
            b.kill();
        }
        let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !pids.iter().all(|&p| ended(p)) {
            assert!(
                std::time::Instant::now() < until,
                "{:?}: bots {pids:?} still run 10 s after kill()",
                cfg.mode
            );
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        for b in bots {
            let r = b.finish();
            assert!(r.leftovers.is_empty(), "{:?}: {:?}", cfg.mode, r.leftovers);
            assert_eq!(r.timing.turns, 1, "{:?}", cfg.mode);
        }
        for pid in pids {
            assert!(!exists(pid), "{:?}: process {pid} survived", cfg.mode);
            assert!(!exists(-pid), "{:?}: group {pid} survived", cfg.mode);
        }
    }
}
