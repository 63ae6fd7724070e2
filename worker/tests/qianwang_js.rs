//! JavaScript bots in the embedded engine: every fault kind from real JS code, the shape of the
//! arguments, the sandbox (no require/fs/timers), seeded randomness, state across turns, the
//! Rules API's validation, check_code's errors, and records that pass `verify`.

use games::qianwang::{verify, EndReason, MatchRecord, RuntimeKind, Side};
use worker::qianwang::{
    check_code, play_entrants, play_match, BotSource, Entrant, JsHost, Limits, LoadError,
};

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

fn bot(name: &str, code: &str) -> BotSource {
    BotSource::new(name, code)
}

fn fast() -> Limits {
    Limits {
        move_ms: 2000,
        ..Limits::default()
    }
}

/// Plays `code` as black against the random bot and checks the record re-plays.
fn as_black(code: &str, limits: &Limits) -> MatchRecord {
    let rec = play_match(
        &host(),
        &bot("subject", code),
        &bot("random", RANDOM),
        7,
        limits,
    );
    verify(&rec)
        .unwrap_or_else(|e| panic!("record does not verify: {e}\n{}", rec.to_json_pretty()));
    rec
}

fn assert_black_lost(rec: &MatchRecord, reason: EndReason, runtime: Option<RuntimeKind>) {
    assert_eq!(
        (rec.outcome.winner, rec.outcome.reason, rec.outcome.runtime),
        (Some(Side::Red), reason, runtime),
        "outcome: {:?}",
        rec.outcome
    );
}

#[test]
fn illegal_move_loses_as_illegal() {
    // (0,3) is black's, but (1,1) is not one step away from it.
    let rec = as_black(
        "module.exports = function () { return { from: [0, 3], to: [1, 1] }; };",
        &fast(),
    );
    assert_black_lost(&rec, EndReason::Illegal, None);
    assert_eq!(rec.outcome.turn, 1);
    assert!(rec.plies.is_empty());
    assert!(
        rec.outcome.detail.contains("not one orthogonal step"),
        "{}",
        rec.outcome.detail
    );
}

#[test]
fn moving_the_opponents_piece_is_illegal() {
    let rec = as_black(
        "module.exports = function () { return { from: [0, 1], to: [1, 1] }; };",
        &fast(),
    );
    assert_black_lost(&rec, EndReason::Illegal, None);
    assert!(
        rec.outcome.detail.contains("no black piece"),
        "{}",
        rec.outcome.detail
    );
}

#[test]
fn malformed_moves_lose_as_illegal_with_the_reason() {
    for (ret, says) in [
        ("undefined", "got undefined"),
        ("42", "got the number 42"),
        ("({ from: [0, 2] })", "to must be an array"),
        ("({ from: [0, 2], to: [1, 2.5] })", "must be an integer"),
        ("({ from: [0, 2], to: ['1', 2] })", "must be an integer"),
        ("({ from: [0, 2, 9], to: [1, 2] })", "length 2"),
        ("[[0, 2], [1, 2]]", "must be an object"),
    ] {
        let code = format!("module.exports = function () {{ return {ret}; }};");
        let rec = as_black(&code, &fast());
        assert_black_lost(&rec, EndReason::Illegal, None);
        assert!(
            rec.outcome.detail.contains("malformed move") && rec.outcome.detail.contains(says),
            "{ret}: {}",
            rec.outcome.detail
        );
    }
}

#[test]
fn exception_loses_as_error_with_message_and_line() {
    let code = "module.exports = function (me, opponent, game) {\n  if (game.turnNumber > 2) {\n    throw new Error('boom at turn ' + game.turnNumber);\n  }\n  return game.legalMoves[0];\n};\n";
    let rec = as_black(code, &fast());
    assert_black_lost(&rec, EndReason::Error, None);
    assert_eq!(rec.outcome.turn, 3);
    assert_eq!(rec.plies.len(), 2);
    let d = &rec.outcome.detail;
    assert!(
        d.contains("boom at turn 3") && d.contains("bot.js:3"),
        "{d}"
    );
}

