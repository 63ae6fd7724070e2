//! Executing one farm job on this worker, whatever transport brought it: find the game by the
//! job's referee version (bomberman, proboj, qianwang), let that game's module resolve programs
//! by hash and play, and wrap the outcome in a report. A bot's fault is a result, never a
//! failed job; a host problem is a [`JobFailure`], never blamed on a bot.

mod bomberman;
mod proboj;
mod qianwang;

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

use games::bomberman as bm;
use shared::msg::{Job, JobFailure, JobReport, ProgramRef};

use crate::bot::{CoreTokens, SandboxConfig};
use crate::compile::CompileCache;

/// The referee versions this worker can run.
pub fn supported_versions() -> Vec<&'static str> {
    vec![bm::VERSION, proboj::VERSION, qianwang::VERSION]
}

/// True when this worker can run jobs of `referee_version`.
pub fn supports(referee_version: &str) -> bool {
    supported_versions().contains(&referee_version)
}

/// Where a worker finds a program's bytes by hash.
pub trait Artifacts: Send + Sync {
    /// A local file holding exactly the bytes whose sha256 is `program.sha256`.
    fn path_for(&self, program: &ProgramRef) -> Result<PathBuf, JobFailure>;
}

/// Artifacts already on this host (embedded mode): hash -> path, checked when registered.
#[derive(Debug, Default, Clone)]
pub struct LocalArtifacts {
    paths: HashMap<String, PathBuf>,
}

impl LocalArtifacts {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn insert(&mut self, sha256: String, path: PathBuf) {
        self.paths.insert(sha256, path);
    }
}

impl Artifacts for LocalArtifacts {
    fn path_for(&self, program: &ProgramRef) -> Result<PathBuf, JobFailure> {
        self.paths.get(&program.sha256).cloned().ok_or_else(|| {
            JobFailure::Artifact(format!(
                "no local file for {} (sha256 {})",
                program.file_name, program.sha256
            ))
        })
    }
}

/// Everything a worker needs to play jobs on this host.
pub struct JobRunner {
    pub cache: CompileCache,
    pub sandbox: SandboxConfig,
    pub tokens: CoreTokens,
    /// How this worker names itself in reports (host/id).
    pub worker_id: String,
}

impl JobRunner {
    /// Prove this worker can run a bot here ([`crate::selftest::run`]); call before taking jobs.
    pub fn self_test(
        &self,
    ) -> Result<crate::selftest::SelfTestReport, crate::selftest::SelfTestError> {
        crate::selftest::run(&self.cache, &self.sandbox, &self.tokens)
    }

    /// Play the job and report; never panics on bad jobs, never blames a bot for the host.
    pub fn execute(&self, job: &Job, artifacts: &dyn Artifacts) -> JobReport {
        let metrics = crate::metrics::global();
        metrics.set_sandbox_mode(self.sandbox.effective_mode().as_str());
        let _busy = metrics.busy();
        let started = Instant::now();
        let outcome = match job.referee_version.as_str() {
            v if v == bm::VERSION => bomberman::play(self, job, artifacts),
            v if v == proboj::VERSION => proboj::play(self, job, artifacts),
            v if v == qianwang::VERSION => qianwang::play(self, job, artifacts),
            other => Err(JobFailure::Unsupported(format!(
                "job needs referee {other:?}; this worker runs {:?}",
                supported_versions()
            ))),
        };
        metrics.job_done(
            job.seats.len(),
            started.elapsed().as_secs_f64(),
            outcome.is_ok(),
        );
        JobReport {
            tournament: job.tournament.clone(),
            number: job.number,
            worker: self.worker_id.clone(),
            seconds: started.elapsed().as_secs_f64(),
            outcome,
        }
    }
}
