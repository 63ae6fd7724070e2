//! The one door for a game's outcome into the coordinator: whichever game a job plays and
//! whichever path ran it (tournament, ladder, proboj runner; embedded or on the cluster), its
//! report is held to its job here before anything is checkpointed, written or settles points.
//! A record is re-verified by its game's rules (re-simulated where the game allows), and its
//! seed, seats and program hashes must be the job's. Pure: no files, no clocks.

use shared::msg::{BombermanClock, GameJob, Job, JobFailure, JobReport, SeatSpec};
use thiserror::Error;

use crate::seated::SeatedRecord;
use crate::{bomberman as bm, lowest, nim, proboj, qianwang as qw};

/// A report that passed [`accept`], typed by its game.
#[derive(Debug, Clone)]
pub enum Accepted {
    Bomberman(Box<bm::replay::Replay>),
    Qianwang(Box<qw::MatchRecord>),
    Proboj(Box<proboj::GameBundle>),
    Nim(Box<nim::NimRecord>),
    Lowest(Box<lowest::LowestRecord>),
}

impl Accepted {
    /// The game's name, as [`GameJob::name`] gives it.
    pub fn name(&self) -> &'static str {
        match self {
            Accepted::Bomberman(_) => "bomberman",
            Accepted::Qianwang(_) => "qianwang",
            Accepted::Proboj(_) => "proboj",
            Accepted::Nim(_) => "nim",
            Accepted::Lowest(_) => "lowest",
        }
    }
}

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
    };
    match &job.game {
        GameJob::Bomberman(j) => {
            let replay = bm::replay::verify(text).map_err(|e| holder.invalid(e.to_string()))?;
            if replay.seed != j.seed || replay.result.seed != j.seed {
                let seed = replay.seed;
                return Err(holder.mismatch(format!("seed {seed}, not {}", j.seed)));
            }
            let names: Vec<&str> = replay.result.names.iter().map(String::as_str).collect();
            let hashes: Vec<Option<&str>> = (0..replay.result.names.len())
                .map(|i| {
                    replay
                        .result
                        .hashes
                        .get(&format!("bot_{i}"))
                        .map(String::as_str)
                })
                .collect();
            holder.seats(&names, &hashes)?;
            if let Some(what) = clock_differs(j.clock.as_ref(), &replay, report.speed) {
                return Err(holder.mismatch(what));
            }
            Ok(Accepted::Bomberman(Box::new(replay)))
        }
        GameJob::Qianwang(j) => seated(text, j.seed, &holder).map(Accepted::Qianwang),
        GameJob::Proboj(p) => {
            // The referee is the game's own server: the bundle is held to its game, not re-run.
            let bundle =
                proboj::check(&p.game_json, text).map_err(|e| holder.invalid(e.to_string()))?;
            Ok(Accepted::Proboj(Box::new(bundle)))
        }
        GameJob::Nim(j) => seated(text, j.seed, &holder).map(Accepted::Nim),
        GameJob::Lowest(j) => seated(text, j.seed, &holder).map(Accepted::Lowest),
    }
}

/// The job and worker a report is held to, for the refusals.
struct Holder<'a> {
    job: &'a Job,
    worker: &'a str,
}

impl Holder<'_> {
    fn invalid(&self, detail: String) -> AcceptError {
        AcceptError::Invalid {
            number: self.job.number,
            worker: self.worker.to_string(),
            game: self.job.game.name(),
            detail,
        }
    }

    fn mismatch(&self, what: String) -> AcceptError {
        AcceptError::Mismatch {
            number: self.job.number,
            worker: self.worker.to_string(),
            what,
        }
    }

    fn seats(&self, names: &[&str], hashes: &[Option<&str>]) -> Result<(), AcceptError> {
        seats_differ(&self.job.seats, names, hashes).map_or(Ok(()), |what| Err(self.mismatch(what)))
    }
}

/// A [`SeatedRecord`] held to its job's seed and seats.
fn seated<R: SeatedRecord>(text: &str, seed: u64, h: &Holder) -> Result<Box<R>, AcceptError> {
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
    Ok(Box::new(record))
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

/// How the clock of a bomberman replay differs from the job's, if it does. A clock stated for a
/// reference speed must have been scaled from the job's limits and reference to the speed the
/// worker reported (`verify` has checked that the limits played are that scaling's); then, as
/// for any clock, a bank leaves its record with the limits played, no bank leaves none.
fn clock_differs(
    job: Option<&BombermanClock>,
    replay: &bm::replay::Replay,
    speed: Option<f64>,
) -> Option<String> {
    let stated = job.map_or_else(bm::ClockSpec::default, |c| bm::ClockSpec {
        turn_ms: c.turn_ms,
        bank_ms: c.time_bank_ms,
    });
    let played =
        match (job.and_then(|c| c.reference_speed), &replay.scaling) {
            (None, None) => stated,
            (Some(r), Some(s)) => {
                if s.reference_speed != r || s.stated != stated {
                    return Some(format!(
                    "with a clock of {} ms + {} ms stated for speed {}, not the job's {} ms + {} \
                     ms for speed {r}",
                    s.stated.turn_ms, s.stated.bank_ms, s.reference_speed, stated.turn_ms,
                    stated.bank_ms
                ));
                }
                if speed != Some(s.speed) {
                    return Some(format!(
                        "with its clock scaled for a host of speed {}, but the worker reported {}",
                        s.speed,
                        speed.map_or("no speed".to_string(), |v| v.to_string())
                    ));
                }
                match s.played() {
                    Ok(p) => p,
                    Err(e) => return Some(e.to_string()),
                }
            }
            (Some(r), None) => {
                return Some(format!(
                    "unscaled, but the job states its clock for a host of speed {r}"
                ))
            }
            (None, Some(s)) => {
                return Some(format!(
                    "with its clock scaled from speed {} though the job did not ask for it",
                    s.reference_speed
                ))
            }
        };
    bank_differs(played, replay.clock.as_ref())
}

/// A bank leaves its record with the limits `played`, no bank leaves none.
fn bank_differs(played: bm::ClockSpec, replay: Option<&bm::ClockRecord>) -> Option<String> {
    let banked = (played.bank_ms > 0).then_some(played);
    match (banked, replay) {
        (None, None) => None,
        (Some(c), Some(r)) if c.turn_ms == r.turn_ms && c.bank_ms == r.bank_ms => None,
        (Some(c), Some(r)) => Some(format!(
            "under a clock of {} ms + a {} ms bank, not the job's {} ms + {} ms",
            r.turn_ms, r.bank_ms, c.turn_ms, c.bank_ms
        )),
        (Some(c), None) => Some(format!("without the job's {} ms time bank", c.bank_ms)),
        (None, Some(r)) => Some(format!(
            "with a {} ms time bank the job did not ask for",
            r.bank_ms
        )),
    }
}
