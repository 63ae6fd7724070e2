//! The farm's efficiency on CPU-hungry bots (issue 15, item 3): `SLOTS` real referee matches at
//! a time (as an embedded worker with one slot per core plays them), each between `PLAYERS` (2)
//! bots that burn `BURN_US` of CPU per turn against the rules' 50 ms deadline (`bots/test/cpu40.cpp`),
//! under the default scheme (SIGSTOP between turns, core tokens = cores, fair clock, full
//! sandbox when root). Efficiency = the bots' CPU time (as the replays record it) over
//! cores × wall time of the whole run, start-up and teardown included. Prints figures only.
//! Run: `cargo bench -p worker --bench efficiency` (EFFICIENCY_MATCHES, EFFICIENCY_BURN_US,
//! EFFICIENCY_PLAYERS).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

use sandbox::{BotCommand, CoreTokens, SandboxConfig};
use worker::referee::{self, Deadlines, MapChoice, MatchSpec, Seat};
use worker::CompileCache;

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let cache = CompileCache::new(
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bot-cache"),
        SandboxConfig::plain(),
    )
    .expect("compile cache");
    let exe = cache
        .executable_for(&root.join("bots/test/cpu40.cpp"))
        .expect("cpu40.cpp compiles");
    let burn_us = env_or("EFFICIENCY_BURN_US", 30_000);
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let matches = env_or("EFFICIENCY_MATCHES", 2 * cores as u64) as usize;
    let players = env_or("EFFICIENCY_PLAYERS", 2).clamp(2, 10) as usize;
    let cfg = SandboxConfig::default();
    let tokens = CoreTokens::default_for_host();
    let next = AtomicUsize::new(0);
    let cpu_us = AtomicU64::new(0);
    let bot_turns = AtomicU64::new(0);
    let misses = AtomicU64::new(0);
    let started = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..cores {
            s.spawn(|| loop {
                let m = next.fetch_add(1, Ordering::SeqCst);
                if m >= matches {
                    return;
                }
                let seats = (0..players)
                    .map(|i| Seat {
                        name: format!("C{i}"),
                        hash: String::new(),
                        program: Ok(BotCommand {
                            program: exe.clone(),
                            args: vec!["plain".into(), burn_us.to_string()],
                        }),
                    })
                    .collect();
                let spec = MatchSpec {
                    seed: m as u64 + 1,
                    seats,
                    map: MapChoice::Generated,
                };
                let replay = referee::play_with(spec, &cfg, &tokens, Deadlines::default())
                    .expect("match plays");
                let timing = replay.result.timing.clone().unwrap_or_default();
                for v in timing.as_object().into_iter().flat_map(|o| o.values()) {
                    cpu_us.fetch_add(v["cpu_us"].as_u64().unwrap_or(0), Ordering::SeqCst);
                    bot_turns.fetch_add(v["turns"].as_u64().unwrap_or(0), Ordering::SeqCst);
                    misses.fetch_add(v["deadline_misses"].as_u64().unwrap_or(0), Ordering::SeqCst);
                }
            });
        }
    });
    let wall = started.elapsed().as_secs_f64();
    let cpu = cpu_us.load(Ordering::SeqCst) as f64 / 1e6;
    println!(
        "efficiency: {matches} matches, {cores} at a time, {players} bots burning {} ms/turn: {} bot-turns, {} deadline misses, bots' CPU {cpu:.2} s over {cores} cores x {wall:.2} s wall = {:.1}%",
        burn_us / 1000,
        bot_turns.load(Ordering::SeqCst),
        misses.load(Ordering::SeqCst),
        cpu / (cores as f64 * wall) * 100.0
    );
}
