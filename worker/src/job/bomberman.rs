//! A bomberman match as a farm job: resolve each seat's program by hash, compile sources through
//! the cache (a compile failure is that bot's fault, not the job's), play under the referee with
//! the clock the job carries (scaled to this host's speed when the job asks), verify the
//! replay before it leaves the worker.

use games::bomberman as bm;
use shared::msg::{BombermanClock, BombermanJob, Job, JobFailure};

use super::{Artifacts, JobRunner, Steering};
use crate::referee::{self, MapChoice, MatchSpec, Seat};

/// The clock the job asks for: its own (the tournament's turn limit and time bank), or the
/// rules' when it carries none; scaled to this host's measured speed when the job states it for
/// a reference speed. Never this host's environment: every worker plays alike.
fn clock_of(
    job: &Job,
    clock: Option<&BombermanClock>,
    speed: Option<f64>,
) -> Result<(bm::ClockSpec, Option<bm::Scaling>), JobFailure> {
    let Some(b) = clock else {
        return Ok((bm::ClockSpec::default(), None));
    };
    if b.turn_ms == 0 {
        return Err(JobFailure::Unsupported(format!(
            "job {} asks for a turn limit of 0 ms",
            job.number
        )));
    }
    let stated = bm::ClockSpec {
        turn_ms: b.turn_ms,
        bank_ms: b.time_bank_ms,
    };
    let Some(reference) = b.reference_speed else {
        return Ok((stated, None));
    };
    // No speed means no self-test measured this host: the host's failure, played elsewhere.
    let speed = speed.ok_or_else(|| {
        JobFailure::Infrastructure(format!(
            "job {} states its clock for speed {reference}, but this worker has no speed \
             signature (its self-test did not run)",
            job.number
        ))
    })?;
    let scaling = bm::Scaling::new(stated, reference, speed)
        .map_err(|e| JobFailure::Unsupported(format!("job {}: {e}", job.number)))?;
    let played = scaling
        .played()
        .map_err(|e| JobFailure::Unsupported(format!("job {}: {e}", job.number)))?;
    Ok((played, Some(scaling)))
}

/// Play `job` (a bomberman match) and return its verified replay (JSON).
pub(super) fn play(
    runner: &JobRunner,
    job: &Job,
    game: &BombermanJob,
    artifacts: &dyn Artifacts,
    _steering: &Steering,
) -> Result<String, JobFailure> {
    let seats = job.seats.len();
    if !(bm::MIN_PLAYERS..=bm::MAX_PLAYERS).contains(&seats) {
        return Err(JobFailure::Unsupported(format!(
            "job {} has {seats} seats; a bomberman match has {} to {}",
            job.number,
            bm::MIN_PLAYERS,
            bm::MAX_PLAYERS
        )));
    }
    let mut seats = Vec::with_capacity(job.seats.len());
    for seat in &job.seats {
        let program = super::seat_program(runner, seat, artifacts)?;
        seats.push(Seat {
            name: seat.name.clone(),
            hash: seat.program.sha256.clone(),
            program,
        });
    }
    let spec = MatchSpec {
        seed: game.seed,
        seats,
        map: MapChoice::Generated,
    };
    let played = match clock_of(job, game.clock.as_ref(), runner.speed)? {
        (_, Some(scaling)) => referee::play_scaled(spec, &runner.sandbox, &runner.tokens, scaling),
        (clock, None) => referee::play_clocked(spec, &runner.sandbox, &runner.tokens, clock),
    };
    let replay =
        played.map_err(|e| JobFailure::Infrastructure(format!("match {}: {e}", job.number)))?;
    let json = replay.to_json();
    // Never send a replay that does not re-simulate to itself.
    bm::replay::verify(&json).map_err(|e| {
        JobFailure::Infrastructure(format!(
            "match {}: replay failed verification: {e}",
            job.number
        ))
    })?;
    let r = &replay.result;
    crate::metrics::global().bots(
        job.game.name(),
        r.players,
        &r.names,
        &r.faults,
        turn_walls(r.timing.as_ref()),
    );
    Ok(json)
}

/// The wall time (µs) of every bot-turn in a replay's timing (per bot, its `per_turn` in either
/// form, [`bm::replay::turn_timing`]), for the per-turn latency metric.
fn turn_walls(timing: Option<&serde_json::Value>) -> Vec<u64> {
    let bots = timing.and_then(serde_json::Value::as_object);
    bots.into_iter()
        .flat_map(|b| b.values())
        .flat_map(bm::replay::turn_timing::turn_entries)
        .filter_map(|t| t.get("wall_us").and_then(serde_json::Value::as_u64))
        .collect()
}
