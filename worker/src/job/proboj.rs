//! A proboj game as a farm job: check the package against the job's MANIFEST digest, lay it out
//! in a fresh folder from artifacts fetched by hash, run the game, and return the game folder as
//! a bundle (JSON) for the coordinator's `game_root`. Steered in place (`farm proboj` on this
//! machine, see [`Steering`]) the game runs with the config's own paths and writes its folder
//! into game_root itself, and the bundle carries the outcome only.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use shared::msg::{Job, JobFailure, ProbojJob};

use super::{Artifacts, JobRunner, Steering};
use crate::proboj::remote::{self, RemoteError};
use crate::proboj::RunOptions;

/// A worker finishes the games it started (SIGTERM waits for them), so nothing sets this.
static NEVER: AtomicBool = AtomicBool::new(false);

/// Play `job` (one proboj game) and return its bundle.
pub(super) fn play(
    runner: &JobRunner,
    job: &Job,
    p: &ProbojJob,
    artifacts: &dyn Artifacts,
    steering: &Steering,
) -> Result<String, JobFailure> {
    let stop = steering.stop.as_deref().unwrap_or(&NEVER);
    if stop.load(Ordering::SeqCst) {
        return Err(JobFailure::Infrastructure(super::NOT_STARTED.to_string()));
    }
    let digest = remote::package_digest(&p.files)
        .map_err(|e| JobFailure::Artifact(format!("game {}: {e}", job.number)))?;
    if digest != p.manifest_digest {
        return Err(JobFailure::Artifact(format!(
            "game {}: the package's files hash to MANIFEST digest {digest}, the job names {}",
            job.number, p.manifest_digest
        )));
    }
    let opts = RunOptions {
        sandbox: runner.sandbox.clone(),
        fair: p.fair,
        tokens: Some(runner.tokens.clone()),
        server_timeout: p.server_timeout_ms.map(Duration::from_millis),
        verbose: steering.verbose,
        ..RunOptions::default()
    };
    let failure = |e: RemoteError| match e {
        RemoteError::Io { .. } | RemoteError::Host(_) => {
            JobFailure::Infrastructure(format!("game {}: {e}", job.number))
        }
        other => JobFailure::Unsupported(format!("game {}: {other}", job.number)),
    };
    let bundle = match &steering.in_place {
        // In place, the programs are the operator's own files where the config names them: a
        // server that cannot start fails its game with the reason, as the official runner does.
        Some(start_dir) => {
            remote::bundle_in_place(&remote::play_in(p, start_dir, &opts, stop).map_err(failure)?)
        }
        None => {
            let dir = tempfile::Builder::new()
                .prefix("farm-proboj-")
                .tempdir()
                .map_err(|e| JobFailure::Infrastructure(format!("a scratch folder: {e}")))?;
            remote::lay_out(p, dir.path(), &|f| artifacts.path_for(&f.program()))
                .map_err(|e| JobFailure::Artifact(format!("game {}: {e}", job.number)))?;
            remote::run_in(p, dir.path(), &opts, stop).map_err(failure)?
        }
    };
    serde_json::to_string(&bundle)
        .map_err(|e| JobFailure::Infrastructure(format!("game {}: bundle: {e}", job.number)))
}
