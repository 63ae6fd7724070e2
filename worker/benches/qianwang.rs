//! qianwang JavaScript bots: how many moves per second one core plays when both bots spend all
//! 100 thinking points on every move (the worst case the points allow), and the strength ladder
//! of the training bots (win/draw/loss over seeds, each colour), and what a game's start-up and
//! teardown cost beside a whole game (the sandboxed JavaScript child, both engines loaded).
//!
//! `cargo bench -p worker --bench qianwang [-- rate|ladder|startup] [SEEDS]`

use std::time::Instant;

use games::qianwang::{EndReason, Side};
use worker::qianwang::{play_match, BotSource, JsHost, Limits};

/// The JavaScript child these run their bots in (the worker crate's copy of `farm __js-bot`),
/// fully sandboxed as in production, or with `QIANWANG_BENCH_SANDBOX=off` without the sandbox
/// (to tell its share of the start-up).
fn host() -> JsHost {
    let mut sandbox = sandbox::SandboxConfig::default();
    if std::env::var("QIANWANG_BENCH_SANDBOX").as_deref() == Ok("off") {
        sandbox.mode = sandbox::SandboxMode::Off;
    }
    JsHost {
        program: env!("CARGO_BIN_EXE_qianwang-js-host").into(),
        sandbox,
    }
}

const RANDOM: &str = include_str!("../../bots/qianwang/random.js");
const GREEDY: &str = include_str!("../../bots/qianwang/greedy.js");
const SEARCH: &str = include_str!("../../bots/qianwang/search.js");

/// Spends exactly 100 points per move on Rules.apply (plus legalMoves/judge, which are free) and
/// then plays a seeded random move.
const FULL_POINTS: &str = r#"
module.exports = function onTurn(me, opponent, game) {
  const moves = game.legalMoves;
  let captures = 0;
  for (let i = 0; Rules.remaining() > 0; i++) {
    const r = Rules.apply(game.board, me.side, moves[i % moves.length]);
    captures += r.captured.length;
    if (Rules.judge(r.board, game.noCaptureMoves + 1)) captures++;
  }
  return moves[Math.floor(game.random() * moves.length)];
};
"#;

/// CPU seconds (user + system) this process has used: the matches run one at a time, so this is
/// one core's time, unaffected by other load on the machine. The bots run in child processes
/// (one per match, reaped at its end), so their time is counted with this process's.
fn cpu_seconds() -> f64 {
    let mut total = 0.0;
    for who in [libc::RUSAGE_SELF, libc::RUSAGE_CHILDREN] {
        // SAFETY: getrusage only writes the struct it is given.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        if unsafe { libc::getrusage(who, &mut ru) } != 0 {
            return f64::NAN;
        }
        let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
        total += t(ru.ru_utime) + t(ru.ru_stime);
    }
    total
}

fn rate(seeds: u64) {
    let limits = Limits::default();
    let bot = BotSource::new("full", FULL_POINTS);
    // Warm-up (page in the engine, allocator).
    play_match(&host(), &bot, &bot, 0, &limits);
    let started = Instant::now();
    let cpu0 = cpu_seconds();
    let mut moves = 0u64;
    let mut points = 0u64;
    for seed in 1..=seeds {
        let rec = play_match(&host(), &bot, &bot, seed, &limits);
        assert!(!rec.outcome.reason.is_fault(), "{:?}", rec.outcome);
        for p in rec.plies.iter().filter(|p| p.mv.is_some()) {
            moves += 1;
            points += p.points_used as u64;
        }
    }
    let secs = started.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu0;
    println!(
        "qianwang JS move rate (every move spends {} points): {moves} moves over {seeds} matches in {cpu:.2} CPU s ({secs:.2} s wall) = {:.0} moves/s per core, {:.0} Rules.apply/s per core ({:.0} moves/s wall)",
        points / moves.max(1),
        moves as f64 / cpu,
        points as f64 / cpu,
        moves as f64 / secs
    );
}

/// A bot that fails at its first move: a match of two of them is start-up (the sandboxed child,
/// both engines and both scripts loaded), one call and teardown, and nothing else.
const FAILS_AT_ONCE: &str = r#"
module.exports = function onTurn() { throw new Error("start-up only"); };
"#;

/// Wall seconds per match of `a` against `b` over `seeds` seeds (one warm-up first), and the
/// plies played. (Not CPU: a fully sandboxed child's time is not counted in this process's.)
fn per_match(a: &BotSource, b: &BotSource, seeds: u64, limits: &Limits) -> (f64, usize) {
    play_match(&host(), a, b, 0, limits);
    let started = Instant::now();
    let mut plies = 0;
    for seed in 1..=seeds {
        plies += play_match(&host(), a, b, seed, limits).plies.len();
    }
    (started.elapsed().as_secs_f64() / seeds.max(1) as f64, plies)
}

/// What starting and ending a game costs beside a whole game: matches of two bots that fail at
/// once, then greedy against random and search against greedy, one at a time.
fn startup(seeds: u64) {
    let limits = Limits::default();
    let fails = BotSource::new("fails", FAILS_AT_ONCE);
    let (greedy, random, search) = (
        BotSource::new("greedy", GREEDY),
        BotSource::new("random", RANDOM),
        BotSource::new("search", SEARCH),
    );
    let (start, _) = per_match(&fails, &fails, seeds, &limits);
    println!(
        "start-up and teardown only: {:.2} ms wall per game ({seeds} games)",
        start * 1e3
    );
    for (a, b) in [(&greedy, &random), (&search, &greedy)] {
        let (wall, plies) = per_match(a, b, seeds, &limits);
        println!(
            "{} vs {}: {:.2} ms wall per game ({:.1} plies a game); start-up and teardown are {:.1}% of it",
            a.name,
            b.name,
            wall * 1e3,
            plies as f64 / seeds.max(1) as f64,
            100.0 * start / wall
        );
    }
}

fn ladder(seeds: u64) {
    let limits = Limits::default();
    let bots = [("random", RANDOM), ("greedy", GREEDY), ("search", SEARCH)];
    for (i, j) in [(1, 0), (2, 1), (2, 0)] {
        let (an, ac) = bots[i];
        let (bn, bc) = bots[j];
        let (a, b) = (BotSource::new(an, ac), BotSource::new(bn, bc));
        let (mut w, mut d, mut l, mut faults) = (0, 0, 0, 0);
        let started = Instant::now();
        for seed in 0..seeds {
            for a_side in [Side::Black, Side::Red] {
                let rec = if a_side == Side::Black {
                    play_match(&host(), &a, &b, seed, &limits)
                } else {
                    play_match(&host(), &b, &a, seed, &limits)
                };
                if matches!(
                    rec.outcome.reason,
                    EndReason::Illegal | EndReason::Error | EndReason::Runtime
                ) {
                    faults += 1;
                }
                match rec.outcome.winner {
                    Some(s) if s == a_side => w += 1,
                    Some(_) => l += 1,
                    None => d += 1,
                }
            }
        }
        println!(
            "{an} vs {bn}: {w} wins, {d} draws, {l} losses over {} games ({seeds} seeds x both colours; {faults} faults) in {:.1} s",
            2 * seeds,
            started.elapsed().as_secs_f64()
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let what = args.first().map(String::as_str).unwrap_or("all");
    let seeds = |default: u64| args.get(1).and_then(|s| s.parse().ok()).unwrap_or(default);
    match what {
        "rate" => rate(seeds(20)),
        "ladder" => ladder(seeds(20)),
        "startup" => startup(seeds(50)),
        _ => {
            rate(seeds(20));
            ladder(seeds(20));
        }
    }
}
