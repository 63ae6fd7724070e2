//! Orchestration cost per bot-turn of a whole match: the referee loop (engine step, TURN text,
//! replay recording, answer parsing) plus the process exchange (SIGCONT, write, poll, read,
//! SIGSTOP), with instant-answer bots. 2 and 10 players, per sandbox mode. Each row gives the
//! whole match per bot-turn (bot start-up and teardown included, as in issue 2) and the same
//! less the start-up and teardown of the match's bots, timed separately (spawn + finish of as
//! many bots, 5 times). Run: `cargo bench -p worker --bench orchestration` (as root for the
//! full mode); `ORCH_ONLY=full` (or `off`, `nostop`) runs one mode, `ORCH_PLAYERS=10` one size,
//! `ORCH_SKIP_STARTUP=1` skips the separate start-up timing.

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Counts heap allocations (of every thread), to report what a bot-turn allocates.
struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards to the system allocator unchanged; only counts calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

use sandbox::{Bot, BotCommand, CoreTokens, SandboxConfig, SandboxMode};
use worker::referee::{self, Deadlines, MapChoice, MatchSpec, Seat};
use worker::CompileCache;

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let cache = CompileCache::new(
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bot-cache"),
        SandboxConfig::plain(),
    )
    .expect("compile cache");
    let exe = cache
        .executable_for(&root.join("bots/test/answer.cpp"))
        .expect("answer.cpp compiles");
    let tokens = CoreTokens::default_for_host();
    let only = std::env::var("ORCH_ONLY").ok();
    let sizes: Vec<usize> = match std::env::var("ORCH_PLAYERS")
        .ok()
        .and_then(|p| p.parse().ok())
    {
        Some(p) => vec![p],
        None => vec![2, 10],
    };
    for (label, mode, stops) in [
        ("off", SandboxMode::Off, true),
        ("full", SandboxMode::Full, true),
        ("nostop", SandboxMode::Full, false),
    ] {
        if only.as_deref().is_some_and(|o| o != label) {
            continue;
        }
        let cfg = SandboxConfig {
            mode,
            stop_between_turns: stops,
            ..SandboxConfig::default()
        };
        for &players in &sizes {
            let mut per_bot_turn = Vec::new();
            let allocs0 = ALLOCS.load(Ordering::Relaxed);
            for seed in 1..=5u64 {
                let seats = (0..players)
                    .map(|i| Seat {
                        name: format!("A{i}"),
                        hash: String::new(),
                        program: Ok(BotCommand::new(exe.clone())),
                    })
                    .collect();
                let spec = MatchSpec {
                    seed,
                    seats,
                    map: MapChoice::Generated,
                };
                let started = Instant::now();
                let replay = referee::play_with(spec, &cfg, &tokens, Deadlines::default())
                    .expect("match plays");
                let total = started.elapsed().as_secs_f64();
                let timing = replay.result.timing.clone().unwrap_or_default();
                let bot_turns: u64 = timing
                    .as_object()
                    .map(|o| o.values().filter_map(|v| v["turns"].as_u64()).sum())
                    .unwrap_or(0);
                per_bot_turn.push((total, bot_turns));
            }
            let allocs = ALLOCS.load(Ordering::Relaxed) - allocs0;
            let (secs, turns) = per_bot_turn
                .iter()
                .fold((0.0, 0u64), |(s, t), (a, b)| (s + a, t + b));
            // Start-up and teardown of the same number of bots, as the referee does them
            // (ORCH_SKIP_STARTUP=1 leaves it out, e.g. under strace).
            let skip = std::env::var("ORCH_SKIP_STARTUP").is_ok();
            let allocs1 = ALLOCS.load(Ordering::Relaxed);
            let started = Instant::now();
            for _ in (1..=5u64).filter(|_| !skip) {
                let bots: Vec<Bot> = (0..players)
                    .map(|slot| Bot::spawn(&BotCommand::new(exe.clone()), &cfg, &tokens, slot))
                    .collect::<Result<_, _>>()
                    .expect("bots start");
                for b in &bots {
                    b.kill();
                }
                for b in bots {
                    b.finish();
                }
            }
            let startup = started.elapsed().as_secs_f64();
            let startup_allocs = ALLOCS.load(Ordering::Relaxed) - allocs1;
            println!(
                "{:?}{} {players}p: {turns} bot-turns in {secs:.3} s (incl. start-up of {} bots x5): {:.1} us per bot-turn; start-up + teardown {:.1} ms per match, {:.1} us per bot-turn without it",
                mode,
                if stops { "" } else { " (no SIGSTOP between turns)" },
                players,
                secs / turns as f64 * 1e6,
                startup / 5.0 * 1e3,
                (secs - startup).max(0.0) / turns as f64 * 1e6
            );
            println!(
                "    heap allocations: {:.1} per bot-turn with start-up, {:.1} without",
                allocs as f64 / turns as f64,
                allocs.saturating_sub(startup_allocs) as f64 / turns as f64
            );
        }
    }
}