#[test]
fn a_getter_on_the_returned_move_that_throws_is_an_error() {
    let code = "module.exports = function (me, o, game) {\n  return { get from() { throw new Error('sneaky'); }, to: [1, 1] };\n};";
    let rec = as_black(code, &fast());
    assert_black_lost(&rec, EndReason::Error, None);
    assert!(
        rec.outcome.detail.contains("sneaky"),
        "{}",
        rec.outcome.detail
    );
    let limits = Limits {
        move_ms: 200,
        ..Limits::default()
    };
    let code =
        "module.exports = function () { return { get from() { for (;;) {} }, to: [1, 1] }; };";
    let rec = as_black(code, &limits);
    assert_black_lost(&rec, EndReason::Runtime, Some(RuntimeKind::Timeout));
}

#[test]
fn throwing_a_non_error_is_an_error_too() {
    let rec = as_black("module.exports = function () { throw 'nope'; };", &fast());
    assert_black_lost(&rec, EndReason::Error, None);
    assert!(
        rec.outcome.detail.contains("\"nope\""),
        "{}",
        rec.outcome.detail
    );
}

#[test]
fn exhausting_points_loses_as_runtime_even_when_caught() {
    let code = r#"
        module.exports = function (me, opponent, game) {
          const m = game.legalMoves[0];
          try {
            for (let i = 0; i < 101; i++) Rules.apply(game.board, me.side, m);
          } catch (e) {
            if (!(e instanceof RangeError)) throw new Error('expected a RangeError, got ' + e);
          }
          return m;
        };"#;
    let rec = as_black(code, &fast());
    assert_black_lost(&rec, EndReason::Runtime, Some(RuntimeKind::PointsExhausted));
    assert_eq!(rec.outcome.turn, 1);
}

#[test]
fn exactly_one_hundred_points_is_fine_and_recorded() {
    let code = r#"
        module.exports = function (me, opponent, game) {
          const m = game.legalMoves[0];
          if (Rules.remaining() !== 100) throw new Error('points not reset: ' + Rules.remaining());
          for (let i = 0; i < 100; i++) Rules.apply(game.board, me.side, m);
          if (Rules.remaining() !== 0) throw new Error('remaining ' + Rules.remaining());
          return m;
        };"#;
    let rec = as_black(code, &fast());
    let mine: Vec<_> = rec
        .plies
        .iter()
        .filter(|p| p.side == Side::Black && p.mv.is_some())
        .collect();
    assert!(!mine.is_empty());
    assert!(mine.iter().all(|p| p.points_used == 100), "{:?}", mine);
    assert!(!rec.outcome.reason.is_fault(), "{:?}", rec.outcome);
}

#[test]
fn endless_loop_times_out() {
    let limits = Limits {
        move_ms: 200,
        ..Limits::default()
    };
    let code = r#"
        module.exports = function (me, opponent, game) {
          if (game.turnNumber < 3) return game.legalMoves[0];
          for (;;) { try { while (true) {} } catch (e) {} }
        };"#;
    let rec = as_black(code, &limits);
    assert_black_lost(&rec, EndReason::Runtime, Some(RuntimeKind::Timeout));
    assert_eq!(rec.outcome.turn, 3);
    assert!(
        rec.outcome.detail.contains("200 ms"),
        "{}",
        rec.outcome.detail
    );
}

#[test]
fn memory_bomb_loses_as_memory() {
    let limits = Limits {
        memory_bytes: 16 << 20,
        ..Limits::default()
    };
    let code = r#"
        const hoard = [];
        module.exports = function (me, opponent, game) {
          for (;;) hoard.push(new Array(100000).fill(game.turnNumber));
        };"#;
    let rec = as_black(code, &limits);
    assert_black_lost(&rec, EndReason::Runtime, Some(RuntimeKind::Memory));
}

#[test]
fn deep_recursion_is_an_error_not_a_crash() {
    let code =
        "function f(n) { return f(n + 1) + 1; }\nmodule.exports = function () { return f(0); };";
    let rec = as_black(code, &fast());
    assert_black_lost(&rec, EndReason::Error, None);
    assert!(
        rec.outcome.detail.contains("stack"),
        "{}",
        rec.outcome.detail
    );
}

