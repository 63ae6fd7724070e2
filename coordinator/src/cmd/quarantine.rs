//! `farm quarantine`: what an operator sees of, and does about, the workers that tournaments
//! quarantined (their fault record stood out from the fleet's): `list` them with the evidence,
//! `release` one so it takes jobs again (its coordinator notices within seconds and counts its
//! reports from a clean record).

use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};

#[derive(Args, Debug)]
pub struct QuarantineArgs {
    /// The farm's Redis (redis://host:6379/0), where coordinators record quarantines.
    #[arg(long, env = "FARM_REDIS", value_name = "URL", hide_env_values = true)]
    pub redis: String,
    #[command(subcommand)]
    pub command: QuarantineCommand,
}

#[derive(Subcommand, Debug)]
pub enum QuarantineCommand {
    /// Every quarantined worker: worker, tournament, evidence (one line each).
    List,
    /// Let a worker take jobs again (after repairing its host).
    Release {
        /// The worker's id, as `farm quarantine list` and the coordinator's log name it.
        worker: String,
        /// Release it from this tournament's quarantine only (default: from every one).
        #[arg(long, value_name = "ID")]
        tournament: Option<String>,
    },
}

pub fn run(args: QuarantineArgs) -> Result<ExitCode> {
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    runtime.block_on(async move {
        let store = broker::store::Store::connect(&args.redis).await?;
        match args.command {
            QuarantineCommand::List => {
                let all = store.quarantines().await.context("listing quarantines")?;
                if all.is_empty() {
                    println!("no worker is quarantined");
                }
                for (worker, tournament, evidence) in all {
                    println!("{worker}\t{tournament}\t{evidence}");
                }
                Ok(ExitCode::SUCCESS)
            }
            QuarantineCommand::Release { worker, tournament } => {
                let gone = store
                    .release(&worker, tournament.as_deref())
                    .await
                    .context("releasing the worker")?;
                if gone.is_empty() {
                    eprintln!(
                        "error: worker {worker:?} is not quarantined{} (see `farm quarantine list`)",
                        tournament
                            .map(|t| format!(" by tournament {t}"))
                            .unwrap_or_default()
                    );
                    return Ok(ExitCode::from(1));
                }
                for t in gone {
                    println!("released {worker} from the quarantine of tournament {t}");
                }
                Ok(ExitCode::SUCCESS)
            }
        }
    })
}
