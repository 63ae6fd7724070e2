//! JavaScript bots that attack the host rather than play (issue 22): code stuck in a QuickJS
//! built-in that never checks for interrupts, in `onTurn` and at the top level, is stopped at
//! its limit as that bot's timeout and the next match on the same host plays normally; an error
//! the bot throws under the name `InternalError` is an error, a real out-of-memory stays memory.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use games::qianwang::{verify, EndReason, MatchRecord, RuntimeKind, Side};
use worker::qianwang::{check_code, play_match, BotSource, JsHost, Limits, LoadError, KILL_GRACE};

/// The JavaScript child these run their bots in (the worker crate's copy of `farm __js-bot`).
fn host() -> JsHost {
    JsHost {
        program: env!("CARGO_BIN_EXE_qianwang-js-host").into(),
        sandbox: sandbox::SandboxConfig::default(),
    }
}

const RANDOM: &str = include_str!("../../bots/qianwang/random.js");

/// Loops for good inside one built-in call: QuickJS never calls the interrupt handler there.
const STUCK: &str = "Array.prototype.reverse.call({ length: 2 ** 53 - 1 });";

/// Slack for a loaded machine on top of a limit and the kill grace.
const SLACK: Duration = Duration::from_secs(5);

/// Runs `f` on its own thread and fails the test if it takes longer than `limit`.
fn within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit)
        .unwrap_or_else(|_| panic!("not stopped within {limit:?}: the host is stuck"))
}

fn play(black: &str, red: &str, limits: Limits, budget: Duration) -> (MatchRecord, Duration) {
    let (black, red) = (BotSource::new("b", black), BotSource::new("r", red));
    let t0 = Instant::now();
    let rec = within(budget, move || {
        play_match(&host(), &black, &red, 7, &limits)
    });
    verify(&rec)
        .unwrap_or_else(|e| panic!("record does not verify: {e}\n{}", rec.to_json_pretty()));
    (rec, t0.elapsed())
}

/// A normal match afterwards: the host is fine.
fn next_match_plays_normally() {
    let (rec, _) = play(RANDOM, RANDOM, Limits::default(), Duration::from_secs(60));
    assert!(
        !matches!(
            rec.outcome.reason,
            EndReason::Runtime | EndReason::Error | EndReason::Illegal
        ),
        "{:?}",
        rec.outcome
    );
    assert!(rec.plies.len() > 2, "{}", rec.plies.len());
}

#[test]
fn a_builtin_that_never_checks_for_interrupts_in_on_turn_is_the_bots_timeout() {
    let limits = Limits {
        move_ms: 300,
        ..Limits::default()
    };
    let code = format!(
        "module.exports = function (me, opponent, game) {{\n\
         if (game.turnNumber < 3) return game.legalMoves[0];\n{STUCK}\nreturn null; }};"
    );
    let budget = Duration::from_millis(300) + KILL_GRACE + SLACK;
    let (rec, took) = play(&code, RANDOM, limits, budget);
    assert_eq!(
        (rec.outcome.winner, rec.outcome.reason, rec.outcome.runtime),
        (
            Some(Side::Red),
            EndReason::Runtime,
            Some(RuntimeKind::Timeout)
        ),
        "{:?}",
        rec.outcome
    );
    assert_eq!(rec.outcome.turn, 3, "{:?}", rec.outcome);
    assert!(
        rec.outcome.detail.contains("300 ms"),
        "{}",
        rec.outcome.detail
    );
    assert!(took >= Duration::from_millis(300), "{took:?}");
    // The issue's bot as given (stuck at once) loses as red too, at its first turn.
    let issue = format!("module.exports = function () {{ {STUCK} return null; }};");
    let (rec, _) = play(RANDOM, &issue, limits, budget);
    assert_eq!(
        (rec.outcome.winner, rec.outcome.runtime, rec.outcome.turn),
        (Some(Side::Black), Some(RuntimeKind::Timeout), 2),
        "{:?}",
        rec.outcome
    );
    next_match_plays_normally();
}

