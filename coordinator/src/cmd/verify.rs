//! `farm verify`: re-simulate a replay and accept it only if its map, every turn's state and its
//! result are exactly what the replay claims (and, with a time bank, every bot's bank turn by
//! turn); otherwise name the first difference. A 钳王 or Nim match record (a `--game qianwang`
//! or `--game nim` run's replay) is re-played move by move. A replay is gzipped (`.json.gz`, as `farm run` and
//! `farm play` write them) or plain JSON. Given a folder (a run's output folder or its
//! `replays/`), it checks every replay in it and fails if any is rejected.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;

use games::bomberman::replay;

#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// The replay to check (.json.gz or .json), or a folder: every replay in it (or in its
    /// replays/ subfolder).
    pub replay: PathBuf,
}

pub fn run(args: VerifyArgs) -> Result<ExitCode> {
    if !args.replay.is_dir() {
        return Ok(if verify_one(&args.replay)? {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        });
    }
    let files = replays_in(&args.replay)?;
    if files.is_empty() {
        anyhow::bail!(
            "no replays (*.json.gz, *.json) in {}",
            args.replay.display()
        );
    }
    let mut rejected = 0usize;
    for f in &files {
        if !verify_one(f)? {
            rejected += 1;
        }
    }
    println!(
        "{} of {} replays in {} verified",
        files.len() - rejected,
        files.len(),
        args.replay.display()
    );
    Ok(if rejected == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Check one replay file, printing the verdict; false if it was rejected.
fn verify_one(path: &Path) -> Result<bool> {
    let text = crate::replay_file::read_text(path)?;
    if let Some(verdict) = crate::run::game::Game::of_replay(&text).verify_record(&text) {
        return Ok(match verdict {
            Ok(what) => {
                println!("OK: {} verified ({what})", path.display());
                true
            }
            Err(e) => {
                eprintln!("REJECTED: {}: {e:#}", path.display());
                false
            }
        });
    }
    match replay::verify(&text) {
        Ok(rp) => {
            println!(
                "OK: {} verified ({} turns, {} players, ranks {:?})",
                path.display(),
                rp.result.turns,
                rp.result.names.len(),
                rp.result.ranks
            );
            if let Some(line) = scaling_line(&rp) {
                println!("{line}");
            }
            if let Some(line) = bank_line(&rp) {
                println!("{line}");
            }
            Ok(true)
        }
        Err(e) => {
            eprintln!("REJECTED: {}: {e}", path.display());
            Ok(false)
        }
    }
}

/// The replay files of a folder (of its `replays/` subfolder if it has one), sorted by name.
fn replays_in(dir: &Path) -> Result<Vec<PathBuf>> {
    let sub = dir.join("replays");
    let dir = if sub.is_dir() { sub } else { dir.to_path_buf() };
    let mut files = Vec::new();
    for e in std::fs::read_dir(&dir).with_context(|| format!("listing {}", dir.display()))? {
        let p = e
            .with_context(|| format!("listing {}", dir.display()))?
            .path();
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
        let is_replay = name.is_some_and(|n| {
            !n.starts_with('.') && (n.ends_with(".json.gz") || n.ends_with(".json"))
        });
        if is_replay && p.is_file() {
            files.push(p);
        }
    }
    files.sort();
    Ok(files)
}

/// With a scaled clock: what was stated, for which speed, and what this host played.
fn scaling_line(rp: &replay::Replay) -> Option<String> {
    let s = rp.scaling.as_ref()?;
    let played = s.played().ok()?;
    Some(format!(
        "scaled clock: {} ms + {} ms bank stated for speed {}, played as {} ms + {} ms on a host \
         of speed {} (checked)",
        s.stated.turn_ms,
        s.stated.bank_ms,
        s.reference_speed,
        played.turn_ms,
        played.bank_ms,
        s.speed
    ))
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
