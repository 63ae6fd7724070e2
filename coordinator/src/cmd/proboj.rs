//! `farm proboj config.json games.json [-c N] [-v]`: a drop-in for the proboj runner. Runs every
//! game of games.json as a farm job (on this machine through the embedded transport, or with
//! `--broker` on the cluster's workers; sandboxed, CPU-fair) with the proboj protocol, leaves the
//! same game folders, and writes `<game_root>/summary.md` (totals + Bradley–Terry ratings).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;

use super::flags::{KeyArgs, ModeArg};
use worker::proboj::{self, Ending, RunOptions, Summary};

#[derive(Args, Debug)]
pub struct ProbojArgs {
    /// config.json (server, players, processes_per_player, timeout, disable_logs,
    /// disable_gzip, game_root).
    pub config: PathBuf,
    /// games.json (a list of {gamefolder, players, args}).
    pub games: PathBuf,
    /// Games run at once.
    #[arg(short = 'c', long = "concurrency", default_value_t = 1)]
    pub concurrency: usize,
    /// Log every command the servers send.
    #[arg(short = 'v', long)]
    pub verbose: bool,
    /// Isolation of the server and the players (the same modes as every other command's).
    #[arg(long, env = "FARM_SANDBOX", value_enum, default_value_t = ModeArg::Auto, value_name = "MODE")]
    pub sandbox: ModeArg,
    /// Players thinking at once on this machine, over all games (default: number of cores): in
    /// fair mode a player holds one of these cores while it answers a READ.
    #[arg(long, env = "FARM_CORES", value_name = "N")]
    pub cores: Option<std::num::NonZeroUsize>,
    /// Let players run between READs (the official runner's behaviour) instead of stopping
    /// them while the server is not waiting on them.
    #[arg(long)]
    pub no_fair: bool,
    /// End a game whose server is silent this many seconds (default: never).
    #[arg(long)]
    pub server_timeout: Option<f64>,
    /// Run the games on the farm's workers through this RabbitMQ broker
    /// (amqp://user:pass@host:5672/vhost); the game folders come back to game_root. Without
    /// it, games run on this machine (-c at once).
    #[arg(long, env = "FARM_BROKER", value_name = "URL", hide_env_values = true)]
    pub broker: Option<String>,
    /// With --broker: the Redis the server, data and players are shipped through.
    #[arg(long, env = "FARM_REDIS", value_name = "URL", hide_env_values = true)]
    pub redis: Option<String>,
    #[command(flatten)]
    pub key: KeyArgs,
    /// With --broker: a folder of data the server or players read (maps...), shipped to the
    /// workers beside the programs' own folders (which always travel). Repeatable; must lie
    /// under the directory the runner is started in.
    #[arg(long, value_name = "DIR")]
    pub data: Vec<PathBuf>,
}

/// What is printed as a game ends: how it ended, its scores, its warnings.
fn done_line(o: &proboj::GameOutcome) -> String {
    let how = match &o.ending {
        Ending::End => "ok".to_owned(),
        Ending::ServerExited => "server exited without END".to_owned(),
        Ending::Interrupted => "interrupted".to_owned(),
        Ending::Failed(why) => format!("FAILED: {why}"),
    };
    let scores = o
        .scores
        .as_ref()
        .map(|s| {
            s.iter()
                .map(|(n, v)| format!("{n}={}", proboj::scores::display(*v)))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|| "no scores".into());
    let mut line = format!("game {}: {how}; {scores}\n", o.gamefolder);
    for w in &o.warnings {
        line.push_str(&format!("  warning: {w}\n"));
    }
    line
}

pub fn run(args: ProbojArgs) -> Result<ExitCode> {
    let start_dir = std::env::current_dir().context("the current directory")?;
    let raw = proboj::config::read_raw_config(&args.config)?;
    let config = proboj::config::check_config(raw.clone(), &args.config, &start_dir)?;
    let games = proboj::load_games(&args.games, &config)?;
    let mut opts = RunOptions {
        fair: !args.no_fair,
        verbose: args.verbose,
        server_timeout: args.server_timeout.map(Duration::from_secs_f64),
        ..RunOptions::default()
    };
    opts.sandbox.mode = args.sandbox.into();
    // Every player works in a private copy of its folder per game: refuse one too large to
    // copy before any game runs (the organiser's set-up, named as such).
    proboj::copies::check_player_folders(&config, &games, opts.folder_limit)?;
    opts.tokens = Some(match args.cores {
        Some(n) => sandbox::CoreTokens::new(n.get()),
        None => sandbox::CoreTokens::default_for_host(),
    });
    std::fs::create_dir_all(&config.game_root)
        .with_context(|| format!("game_root {}", config.game_root.display()))?;
    let stop = broker::Shutdown::on_signals("interrupting the games in progress")
        .context("installing the SIGTERM/SIGINT handlers")?;
    eprintln!(
        "proboj: {} games, {} at once; {}",
        games.len(),
        args.concurrency.max(1),
        opts.sandbox.describe()
    );
    let on_done = |o: &proboj::GameOutcome| eprint!("{}", done_line(o));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .worker_threads(2)
        .build()?;
    let outcomes = match &args.broker {
        None => runtime.block_on(crate::proboj::local(
            &raw,
            &config,
            &games,
            &start_dir,
            &opts,
            args.concurrency,
            &stop,
            &on_done,
        ))?,
        Some(broker) => {
            let redis = args.redis.as_deref().context(
                "--broker needs --redis URL (or FARM_REDIS): the package travels through it",
            )?;
            let cluster = crate::cluster::Cluster {
                broker: broker.clone(),
                redis: redis.to_string(),
                key: args.key.load()?,
                terms: broker::Terms::default(),
            };
            let cluster = crate::cluster::proboj::ProbojCluster {
                cluster: &cluster,
                fair: opts.fair,
                server_timeout: opts.server_timeout,
                data: &args.data,
            };
            runtime.block_on(crate::cluster::proboj::run_games(
                &cluster, &raw, &config, &games, &start_dir, &stop, &on_done,
            ))?
        }
    };
    let summary = Summary::compute(&config, &outcomes);
    let text = summary.markdown();
    let path = config.game_root.join("summary.md");
    std::fs::write(&path, &text).with_context(|| format!("writing {}", path.display()))?;
    println!("{text}");
    eprintln!("summary written to {}", path.display());
    if stop.is_set() {
        eprintln!(
            "interrupted: {} of {} games ran",
            outcomes.len(),
            games.len()
        );
        return Ok(ExitCode::from(130));
    }
    let failed = outcomes
        .iter()
        .filter(|o| matches!(o.ending, Ending::Failed(_)))
        .count();
    Ok(if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
