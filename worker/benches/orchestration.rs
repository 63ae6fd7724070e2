//! Orchestration cost per bot-turn of a whole match: the referee loop (engine step, TURN text,
//! replay recording, answer parsing) plus the process exchange (SIGCONT, write, poll, read,
//! SIGSTOP), with instant-answer bots, excluding bot start-up. 2 and 10 players, per sandbox
//! mode. Run: `cargo bench -p worker --bench orchestration` (as root for the full mode).

use std::path::PathBuf;
use std::time::Instant;

use worker::referee::{self, Deadlines, MapChoice, MatchSpec, Seat};
use worker::{BotCommand, CompileCache, CoreTokens, SandboxConfig, SandboxMode};

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
    for (mode, stops) in [
        (SandboxMode::Off, true),
        (SandboxMode::Full, true),
        (SandboxMode::Full, false),
    ] {
        let cfg = SandboxConfig {
            mode,
            stop_between_turns: stops,
            ..SandboxConfig::default()
        };
        for players in [2usize, 10] {
            let mut per_bot_turn = Vec::new();
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
            let (secs, turns) = per_bot_turn
                .iter()
                .fold((0.0, 0u64), |(s, t), (a, b)| (s + a, t + b));
            println!(
                "{:?}{} {players}p: {turns} bot-turns in {secs:.3} s (incl. start-up of {} bots x5): {:.1} us per bot-turn",
                mode,
                if stops { "" } else { " (no SIGSTOP between turns)" },
                players,
                secs / turns as f64 * 1e6
            );
        }
    }
}
