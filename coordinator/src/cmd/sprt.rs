//! `farm sprt`'s flags and what the command does with them: the two-bot tournament of game
//! pairs they describe, run through the run engine with the SPRT stop rule
//! ([`crate::sprt::rule::SprtRule`]); the verdict goes to sprt.json and stdout.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::Args;

use shared::schedule::Identity;
use shared::sprt::Sprt;

use super::flags::{ClockArgs, ClusterArgs, MetricsArgs, SandboxArgs, ScaleClockArgs};
use crate::run::engine::Engine;
use crate::run::game::Game;
use crate::run::prepare::{self, ScheduleSource, Setup, Tournament};
use crate::run::stop::SPRT_IDENTITY;
use crate::sprt::rule::{SprtRule, SPRT_NAME};

#[derive(Args, Debug, Clone)]
pub struct SprtArgs {
    /// The game: bomberman or nim (.cpp sources or executables), qianwang (钳王, .js bots) or
    /// proboj (--new and --base name players of the config.json in --workspace). A pair is one
    /// seed (proboj: one map, in turn) played with both seat orders.
    #[arg(long, value_enum, default_value_t = Game::default(), value_name = "GAME", env = "FARM_GAME")]
    pub game: Game,
    /// The tested bot, NAME=PROGRAM (an executable or a .cpp source; with --game proboj, a
    /// player's name). H1 says it is at least --elo1 stronger than --base; the Elo figures are
    /// its.
    #[arg(long, value_name = "NAME=PROGRAM")]
    pub new: String,
    /// The bot it is tested against, NAME=PROGRAM (another name than --new; the same program
    /// under another name tests a bot against itself).
    #[arg(long, value_name = "NAME=PROGRAM")]
    pub base: String,
    /// H0: the new bot is this many Elo (logistic, per game) stronger than the base.
    #[arg(
        long,
        default_value_t = 0.0,
        allow_negative_numbers = true,
        value_name = "ELO"
    )]
    pub elo0: f64,
    /// H1: the new bot is this many Elo stronger (must exceed --elo0). The closer to --elo0,
    /// the more pairs a verdict takes.
    #[arg(
        long,
        default_value_t = 10.0,
        allow_negative_numbers = true,
        value_name = "ELO"
    )]
    pub elo1: f64,
    /// Chance of accepting H1 when H0 holds (false positive).
    #[arg(long, default_value_t = 0.05, value_name = "P")]
    pub alpha: f64,
    /// Chance of accepting H0 when H1 holds (false negative).
    #[arg(long, default_value_t = 0.05, value_name = "P")]
    pub beta: f64,
    /// Seed of the maps: an integer from -2^127 to 2^127 - 1; drawn at random (63 bits) and recorded when omitted; a
    /// --resume without it reuses the recorded one.
    #[arg(long, value_name = "INT", allow_negative_numbers = true)]
    pub seed: Option<String>,
    /// Stop after this many pairs at the latest, inconclusive if no bound was crossed (at most
    /// 500,000: the schedule holds every pair up front).
    #[arg(long, default_value_t = 1000, value_name = "N")]
    pub max_pairs: u64,
    /// Output folder (must not exist, unless --resume): the files of `farm run` plus sprt.json.
    #[arg(long, value_name = "DIR")]
    pub output: PathBuf,
    /// Continue a test in --output (after a crash or kill) with the same parameters.
    #[arg(long)]
    pub resume: bool,
    /// Concurrent matches (default: number of cores); part of the run's identity.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub workers: Option<i64>,
    /// The referee package (its MANIFEST.json is checked before anything runs); with --game
    /// proboj, the folder of the game's config.json and games.json.
    #[arg(long, default_value = "workspace/bomberman", value_name = "DIR")]
    pub workspace: PathBuf,
    #[command(flatten)]
    pub serve: MetricsArgs,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
    #[command(flatten)]
    pub clock: ClockArgs,
    #[command(flatten)]
    pub scale: ScaleClockArgs,
}

/// The name of a NAME=PROGRAM entry, or a bare name (a proboj player); checked fully by the
/// game's entrant parser later.
fn name_of(entry: &str, flag: &str) -> Result<String> {
    match entry.split_once('=') {
        Some((name, _)) if !name.trim().is_empty() => Ok(name.to_string()),
        None if !entry.trim().is_empty() => Ok(entry.to_string()),
        _ => {
            bail!("{flag} {entry:?} must be NAME=PROGRAM (or, with --game proboj, a player's name)")
        }
    }
}

