//! Lowest unique in the tournament engine: three seats answering in seat order each round,
//! entrants are `.cpp` sources or executables compiled and checked before anything is written
//! (as for Nim), each answer limited by the tournament's `--turn-ms`. Each accepted record
//! becomes the row result the ratings read ([`row_result`], pure) and is saved as the match's
//! replay (`replays/NNNNN.json.gz`).

use std::path::Path;

use anyhow::{bail, Result};
use serde_json::{json, Value};

use games::lowest::{self, LowestRecord};
use shared::msg::{GameJob, LowestJob};
use shared::schedule::ScheduleEntry;

use crate::botprep::{HostSettings, NotCompiled};
use crate::clock::TournamentClock;
use crate::dispatch::Arrival;
use crate::roster::Entry;

/// The job's game: every answer limited by the tournament's turn limit.
pub fn job(clock: &TournamentClock, seed: u64) -> GameJob {
    GameJob::Lowest(LowestJob {
        seed,
        turn_ms: clock.spec.turn_ms,
    })
}

/// Compile every distinct source and check every executable before anything is written, as for
/// Nim.
pub fn check_entrants(
    host: &HostSettings,
    entries: &[Entry],
    hashes: &[String],
) -> Result<Vec<NotCompiled>> {
    super::nim::check_entrants(host, entries, hashes)
}

/// A lowest-unique report accepted (the record re-played round by round, for the job's seed,
/// seats and programs) and saved as the match's replay: the row result.
pub fn accept(
    arrival: &Arrival,
    entry: &ScheduleEntry,
    bot_hashes: &[String],
    out: &Path,
) -> Result<Value> {
    let n = arrival.job.number;
    let record = match arrival.verdict()? {
        games::accept::Accepted::Lowest(record) => record,
        other => bail!(
            "match {n}: a lowest-unique tournament got a {} record",
            other.name()
        ),
    };
    super::save_seated(
        n,
        &*record,
        &serde_json::to_string(&record)?,
        entry,
        bot_hashes,
        out,
    )?;
    Ok(row_result(&record))
}

/// A saved record re-verified: the row result it was logged with.
pub fn saved_results(text: &str) -> Result<Vec<Value>> {
    let record: LowestRecord = serde_json::from_str(text)?;
    lowest::verify(&record)?;
    Ok(vec![row_result(&record)])
}

/// `farm verify` of a saved record: re-played round by round; what it found, or why not.
pub fn verify_text(text: &str) -> Result<String> {
    let record: LowestRecord = serde_json::from_str(text)?;
    lowest::verify(&record)?;
    let name = |i: usize| record.players.get(i).map_or("?", |p| p.name.as_str());
    let faults: Vec<String> = record
        .faults
        .iter()
        .map(|f| format!(" ({} {}: {})", name(f.seat), f.kind, f.detail))
        .collect();
    Ok(format!(
        "lowest unique, {} rounds, scores {:?}, ranks {:?}{}",
        record.rounds,
        record.scores,
        record.ranks,
        faults.concat()
    ))
}

/// What the ratings and reports read of a game: names, ranks (by total, faulty seats last),
/// points (the seats ranked first share 1), each seat's fault, the totals as `scores`, and what
/// a resume re-checks (seed, program hashes as `bot_0` .. `bot_2`).
pub fn row_result(record: &LowestRecord) -> Value {
    let faults: Vec<Vec<Value>> = (0..record.players.len())
        .map(|i| {
            record
                .faults
                .iter()
                .filter(|f| f.seat == i)
                .map(|f| json!({"kind": f.kind, "detail": f.detail}))
                .collect()
        })
        .collect();
    let hashes: serde_json::Map<String, Value> = record
        .players
        .iter()
        .enumerate()
        .map(|(i, p)| (format!("bot_{i}"), json!(p.code_sha256)))
        .collect();
    json!({
        "names": record.players.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
        "ranks": record.ranks,
        "valid_for_scoring": true,
        "points": lowest::points(record),
        "scores": record.scores,
        "errors": faults.iter().map(Vec::len).collect::<Vec<_>>(),
        "faults": faults,
        "seed": record.seed,
        "hashes": hashes,
        "turns": record.answers.len(),
    })
}

