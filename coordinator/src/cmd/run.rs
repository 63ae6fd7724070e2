//! `farm run`'s flags (the reference evaluate.py's, plus the cluster, sandbox, clock and
//! stop-rule groups) and what the command does with them: the tournament they describe, the
//! setup and engine settings of the run engine ([`crate::run`]), which never sees these flags.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use shared::schedule::ScheduleError;

use super::flags::{ClockArgs, ClusterArgs, MetricsArgs, SandboxArgs, ScaleClockArgs};
use crate::run::engine::Engine;
use crate::run::game::Game;
use crate::run::prepare::{
    prepare_with, Plan, ScheduleSource, Setup, Tournament, FORMAL_ROSTER, FORMAL_SCHEDULE,
};
use crate::run::stop;

#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// The game to play (each value says what its entrants are). A game always played by as
    /// many seats (qianwang and nim: 2, lowest: 3) takes that as its --sizes; bomberman and
    /// proboj read --workspace, only bomberman has --formal.
    #[arg(long, value_enum, default_value_t = Game::default(), value_name = "GAME", env = "FARM_GAME")]
    pub game: Game,
    /// The referee package (its MANIFEST.json is checked before anything runs); with --game
    /// proboj, the folder of the game's config.json and games.json (e.g. bots/proboj), whose
    /// commands are relative to the directory farm runs in.
    #[arg(long, default_value = "workspace/bomberman", value_name = "DIR")]
    pub workspace: PathBuf,
    /// Unique Name=program entries (executables or .cpp sources); their order is the frozen
    /// slot order. With --game proboj, names of config.json's players (`--bots one two`).
    #[arg(long, num_args = 1.., value_name = "NAME=PROGRAM", required_unless_present = "formal")]
    pub bots: Vec<String>,
    /// Match sizes to play (each unique, 2..min(10, bots)); no filler bots. Required for
    /// bomberman; another game's default is the number it is played by.
    #[arg(long, num_args = 1.., value_name = "N")]
    pub sizes: Vec<i64>,
    /// Name of the public baseline among --bots (rated 0).
    #[arg(long, value_name = "NAME", required_unless_present = "formal")]
    pub anchor: Option<String>,
    /// Number of maps (seeds) per size; with --game proboj, how many times each map of its
    /// games.json is played per seating. The whole schedule may hold at most 1,000,000 matches
    /// (refused up front otherwise).
    #[arg(
        long,
        default_value_t = 5,
        value_name = "N",
        allow_negative_numbers = true
    )]
    pub seeds: i64,
    /// Schedule seed: an integer from -2^127 to 2^127 - 1 (a larger one is refused);
    /// drawn at random (63 bits) and recorded when omitted.
    #[arg(long, value_name = "INT", allow_negative_numbers = true)]
    pub seed: Option<String>,
    /// Output folder (must not exist, unless --resume).
    #[arg(long, value_name = "DIR")]
    pub output: PathBuf,
    /// Compile the bots, write schedule.json and identity.json, then stop without running any
    /// bot.
    #[arg(long)]
    pub plan_only: bool,
    /// A frozen slot schedule (JSON: sizes, entries with size/seed/slots, baseline_slot,
    /// schedule_seed, version); the order of --bots defines the slots.
    #[arg(long, value_name = "FILE")]
    pub schedule: Option<PathBuf>,
    /// Continue a run in --output after checking that nothing about it changed.
    #[arg(long)]
    pub resume: bool,
    /// With --resume: play again the matches that failed (infrastructure) last time. A plain
    /// --resume does that too (a host fault, e.g. a full disk, is never final); kept for
    /// scripts. Refused with --until-settled, whose rule reads results in schedule order.
    #[arg(long, requires = "resume")]
    pub redo_failed: bool,
    /// With --resume: take back the results given by workers this run quarantined
    /// (quarantine.json) and play those matches again; the log keeps a retraction line for
    /// each. Refused with --until-settled.
    #[arg(long, requires = "resume")]
    pub redo_suspect: bool,
    /// Play even if some .cpp entrants do not compile. Each such bot is eliminated at turn 0 in
    /// every one of its matches and those matches do not count for scoring; 汇总.md, bt.json and
    /// the final output name these bots. Without this flag the run compiles every entrant first
    /// and stops, playing nothing, with the compiler's message for each bot that does not
    /// compile. A host that cannot compile at all stops the run either way.
    #[arg(long)]
    pub allow_compile_failures: bool,
    /// Concurrent matches (default: number of cores).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub workers: Option<i64>,
    /// Refresh 汇总.md every N results (results themselves are checkpointed continuously).
    #[arg(
        long,
        default_value_t = 25,
        value_name = "N",
        allow_negative_numbers = true
    )]
    pub report_every: i64,
    /// The bundled tournament: every bot in bots/bomberman with Base as anchor, on the frozen
    /// schedule in the workspace (schedule-bundled.json): the formal-run shortcut.
    #[arg(long, conflicts_with_all = ["bots", "sizes", "anchor", "schedule", "seeds", "seed"])]
    pub formal: bool,
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
    /// Stop early, after the first whole unit (one map with all its seat rotations, in schedule
    /// order) at which every adjacent pair of the Bradley-Terry ranking is separated at
    /// --confidence by the map-unit bootstrap. results.json is then a prefix of the schedule;
    /// 汇总.md, bt.json and stopped.json say why and how many matches were saved. Part of the
    /// run's identity: a --resume must give the same flags. An expanded schedule (--seeds) is
    /// played in `--order rounds` unless --order says otherwise.
    #[arg(long)]
    pub until_settled: bool,
    /// The order an expanded schedule (--seeds) is played in: `reference` is evaluate.py's (size
    /// by size, seat group by seat group, map by map); `rounds` plays the same matches with
    /// round k holding the k-th map of every size for every seat group, so the ranking can be
    /// judged after the first round. Default: rounds with --until-settled, reference otherwise.
    /// schedule.json records the order; a full run with --order rounds is what an
    /// --until-settled run is a prefix of.
    #[arg(long, value_enum, value_name = "ORDER", conflicts_with_all = ["schedule", "formal"])]
    pub order: Option<Order>,
    /// With --until-settled: the share of bootstrap resamples that must keep each adjacent
    /// pair in its order (0 < C < 1).
    #[arg(long, requires = "until_settled", value_name = "C")]
    pub confidence: Option<f64>,
    /// With --until-settled: stop at the last whole unit within N matches at the latest.
    #[arg(long, requires = "until_settled", value_name = "N")]
    pub max_matches: Option<u64>,
}

