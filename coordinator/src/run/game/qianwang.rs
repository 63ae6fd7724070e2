//! 钳王 in the tournament engine: two seats (black, then red: a schedule entry's slot order), a
//! pair is one seed played with both colours (the schedule's two rotations of a size-2 group),
//! JavaScript entrants load-checked before anything is written, and each accepted match record
//! turned into the row result the ratings read ([`row_result`], pure) and saved as the match's
//! replay (`replays/NNNNN.json.gz`, the record the ladder's replay page shows).

use std::path::Path;

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use games::qianwang::{self as qw, EndReason, MatchRecord, Side};
use shared::schedule::ScheduleEntry;

use crate::botprep::{HostSettings, NotCompiled};
use crate::dispatch::Arrival;
use crate::roster::Entry;
use crate::run::viewer_index::{self, Viewer};
use worker::qianwang::LoadError;

/// Load every entrant as a match would (in a sandboxed child, within the load limits): a bot
/// that does not parse, throws while loading or exports no `onTurn` is named with the reason and
/// nothing is played. A host that cannot start the engine stops the run as the host's problem.
pub fn check_entrants(settings: &HostSettings, entries: &[Entry]) -> Result<Vec<NotCompiled>> {
    let host = worker::qianwang::JsHost::this_program(settings.sandbox.clone());
    let limits = worker::qianwang::Limits::default();
    let mut refused = Vec::new();
    for e in entries {
        let bytes = std::fs::read(&e.program)
            .with_context(|| format!("reading {}", e.program.display()))?;
        let Ok(code) = String::from_utf8(bytes) else {
            refused.push(format!(
                "bot {:?} ({}) is not UTF-8 text: a 钳王 bot is a JavaScript file",
                e.name,
                e.program.display()
            ));
            continue;
        };
        match load_check(&host, &code, &limits) {
            Ok(()) => {}
            Err(err) if err.is_host() => {
                return Err(anyhow::Error::new(err).context(
                    "this host cannot start the JavaScript engine to check the bots (a problem of the host, not of a bot)",
                ))
            }
            Err(err) => refused.push(format!(
                "bot {:?} ({}) does not load: {err}",
                e.name,
                e.program.display()
            )),
        }
    }
    if !refused.is_empty() {
        bail!(
            "{}\n\nnothing was played. A 钳王 bot must parse, load within the limits and export onTurn",
            refused.join("\n")
        );
    }
    Ok(Vec::new())
}

/// Load `code` as a match would, trying again when the host may be why it failed (the engine
/// did not start, or the load ran out of wall time on a loaded machine): a bot is refused
/// before a tournament only for what it does every time.
fn load_check(
    host: &worker::qianwang::JsHost,
    code: &str,
    limits: &worker::qianwang::Limits,
) -> Result<(), worker::qianwang::LoadError> {
    let mut tries = 0;
    loop {
        tries += 1;
        match worker::qianwang::check_code(host, code, limits) {
            Err(e) if tries < 3 && (e.is_host() || matches!(e, LoadError::Timeout { .. })) => {
                tracing::warn!("loading a bot to check it failed ({e}); trying again");
            }
            other => return other,
        }
    }
}

/// A 钳王 report accepted (the record re-played move by move, for the job's seed, seats and
/// programs) and saved as the match's replay: the row result.
pub fn accept(
    arrival: &Arrival,
    entry: &ScheduleEntry,
    bot_hashes: &[String],
    out: &Path,
) -> Result<Value> {
    let n = arrival.job.number;
    let record = match arrival.verdict()? {
        games::accept::Accepted::Qianwang(record) => record,
        other => bail!("match {n}: a 钳王 tournament got a {} record", other.name()),
    };
    super::save_seated(n, &*record, &record.to_json(), entry, bot_hashes, out)?;
    write_match(&out.join("replays"), n, &record)?;
    Ok(row_result(&record))
}

/// The viewer index of a 钳王 folder (games::qianwang::viewer).
pub const VIEWER: Viewer = Viewer {
    page: || qw::viewer::INDEX_PAGE.to_string(),
    rewrite: |replays, n, text| {
        let record = MatchRecord::from_json(text)?;
        qw::verify(&record).context("the record does not verify")?;
        write_match(replays, n, &record)
    },
};

/// Match `n`'s data file for the viewer index, from its verified record. A view (no fsync):
/// `farm report` writes a missing one again.
fn write_match(replays: &Path, n: u64, record: &MatchRecord) -> Result<()> {
    let script = qw::viewer::match_script(n, record);
    crate::fsio::write_view(
        &replays.join(viewer_index::data_file_name(n)),
        script.as_bytes(),
    )
}

/// A saved record re-verified: the row result it was logged with.
pub fn saved_results(text: &str) -> Result<Vec<Value>> {
    let record = MatchRecord::from_json(text)?;
    qw::verify(&record)?;
    Ok(vec![row_result(&record)])
}

/// `farm verify` of a saved record: re-played move by move; what it found, or why not.
pub fn verify_text(text: &str) -> Result<String> {
    let record = MatchRecord::from_json(text)?;
    qw::verify(&record)?;
    Ok(format!(
        "钳王, {} plies, {} (black) vs {} (red): {}",
        record.plies.len(),
        record.black.name,
        record.red.name,
        qw::summarize(&record.outcome)
    ))
}