#[test]
fn no_host_capabilities_and_no_clock_or_free_randomness() {
    let code = r#"
        const absent = ['require', 'process', 'setTimeout', 'setInterval', 'setImmediate',
          'std', 'os', 'performance', 'fetch', 'XMLHttpRequest', 'WebSocket', 'Deno', 'Bun',
          'print', 'scriptArgs', 'queueMicrotask'];
        for (const name of absent) {
          if (typeof globalThis[name] !== 'undefined') throw new Error(name + ' is available');
        }
        let threw = false;
        try { require('fs'); } catch (e) { threw = e instanceof ReferenceError; }
        if (!threw) throw new Error('require did not throw a ReferenceError');
        let blocked = true;
        try { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); } catch (e) { blocked = false; }
        if (blocked) throw new Error('Atomics.wait returned');
        const t0 = Date.now();
        let spin = 0; for (let i = 0; i < 200000; i++) spin += i;
        if (Date.now() !== t0 || new Date().getTime() !== t0) throw new Error('the clock moves');
        if (new Date(0).getTime() !== 0) throw new Error('Date(ms) broken');
        module.exports = function (me, opponent, game) {
          const a = Math.random();
          if (!(a >= 0 && a < 1)) throw new Error('Math.random out of range');
          console.log('quiet', a);
          return game.legalMoves[Math.floor(game.random() * game.legalMoves.length)];
        };"#;
    let rec = as_black(code, &fast());
    assert!(
        !rec.outcome.reason.is_fault() || rec.outcome.winner == Some(Side::Black),
        "{:?}",
        rec.outcome
    );
}

#[test]
fn arguments_have_the_guides_shapes() {
    // Checks every argument against the position rebuilt from me/opponent pieces and history,
    // including the board[x][y] orientation, and throws at the first mismatch.
    let code = r#"
        function check(cond, what) { if (!cond) throw new Error('bad argument: ' + what); }
        module.exports = function onTurn(me, opponent, game) {
          check(me.side === (game.turnNumber % 2 === 1 ? 'black' : 'red') || game.history.some(h => h.pass), 'me.side');
          check(opponent.side === Rules.other(me.side), 'opponent.side');
          check(Array.isArray(game.board) && game.board.length === 4, 'board columns');
          for (let x = 0; x < 4; x++) {
            check(game.board[x].length === 4, 'board column ' + x);
            for (let y = 0; y < 4; y++) {
              const c = game.board[x][y];
              check(c === null || c === 'black' || c === 'red', 'cell ' + x + ',' + y);
            }
          }
          let count = { black: 0, red: 0 };
          for (let x = 0; x < 4; x++) for (let y = 0; y < 4; y++) if (game.board[x][y]) count[game.board[x][y]]++;
          for (const p of [me, opponent]) {
            check(count[p.side] === p.pieces.length, 'piece count of ' + p.side);
            for (const [x, y] of p.pieces) check(game.board[x][y] === p.side, 'board[' + x + '][' + y + '] is ' + p.side);
            check(typeof p.capturedCount === 'number', 'capturedCount');
          }
          check(me.capturedCount === 6 - opponent.pieces.length, 'me.capturedCount');
          if (game.turnNumber === 1) {
            // The guide's start: black on (0,2) and (3,2), red on (0,1) and (3,1): column-major.
            check(game.board[0][2] === 'black' && game.board[3][2] === 'black', 'black start (x,y)');
            check(game.board[0][1] === 'red' && game.board[3][1] === 'red', 'red start (x,y)');
            check(game.board[1][1] === null && game.board[2][2] === null, 'empty centre');
            check(game.history.length === 0 && game.noCaptureMoves === 0, 'fresh game');
          }
          check(game.history.length === game.turnNumber - 1, 'history length');
          for (const h of game.history) {
            check(h.side === 'black' || h.side === 'red', 'history side');
            check(Array.isArray(h.captured), 'history captured');
            check(h.pass ? h.from === null : (h.from.length === 2 && h.to.length === 2), 'history move');
          }
          const legal = Rules.legalMoves(game.board, me.side);
          check(JSON.stringify(legal) === JSON.stringify(game.legalMoves), 'legalMoves');
          for (const m of game.legalMoves) {
            check(game.board[m.from[0]][m.from[1]] === me.side, 'legal move from own piece');
            check(game.board[m.to[0]][m.to[1]] === null, 'legal move to an empty point');
          }
          check(typeof game.random === 'function', 'random');
          check(Rules.judge(game.board, game.noCaptureMoves) === null, 'game not over');
          return game.legalMoves[Math.floor(game.random() * game.legalMoves.length)];
        };"#;
    for seed in 0..4 {
        for (b, r) in [(code, RANDOM), (RANDOM, code)] {
            let rec = play_match(&host(), &bot("b", b), &bot("r", r), seed, &fast());
            verify(&rec).unwrap();
            assert!(
                !rec.outcome.reason.is_fault(),
                "seed {seed}: {:?}",
                rec.outcome
            );
            assert!(rec.plies.len() > 10);
        }
    }
}