/// The play order of an expanded schedule (`--order`).
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// evaluate.py's order.
    Reference,
    /// Round k: the k-th map of every size, every seat group ([`shared::settle::in_rounds`]).
    Rounds,
}

/// --confidence when not given.
pub const DEFAULT_CONFIDENCE: f64 = 0.95;

impl RunArgs {
    /// The play order of an expanded schedule: --order, else rounds with --until-settled.
    pub fn order(&self) -> Order {
        self.order.unwrap_or(if self.until_settled {
            Order::Rounds
        } else {
            Order::Reference
        })
    }

    /// The --until-settled settings, when the flag is given.
    pub fn settle_settings(&self) -> Option<stop::SettleSettings> {
        self.until_settled.then(|| stop::SettleSettings {
            confidence: self.confidence.unwrap_or(DEFAULT_CONFIDENCE),
            max_matches: self.max_matches,
        })
    }
}

/// The setup of `farm run`'s flags.
fn setup_of(args: &RunArgs) -> Result<Setup> {
    let game = args.game;
    // The bundled tournament (its roster, anchor and frozen schedule) is the default game's.
    if args.formal && game != Game::default() {
        anyhow::bail!(
            "--formal is the bundled {} tournament; with --game {} give --bots, --anchor and --sizes",
            Game::default().name(),
            game.name()
        );
    }
    if !args.formal && args.sizes.is_empty() && game.default_sizes().is_none() {
        anyhow::bail!(
            "--sizes is required (the match sizes to play, e.g. --sizes 2 3 4), unless --formal"
        );
    }
    let clock = args.scale.tournament(&args.clock);
    game.check_clock(&clock)?;
    Ok(Setup {
        game,
        workspace: args.workspace.clone(),
        output: args.output.clone(),
        resume: args.resume,
        workers: args.workers,
        report_every: args.report_every,
        allow_compile_failures: args.allow_compile_failures,
        host: args.sandbox.settings()?,
        clock,
    })
}

