//! Nim in the tournament engine: two seats (seat 0 moves first), a pair is one seed (its
//! heaps) played with both seat orders, entrants are `.cpp` sources or executables compiled and
//! checked before anything is written, each answer limited by the tournament's `--turn-ms`.
//! Each accepted record becomes the row result the ratings read ([`row_result`], pure) and is
//! saved as the match's replay (`replays/NNNNN.json.gz`) and as its data file of the folder's
//! viewer index (`replays/index.html`, [`VIEWER`]: games::nim_viewer).

use std::path::Path;

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use games::nim::{self, NimRecord};
use games::nim_viewer;
use shared::msg::{GameJob, NimJob};
use shared::schedule::ScheduleEntry;

use crate::botprep::{BotPrep, HostSettings, NotCompiled};
use crate::clock::TournamentClock;
use crate::dispatch::Arrival;
use crate::roster::Entry;
use crate::run::viewer_index::{self, Viewer};

/// The job's game: every answer limited by the tournament's turn limit.
pub fn job(clock: &TournamentClock, seed: u64) -> GameJob {
    GameJob::Nim(NimJob {
        seed,
        turn_ms: clock.spec.turn_ms,
    })
}

/// Compile every distinct source and check every executable before anything is written; a bot
/// that does not compile is named with the compiler's message and nothing is played.
pub fn check_entrants(
    host: &HostSettings,
    entries: &[Entry],
    hashes: &[String],
) -> Result<Vec<NotCompiled>> {
    let prep = BotPrep::new(host).context(
        "this host cannot compile the bots before the tournament (a problem of the host, not of a bot)",
    )?;
    let not_compiled = prep.check_roster(entries, hashes)?;
    if !not_compiled.is_empty() {
        let list: Vec<String> = not_compiled.iter().map(|n| n.to_string()).collect();
        bail!(
            "{}\n\nnothing was played: fix the source",
            list.join("\n\n")
        );
    }
    Ok(not_compiled)
}

/// A Nim report accepted (the record re-played move by move, for the job's seed, seats and
/// programs) and saved as the match's replay: the row result.
pub fn accept(
    arrival: &Arrival,
    entry: &ScheduleEntry,
    bot_hashes: &[String],
    out: &Path,
) -> Result<Value> {
    let n = arrival.job.number;
    let record = match arrival.verdict()? {
        games::accept::Accepted::Nim(record) => record,
        other => bail!("match {n}: a Nim tournament got a {} record", other.name()),
    };
    super::save_seated(
        n,
        &*record,
        &serde_json::to_string(&record)?,
        entry,
        bot_hashes,
        out,
    )?;
    write_match(&out.join("replays"), n, &record)?;
    Ok(row_result(&record))
}

/// The viewer index of a Nim folder (games::nim_viewer).
pub const VIEWER: Viewer = Viewer {
    page: || nim_viewer::INDEX_PAGE.to_string(),
    rewrite: |replays, n, text| {
        let record: NimRecord = serde_json::from_str(text)?;
        nim::verify(&record).context("the record does not verify")?;
        write_match(replays, n, &record)
    },
};

/// Game `n`'s data file for the viewer index, from its verified record. A view (no fsync):
/// `farm report` writes a missing one again.
fn write_match(replays: &Path, n: u64, record: &NimRecord) -> Result<()> {
    let script = nim_viewer::match_script(n, record);
    crate::fsio::write_view(
        &replays.join(viewer_index::data_file_name(n)),
        script.as_bytes(),
    )
}

/// A saved record re-verified: the row result it was logged with.
pub fn saved_results(text: &str) -> Result<Vec<Value>> {
    let record: NimRecord = serde_json::from_str(text)?;
    nim::verify(&record)?;
    Ok(vec![row_result(&record)])
}