#[test]
fn rules_api_matches_the_engine_and_validates_input() {
    let code = r#"
        function expectThrow(f, type, what) {
          try { f(); } catch (e) {
            if (!(e instanceof type)) throw new Error(what + ': wrong error ' + e);
            return e.message;
          }
          throw new Error(what + ': did not throw');
        }
        module.exports = function (me, opponent, game) {
          if (game.turnNumber > 1) return game.legalMoves[0];
          const b = game.board;
          // The guide's basic capture: black (0,1),(1,1) next to red (2,1).
          const e = [[null,null,null,null],[null,null,null,null],[null,null,null,null],[null,null,null,null]];
          const cap = Rules.clone(e);
          cap[0][2] = 'black'; cap[1][1] = 'black'; cap[2][1] = 'red'; cap[3][3] = 'red'; cap[2][3] = 'red';
          const r = Rules.apply(cap, 'black', { from: [0, 2], to: [0, 1] });
          if (JSON.stringify(r.captured) !== '[[2,1]]') throw new Error('capture: ' + JSON.stringify(r.captured));
          if (r.board[2][1] !== null || r.board[0][1] !== 'black') throw new Error('board after capture');
          if (cap[0][2] !== 'black') throw new Error('apply changed its input');
          if (Rules.judge(r.board, 0) !== null) throw new Error('2 v 2 is not over');
          const el = Rules.clone(e); el[0][0] = 'black'; el[1][0] = 'black'; el[3][3] = 'red';
          const v = Rules.judge(el, 0);
          if (v === null || v.winner !== 'black' || v.reason !== 'eliminated') throw new Error('judge: ' + JSON.stringify(v));
          if (Rules.judge(b, 0) !== null) throw new Error('judge start');
          if (Rules.judge(b, 20).reason !== 'material' || Rules.judge(b, 20).winner !== null) throw new Error('judge material');
          if (Rules.other('black') !== 'red' || Rules.other('red') !== 'black') throw new Error('other');
          const c = Rules.clone(b); c[1][1] = 'black';
          if (b[1][1] !== null) throw new Error('clone shares cells');
          expectThrow(() => Rules.apply([[null]], 'black', game.legalMoves[0]), TypeError, 'short board');
          expectThrow(() => Rules.apply(b, 'blue', game.legalMoves[0]), TypeError, 'bad side');
          expectThrow(() => Rules.apply(b, me.side, { from: [0, 'x'], to: [1, 1] }), TypeError, 'bad move');
          expectThrow(() => Rules.legalMoves('board', 'black'), TypeError, 'string board');
          const bad = Rules.clone(b); bad[2][1] = 'green';
          const msg = expectThrow(() => Rules.legalMoves(bad, 'black'), TypeError, 'bad cell');
          if (msg.indexOf('board[2][1]') < 0) throw new Error('message does not name the cell: ' + msg);
          expectThrow(() => Rules.judge(b, -1), TypeError, 'negative ncm');
          expectThrow(() => Rules.apply(b, me.side, { from: [0, 0], to: [0, 1] }), RangeError, 'illegal apply');
          expectThrow(() => Rules.other(3), TypeError, 'other(3)');
          if (Rules.remaining() !== 98) throw new Error('remaining after 2 applies: ' + Rules.remaining());
          return game.legalMoves[0];
        };"#;
    let rec = as_black(code, &fast());
    assert!(!rec.outcome.reason.is_fault(), "{:?}", rec.outcome);
    assert_eq!(rec.plies[0].points_used, 2);
}

