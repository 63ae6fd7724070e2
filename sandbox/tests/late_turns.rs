//! A turn that runs past its limit explains itself in its timing (`TurnTiming::late`): how
//! much of its wall time the bot's main thread was on a core, waiting for one, or neither, and
//! what its threads were doing when the deadline passed. Checked for the three ways a turn can
//! be late without the bot computing: asleep, stopped by a signal from outside (what a stale
//! process-group signal did), and a turn in time (no breakdown at all).

mod common;

use std::time::Duration;

use common::*;
use sandbox::timing::LateTurn;
use sandbox::{Bot, CoreTokens, TurnTiming};

/// The timing of the last turn of a finished bot.
fn last_turn(b: Bot) -> TurnTiming {
    let report = b.finish();
    assert!(report.leftovers.is_empty(), "{:?}", report.leftovers);
    report.timing.per_turn.last().cloned().expect("a turn")
}

/// The breakdown of a bot's last turn, which timed out with `f`.
fn late_of_timeout(b: Bot, f: &shared::Fault) -> LateTurn {
    assert_eq!(f.kind, shared::FaultKind::Timeout, "{f:?}");
    let t = last_turn(b);
    assert!(!t.met, "{t:?}");
    t.late
        .clone()
        .unwrap_or_else(|| panic!("no breakdown: {t:?}"))
}

#[test]
fn a_sleeping_bot_is_seen_asleep() {
    for cfg in modes() {
        let tokens = CoreTokens::new(1);
        let mut b = Bot::spawn(&with_args(bot("test", "slow"), &["400"]), &cfg, &tokens, 0)
            .expect("starts");
        let f = b
            .exchange(0, &turn_input(0), Duration::from_millis(150))
            .expect_err("400 ms of sleep is past 150 ms");
        let late = late_of_timeout(b, &f);
        assert!(late.main_cpu_us < 50_000, "{:?}: {late:?}", cfg.mode);
        assert!(late.idle_us >= 100_000, "{:?}: {late:?}", cfg.mode);
        assert!(
            late.states
                .iter()
                .any(|s| s.starts_with('S') && s.contains("sleep")),
            "{:?}: {late:?}",
            cfg.mode
        );
        assert!(late.charged_us >= 150_000, "{late:?}");
    }
}

#[test]
fn a_bot_stopped_from_outside_is_seen_stopped() {
    for cfg in modes() {
        let tokens = CoreTokens::new(1);
        let mut b = Bot::spawn(&with_args(bot("test", "slow"), &["200"]), &cfg, &tokens, 0)
            .expect("starts");
        let pid = b.pid().expect("pid");
        let stopper = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(60));
            // SAFETY: a signal to the test's own bot process (pid > 0).
            unsafe { libc::kill(pid, libc::SIGSTOP) };
        });
        let f = b
            .exchange(0, &turn_input(0), Duration::from_millis(600))
            .expect_err("a stopped bot never answers");
        stopper.join().expect("stopper");
        let late = late_of_timeout(b, &f);
        assert!(
            late.states.first().is_some_and(|s| s.starts_with('T')),
            "{:?}: {late:?}",
            cfg.mode
        );
        assert!(late.idle_us >= 500_000, "{:?}: {late:?}", cfg.mode);
    }
}

#[test]
fn a_turn_in_time_has_no_breakdown() {
    for cfg in modes() {
        let tokens = CoreTokens::new(1);
        let mut b = Bot::spawn(&bot("test", "answer"), &cfg, &tokens, 0).expect("starts");
        b.exchange(0, &turn_input(0), deadline(0)).expect("answers");
        let t = last_turn(b);
        assert!(t.met && t.late.is_none(), "{:?}: {t:?}", cfg.mode);
    }
}