/// What the ratings and reports read of a match (seats black, red): names, ranks (a draw ties),
/// points (1, ½, 0), the forfeiting seat's fault, and what a resume re-checks (seed, program
/// hashes as `bot_0`, `bot_1`).
pub fn row_result(record: &MatchRecord) -> Value {
    let o = &record.outcome;
    let seats = [Side::Black, Side::Red];
    let ranks: Vec<i64> = seats
        .iter()
        .map(|&s| match o.winner {
            Some(w) if w != s => 2,
            _ => 1,
        })
        .collect();
    let points: Vec<f64> = seats
        .iter()
        .map(|&s| match o.winner {
            None => 0.5,
            Some(w) if w == s => 1.0,
            Some(_) => 0.0,
        })
        .collect();
    let forfeit = matches!(
        o.reason,
        EndReason::Illegal | EndReason::Error | EndReason::Runtime
    );
    let faults: Vec<Vec<Value>> = seats
        .iter()
        .map(|&s| match (forfeit, o.winner) {
            (true, Some(w)) if w != s => vec![json!({
                "kind": fault_kind(o),
                "turn": o.turn,
                "detail": o.detail,
            })],
            _ => Vec::new(),
        })
        .collect();
    json!({
        "names": [record.black.name, record.red.name],
        "ranks": ranks,
        "valid_for_scoring": true,
        "points": points,
        "errors": faults.iter().map(Vec::len).collect::<Vec<_>>(),
        "faults": faults,
        "seed": record.seed,
        "hashes": {"bot_0": record.black.code_sha256, "bot_1": record.red.code_sha256},
        "turns": record.plies.len(),
        "outcome": {
            "winner": o.winner.map(Side::as_str),
            "reason": serde_json::to_value(o.reason).unwrap_or(Value::Null),
            "summary": qw::summarize(o),
        },
    })
}

/// The fault kind of a forfeit: the runtime limit hit, or the reason (`illegal`, `error`).
fn fault_kind(o: &qw::Outcome) -> Value {
    match o.runtime {
        Some(kind) => serde_json::to_value(kind).unwrap_or(Value::Null),
        None => serde_json::to_value(o.reason).unwrap_or(Value::Null),
    }
}

/// 钳王 in the registry (`run::game::GAMES`).
pub struct Qianwang;

impl super::TournamentGame for Qianwang {
    fn name(&self) -> &'static str {
        "qianwang"
    }

    fn summary(&self) -> &'static str {
        "钳王, the 4×4 capture game: 2 seats (black, red), .js bots; a pair is one seed played \
         with both colours"
    }

    fn version(&self) -> &'static str {
        qw::VERSION
    }

    fn verify_record(&self, text: &str) -> Option<Result<String>> {
        Some(verify_text(text))
    }

    fn own_clock(&self) -> &'static str {
        "钳王 plays under its rules' limits (thinking points and a wall limit per move)"
    }

    fn default_sizes(&self) -> Option<Vec<i64>> {
        Some(vec![2])
    }

    fn check_entrants(
        &self,
        check: super::EntrantCheck,
        entries: &[Entry],
        _hashes: &[String],
        _output: &Path,
    ) -> Result<Vec<NotCompiled>> {
        check_entrants(check.host, entries)
    }

    fn job(
        &self,
        _clock: &crate::clock::TournamentClock,
        _kit: &super::Kit,
        unit: super::Unit,
    ) -> Result<shared::msg::GameJob> {
        Ok(shared::msg::GameJob::Qianwang(shared::msg::QianwangJob {
            seed: unit.entry.seed,
        }))
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
    use games::qianwang::{Game, Player};

    fn record(game: &Game) -> MatchRecord {
        MatchRecord {
            version: qw::VERSION.into(),
            seed: 7,
            black: Player {
                name: "A".into(),
                code_sha256: "aa".into(),
            },
            red: Player {
                name: "B".into(),
                code_sha256: "bb".into(),
            },
            plies: game.history().to_vec(),
            outcome: game.outcome().expect("over").clone(),
        }
    }

    #[test]
    fn a_forfeit_loses_and_is_the_forfeiting_seats_fault() {
        let mut game = Game::new();
        game.forfeit(qw::Forfeit::Illegal, "off the board")
            .expect("black to move");
        let r = row_result(&record(&game));
        assert_eq!(r["ranks"], json!([2, 1]));
        assert_eq!(r["points"], json!([0.0, 1.0]));
        assert_eq!(r["errors"], json!([1, 0]));
        assert_eq!(r["faults"][0][0]["kind"], "illegal");
        assert_eq!(r["hashes"]["bot_1"], "bb");
        let g = shared::results::GameResult::from_results_row(&json!({"size": 2, "result": r}), 1)
            .expect("a scoring row");
        assert!(g.valid_for_scoring);
    }

    #[test]
    fn a_timeout_is_named_by_its_limit_and_a_draw_ties() {
        let mut game = Game::new();
        game.forfeit(qw::Forfeit::Runtime(qw::RuntimeKind::Timeout), "slow")
            .expect("black to move");
        assert_eq!(
            row_result(&record(&game))["faults"][0][0]["kind"],
            "timeout"
        );
        let mut draw = record(&game);
        draw.outcome.winner = None;
        draw.outcome.reason = EndReason::Material;
        let r = row_result(&draw);
        assert_eq!(r["ranks"], json!([1, 1]));
        assert_eq!(r["points"], json!([0.5, 0.5]));
        assert_eq!(r["faults"], json!([[], []]));
    }

    #[test]
    fn only_pairs_are_played() {
        assert!(Qianwang.check_sizes(&[2]).is_ok());
        let e = Qianwang
            .check_sizes(&[2, 3])
            .expect_err("3 seats")
            .to_string();
        assert!(e.contains("--sizes 2"), "{e}");
    }
}