#[test]
fn state_persists_between_turns_of_one_match_only() {
    let code = r#"
        let turns = 0;
        let last = 0;
        module.exports = function (me, opponent, game) {
          turns++;
          if (game.turnNumber <= last) throw new Error('turns out of order');
          last = game.turnNumber;
          const mine = game.history.filter(h => h.side === me.side).length;
          if (turns !== mine + 1) throw new Error('state lost: ' + turns + ' vs ' + (mine + 1));
          return game.legalMoves[0];
        };"#;
    for _ in 0..2 {
        let rec = play_match(&host(), &bot("a", code), &bot("b", code), 3, &fast());
        verify(&rec).unwrap();
        assert!(!rec.outcome.reason.is_fault(), "{:?}", rec.outcome);
        assert!(rec.plies.len() > 4);
    }
}

#[test]
fn game_random_is_deterministic_per_seed_side_and_turn() {
    let a = play_match(&host(), &bot("x", RANDOM), &bot("y", RANDOM), 42, &fast());
    let b = play_match(&host(), &bot("x", RANDOM), &bot("y", RANDOM), 42, &fast());
    assert_eq!(a, b);
    let distinct: std::collections::HashSet<String> = (0..6)
        .map(|seed| {
            let r = play_match(&host(), &bot("x", RANDOM), &bot("y", RANDOM), seed, &fast());
            verify(&r).unwrap();
            serde_json::to_string(&r.plies).unwrap()
        })
        .collect();
    assert!(
        distinct.len() >= 5,
        "only {} distinct games of 6 seeds",
        distinct.len()
    );
    // Same seed, same turn, other side: different draws (both bots log their first draw).
    let probe = r#"
        module.exports = function (me, opponent, game) {
          const v = game.random();
          const w = game.random();
          if (v === w) throw new Error('random repeats within a turn');
          if (game.turnNumber <= 2) throw new Error(me.side + ':' + v);
          return game.legalMoves[0];
        };"#;
    let r1 = play_match(&host(), &bot("p", probe), &bot("p", RANDOM), 5, &fast());
    let r2 = play_match(&host(), &bot("p", probe), &bot("p", RANDOM), 5, &fast());
    let r3 = play_match(&host(), &bot("p", probe), &bot("p", RANDOM), 6, &fast());
    assert_eq!(r1.outcome.detail, r2.outcome.detail);
    assert_ne!(r1.outcome.detail, r3.outcome.detail);
    assert!(
        r1.outcome.detail.contains("black:0."),
        "{}",
        r1.outcome.detail
    );
}

#[test]
fn check_code_names_the_problem() {
    let l = Limits {
        load_ms: 300,
        memory_bytes: 16 << 20,
        ..Limits::default()
    };
    assert_eq!(check_code(&host(), RANDOM, &l), Ok(()));
    assert_eq!(check_code(&host(), SEARCH, &l), Ok(()));
    assert_eq!(
        check_code(&host(), "exports.onTurn = function () {};", &l),
        Ok(())
    );
    match check_code(
        &host(),
        "let a = 1;\nlet b = 2;\nlet c = );\nmodule.exports = function () {};\n",
        &l,
    ) {
        Err(LoadError::Syntax {
            line: Some(3),
            message,
            ..
        }) => assert!(!message.is_empty()),
        other => panic!("syntax: {other:?}"),
    }
    let e = check_code(&host(), "module.exports = 5;", &l).unwrap_err();
    assert!(matches!(e, LoadError::NoOnTurn { .. }), "{e:?}");
    assert!(e.to_string().contains("the number 5"), "{e}");
    let e = check_code(&host(), "function onTurn() {}", &l).unwrap_err();
    assert!(matches!(e, LoadError::NoOnTurn { .. }), "{e:?}");
    assert!(e.to_string().contains("declared but not exported"), "{e}");
    assert_eq!(
        check_code(&host(), "let module = { exports: function () {} };", &l),
        Ok(())
    );
    let e = check_code(&host(), "module = null;", &l).unwrap_err();
    assert!(e.to_string().contains("`module` is null"), "{e}");
    assert_eq!(
        check_code(
            &host(),
            "while (true) {}\nmodule.exports = function () {};",
            &l
        ),
        Err(LoadError::Timeout { ms: 300 })
    );
    assert_eq!(
        check_code(
            &host(),
            "const a = []; for (;;) a.push('x'.repeat(1000) + a.length);",
            &l
        ),
        Err(LoadError::Memory {
            limit_bytes: 16 << 20
        })
    );
    match check_code(&host(), "module.exports = function () {};\nnull.x;", &l) {
        Err(LoadError::Threw { message }) => assert!(
            message.contains("TypeError") && message.contains("bot.js:2"),
            "{message}"
        ),
        other => panic!("threw: {other:?}"),
    }
    assert!(matches!(
        check_code(&host(), "a\0b", &l),
        Err(LoadError::NulByte { offset: 1 })
    ));
}