/// The tournament `farm run`'s flags describe (--formal: the bundled one).
fn tournament_of_run(args: &RunArgs) -> Tournament {
    if args.formal {
        Tournament {
            bots: FORMAL_ROSTER
                .iter()
                .map(|(n, p)| format!("{n}={p}"))
                .collect(),
            anchor: "Base".to_string(),
            sizes: Vec::new(),
            schedule: ScheduleSource::Frozen {
                path: args.workspace.join(FORMAL_SCHEDULE),
                own_sizes: true,
            },
            scoring_extra: Vec::new(),
        }
    } else {
        Tournament {
            bots: args.bots.clone(),
            anchor: args.anchor.clone().unwrap_or_default(),
            sizes: match args.game.default_sizes() {
                Some(sizes) if args.sizes.is_empty() => sizes,
                _ => args.sizes.clone(),
            },
            schedule: match &args.schedule {
                Some(path) => ScheduleSource::Frozen {
                    path: path.clone(),
                    own_sizes: false,
                },
                None => ScheduleSource::Expand {
                    seeds: args.seeds,
                    seed: args.seed.clone(),
                    rounds: args.order() == Order::Rounds,
                },
            },
            scoring_extra: Vec::new(),
        }
    }
}

/// Refuse an expanded schedule too large to hold before anything is drawn or allocated,
/// naming `flag` (the seed count's flag); every other bad plan is refused by the expansion.
pub fn refuse_huge_schedule(bots: usize, sizes: &[i64], seeds: i64, flag: &str) -> Result<()> {
    if let Err(ScheduleError::TooLarge { matches, max }) =
        shared::schedule::validate_plan(bots, sizes, seeds)
    {
        let matches = matches.map_or_else(|| "more than 2^64".to_string(), |n| n.to_string());
        anyhow::bail!(
            "{flag} {seeds}: {bots} bots in sizes {sizes:?} would make {matches} matches; a schedule holds at most {max} (give a smaller {flag})"
        );
    }
    Ok(())
}

/// Prepare `farm run`.
fn prepare(args: &RunArgs, setup: &Setup) -> Result<Plan> {
    let mut tournament = tournament_of_run(args);
    if let ScheduleSource::Expand { seeds, .. } = tournament.schedule {
        refuse_huge_schedule(args.bots.len(), &tournament.sizes, seeds, "--seeds")?;
    }
    if let Some(s) = args.settle_settings() {
        tournament
            .scoring_extra
            .push((stop::UNTIL_SETTLED.to_string(), s.identity_value()));
    }
    prepare_with(setup, tournament)
}

/// The engine settings of `farm run`'s flags (the farm key is loaded here, in cluster mode).
fn engine_of(args: &RunArgs, setup: &Setup) -> Result<Engine> {
    Ok(Engine {
        workspace: setup.workspace.clone(),
        redo_failed: args.redo_failed,
        redo_suspect: args.redo_suspect,
        cluster: args.cluster.cluster()?,
        min_speed: args.cluster.min_speed,
        host: setup.host.clone(),
        clock: setup.clock,
    })
}

pub fn run(args: RunArgs) -> Result<ExitCode> {
    let setup = setup_of(&args)?;
    let plan = prepare(&args, &setup)?;
    println!(
        "{} entrants; sizes={:?}; {} games; no fillers.",
        plan.entries.len(),
        plan.sizes,
        plan.schedule.len()
    );
    if args.order() == Order::Rounds && args.schedule.is_none() && !args.formal {
        println!("Played in rounds: round k is the k-th map of every size, every seat group.");
    }
    if args.plan_only {
        return Ok(ExitCode::SUCCESS);
    }
    let engine = engine_of(&args, &setup)?;
    let mut rule = match args.settle_settings() {
        Some(settings) => Some(stop::UntilSettled::new(
            settings,
            &plan.schedule,
            plan.entries.iter().map(|e| e.name.clone()).collect(),
            &plan.sizes,
            plan.anchor.clone(),
        )?),
        None => None,
    };
    let stop = rule.as_mut().map(|r| r as &mut dyn stop::StopRule);
    let finished = args
        .serve
        .run(crate::run::dispatch(plan, &engine, stop))??;
    Ok(finished.code)
}
