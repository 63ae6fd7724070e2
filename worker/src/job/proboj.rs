//! A proboj game as a farm job: check the package against the job's MANIFEST digest, lay it out
//! in a fresh folder from artifacts fetched by hash, run the game as the local runner would, and
//! return the game folder as a bundle (JSON) for the coordinator's `game_root`.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use shared::msg::{Job, JobFailure, ProbojJob};

use super::{Artifacts, JobRunner};
use crate::proboj::remote::{self, RemoteError};
use crate::proboj::RunOptions;

pub use crate::proboj::remote::VERSION;

/// A worker finishes the games it started (SIGTERM waits for them), so nothing sets this.
static NEVER: AtomicBool = AtomicBool::new(false);

/// Play `job` (one proboj game) and return its bundle.
pub(super) fn play(
    runner: &JobRunner,
    job: &Job,
    p: &ProbojJob,
    artifacts: &dyn Artifacts,
) -> Result<String, JobFailure> {
    let digest = remote::package_digest(&p.files)
        .map_err(|e| JobFailure::Artifact(format!("game {}: {e}", job.number)))?;
    if digest != job.manifest_digest {
        return Err(JobFailure::Artifact(format!(
            "game {}: the package's files hash to MANIFEST digest {digest}, the job names {}",
            job.number, job.manifest_digest
        )));
    }
    let dir = tempfile::Builder::new()
        .prefix("farm-proboj-")
        .tempdir()
        .map_err(|e| JobFailure::Infrastructure(format!("a scratch folder: {e}")))?;
    remote::lay_out(p, dir.path(), &|f| {
        artifacts.path_for(&f.program()).map_err(|e| e.to_string())
    })
    .map_err(|e| JobFailure::Artifact(format!("game {}: {e}", job.number)))?;
    let opts = RunOptions {
        sandbox: runner.sandbox.clone(),
        fair: p.fair,
        tokens: Some(runner.tokens.clone()),
        server_timeout: p.server_timeout_ms.map(Duration::from_millis),
        ..RunOptions::default()
    };
    let bundle = remote::run_in(p, dir.path(), &opts, &NEVER).map_err(|e| match e {
        RemoteError::Io { .. } | RemoteError::Host(_) => {
            JobFailure::Infrastructure(format!("game {}: {e}", job.number))
        }
        other => JobFailure::Unsupported(format!("game {}: {other}", job.number)),
    })?;
    serde_json::to_string(&bundle)
        .map_err(|e| JobFailure::Infrastructure(format!("game {}: bundle: {e}", job.number)))
}
