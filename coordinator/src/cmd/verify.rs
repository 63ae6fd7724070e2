//! `farm verify`: re-simulate a replay and accept it only if its map, every turn's state and its
//! result are exactly what the replay claims; otherwise name the first difference.

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
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("REJECTED: {}: {e}", args.replay.display());
            Ok(ExitCode::from(1))
        }
    }
}
