//! The training bots' strength ladder: search beats greedy beats random over several seeds and
//! both colours. Matches are deterministic (seeded randomness, thinking points instead of time),
//! so these counts do not vary from run to run; the bounds leave room for changes to the bots.

use games::qianwang::{verify, Side};
use worker::qianwang::{play_match, BotSource, JsHost, Limits};

/// The JavaScript child these run their bots in (the worker crate's copy of `farm __js-bot`).
fn host() -> JsHost {
    JsHost {
        program: env!("CARGO_BIN_EXE_qianwang-js-host").into(),
        sandbox: sandbox::SandboxConfig::default(),
    }
}

const RANDOM: &str = include_str!("../../bots/qianwang/random.js");
const GREEDY: &str = include_str!("../../bots/qianwang/greedy.js");
const SEARCH: &str = include_str!("../../bots/qianwang/search.js");

/// (wins, draws, losses) of `a` against `b` over `seeds`, each seed once per colour.
fn score(a: &str, b: &str, seeds: std::ops::Range<u64>) -> (u32, u32, u32) {
    let (a, b) = (BotSource::new("a", a), BotSource::new("b", b));
    let mut wdl = (0, 0, 0);
    for seed in seeds {
        for a_side in [Side::Black, Side::Red] {
            let rec = if a_side == Side::Black {
                play_match(&host(), &a, &b, seed, &Limits::default())
            } else {
                play_match(&host(), &b, &a, seed, &Limits::default())
            };
            verify(&rec).unwrap();
            assert!(!rec.outcome.reason.is_fault(), "{:?}", rec.outcome);
            match rec.outcome.winner {
                Some(s) if s == a_side => wdl.0 += 1,
                Some(_) => wdl.2 += 1,
                None => wdl.1 += 1,
            }
        }
    }
    wdl
}

#[test]
fn greedy_beats_random() {
    let (w, _d, l) = score(GREEDY, RANDOM, 100..106);
    assert!(
        w >= 9 && l <= 1,
        "greedy vs random: {w} wins, {l} losses of 12"
    );
}

#[test]
fn search_beats_random() {
    let (w, _d, l) = score(SEARCH, RANDOM, 100..106);
    assert!(
        w >= 9 && l <= 1,
        "search vs random: {w} wins, {l} losses of 12"
    );
}

#[test]
fn search_beats_greedy() {
    let (w, _d, l) = score(SEARCH, GREEDY, 100..106);
    assert!(
        w > 2 * l && w >= 6,
        "search vs greedy: {w} wins, {l} losses of 12"
    );
}
