//! How a bomberman report is held to its job (the game's part of `accept::accept`): the replay
//! re-simulated, its seed, seats and program hashes the job's, and its clock the one the job
//! stated (scaled to the worker's reported speed where the job asked for that).

use shared::msg::{BombermanClock, BombermanJob};

use crate::accept::{AcceptError, Holder};
use crate::bomberman as bm;

/// What a bomberman report is accepted as: its verified replay.
pub type Record = bm::replay::Replay;

/// Hold the replay `text` to `job`.
pub fn accept(job: &BombermanJob, text: &str, holder: &Holder) -> Result<Record, AcceptError> {
    let replay = bm::replay::verify(text).map_err(|e| holder.invalid(e.to_string()))?;
    if replay.seed != job.seed || replay.result.seed != job.seed {
        let seed = replay.seed;
        return Err(holder.mismatch(format!("seed {seed}, not {}", job.seed)));
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
    if let Some(what) = clock_differs(job.clock.as_ref(), &replay, holder.speed()) {
        return Err(holder.mismatch(what));
    }
    Ok(replay)
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
