//! `farm view REPLAY [--out FILE.html]`: one match's self-contained viewer page, to share a
//! match (a tournament's folder has one page for all its matches, replays/index.html). The
//! replay (.json.gz or plain .json) is verified first: the page shows only what re-simulation
//! confirms.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;

use games::bomberman::replay;

use crate::replay_file;

#[derive(Args, Debug)]
pub struct ViewArgs {
    /// The replay (.json.gz or .json) written by `farm play` or `farm run`.
    pub replay: PathBuf,
    /// Where to write the page (default: the replay's path with .html for .json.gz / .json).
    #[arg(long, value_name = "FILE.html")]
    pub out: Option<PathBuf>,
}

pub fn run(args: ViewArgs) -> Result<ExitCode> {
    let text = replay_file::read_text(&args.replay)?;
    let rp = replay::verify(&text).with_context(|| format!("replay {}", args.replay.display()))?;
    let out = args
        .out
        .unwrap_or_else(|| replay_file::stem(&args.replay).with_extension("html"));
    replay_file::write_page(&rp, &out)?;
    println!("viewer: {}", out.display());
    Ok(ExitCode::SUCCESS)
}
