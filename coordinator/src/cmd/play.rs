//! `farm play`: one Bomberman match between live bots, with its replay saved as gzipped JSON and
//! its self-contained HTML viewer page (what `farm view` writes), and the result printed as a
//! table.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;

use games::bomberman::{self as bm, replay::Replay};
use worker::referee::{self, MapChoice, MatchSpec, Seat};

use crate::botprep::{self, BotPrep};
use crate::roster;

#[derive(Args, Debug)]
pub struct PlayArgs {
    /// Bots as Name=program (2..10 entries). A program is an executable or a .cpp source
    /// (compiled with g++ -std=c++20 -O2 and cached by content).
    #[arg(long, num_args = 1.., required = true, value_name = "NAME=PROGRAM")]
    pub bots: Vec<String>,
    /// Map seed: the same seed and bots give the same map.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Where to save the replay: PATH.html gets the viewer and PATH.json.gz the replay
    /// (default: replays/SEED-NAMES.html).
    #[arg(long, value_name = "PATH.html")]
    pub replay: Option<PathBuf>,
    /// Play on a hand-made board instead of a generated one: a square text file of `#` (wall),
    /// `+` (box), `.` (empty) and spawn digits 0..n-1 (n = number of bots), outer ring all `#`.
    #[arg(long, value_name = "FILE")]
    pub map: Option<PathBuf>,
    #[command(flatten)]
    pub sandbox: super::flags::SandboxArgs,
    #[command(flatten)]
    pub clock: super::flags::ClockArgs,
}

pub fn run(args: PlayArgs) -> Result<ExitCode> {
    let cwd = std::env::current_dir().context("reading the current directory")?;
    let entries = roster::parse_entries(&args.bots, &cwd)?;
    roster::check_match_size(&entries, 2, 10)?;
    let map = match &args.map {
        None => MapChoice::Generated,
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading map file {}", path.display()))?;
            let map =
                bm::parse_map(&text).with_context(|| format!("map file {}", path.display()))?;
            if map.spawns.len() != entries.len() {
                anyhow::bail!(
                    "map file {} has {} spawn digits but {} bots were given",
                    path.display(),
                    map.spawns.len(),
                    entries.len()
                );
            }
            MapChoice::Given(map)
        }
    };
    let (json_path, html_path) = replay_paths(args.replay.as_deref(), args.seed, &entries);
    let prep = BotPrep::new(&args.sandbox.settings()?)?;
    let mut seats = Vec::with_capacity(entries.len());
    for e in &entries {
        let program = prep.prepare(e).map_err(|err| match err {
            botprep::PrepError::Compile { name, message } => {
                anyhow::anyhow!("bot {name:?} does not compile:\n{message}")
            }
            other => anyhow::anyhow!(other),
        })?;
        seats.push(Seat {
            name: e.name.clone(),
            hash: botprep::file_sha256(&e.program)?,
            program: Ok(program),
        });
    }
    let spec = MatchSpec {
        seed: args.seed,
        seats,
        map,
    };
    crate::clock::warn_if_not_rules(&args.clock.spec().into());
    let replay = referee::play_clocked(spec, prep.sandbox(), prep.tokens(), args.clock.spec())
        .context("playing the match")?;
    crate::replay_file::write_gz(&replay, &json_path)?;
    crate::replay_file::write_page(&replay, &html_path)?;
    print!("{}", result_table(&replay));
    println!("replay: {}", json_path.display());
    println!("viewer: {}", html_path.display());
    Ok(ExitCode::SUCCESS)
}

fn replay_paths(given: Option<&Path>, seed: u64, entries: &[roster::Entry]) -> (PathBuf, PathBuf) {
    let html = match given {
        Some(p) => p.to_path_buf(),
        None => {
            let names: Vec<String> = entries.iter().map(|e| sanitize(&e.name)).collect();
            PathBuf::from("replays").join(format!("{seed}-{}.html", names.join("-")))
        }
    };
    (html.with_extension("json.gz"), html.with_extension("html"))
}

fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_alphanumeric() { c } else { '_' })
        .collect()
}

/// The printed result: one row per bot, in seat order.
pub fn result_table(replay: &Replay) -> String {
    let r = &replay.result;
    let width = r
        .names
        .iter()
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
    let mut out = format!(
        "seed {}  players {}  turns {}{}\n",
        r.seed,
        r.names.len(),
        r.turns,
        if r.valid_for_scoring {
            ""
        } else {
            "  (NOT valid for scoring: a bot failed to start)"
        }
    );
    out.push_str(&format!(
        "{:<width$}  rank  points  survival  kills  died  bombs  boxes  faults\n",
        "name"
    ));
    for i in 0..r.names.len() {
        let died = if r.death_turns[i] < 0 {
            "-".to_string()
        } else {
            r.death_turns[i].to_string()
        };
        let faults: Vec<String> = r.faults[i]
            .iter()
            .map(|f| format!("{} on turn {}: {}", f.kind, f.turn, f.detail))
            .collect();
        out.push_str(&format!(
            "{:<width$}  {:>4}  {:>6}  {:>8}  {:>5}  {:>4}  {:>5}  {:>5}  {}\n",
            r.names[i],
            r.ranks[i],
            r.points_exact[i],
            format!("{:.1}", r.survival_points[i]),
            format!("{:.2}", r.kill_points[i]),
            died,
            r.bombs_placed[i],
            r.boxes_broken[i],
            if faults.is_empty() {
                "-".to_string()
            } else {
                faults.join("; ")
            }
        ));
    }
    out
}
