//! A game of lowest unique as a farm job: the three seats' programs (compiled through the cache
//! when they are sources) run sandboxed as bots, holding a core token and timed on the fair
//! clock per answer like Nim's; each round every seat still in the game reads the state and
//! answers a number. A bot's fault takes it out of the game (ranked last); the host's fails the
//! job. The record is verified before it leaves the worker.

use std::time::Duration;

use games::lowest::{self, LowestRecord, Player, SeatFault};
use sandbox::{Bot, SpawnError};
use shared::msg::{Job, JobFailure, LowestJob};
use shared::{Fault, FaultKind};

use super::{Artifacts, JobRunner, Steering};

/// The rules version of lowest-unique jobs.
pub use games::lowest::VERSION;

/// Play `job` (a game of lowest unique) and return its record as JSON.
pub(super) fn play(
    runner: &JobRunner,
    job: &Job,
    game: &LowestJob,
    artifacts: &dyn Artifacts,
    _steering: &Steering,
) -> Result<String, JobFailure> {
    if job.seats.len() != lowest::SEATS {
        return Err(JobFailure::Unsupported(format!(
            "game {}: lowest unique has {} seats, the job has {}",
            job.number,
            lowest::SEATS,
            job.seats.len()
        )));
    }
    if game.turn_ms == 0 {
        return Err(JobFailure::Unsupported(format!(
            "game {} asks for a turn limit of 0 ms",
            job.number
        )));
    }
    let mut bots = start(runner, job, artifacts)?;
    let mut record = LowestRecord {
        version: VERSION.to_string(),
        seed: game.seed,
        players: job
            .seats
            .iter()
            .map(|s| Player {
                name: s.name.clone(),
                code_sha256: s.program.sha256.clone(),
            })
            .collect(),
        rounds: lowest::rounds(game.seed),
        answers: Vec::new(),
        faults: Vec::new(),
        scores: vec![0; lowest::SEATS],
        ranks: Vec::new(),
    };
    let limit = Duration::from_millis(game.turn_ms);
    let mut out = [false; lowest::SEATS];
    for round in 0..record.rounds {
        let last = record.answers.last().cloned().unwrap_or_default();
        let mut answers = vec![None; lowest::SEATS];
        for seat in 0..lowest::SEATS {
            if out[seat] {
                continue;
            }
            let text = lowest::turn_text(round, record.rounds, seat, &record.scores, &last);
            match ask(&mut bots[seat], job.number, seat, round, &text, limit)? {
                Ok(n) => answers[seat] = Some(n),
                Err(f) => {
                    out[seat] = true;
                    record.faults.push(SeatFault {
                        seat,
                        round,
                        kind: f.kind.as_str().to_string(),
                        detail: f.detail.clone(),
                    });
                    // Out of the game: stop its processes now.
                    if let Ok(bot) = std::mem::replace(&mut bots[seat], Err(f)) {
                        finish(seat, bot);
                    }
                }
            }
        }
        if let Some(w) = lowest::round_winner(&answers) {
            record.scores[w] += 1;
        }
        record.answers.push(answers);
    }
    record.ranks = lowest::ranks(&record.scores, &out);
    for (seat, bot) in bots.into_iter().enumerate() {
        if let Ok(bot) = bot {
            finish(seat, bot);
        }
    }
    // Never send a record that does not re-play to itself.
    lowest::verify(&record).map_err(|e| {
        JobFailure::Infrastructure(format!(
            "game {}: the record failed verification: {e}",
            job.number
        ))
    })?;
    serde_json::to_string(&record)
        .map_err(|e| JobFailure::Infrastructure(format!("game {}: record: {e}", job.number)))
}

/// Start every seat; a seat that cannot start (or compile) faults when it is first asked.
fn start(
    runner: &JobRunner,
    job: &Job,
    artifacts: &dyn Artifacts,
) -> Result<Vec<Result<Bot, Fault>>, JobFailure> {
    let mut bots = Vec::with_capacity(lowest::SEATS);
    for (slot, seat) in job.seats.iter().enumerate() {
        let bot = match super::seat_program(runner, seat, artifacts)? {
            Err(f) => Err(f),
            Ok(cmd) => match Bot::spawn(&cmd, &runner.sandbox, &runner.tokens, slot) {
                Ok(b) => Ok(b),
                Err(SpawnError::Bot(f)) => Err(f),
                Err(e @ SpawnError::Host { .. }) => {
                    return Err(JobFailure::Infrastructure(format!(
                        "game {}: seat {} ({}): {e}",
                        job.number, slot, seat.name
                    )))
                }
            },
        };
        bots.push(bot);
    }
    Ok(bots)
}

/// One answer of one seat: its number, or its fault (the outer error: the host's failure).
fn ask(
    bot: &mut Result<Bot, Fault>,
    number: u64,
    seat: usize,
    round: u32,
    text: &str,
    limit: Duration,
) -> Result<Result<u32, Fault>, JobFailure> {
    let line = match bot {
        Err(f) => return Ok(Err(f.clone())),
        Ok(bot) => {
            let r = bot.exchange(round, text.as_bytes(), limit);
            if let (Err(_), Some(why)) = (&r, bot.host_failure()) {
                return Err(JobFailure::Infrastructure(format!(
                    "game {number}: seat {seat}: {why}"
                )));
            }
            r
        }
    };
    Ok(line.and_then(|line| {
        lowest::parse_answer(&String::from_utf8_lossy(&line)).map_err(|e| Fault {
            kind: FaultKind::BadOutput,
            turn: round,
            detail: e.to_string(),
        })
    }))
}

/// Stop a seat's bot, logging anything it left behind.
fn finish(seat: usize, bot: Bot) {
    let report = bot.finish();
    if !report.leftovers.is_empty() {
        tracing::error!(seat, leftovers = ?report.leftovers, "processes or files left after a bot finished");
    }
}
