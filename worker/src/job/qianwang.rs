//! A 钳王 (qianwang) match as a farm job: the two seats' JavaScript programs by hash (black, then
//! red), played in the JS engine in a sandboxed child process (`crate::qianwang`, the runner's
//! sandbox and `js_program`); the report carries the match
//! record as JSON. A seat whose program is not valid UTF-8 loses as `error`; a missing or
//! mismatching artifact, or an engine that cannot start, is a host problem, never blamed on a
//! bot.

use shared::msg::{Job, JobFailure, QianwangJob, SeatSpec};

use super::{Artifacts, JobRunner, Steering};
use crate::qianwang::{try_play_entrants, Entrant, JsHost, Limits};

/// Play `job` (a qianwang match) and return its record as JSON.
pub(super) fn play(
    runner: &JobRunner,
    job: &Job,
    game: &QianwangJob,
    artifacts: &dyn Artifacts,
    _steering: &Steering,
) -> Result<String, JobFailure> {
    let [black, red] = job.seats.as_slice() else {
        return Err(JobFailure::Unsupported(format!(
            "match {}: a qianwang match has 2 seats (black, red), the job has {}",
            job.number,
            job.seats.len()
        )));
    };
    let black = entrant(job, black, artifacts)?;
    let red = entrant(job, red, artifacts)?;
    // One match thinks on one core at a time: hold one core token for the whole match.
    let _core = runner.tokens.acquire();
    let host = match &runner.js_program {
        Some(program) => JsHost {
            program: program.clone(),
            sandbox: runner.sandbox.clone(),
        },
        None => JsHost::this_program(runner.sandbox.clone()),
    };
    let record = try_play_entrants(&host, &black, &red, game.seed, &Limits::default())
        .map_err(|e| JobFailure::Infrastructure(format!("match {}: {e}", job.number)))?;
    tracing::debug!(
        match_number = job.number,
        outcome = %games::qianwang::summarize(&record.outcome),
        "qianwang match played"
    );
    Ok(record.to_json())
}

/// Reads a seat's program and checks it against its hash.
fn entrant(job: &Job, seat: &SeatSpec, artifacts: &dyn Artifacts) -> Result<Entrant, JobFailure> {
    let path = artifacts.path_for(&seat.program)?;
    let bytes = std::fs::read(&path).map_err(|e| {
        JobFailure::Artifact(format!(
            "match {}: seat {:?}: cannot read {} ({}): {e}",
            job.number,
            seat.name,
            path.display(),
            seat.program.file_name
        ))
    })?;
    let digest = shared::manifest::sha256_hex(&bytes);
    if !digest.eq_ignore_ascii_case(&seat.program.sha256) {
        return Err(JobFailure::Artifact(format!(
            "match {}: seat {:?}: {} hashes to {digest}, the job names {}",
            job.number,
            seat.name,
            path.display(),
            seat.program.sha256
        )));
    }
    Ok(Entrant::from_bytes(seat.name.clone(), bytes))
}