#[test]
fn load_failures_lose_at_the_bots_first_turn() {
    // Red fails to load: black has moved once, red loses at turn 2.
    let rec = play_match(
        &host(),
        &bot("ok", RANDOM),
        &bot("broken", "module.exports = ;"),
        1,
        &fast(),
    );
    verify(&rec).unwrap();
    assert_eq!(
        (rec.outcome.winner, rec.outcome.reason, rec.outcome.turn),
        (Some(Side::Black), EndReason::Error, 2)
    );
    assert!(
        rec.outcome.detail.contains("syntax error"),
        "{}",
        rec.outcome.detail
    );
    let limits = Limits {
        load_ms: 200,
        ..Limits::default()
    };
    let rec = play_match(
        &host(),
        &bot("spin", "for(;;){}"),
        &bot("ok", RANDOM),
        1,
        &limits,
    );
    verify(&rec).unwrap();
    assert_eq!(
        (rec.outcome.winner, rec.outcome.runtime, rec.outcome.turn),
        (Some(Side::Red), Some(RuntimeKind::Timeout), 1)
    );
}

#[test]
fn a_program_that_is_not_utf8_loses_as_error() {
    let bad = Entrant::from_bytes(
        "latin1",
        b"module.exports = function () { return '\xe9'; };".to_vec(),
    );
    let good = Entrant::from_source(&bot("random", RANDOM));
    let rec = play_entrants(&host(), &good, &bad, 9, &fast());
    verify(&rec).unwrap();
    assert_eq!(
        (rec.outcome.winner, rec.outcome.reason),
        (Some(Side::Black), EndReason::Error)
    );
    assert!(
        rec.outcome.detail.contains("UTF-8"),
        "{}",
        rec.outcome.detail
    );
    assert_eq!(rec.red.code_sha256.len(), 64);
}

#[test]
fn training_bots_play_full_verified_matches_both_colours() {
    let bots = [("random", RANDOM), ("greedy", GREEDY), ("search", SEARCH)];
    for (i, (bn, bc)) in bots.iter().enumerate() {
        for (rn, rc) in &bots[i..] {
            for seed in [11u64, 12] {
                for (b, r) in [((bn, bc), (rn, rc)), ((rn, rc), (bn, bc))] {
                    let rec = play_match(
                        &host(),
                        &bot(b.0, b.1),
                        &bot(r.0, r.1),
                        seed,
                        &Limits::default(),
                    );
                    verify(&rec).unwrap_or_else(|e| panic!("{} vs {}: {e}", b.0, r.0));
                    assert!(
                        !rec.outcome.reason.is_fault(),
                        "{} vs {} seed {seed}: {:?}",
                        b.0,
                        r.0,
                        rec.outcome
                    );
                    let back = MatchRecord::from_json(&rec.to_json()).unwrap();
                    assert_eq!(back, rec);
                    assert!(rec.plies.iter().all(|p| p.points_used <= 100));
                    if *b.0 == "search" {
                        assert!(rec
                            .plies
                            .iter()
                            .any(|p| p.side == Side::Black && p.points_used > 50));
                    }
                }
            }
        }
    }
}
