//! Executing one farm job on this worker, whatever transport brought it: check that this build
//! can run the job's referee, resolve each seat's program by hash, compile sources through the
//! cache (a compile failure is that bot's fault, not the job's), play the match under the
//! referee, verify the replay, and report.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

use games::bomberman::{self as bm};
use shared::msg::{Job, JobFailure, JobReport, ProgramRef};
use shared::{Fault, FaultKind};

use crate::bot::{BotCommand, CoreTokens, SandboxConfig};
use crate::compile::CompileCache;
use crate::referee::{self, MapChoice, MatchSpec, Seat};

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
    /// Play the job and report; never panics on bad jobs, never blames a bot for the host.
    pub fn execute(&self, job: &Job, artifacts: &dyn Artifacts) -> JobReport {
        let metrics = crate::metrics::global();
        metrics.set_sandbox_mode(self.sandbox.effective_mode().as_str());
        let _busy = metrics.busy();
        let started = Instant::now();
        let outcome = self.play(job, artifacts);
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

    fn play(&self, job: &Job, artifacts: &dyn Artifacts) -> Result<String, JobFailure> {
        if job.referee_version != bm::VERSION {
            return Err(JobFailure::Unsupported(format!(
                "job needs referee {:?}, this worker runs {:?}",
                job.referee_version,
                bm::VERSION
            )));
        }
        if job.seats.len() != job.size as usize {
            return Err(JobFailure::Infrastructure(format!(
                "job {} has size {} but {} seats",
                job.number,
                job.size,
                job.seats.len()
            )));
        }
        let mut seats = Vec::with_capacity(job.seats.len());
        for seat in &job.seats {
            let path = artifacts.path_for(&seat.program)?;
            let program = if seat.program.is_source() {
                match self.cache.executable_for(&path) {
                    Ok(exe) => Ok(BotCommand {
                        program: exe,
                        args: Vec::new(),
                    }),
                    Err(e) => match e.compiler_message() {
                        Some(msg) => Err(Fault {
                            kind: FaultKind::CompileFailure,
                            turn: 0,
                            detail: msg.to_string(),
                        }),
                        None => {
                            return Err(JobFailure::Infrastructure(format!(
                                "compiling {}: {e}",
                                seat.program.file_name
                            )))
                        }
                    },
                }
            } else {
                Ok(BotCommand {
                    program: path,
                    args: Vec::new(),
                })
            };
            seats.push(Seat {
                name: seat.name.clone(),
                hash: seat.program.sha256.clone(),
                program,
            });
        }
        let spec = MatchSpec {
            seed: job.seed,
            seats,
            map: MapChoice::Generated,
        };
        let replay = referee::play(spec, &self.sandbox, &self.tokens)
            .map_err(|e| JobFailure::Infrastructure(format!("match {}: {e}", job.number)))?;
        let json = replay.to_json();
        // Never send a replay that does not re-simulate to itself.
        bm::replay::verify(&json).map_err(|e| {
            JobFailure::Infrastructure(format!(
                "match {}: replay failed verification: {e}",
                job.number
            ))
        })?;
        crate::metrics::global().match_result(&replay.result);
        Ok(json)
    }
}