/// `farm verify` of a saved record: re-played move by move; what it found, or why not.
pub fn verify_text(text: &str) -> Result<String> {
    let record: NimRecord = serde_json::from_str(text)?;
    nim::verify(&record)?;
    let name = |i: usize| record.players.get(i).map_or("?", |p| p.name.as_str());
    Ok(format!(
        "Nim, {} moves, {} wins{}",
        record.moves.len(),
        name(record.winner),
        record.fault.as_ref().map_or(String::new(), |f| format!(
            " ({} {}: {})",
            name(f.seat),
            f.kind,
            f.detail
        ))
    ))
}

/// What the ratings and reports read of a game: names, ranks (the winner first; Nim has no
/// draws), points (1, 0), the faulting seat's fault, and what a resume re-checks (seed,
/// program hashes as `bot_0`, `bot_1`).
pub fn row_result(record: &NimRecord) -> Value {
    let seats = 0..record.players.len();
    let faults: Vec<Vec<Value>> = seats
        .clone()
        .map(|i| match &record.fault {
            Some(f) if f.seat == i => vec![json!({"kind": f.kind, "detail": f.detail})],
            _ => Vec::new(),
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
        "ranks": seats.clone().map(|i| if i == record.winner { 1 } else { 2 }).collect::<Vec<i64>>(),
        "valid_for_scoring": true,
        "points": seats.map(|i| if i == record.winner { 1.0 } else { 0.0 }).collect::<Vec<f64>>(),
        "errors": faults.iter().map(Vec::len).collect::<Vec<_>>(),
        "faults": faults,
        "seed": record.seed,
        "hashes": hashes,
        "turns": record.moves.len(),
    })
}

/// Nim in the registry (`run::game::GAMES`).
pub struct Nim;

impl super::TournamentGame for Nim {
    fn name(&self) -> &'static str {
        "nim"
    }

    fn summary(&self) -> &'static str {
        "Nim, the smallest game: 2 seats, .cpp sources or executables, --turn-ms per answer"
    }

    fn version(&self) -> &'static str {
        nim::VERSION
    }

    fn verify_record(&self, text: &str) -> Option<Result<String>> {
        Some(verify_text(text))
    }

    fn check_clock(&self, clock: &TournamentClock) -> Result<()> {
        super::turn_limit_only(clock, "Nim")
    }

    fn default_sizes(&self) -> Option<Vec<i64>> {
        Some(vec![2])
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

    fn viewer(&self) -> Option<&'static Viewer> {
        Some(&VIEWER)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::game::TournamentGame;
    use games::nim::{Player, SeatFault};

    fn record(winner: usize, fault: Option<SeatFault>) -> NimRecord {
        let player = |n: &str| Player {
            name: n.into(),
            code_sha256: format!("{n}{n}"),
        };
        NimRecord {
            version: nim::VERSION.into(),
            seed: 3,
            players: vec![player("a"), player("b")],
            heaps: nim::start(3),
            moves: Vec::new(),
            fault,
            winner,
        }
    }

    #[test]
    fn the_winner_ranks_first_and_a_fault_is_the_faulting_seats() {
        let fault = SeatFault {
            seat: 0,
            kind: "bad_output".into(),
            detail: "99 from heap 0".into(),
        };
        let r = row_result(&record(1, Some(fault)));
        assert_eq!(r["ranks"], json!([2, 1]));
        assert_eq!(r["points"], json!([0.0, 1.0]));
        assert_eq!(r["errors"], json!([1, 0]));
        assert_eq!(r["faults"][0][0]["kind"], "bad_output");
        assert_eq!(r["hashes"], json!({"bot_0": "aa", "bot_1": "bb"}));
        let g = shared::results::GameResult::from_results_row(&json!({"size": 2, "result": r}), 1)
            .expect("a scoring row");
        assert_eq!(g.ranks, vec![2, 1]);
    }

    #[test]
    fn only_pairs_and_only_a_turn_limit() {
        assert!(Nim.check_sizes(&[2]).is_ok());
        assert!(Nim.check_sizes(&[3]).is_err());
        let mut clock = TournamentClock::default();
        assert!(Nim.check_clock(&clock).is_ok());
        clock.spec.bank_ms = 10;
        assert!(Nim.check_clock(&clock).is_err());
    }
}
