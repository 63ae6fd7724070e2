//! `farm verify`: re-simulate a replay and accept it only if its map, every turn's state and its
//! result are exactly what the replay claims (and, with a time bank, every bot's bank turn by
//! turn); otherwise name the first difference.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;

use games::bomberman::replay;

#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// The replay JSON to check.
    pub replay: PathBuf,
}

pub fn run(args: VerifyArgs) -> Result<ExitCode> {
    let text = std::fs::read_to_string(&args.replay)
        .with_context(|| format!("reading {}", args.replay.display()))?;
    match replay::verify(&text) {
        Ok(rp) => {
            println!(
                "OK: {} verified ({} turns, {} players, ranks {:?})",
                args.replay.display(),
                rp.result.turns,
                rp.result.names.len(),
                rp.result.ranks
            );
            if let Some(line) = bank_line(&rp) {
                println!("{line}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("REJECTED: {}: {e}", args.replay.display());
            Ok(ExitCode::from(1))
        }
    }
}

/// With a time bank: how much of it each bot drew (its bank after its last recorded turn).
fn bank_line(rp: &replay::Replay) -> Option<String> {
    let c = rp.clock.as_ref()?;
    let drawn: Vec<String> = rp
        .names
        .iter()
        .zip(&c.turns)
        .map(|(name, turns)| {
            let left = turns.last().map_or(c.bank_ms * 1000, |t| t.bank_us);
            format!(
                "{name} {:.1} ms",
                (c.bank_ms * 1000).saturating_sub(left) as f64 / 1000.0
            )
        })
        .collect();
    Some(format!(
        "time bank: {} ms per bot (turn limit {} ms), checked turn by turn; drawn: {}",
        c.bank_ms,
        c.turn_ms,
        drawn.join(", ")
    ))
}
