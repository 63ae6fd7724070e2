//! Executing one farm job on this worker, whatever transport brought it: check the rules version
//! of the job's [`GameJob`] (any game of this crate's `games!` registry), let that game's module
//! resolve programs by hash and play, and wrap the outcome in a report. A bot's fault is a
//! result, never a failed job; a host problem is a [`JobFailure`], never blamed on a bot.

/// Declares the games this worker plays, those of [`shared::for_each_game!`]'s list:
/// `Variant(module::Payload) = "name"` declares `mod module` and its arm in [`play`]. `Variant` is the game's `GameJob` variant; its module has
/// `play(runner, job, payload, artifacts, steering) -> Result<String, JobFailure>` (the record
/// as JSON, verified before it leaves the worker; a bot's fault is in the record, a host problem
/// is the `JobFailure`).
macro_rules! games {
    ($($variant:ident($module:ident::$payload:ident) = $name:literal),+ $(,)?) => {
        $(mod $module;)+

        /// Play `job` with its game's module.
        fn play(
            runner: &JobRunner,
            job: &Job,
            artifacts: &dyn Artifacts,
            steering: &Steering,
        ) -> Result<String, JobFailure> {
            match &job.game {
                $(GameJob::$variant(p) => $module::play(runner, job, p, artifacts, steering),)+
            }
        }
    };
}

shared::for_each_game!(games);

/// The failure of a job asked for after [`Steering::stop`] was set: not started, never scored
/// (the runner that set it is stopping).
pub const NOT_STARTED: &str = "not started: the runner is stopping";

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

use sandbox::{BotCommand, CoreTokens, SandboxConfig};
use shared::msg::{GameJob, Job, JobFailure, JobReport, ProgramRef, SeatSpec};
use shared::{Fault, FaultKind};

use crate::compile::CompileCache;

/// The rules versions of every game this worker plays (for its heartbeat).
pub fn supported_versions() -> &'static [&'static str] {
    games::VERSIONS
}

/// The rules version this worker runs for the game of `game` (the games crate's, as every job
/// names it).
pub use games::job::version_of;

/// How many players a job seats: its seats, unless its game says otherwise (a proboj game's
/// players are commands of its package, named by its games.json entry).
fn players_of(job: &Job) -> usize {
    job.game.payload().players().unwrap_or(job.seats.len())
}

/// Why this worker cannot play `job` (its game's rules are another version), if it cannot.
pub fn unsupported(job: &Job) -> Option<JobFailure> {
    let mine = version_of(&job.game);
    (job.referee_version != mine).then(|| {
        JobFailure::Unsupported(format!(
            "job {} needs {} rules {:?}; this worker runs {mine:?}",
            job.number,
            job.game.name(),
            job.referee_version
        ))
    })
}

/// The command that runs a seat's program: its artifact, compiled through the cache when it is
/// a source. A compiler error is the bot's fault (the inner `Err`); anything else about getting
/// the program is the host's (the outer one).
fn seat_program(
    runner: &JobRunner,
    seat: &SeatSpec,
    artifacts: &dyn Artifacts,
) -> Result<Result<BotCommand, Fault>, JobFailure> {
    let path = artifacts.path_for(&seat.program)?;
    if !seat.program.is_source() {
        return Ok(Ok(BotCommand::new(path)));
    }
    match runner.cache.executable_for(&path) {
        Ok(exe) => Ok(Ok(BotCommand::new(exe))),
        Err(e) => match e.compiler_message() {
            Some(msg) => Ok(Err(Fault {
                kind: FaultKind::CompileFailure,
                turn: 0,
                detail: msg.to_string(),
            })),
            None => Err(JobFailure::Infrastructure(format!(
                "compiling {}: {e}",
                seat.program.file_name
            ))),
        },
    }
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
    /// This host's speed signature from its self-test (reference bot-turns per second), sent
    /// with every report; None: not measured.
    pub speed: Option<f64>,
    /// The program that hosts a 钳王 match's JavaScript bots (it must run
    /// `worker::qianwang::serve_child` for `__js-bot`); `None`: this very program (`farm`).
    pub js_program: Option<PathBuf>,
}

/// What a job played inside the process that asked for it may also be given, never on the wire:
/// `farm proboj` on this machine runs its games through the embedded transport in place (the
/// config's paths, game folders written straight into game_root), stops them cleanly on
/// Ctrl-C and may log every server command. A cluster worker finishes what it started and
/// uses the default.
#[derive(Debug, Clone, Default)]
pub struct Steering {
    /// Ends running games cleanly once set (proboj); a game asked for after it is set is not
    /// started.
    pub stop: Option<Arc<AtomicBool>>,
    /// Play proboj games with the config's paths resolved against this directory instead of
    /// laying the job's package out in a scratch folder.
    pub in_place: Option<PathBuf>,
    /// Log every command a proboj server sends.
    pub verbose: bool,
}

impl JobRunner {
    /// Prove this worker can run a bot here ([`crate::selftest::run`]); call before taking jobs.
    pub fn self_test(
        &self,
    ) -> Result<crate::selftest::SelfTestReport, crate::selftest::SelfTestError> {
        crate::selftest::run(&self.cache, &self.sandbox, &self.tokens)
    }

    /// After a match failed on this host's side: can the host still play
    /// ([`crate::selftest::host_fit`])? `more`: further folders the caller owns.
    pub fn host_fit(&self, more: &[&Path]) -> Result<(), crate::selftest::SelfTestError> {
        crate::selftest::host_fit(&self.cache, &self.sandbox, more)
    }

    /// Play the job and report; never panics on bad jobs, never blames a bot for the host.
    pub fn execute(&self, job: &Job, artifacts: &dyn Artifacts) -> JobReport {
        self.execute_steered(job, artifacts, &Steering::default())
    }

    /// [`JobRunner::execute`] steered from this process ([`Steering`]).
    pub fn execute_steered(
        &self,
        job: &Job,
        artifacts: &dyn Artifacts,
        steering: &Steering,
    ) -> JobReport {
        let metrics = crate::metrics::global();
        metrics.set_sandbox_mode(self.sandbox.effective_mode().as_str());
        let _busy = metrics.busy();
        let started = Instant::now();
        let outcome = match unsupported(job) {
            Some(why) => Err(why),
            None => play(self, job, artifacts, steering),
        };
        metrics.job_done(
            job.game.name(),
            players_of(job),
            started.elapsed().as_secs_f64(),
            outcome.is_ok(),
        );
        JobReport {
            tournament: job.tournament.clone(),
            number: job.number,
            worker: self.worker_id.clone(),
            seconds: started.elapsed().as_secs_f64(),
            speed: self.speed,
            outcome,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::msg::ProbojJob;

    #[test]
    fn a_proboj_job_counts_the_players_its_game_names() {
        let game = GameJob::Proboj(ProbojJob {
            manifest_digest: String::new(),
            config_json: "{}".into(),
            game_json: r#"{"gamefolder": "g", "players": ["a", "b", "c"]}"#.into(),
            files: Vec::new(),
            fair: true,
            server_timeout_ms: None,
        });
        let job = games::job::job("t", 1, Vec::new(), game);
        assert_eq!(players_of(&job), 3);
    }
}
