//! The one door for a game's outcome into the coordinator: whichever game a job plays and
//! whichever path ran it (tournament, ladder, proboj runner; embedded or on the cluster), its
//! report is held to its job here before anything is checkpointed, written or settles points.
//! A record is re-verified by its game's rules (re-simulated where the game allows), and its
//! seed, seats and program hashes must be the job's. Pure: no files, no clocks.

use shared::msg::{Job, JobFailure, JobPayload, JobReport, SeatSpec};
use thiserror::Error;

use crate::seated::SeatedRecord;
pub use crate::Accepted;

/// Why a report was refused. Every variant is the farm's problem (a worker that failed, a
/// record that does not verify, a job played otherwise than asked), never a bot's: the caller
/// retries or reports the match as failed, and scores nothing.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum AcceptError {
    #[error("report of {found_tournament:?} match {found_number} answers no job of {tournament:?} match {number}")]
    NotThisJob {
        tournament: String,
        number: u64,
        found_tournament: String,
        found_number: u64,
    },
    #[error("match {number}: worker {worker}: {failure}")]
    Failed {
        number: u64,
        worker: String,
        failure: JobFailure,
    },
    #[error("match {number}: worker {worker} sent a {game} record that does not verify: {detail}")]
    Invalid {
        number: u64,
        worker: String,
        game: &'static str,
        detail: String,
    },
    #[error("match {number}: worker {worker} played {what}")]
    Mismatch {
        number: u64,
        worker: String,
        what: String,
    },
}

/// Hold `report` to `job`: the report answers this job, the worker played it, and the record
/// re-verifies by its game's rules with the job's seed, seats and program hashes.
pub fn accept(job: &Job, report: &JobReport) -> Result<Accepted, AcceptError> {
    if report.tournament != job.tournament || report.number != job.number {
        return Err(AcceptError::NotThisJob {
            tournament: job.tournament.clone(),
            number: job.number,
            found_tournament: report.tournament.clone(),
            found_number: report.number,
        });
    }
    let text = report
        .outcome
        .as_ref()
        .map_err(|failure| AcceptError::Failed {
            number: job.number,
            worker: report.worker.clone(),
            failure: failure.clone(),
        })?;
    let holder = Holder {
        job,
        worker: &report.worker,
        speed: report.speed,
    };
    crate::accept_record(text, &holder)
}

/// The job and worker a report is held to: what a game's accept checks the record against and
/// names in its refusals.
pub struct Holder<'a> {
    job: &'a Job,
    worker: &'a str,
    speed: Option<f64>,
}

impl Holder<'_> {
    /// The job the report answers.
    pub fn job(&self) -> &Job {
        self.job
    }

    /// The speed the worker reported with the record (its self-test signature), if any.
    pub fn speed(&self) -> Option<f64> {
        self.speed
    }

    /// The record does not verify: `detail` says why.
    pub fn invalid(&self, detail: String) -> AcceptError {
        AcceptError::Invalid {
            number: self.job.number,
            worker: self.worker.to_string(),
            game: self.job.game.name(),
            detail,
        }
    }

    /// The record was played otherwise than the job asked: `what` says how.
    pub fn mismatch(&self, what: String) -> AcceptError {
        AcceptError::Mismatch {
            number: self.job.number,
            worker: self.worker.to_string(),
            what,
        }
    }

    /// The record's seats (in order, by name and program hash) must be the job's.
    pub fn seats(&self, names: &[&str], hashes: &[Option<&str>]) -> Result<(), AcceptError> {
        seats_differ(&self.job.seats, names, hashes).map_or(Ok(()), |what| Err(self.mismatch(what)))
    }
}

/// A [`SeatedRecord`] held to its job's seed and seats: the whole accept of a seat game, whose
/// module re-exports it as its `accept` (`pub use crate::accept::seated as accept;`).
pub fn seated<R: SeatedRecord>(
    job: &impl JobPayload,
    text: &str,
    h: &Holder,
) -> Result<R, AcceptError> {
    let Some(seed) = job.seed() else {
        return Err(h.mismatch("a seat game's job without a seed".to_string()));
    };
    let record = R::decode(text).map_err(|e| h.invalid(e.to_string()))?;
    record.verify().map_err(|e| h.invalid(e.to_string()))?;
    if record.seed() != seed {
        return Err(h.mismatch(format!("seed {}, not {seed}", record.seed())));
    }
    let (names, hashes): (Vec<&str>, Vec<Option<&str>>) = record
        .seats()
        .into_iter()
        .map(|(name, hash)| (name, Some(hash)))
        .unzip();
    h.seats(&names, &hashes)?;
    Ok(record)
}

/// How the record's seats (in order, by name and program hash) differ from the job's, if they
/// do.
fn seats_differ(want: &[SeatSpec], names: &[&str], hashes: &[Option<&str>]) -> Option<String> {
    let want_names: Vec<&str> = want.iter().map(|s| s.name.as_str()).collect();
    if names != want_names.as_slice() {
        return Some(format!("seats {names:?}, not the job's {want_names:?}"));
    }
    for (i, (seat, hash)) in want.iter().zip(hashes).enumerate() {
        if !hash.is_some_and(|h| h.eq_ignore_ascii_case(&seat.program.sha256)) {
            return Some(format!(
                "seat {i} ({}) with program {}, not the job's {}",
                seat.name,
                hash.unwrap_or("(none)"),
                seat.program.sha256
            ));
        }
    }
    None
}
