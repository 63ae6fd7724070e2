//! `farm inspect`: a text view of a replay around one turn (full board, players, bombs, flames,
//! status, actions and faults), for bot authors working out what happened.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;

use games::bomberman::replay;

#[derive(Args, Debug)]
pub struct InspectArgs {
    /// The replay written by `farm play` or `farm run` (.json.gz, or plain .json).
    pub replay: PathBuf,
    /// The turn to show.
    #[arg(long)]
    pub turn: u32,
    /// Also show this many turns before and after.
    #[arg(long, default_value_t = 0)]
    pub context: u32,
}

pub fn run(args: InspectArgs) -> Result<ExitCode> {
    let text = crate::replay_file::read_text(&args.replay)?;
    let rp = replay::verify(&text).with_context(|| format!("replay {}", args.replay.display()))?;
    let view = replay::inspect(&rp, args.turn, args.context)
        .with_context(|| format!("replay {}", args.replay.display()))?;
    print!("{view}");
    Ok(ExitCode::SUCCESS)
}
