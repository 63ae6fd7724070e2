//! The coordinator in cluster mode: upload the bots and the referee package
//! (every file of its MANIFEST, and the manifest itself under its digest) to Redis by sha256,
//! open the RabbitMQ transport for this tournament and run the same loop as the embedded farm.
//! Workers need nothing local: they fetch the package by the job's digest and check it.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};

use broker::Store;
use shared::msg::ProgramRef;

use super::engine::{Engine, Finished};
use super::execute::drive;
use super::prepare::Plan;
use super::stop::StopRule;
use crate::cluster::Cluster;
use crate::transport::rabbitmq::{ClusterSpec, RabbitMq};
use crate::transport::Transport;

/// Run a prepared tournament on `cluster` (artifacts and bookkeeping in its Redis).
pub async fn execute(
    plan: Plan,
    engine: &Engine,
    cluster: &Cluster,
    stop: Option<&mut dyn StopRule>,
) -> Result<Finished> {
    let store = Store::connect(&cluster.redis).await?;
    let mut programs = Vec::with_capacity(plan.entries.len());
    let mut artifacts: Vec<(String, PathBuf)> = Vec::new();
    let files = plan.entries.iter().zip(&plan.bot_hashes);
    let entrant_files = files.filter(|_| plan.game.seats_carry_programs());
    for (e, h) in entrant_files {
        upload(&store, h, &e.program, &mut artifacts).await?;
        programs.push(ProgramRef::for_file(h, &e.program));
    }
    // The files every job names (proboj's package), else the referee package fetched by its
    // digest (a game with none, e.g. 钳王, has an empty digest).
    for (sha, path) in &plan.package_files {
        upload(&store, sha, path, &mut artifacts).await?;
    }
    if plan.package_files.is_empty() && !plan.manifest_digest.is_empty() {
        upload_package(&plan, engine, &store, &mut artifacts).await?;
    }
    let completed: Vec<u64> = plan
        .done
        .iter()
        .chain(&plan.ahead)
        .filter(|r| r.result.is_some())
        .map(|r| r.number)
        .collect();
    let transport = RabbitMq::start(ClusterSpec {
        broker: cluster.broker.clone(),
        key: cluster.key.clone(),
        tournament: plan.tournament.clone(),
        store,
        artifacts,
        dead_file: Some(plan.output.join("dead-letters.jsonl")),
        confirm_window: 512,
        view_every: Duration::from_secs(10),
        completed,
        terms: cluster.terms,
    })
    .await?;
    eprintln!("{}", transport.describe());
    eprintln!("{}", transport.view().await);
    drive(plan, engine, transport, programs, stop).await
}

/// One file to Redis under its sha256, checked to still hash to it.
async fn upload(
    store: &Store,
    sha: &str,
    path: &std::path::Path,
    artifacts: &mut Vec<(String, PathBuf)>,
) -> Result<()> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    anyhow::ensure!(
        shared::manifest::sha256_hex(&bytes) == sha,
        "{} changed since the run's identity was computed",
        path.display()
    );
    store.put_artifact(sha, &bytes, false).await?;
    artifacts.push((sha.to_string(), path.to_path_buf()));
    Ok(())
}

/// The referee package: its files, and its manifest's canonical text under the digest (workers
/// fetch it by the job's digest and re-hash every file).
async fn upload_package(
    plan: &Plan,
    engine: &Engine,
    store: &Store,
    artifacts: &mut Vec<(String, PathBuf)>,
) -> Result<()> {
    let manifest = &plan.identity.engine_manifest;
    for (name, sha) in manifest.iter() {
        upload(store, sha, &engine.workspace.join(name), artifacts).await?;
    }
    let manifest_text = shared::manifest::canonical_text(manifest);
    anyhow::ensure!(
        shared::manifest::sha256_hex(manifest_text.as_bytes()) == plan.manifest_digest,
        "the referee package's manifest does not hash to the run's digest"
    );
    let manifest_file = plan.output.join(".referee-manifest");
    crate::fsio::write_atomic(&manifest_file, manifest_text.as_bytes())?;
    store
        .put_artifact(&plan.manifest_digest, manifest_text.as_bytes(), false)
        .await?;
    artifacts.push((plan.manifest_digest.clone(), manifest_file));
    Ok(())
}
