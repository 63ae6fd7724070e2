//! The coordinator in cluster mode: load the farm key, upload the bots to Redis by sha256, open
//! the RabbitMQ transport for this tournament and run the same loop as the embedded farm.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};

use shared::msg::ProgramRef;

use super::store::Store;
use crate::run::execute::drive;
use crate::run::prepare::Plan;
use crate::run::RunArgs;
use crate::transport::rabbitmq::{ClusterSpec, RabbitMq};
use crate::transport::Transport;

/// Run a prepared tournament on the cluster at `broker` (artifacts and bookkeeping in `redis`).
pub async fn execute(plan: Plan, args: &RunArgs, broker: &str, redis: &str) -> Result<ExitCode> {
    let key = super::load_key(args.key_file.as_deref())?;
    let store = Store::connect(redis).await?;
    let mut programs = Vec::with_capacity(plan.entries.len());
    let mut artifacts: Vec<(String, PathBuf)> = Vec::new();
    for (e, h) in plan.entries.iter().zip(&plan.bot_hashes) {
        let bytes = std::fs::read(&e.program)
            .with_context(|| format!("reading {}", e.program.display()))?;
        anyhow::ensure!(
            shared::manifest::sha256_hex(&bytes) == *h,
            "{} changed since the run's identity was computed",
            e.program.display()
        );
        store.put_artifact(h, &bytes, false).await?;
        artifacts.push((h.clone(), e.program.clone()));
        programs.push(ProgramRef::for_file(h, &e.program));
    }
    let transport = RabbitMq::start(ClusterSpec {
        broker: broker.to_string(),
        key,
        tournament: plan.tournament.clone(),
        store,
        artifacts,
        dead_file: Some(plan.output.join("dead-letters.jsonl")),
        confirm_window: 512,
        view_every: Duration::from_secs(10),
    })
    .await?;
    eprintln!("{}", transport.describe());
    eprintln!("{}", transport.view().await);
    drive(plan, args, transport, programs).await
}
