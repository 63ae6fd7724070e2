//! Sandbox overhead: bot start-up time (spawn until it waits for input, and finish) and the
//! cost of one turn exchange with an instant-answer bot, per sandbox mode, with the ratio to
//! the plain mode. Run: `cargo bench -p sandbox --bench sandbox` (as root for the full mode).
//! For profiling the start-up alone (e.g. under `strace -f -w -c`): `SANDBOX_BENCH_ONLY=full`
//! (or `off`, `unprivileged`) measures one mode, `SANDBOX_BENCH_TURNS=0` skips the turns.
//! `SANDBOX_BENCH_BALLAST_MB=<n>` first fills n MiB of this process's memory (as a worker's own
//! memory is filled), since every start clones the process that starts the bot.
//! `RUST_LOG=matchfarm::startup=debug` prints each start-up's and teardown's steps to stderr
//! (`sandbox::steps`): `tools/startup-steps.py` takes their medians.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use sandbox::{Bot, BotCommand, CoreTokens, HostSupport, SandboxConfig, SandboxMode};

/// `bots/test/answer.cpp`, compiled with the compile cache's flags (outside the sandbox: the
/// bot is this checkout's own) into the target dir.
fn answer_bot() -> BotCommand {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let exe = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench-answer");
    let status = std::process::Command::new("g++")
        .args(["-std=c++20", "-O2", "-o"])
        .arg(&exe)
        .arg(root.join("bots/test/answer.cpp"))
        .status()
        .expect("g++ runs");
    assert!(status.success(), "answer.cpp compiles");
    BotCommand::new(exe)
}

fn input(t: u32) -> Vec<u8> {
    format!("TURN {t}\nBOARD\n#############\nP 0 1 1 1\nP 1 11 11 1\nBOMBS 0\nFLAMES 0\nEND\n")
        .into_bytes()
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

struct Figures {
    spawn_ms: f64,
    finish_ms: f64,
    turn_us: f64,
}

fn measure(cfg: &SandboxConfig, cmd: &BotCommand, starts: usize, turns: u32) -> Figures {
    let tokens = CoreTokens::new(2);
    let (mut spawn, mut finish) = (Vec::new(), Vec::new());
    for _ in 0..starts {
        let t0 = Instant::now();
        let bot = Bot::spawn(cmd, cfg, &tokens, 0).expect("spawn");
        spawn.push(t0.elapsed().as_secs_f64() * 1e3);
        let t1 = Instant::now();
        let r = bot.finish();
        finish.push(t1.elapsed().as_secs_f64() * 1e3);
        assert!(r.leftovers.is_empty(), "{:?}", r.leftovers);
    }
    if turns == 0 {
        return Figures {
            spawn_ms: median(&mut spawn),
            finish_ms: median(&mut finish),
            turn_us: f64::NAN,
        };
    }
    let mut bot = Bot::spawn(cmd, cfg, &tokens, 0).expect("spawn");
    for t in 0..50 {
        bot.exchange(t, &input(t), Duration::from_secs(2))
            .expect("warm-up turn");
    }
    let mut per_turn = Vec::new();
    for round in 0..5 {
        let t0 = Instant::now();
        for t in 0..turns {
            let turn = 50 + round * turns + t;
            bot.exchange(turn, &input(turn), Duration::from_secs(2))
                .expect("turn");
        }
        per_turn.push(t0.elapsed().as_secs_f64() * 1e6 / turns as f64);
    }
    assert!(bot.finish().leftovers.is_empty());
    Figures {
        spawn_ms: median(&mut spawn),
        finish_ms: median(&mut finish),
        turn_us: median(&mut per_turn),
    }
}

fn main() {
    if std::env::var_os("RUST_LOG").is_some() {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_writer(std::io::stderr)
            .with_ansi(false)
            .init();
    }
    let ballast_mb: usize = std::env::var("SANDBOX_BENCH_BALLAST_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    // Written to, so that every page is mapped and resident; kept to the end.
    let ballast = vec![1u8; ballast_mb << 20];
    let cmd = answer_bot();
    let starts = 40;
    let turns: u32 = std::env::var("SANDBOX_BENCH_TURNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let only = std::env::var("SANDBOX_BENCH_ONLY").ok();
    let mut rows = Vec::new();
    let shm = std::path::Path::new("/dev/shm").is_dir();
    for mode in [
        SandboxMode::Off,
        SandboxMode::Unprivileged,
        SandboxMode::Full,
    ] {
        if only.as_deref().is_some_and(|o| o != mode.as_str()) {
            continue;
        }
        if mode == SandboxMode::Full && !HostSupport::get().full_possible() {
            println!("full mode: skipped (needs root with CAP_SYS_ADMIN)");
            continue;
        }
        let cfg = SandboxConfig {
            mode,
            ..SandboxConfig::default()
        };
        rows.push((
            format!("{} (/tmp)", mode.as_str()),
            mode,
            measure(&cfg, &cmd, starts, turns),
        ));
        if shm {
            // The private folders on a tmpfs: no journal or disk load in mkdir / rmdir.
            let scratch_root = PathBuf::from("/dev/shm/matchfarm-bench");
            let cfg = SandboxConfig {
                mode,
                scratch_root,
                ..SandboxConfig::default()
            };
            rows.push((
                format!("{} (/dev/shm)", mode.as_str()),
                mode,
                measure(&cfg, &cmd, starts, turns),
            ));
        }
    }
    let base = rows
        .iter()
        .find(|(_, m, _)| *m == SandboxMode::Off)
        .map(|(_, _, f)| (f.spawn_ms, f.finish_ms, f.turn_us));
    println!("bot start-up and per-turn cost (median of {starts} starts; median of 5 x {turns} turns; instant-answer bot)");
    println!(
        "{:<22} {:>10} {:>8} {:>10} {:>8} {:>12} {:>8}",
        "mode", "spawn ms", "ratio", "finish ms", "ratio", "turn µs", "ratio"
    );
    for (label, _, f) in &rows {
        let (bs, bf, bt) = base.unwrap_or((f.spawn_ms, f.finish_ms, f.turn_us));
        println!(
            "{:<22} {:>10.3} {:>8.2} {:>10.3} {:>8.2} {:>12.1} {:>8.2}",
            label,
            f.spawn_ms,
            f.spawn_ms / bs,
            f.finish_ms,
            f.finish_ms / bf,
            f.turn_us,
            f.turn_us / bt
        );
    }
    if ballast_mb > 0 {
        println!(
            "with {ballast_mb} MiB of ballast ({} bytes kept)",
            std::hint::black_box(&ballast).len()
        );
    }
}
