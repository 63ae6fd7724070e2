//! A game of Nim as a farm job: the two seats' programs (compiled through the cache when they
//! are sources) run sandboxed as bots, holding a core token and timed on the fair clock per
//! answer like bomberman's; each turn the seat to move reads the heaps and answers a move. A
//! bot's fault ends the game against it; the host's fails the job. The record is verified
//! before it leaves the worker.

use std::time::Duration;

use games::nim::{self, NimRecord, Player, SeatFault};
use sandbox::{Bot, SpawnError};
use shared::msg::{Job, JobFailure, NimJob};
use shared::{Fault, FaultKind};

use super::{Artifacts, JobRunner, Steering};

/// The rules version of Nim jobs.
pub use games::nim::VERSION;

/// Play `job` (a game of Nim) and return its record as JSON.
pub(super) fn play(
    runner: &JobRunner,
    job: &Job,
    game: &NimJob,
    artifacts: &dyn Artifacts,
    _steering: &Steering,
) -> Result<String, JobFailure> {
    if job.seats.len() != nim::SEATS {
        return Err(JobFailure::Unsupported(format!(
            "game {}: Nim has {} seats, the job has {}",
            job.number,
            nim::SEATS,
            job.seats.len()
        )));
    }
    if game.turn_ms == 0 {
        return Err(JobFailure::Unsupported(format!(
            "game {} asks for a turn limit of 0 ms",
            job.number
        )));
    }
    let limit = Duration::from_millis(game.turn_ms);
    // Start both seats first; a seat that cannot start faults when it is first to move.
    let mut bots: Vec<Result<Bot, Fault>> = Vec::with_capacity(nim::SEATS);
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
    let mut heaps = nim::start(game.seed);
    let mut record = NimRecord {
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
        heaps: heaps.clone(),
        moves: Vec::new(),
        fault: None,
        winner: 0,
    };
    while heaps.iter().any(|&h| h > 0) {
        let seat = record.moves.len() % nim::SEATS;
        let turn = record.moves.len() as u32;
        let answer = match &mut bots[seat] {
            Err(f) => Err(f.clone()),
            Ok(bot) => {
                let r = bot.exchange(turn, nim::turn_text(&heaps).as_bytes(), limit);
                if let (Err(_), Some(why)) = (&r, bot.host_failure()) {
                    return Err(JobFailure::Infrastructure(format!(
                        "game {}: seat {seat}: {why}",
                        job.number
                    )));
                }
                r
            }
        };
        let played = answer.and_then(|line| {
            let m = nim::parse_move(&String::from_utf8_lossy(&line));
            m.and_then(|m| nim::apply(&mut heaps, m).map(|()| m))
                .map_err(|e| Fault {
                    kind: FaultKind::BadOutput,
                    turn,
                    detail: e.to_string(),
                })
        });
        match played {
            Ok(m) => record.moves.push(m),
            Err(f) => {
                record.fault = Some(SeatFault {
                    seat,
                    kind: f.kind.as_str().to_string(),
                    detail: f.detail,
                });
                break;
            }
        }
    }
    record.winner = match &record.fault {
        Some(f) => 1 - f.seat,
        None => 1 - record.moves.len() % nim::SEATS,
    };
    for bot in bots.iter().flatten() {
        bot.kill();
    }
    for (slot, bot) in bots.into_iter().enumerate() {
        if let Ok(bot) = bot {
            let report = bot.finish();
            if !report.leftovers.is_empty() {
                tracing::error!(seat = slot, leftovers = ?report.leftovers, "processes or files left after a bot finished");
            }
        }
    }
    // Never send a record that does not re-play to itself.
    nim::verify(&record).map_err(|e| {
        JobFailure::Infrastructure(format!(
            "game {}: the record failed verification: {e}",
            job.number
        ))
    })?;
    serde_json::to_string(&record)
        .map_err(|e| JobFailure::Infrastructure(format!("game {}: record: {e}", job.number)))
}