#[test]
fn the_same_call_at_the_top_level_is_a_timeout_at_load() {
    let limits = Limits {
        load_ms: 300,
        ..Limits::default()
    };
    let code =
        format!("{STUCK}\nmodule.exports = function (m, o, g) {{ return g.legalMoves[0]; }};");
    let budget = Duration::from_millis(300) + KILL_GRACE + SLACK;
    let checked = code.clone();
    let t0 = Instant::now();
    let loaded = within(budget, move || check_code(&host(), &checked, &limits));
    assert_eq!(loaded, Err(LoadError::Timeout { ms: 300 }));
    assert!(
        t0.elapsed() >= Duration::from_millis(300),
        "{:?}",
        t0.elapsed()
    );
    let (rec, _) = play(&code, RANDOM, limits, budget);
    assert_eq!(
        (rec.outcome.winner, rec.outcome.runtime, rec.outcome.turn),
        (Some(Side::Red), Some(RuntimeKind::Timeout), 1),
        "{:?}",
        rec.outcome
    );
    assert!(
        rec.outcome.detail.contains("cannot be loaded") && rec.outcome.detail.contains("300 ms"),
        "{}",
        rec.outcome.detail
    );
    next_match_plays_normally();
}

#[test]
fn an_error_the_bot_names_internal_error_is_a_thrown_error() {
    let throws = [
        "const e = new Error('x'); e.name = 'InternalError'; throw e;",
        "const e = new Error('out of memory'); e.name = 'InternalError'; throw e;",
        "throw new InternalError('out of memory');",
        "const e = new InternalError('out of memory'); delete e.stack; throw e;",
    ];
    for body in throws {
        let code = format!("module.exports = function () {{ {body} }};");
        let (rec, _) = play(&code, RANDOM, Limits::default(), Duration::from_secs(30));
        assert_eq!(
            (rec.outcome.winner, rec.outcome.reason, rec.outcome.runtime),
            (Some(Side::Red), EndReason::Error, None),
            "{body}: {:?}",
            rec.outcome
        );
        assert!(
            rec.outcome.detail.contains("InternalError"),
            "{body}: {}",
            rec.outcome.detail
        );
        // The same at load: a thrown error, not memory.
        let at_load = format!("{body}\nmodule.exports = function () {{}};");
        match check_code(&host(), &at_load, &Limits::default()) {
            Err(LoadError::Threw { message }) => assert!(message.contains("InternalError")),
            other => panic!("{body}: {other:?}"),
        }
    }
}

#[test]
fn a_real_out_of_memory_stays_memory() {
    let limits = Limits {
        memory_bytes: 16 << 20,
        ..Limits::default()
    };
    let bombs = [
        // Plain, and caught then thrown on as it was.
        "const a = []; for (;;) a.push(new Array(100000).fill(1));",
        "const a = []; try { for (;;) a.push(new Array(100000).fill(1)); } catch (e) { a.length = 0; throw e; }",
        // One allocation far over the limit.
        "new ArrayBuffer(256 * 1024 * 1024);",
    ];
    for body in bombs {
        let code = format!("module.exports = function () {{ {body} }};");
        let (rec, _) = play(&code, RANDOM, limits, Duration::from_secs(30));
        assert_eq!(
            (rec.outcome.winner, rec.outcome.reason, rec.outcome.runtime),
            (
                Some(Side::Red),
                EndReason::Runtime,
                Some(RuntimeKind::Memory)
            ),
            "{body}: {:?}",
            rec.outcome
        );
        let at_load = format!("{body}\nmodule.exports = function () {{}};");
        assert_eq!(
            check_code(&host(), &at_load, &limits),
            Err(LoadError::Memory {
                limit_bytes: 16 << 20
            }),
            "{body}"
        );
    }
}