/// Lowest in the registry (`run::game::GAMES`).
pub struct Lowest;

impl super::TournamentGame for Lowest {
    fn name(&self) -> &'static str {
        "lowest"
    }

    fn summary(&self) -> &'static str {
        "Lowest unique, the three-seat test game: 3 seats, .cpp sources or executables"
    }

    fn version(&self) -> &'static str {
        lowest::VERSION
    }

    fn verify_record(&self, text: &str) -> Option<Result<String>> {
        Some(verify_text(text))
    }

    fn check_clock(&self, clock: &TournamentClock) -> Result<()> {
        super::turn_limit_only(clock, "lowest unique")
    }

    fn default_sizes(&self) -> Option<Vec<i64>> {
        Some(vec![3])
    }

    fn check_entrants(
        &self,
        check: super::EntrantCheck,
        entries: &[Entry],
        hashes: &[String],
        _output: &Path,
    ) -> Result<Vec<NotCompiled>> {
        check_entrants(check.host, entries, hashes)
    }

    fn job(
        &self,
        clock: &TournamentClock,
        _kit: &super::Kit,
        unit: super::Unit,
    ) -> Result<GameJob> {
        Ok(job(clock, unit.entry.seed))
    }

    fn accept(
        &self,
        arrival: &Arrival,
        _kit: &super::Kit,
        entry: &ScheduleEntry,
        bot_hashes: &[String],
        out: &Path,
    ) -> Result<Value> {
        accept(arrival, entry, bot_hashes, out)
    }

    fn saved_results(&self, text: &str) -> Result<Vec<Value>> {
        saved_results(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::game::TournamentGame;
    use games::lowest::{Player, SeatFault};

    #[test]
    fn ranks_points_and_faults_are_the_records() {
        let rounds = lowest::rounds(3);
        let mut answers = vec![vec![Some(1), Some(2), Some(3)]; rounds as usize];
        for a in answers.iter_mut().skip(1) {
            a[0] = None;
        }
        let record = LowestRecord {
            version: lowest::VERSION.into(),
            seed: 3,
            players: ["a", "b", "c"]
                .iter()
                .map(|n| Player {
                    name: n.to_string(),
                    code_sha256: format!("{n}{n}"),
                })
                .collect(),
            rounds,
            answers,
            faults: vec![SeatFault {
                seat: 0,
                round: 1,
                kind: "timeout".into(),
                detail: "no answer".into(),
            }],
            scores: vec![1, rounds - 1, 0],
            ranks: vec![3, 1, 2],
        };
        lowest::verify(&record).expect("a valid record");
        let r = row_result(&record);
        assert_eq!(r["ranks"], json!([3, 1, 2]));
        assert_eq!(r["points"], json!([0.0, 1.0, 0.0]));
        assert_eq!(r["errors"], json!([1, 0, 0]));
        assert_eq!(r["faults"][0][0]["kind"], "timeout");
        assert_eq!(r["hashes"]["bot_2"], "cc");
        let g = shared::results::GameResult::from_results_row(&json!({"size": 3, "result": r}), 1)
            .expect("a scoring row");
        assert_eq!(g.ranks, vec![3, 1, 2]);
        assert!(verify_text(&serde_json::to_string(&record).unwrap())
            .unwrap()
            .contains("a timeout"));
    }

    #[test]
    fn only_threes_and_only_a_turn_limit() {
        assert!(Lowest.check_sizes(&[3]).is_ok());
        assert!(Lowest.check_sizes(&[2]).is_err());
        assert!(Lowest.check_sizes(&[2, 3]).is_err());
        let mut clock = TournamentClock::default();
        assert!(Lowest.check_clock(&clock).is_ok());
        clock.spec.bank_ms = 10;
        assert!(Lowest.check_clock(&clock).is_err());
    }
}