/// The seed to use: --seed, else (resume) the recorded one, else None (drawn and recorded).
fn seed_of(args: &SprtArgs) -> Result<Option<String>> {
    if args.seed.is_some() || !args.resume {
        return Ok(args.seed.clone());
    }
    let path = args.output.join("identity.json");
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("nothing to resume: reading {}", path.display()))?;
    let saved: Identity =
        serde_json::from_str(&text).with_context(|| format!("{} is malformed", path.display()))?;
    Ok(Some(saved.schedule.schedule_seed.to_string()))
}

pub fn run(args: SprtArgs) -> Result<ExitCode> {
    let test = Sprt::new(args.elo0, args.elo1, args.alpha, args.beta)
        .context("--elo0, --elo1, --alpha, --beta")?;
    if args.max_pairs == 0 || args.max_pairs > i64::MAX as u64 {
        bail!("--max-pairs must be positive");
    }
    let (new, base) = (name_of(&args.new, "--new")?, name_of(&args.base, "--base")?);
    if new == base {
        bail!("--new and --base must have different names (both are {new:?})");
    }
    let params = serde_json::json!({
        "elo0": args.elo0, "elo1": args.elo1, "alpha": args.alpha, "beta": args.beta,
        "max_pairs": args.max_pairs, "new": new, "base": base,
    });
    super::run::refuse_huge_schedule(2, &[2], args.max_pairs as i64, "--max-pairs")?;
    let tournament = Tournament {
        bots: vec![args.new.clone(), args.base.clone()],
        anchor: base.clone(),
        sizes: vec![2],
        schedule: ScheduleSource::Expand {
            seeds: args.max_pairs as i64,
            seed: seed_of(&args)?,
            rounds: false, // one seat group: both orders are the same
        },
        scoring_extra: vec![(SPRT_IDENTITY.to_string(), params.to_string())],
    };
    let clock = args.scale.tournament(&args.clock);
    args.game.check_clock(&clock)?;
    let setup = Setup {
        game: args.game,
        workspace: args.workspace.clone(),
        output: args.output.clone(),
        resume: args.resume,
        workers: args.workers,
        report_every: 25,
        allow_compile_failures: false,
        host: args.sandbox.settings()?,
        clock,
    };
    let plan = prepare::prepare_with(&setup, tournament)?;
    let seed = plan.identity.schedule.schedule_seed;
    let output = plan.output.clone();
    let (lower, upper) = test.bounds();
    eprintln!(
        "SPRT {new} vs {base}: H0 elo {} / H1 elo {}, alpha {}, beta {}: bounds [{lower:.3}, {upper:.3}]; at most {} pairs (seed {seed})",
        args.elo0, args.elo1, args.alpha, args.beta, args.max_pairs
    );
    let engine = Engine {
        workspace: args.workspace.clone(),
        redo_failed: false,
        redo_suspect: false,
        cluster: args.cluster.cluster()?,
        min_speed: args.cluster.min_speed,
        host: setup.host.clone(),
        clock: setup.clock,
    };
    let mut rule = SprtRule::new(test, args.max_pairs, new, base);
    // The verdict and sprt.json are written before a --linger-secs wait begins, so a last
    // scrape of /metrics and the files agree while the server lingers.
    let code = args.serve.run(async {
        let finished = crate::run::dispatch(plan, &engine, Some(&mut rule)).await?;
        let summary = rule.summary(finished.stopped.as_ref(), seed, args.max_pairs);
        crate::fsio::write_atomic(
            &output.join(SPRT_NAME),
            (serde_json::to_string_pretty(&summary)? + "\n").as_bytes(),
        )?;
        print!("{}", SprtRule::summary_text(&summary));
        println!("sprt: {}", output.join(SPRT_NAME).display());
        if !rule.decided() && finished.code == ExitCode::SUCCESS {
            eprintln!(
                "inconclusive: no bound crossed within --max-pairs {} (exit 0); more pairs, or elo0/elo1 further apart, would decide",
                args.max_pairs
            );
        }
        anyhow::Ok(finished.code)
    })??;
    Ok(code)
}
