//! The fairness benchmark of issue 3: two matches at once, each with two bots that burn ~40 ms
//! of CPU per turn (deadline 50 ms), plus a process hogging a core, on this (2-core) host.
//! Counts spurious timeouts (every bot answers within its CPU budget, so every timeout is the
//! host's fault) with the scheme (SIGSTOP between turns, core tokens = cores, run-queue wait
//! not charged) and without it (no stops, unlimited tokens, plain wall clock), for bots that
//! only think on their turn and for bots that also ponder between turns.
//! Run: `cargo bench -p worker --bench fairness`.

use std::path::PathBuf;
use std::process::{Child, Command};
use std::time::Duration;

use sandbox::{Bot, BotCommand, CoreTokens, SandboxConfig};
use worker::CompileCache;

const TURNS: u32 = 40;
const DEADLINE: Duration = Duration::from_millis(50);

fn cpu40(ponder: bool) -> BotCommand {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let cache = CompileCache::new(
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bot-cache"),
        SandboxConfig::plain(),
    )
    .expect("compile cache");
    let exe = cache
        .executable_for(&root.join("bots/test/cpu40.cpp"))
        .expect("cpu40.cpp compiles");
    BotCommand {
        program: exe,
        args: vec![
            if ponder { "ponder" } else { "plain" }.into(),
            "40000".into(),
        ],
    }
}

fn input(t: u32) -> Vec<u8> {
    format!("TURN {t}\nBOARD\n#############\nP 0 1 1 1\nP 1 11 11 1\nBOMBS 0\nFLAMES 0\nEND\n")
        .into_bytes()
}

struct Outcome {
    timeouts: u32,
    bot_turns: u32,
    max_wall_ms: f64,
    mean_cpu_ms: f64,
}

/// One match: both bots get each turn at the same time (one thread per bot per turn). The
/// exchange deadline is generous so that no bot is eliminated; whether each turn would have met
/// the 50 ms deadline is judged afterwards from its timing, exactly as `exchange` judges it
/// (charged time = wall time minus run-queue wait when the fair clock is on, and never more
/// than `max_wall_factor` deadlines of wall time).
fn play_match(cmd: &BotCommand, cfg: &SandboxConfig, tokens: &CoreTokens, slot: usize) -> Outcome {
    let mut bots: Vec<Bot> = (0..2)
        .map(|i| Bot::spawn(cmd, cfg, tokens, slot + i).expect("spawn"))
        .collect();
    for t in 0..TURNS {
        std::thread::scope(|s| {
            for b in bots.iter_mut() {
                s.spawn(move || {
                    b.exchange(t, &input(t), Duration::from_secs(5))
                        .expect("turn")
                });
            }
        });
    }
    let mut out = Outcome {
        timeouts: 0,
        bot_turns: 0,
        max_wall_ms: 0.0,
        mean_cpu_ms: 0.0,
    };
    let mut cpu_sum = 0u64;
    let cap = DEADLINE.as_micros() as u64 * cfg.max_wall_factor as u64;
    for b in bots {
        let r = b.finish();
        if std::env::var("FAIRNESS_DUMP").is_ok() {
            for p in r.timing.per_turn.iter().take(12) {
                eprintln!(
                    "turn {:>2} wall {:>7} waited {:>7} cpu {:>7}",
                    p.turn, p.wall_us, p.waited_us, p.cpu_us
                );
            }
        }
        for turn in r.timing.per_turn.iter().filter(|p| p.turn > 0) {
            // As `exchange` does: the waits (bot + exchange thread) can add up to more than
            // the wall time, so the difference saturates at zero (then the CPU time counts).
            let charged = turn.wall_us.saturating_sub(turn.waited_us).max(turn.cpu_us);
            if charged > DEADLINE.as_micros() as u64 || (cfg.fair_clock && turn.wall_us > cap) {
                out.timeouts += 1;
                if std::env::var("FAIRNESS_DUMP").is_ok() {
                    eprintln!(
                        "timeout: turn {:>2} wall {:>7} waited {:>7} cpu {:>7}",
                        turn.turn, turn.wall_us, turn.waited_us, turn.cpu_us
                    );
                }
            }
            out.bot_turns += 1;
            out.max_wall_ms = out.max_wall_ms.max(turn.wall_us as f64 / 1e3);
            cpu_sum += turn.cpu_us;
        }
    }
    out.mean_cpu_ms = cpu_sum as f64 / 1e3 / out.bot_turns.max(1) as f64;
    out
}

fn hog() -> Child {
    Command::new("sh")
        .args(["-c", "while :; do :; done"])
        .spawn()
        .expect("hog")
}

fn run(label: &str, cmd: &BotCommand, cfg: &SandboxConfig, tokens: CoreTokens) {
    let mut hog = hog();
    let results: Vec<Outcome> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|m| {
                s.spawn({
                    let (tokens, cfg) = (tokens.clone(), cfg.clone());
                    move || play_match(cmd, &cfg, &tokens, m * 2)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("match thread"))
            .collect()
    });
    let _ = hog.kill();
    let _ = hog.wait();
    let timeouts: u32 = results.iter().map(|r| r.timeouts).sum();
    let turns: u32 = results.iter().map(|r| r.bot_turns).sum();
    let max_wall = results.iter().map(|r| r.max_wall_ms).fold(0.0, f64::max);
    let cpu = results.iter().map(|r| r.mean_cpu_ms).sum::<f64>() / results.len() as f64;
    println!("{label:<44} spurious timeouts {timeouts:>3} of {turns:>3} bot-turns   max wall {max_wall:>7.1} ms   mean CPU/turn {cpu:>5.1} ms");
}

fn main() {
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    println!("fairness: 2 matches x 2 bots (40 ms CPU/turn, deadline 50 ms, {TURNS} turns) + 1 CPU hog, {cores} cores");
    let only = std::env::var("FAIRNESS_ONLY").ok();
    for ponder in [false, true] {
        if only
            .as_deref()
            .is_some_and(|o| o != if ponder { "ponder" } else { "plain" })
        {
            continue;
        }
        let cmd = cpu40(ponder);
        let kind = if ponder {
            "pondering bots"
        } else {
            "bots thinking on their turn only"
        };
        let with = SandboxConfig::default();
        run(
            &format!("{kind}, with stops + tokens + fair clock"),
            &cmd,
            &with,
            CoreTokens::default_for_host(),
        );
        let without = SandboxConfig {
            stop_between_turns: false,
            fair_clock: false,
            ..SandboxConfig::default()
        };
        run(
            &format!("{kind}, without"),
            &cmd,
            &without,
            CoreTokens::new(1000),
        );
        let tokens_only = SandboxConfig {
            fair_clock: false,
            ..SandboxConfig::default()
        };
        run(
            &format!("{kind}, stops + tokens, wall clock"),
            &cmd,
            &tokens_only,
            CoreTokens::default_for_host(),
        );
    }
}
