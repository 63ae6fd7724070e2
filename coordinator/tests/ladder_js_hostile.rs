//! A 钳王 bot cannot stop the ladder (issue 22, item 1): code stuck in a QuickJS built-in that
//! never checks for interrupts, in `onTurn` or at the top level, is answered within its limit
//! (a smoke-test failure as the bot's timeout, or invalid code with a timeout at load) by a real
//! `farm ladder serve`, and the next submits and challenges, anyone's, play normally.

mod ladder_support;

use std::time::{Duration, Instant};

use ladder_support::{bot, Backend, Ladder, Opts};

/// Loops for good inside one built-in call: QuickJS never calls the interrupt handler there.
const STUCK: &str = "Array.prototype.reverse.call({ length: 2 ** 53 - 1 });";

#[test]
fn a_bot_stuck_in_a_builtin_is_its_own_timeout_and_the_ladder_plays_on() {
    let l = Ladder::start(
        Backend::Sqlite,
        Opts {
            extra: vec!["--job-timeout".into(), "60".into()],
            ..Opts::default()
        },
    );
    let (_, key) = l.player("hostile", true);
    let (osc_id, osc_key) = l.player("osc", true);

    // At the top level: refused as invalid code, a timeout at load (2,000 ms), soon.
    let t0 = Instant::now();
    let a = l.submit(
        &key,
        &format!("{STUCK}\nmodule.exports = function (m, o, g) {{ return g.legalMoves[0]; }};"),
    );
    assert_eq!(a.status, 400, "{}", a.text);
    assert_eq!(a.json["error"], "invalid_code", "{}", a.text);
    assert!(
        a.json["detail"].as_str().unwrap_or("").contains("2000 ms"),
        "{}",
        a.text
    );
    assert!(t0.elapsed() < Duration::from_secs(15), "{:?}", t0.elapsed());

    // In onTurn (the bot): every smoke game is the bot's runtime timeout.
    let t0 = Instant::now();
    let a = l.submit(
        &key,
        &format!("module.exports = function () {{ {STUCK} return null; }};"),
    );
    assert_eq!(a.status, 422, "{}", a.text);
    assert_eq!(a.json["error"], "smoke_test_failed", "{}", a.text);
    let failures = a.json["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 6, "{}", a.text);
    for f in failures {
        assert_eq!(
            (f["reason"].as_str(), f["subtype"].as_str()),
            (Some("runtime"), Some("timeout")),
            "{f}"
        );
    }
    // Six games of one 2 s move each on two workers, with room for a loaded machine.
    assert!(t0.elapsed() < Duration::from_secs(40), "{:?}", t0.elapsed());

    // Everyone else plays on: a submit, another, and a challenge.
    l.publish(&osc_key, &bot("osc.js"));
    l.publish(&key, &bot("quit.js"));
    let c = l.challenge(&key, osc_id);
    assert_eq!(c.status, 200, "{}", c.text);
    assert_eq!(c.json["matches"].as_array().unwrap().len(), 2, "{}", c.text);
}
