//! `farm`: the operator's entry point. Plays single matches, inspects and verifies replays, runs
//! tournaments (embedded or on a cluster) and rebuilds their reports.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use coordinator::cmd;

#[derive(Parser)]
#[command(
    name = "farm",
    version,
    about = "matchfarm: run bot tournaments on one machine or a cluster",
    long_about = "matchfarm runs bot matches under a referee with the bots sandboxed, verifies every \
replay, and rates the bots with Bradley-Terry.\n\nStart with `farm play` for one match, or `farm run` \
for a tournament (embedded by default; add --broker for a cluster)."
)]
struct Cli {
    /// What to log on stderr: a tracing filter such as `info`, `warn,worker=debug`. The
    /// RabbitMQ client's own events are off unless the filter names it (`warn,lapin=debug`).
    #[arg(
        long,
        global = true,
        env = "FARM_LOG",
        default_value = "warn",
        value_name = "FILTER"
    )]
    log: String,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Play one Bomberman match between 2..10 bots and save its replay (gzipped JSON + HTML viewer).
    Play(cmd::play::PlayArgs),
    /// Show the full board, players, bombs, flames and faults around one turn of a replay.
    Inspect(cmd::inspect::InspectArgs),
    /// Re-simulate a replay and check that its states and result are exactly what it claims.
    Verify(cmd::verify::VerifyArgs),
    /// Write one replay's self-contained HTML viewer page (to share a match).
    View(cmd::view::ViewArgs),
    /// Run a tournament (the flags of the reference evaluate.py): schedule, matches, checkpoints,
    /// report (汇总.md), Bradley-Terry ratings (bt.json).
    Run(cmd::run::RunArgs),
    /// Sequential test of two bots on game pairs (one map, both seat orders): stops when the
    /// SPRT accepts H1 (new is --elo1 better) or H0, or at --max-pairs; writes sprt.json.
    Sprt(cmd::sprt::SprtArgs),
    /// Rebuild 汇总.md, results.json and bt.json of a run's output folder from its results log
    /// (also while the run is still going).
    Report(cmd::report::ReportArgs),
    /// Write MANIFEST.json (sha256 of every regular file, hidden ones left out; symbolic links
    /// refused) for a referee package folder.
    Manifest(cmd::manifest::ManifestArgs),
    /// A stateless cluster worker: plays jobs from RabbitMQ, artifacts from Redis.
    Worker(cmd::worker::WorkerArgs),
    /// Run proboj games (a server program + player programs, KSP's proboj protocol) like the
    /// proboj runner: same config.json/games.json, same game folders, plus summary.md.
    Proboj(cmd::proboj::ProbojArgs),
    /// Workers that tournaments quarantined (their faults stood out from the fleet's): list
    /// them with the evidence, release one after repairing its host.
    Quarantine(cmd::quarantine::QuarantineArgs),
    /// The 钳王 (qianwang) ladder: `serve` the HTTP API and pages, `admin` players and keys.
    Ladder(cmd::ladder::LadderArgs),
    /// Internal: the sandboxed child that hosts one 钳王 match's JavaScript bots for a worker
    /// (frames on stdin/stdout). Started by the farm itself, never by hand.
    #[command(name = "__js-bot", hide = true)]
    JsBot,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Command::JsBot = cli.command {
        // No logging set-up: the child's stdout is its pipe to the worker.
        return cmd::js_bot::run();
    }
    match coordinator::logging::filter(&cli.log) {
        Ok(filter) => coordinator::logging::init(filter),
        Err(e) => {
            eprintln!(
                "error: --log (FARM_LOG) {:?} is not a log filter: {e}",
                cli.log
            );
            return ExitCode::from(2);
        }
    }
    let outcome = match cli.command {
        Command::Play(a) => cmd::play::run(a),
        Command::Inspect(a) => cmd::inspect::run(a),
        Command::Verify(a) => cmd::verify::run(a),
        Command::View(a) => cmd::view::run(a),
        Command::Run(a) => cmd::run::run(a),
        Command::Sprt(a) => cmd::sprt::run(a),
        Command::Report(a) => cmd::report::run(a),
        Command::Manifest(a) => cmd::manifest::run(a),
        Command::Worker(a) => cmd::worker::run(a),
        Command::Proboj(a) => cmd::proboj::run(a),
        Command::Quarantine(a) => cmd::quarantine::run(a),
        Command::Ladder(a) => cmd::ladder::run(a),
        Command::JsBot => cmd::js_bot::run_ok(),
    };
    match outcome {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
