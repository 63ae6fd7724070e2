//! Bomberman in the tournament engine: the referee package (MANIFEST-checked workspace), the
//! compile-first check of the entrants (as the reference run.py does before evaluate.py), the
//! accepted replay saved with its viewer data, and the viewer index of a folder.

use std::path::Path;

use anyhow::{bail, Context, Result};
use serde_json::Value;

use games::bomberman as bm;
use shared::msg::{BombermanJob, GameJob};
use shared::schedule::ScheduleEntry;

use super::{EntrantCheck, Kit, Package, Unit, COMPILE_FAILURES_NAME};
use crate::botprep::{BotPrep, NotCompiled};
use crate::clock::TournamentClock;
use crate::dispatch::Arrival;
use crate::roster::Entry;
use crate::run::viewer_index::{self, Viewer};
use crate::workspace;

/// The referee package in `workspace`: its MANIFEST checked file by file, and a VERSION file
/// (when there is one) naming this farm's referee.
pub fn package(dir: &Path) -> Result<Package> {
    let manifest = workspace::check(dir)?;
    let digest = workspace::digest(&manifest);
    if let Ok(v) = std::fs::read_to_string(dir.join("VERSION")) {
        if v.trim() != bm::VERSION {
            bail!(
                "workspace {} is for referee {:?}; this farm runs {:?}",
                dir.display(),
                v.trim(),
                bm::VERSION
            );
        }
    }
    Ok(Package {
        manifest,
        digest,
        ..Package::default()
    })
}

/// Compile every distinct `.cpp` entrant and check every executable, before the output folder
/// is touched. A source that does not compile stops the run with the compiler's message naming
/// the bot, unless --allow-compile-failures (then it is returned, and the operator warned); a
/// host that cannot compile, or a program that cannot be executed, stops the run either way.
pub fn check_entrants(
    args: EntrantCheck,
    entries: &[Entry],
    hashes: &[String],
    output: &Path,
) -> Result<Vec<NotCompiled>> {
    let prep = BotPrep::new(args.host)
        .context(
        "this host cannot compile the bots before the tournament (a problem of the host, not of a bot)",
    )?;
    let not_compiled = prep.check_roster(entries, hashes)?;
    if not_compiled.is_empty() {
        return Ok(not_compiled);
    }
    let list = not_compiled
        .iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join("\n\n");
    if !args.allow_compile_failures {
        let mut msg = format!(
            "{list}\n\nnothing was played. Fix the source, or add --allow-compile-failures to play \
             anyway: a bot that does not compile is eliminated at turn 0 in every one of its \
             matches, and those matches do not count for scoring"
        );
        if args.resume && output.join(COMPILE_FAILURES_NAME).is_file() {
            msg.push_str(&format!(
                "\n(this run was started with --allow-compile-failures, see {}: add the flag again to resume it)",
                output.join(COMPILE_FAILURES_NAME).display()
            ));
        }
        bail!(msg);
    }
    eprintln!(
        "warning: --allow-compile-failures: {} bot(s) will play and be eliminated at turn 0 in \
         every one of their matches, which then do not count for scoring:\n{list}",
        not_compiled.len()
    );
    Ok(not_compiled)
}

/// A bomberman report accepted (a replay that re-simulates, for the job's seats, seed, programs
/// and clock), its replay saved gzipped with the viewer's data file: the row result.
pub fn accept(
    arrival: &Arrival,
    entry: &ScheduleEntry,
    bot_hashes: &[String],
    out: &Path,
) -> Result<Value> {
    let n = arrival.job.number;
    let replay = match arrival.verdict()? {
        games::accept::Accepted::Bomberman(replay) => replay,
        other => bail!(
            "match {n}: a bomberman tournament got a {} record",
            other.name()
        ),
    };
    for (i, &slot) in entry.slots.iter().enumerate() {
        // The job was built from the roster: a difference here is a bug of this process.
        anyhow::ensure!(
            replay.result.hashes.get(&format!("bot_{i}")) == bot_hashes.get(slot),
            "match {n}: bot hash of seat {i} differs from the roster's"
        );
    }
    let path = out
        .join("replays")
        .join(crate::replay_file::match_file_name(n));
    crate::replay_file::write_gz(&replay, &path)?;
    write_match(&out.join("replays"), n, &replay)?;
    Ok(replay.row_result_json())
}

/// Bomberman's viewer index (games::bomberman::viewer's page and packed data files).
pub const VIEWER: Viewer = Viewer {
    page: bm::viewer::render_index,
    rewrite: |replays, n, text| {
        let rp = bm::replay::verify(text).context("replay does not verify")?;
        write_match(replays, n, &rp)
    },
};

/// Write match `n`'s data file from its `replay`, which has just been verified. A view (no
/// fsync): a crash leaves it whole or absent, and `farm report` writes an absent or empty one
/// again from the replay.
fn write_match(replays: &Path, n: u64, replay: &bm::replay::Replay) -> Result<()> {
    let bytes = crate::replay_file::index_data(replay, n)?;
    crate::fsio::write_view(&replays.join(viewer_index::data_file_name(n)), &bytes)
}

/// A saved replay re-verified: a row keeps the result with its timing summed up; rows written
/// before that keep the replay's whole result object. Either is the replay's.
pub fn saved_results(text: &str) -> Result<Vec<Value>> {
    let replay = bm::replay::verify(text)?;
    Ok(vec![replay.row_result_json(), replay.result_json()])
}

/// Bomberman in the registry (`run::game::GAMES`).
pub struct Bomberman;

impl super::TournamentGame for Bomberman {
    fn name(&self) -> &'static str {
        "bomberman"
    }

    fn summary(&self) -> &'static str {
        "Bomberman (RULES.md): 2 to 10 seats, .cpp sources or executables"
    }

    fn version(&self) -> &'static str {
        bm::VERSION
    }

    fn scoring(&self) -> shared::report::Scoring {
        shared::report::Scoring::SurvivalKill
    }

    fn record_names_version(&self) -> bool {
        false
    }

    fn verify_record(&self, _text: &str) -> Option<Result<String>> {
        None // `farm verify` checks a Bomberman replay with its clock lines itself
    }

    fn check_clock(&self, _clock: &crate::clock::TournamentClock) -> Result<()> {
        Ok(())
    }

    fn package(&self, workspace: &Path, _output: &Path) -> Result<Package> {
        package(workspace)
    }

    fn check_entrants(
        &self,
        check: EntrantCheck,
        entries: &[Entry],
        hashes: &[String],
        output: &Path,
    ) -> Result<Vec<NotCompiled>> {
        check_entrants(check, entries, hashes, output)
    }

    fn job(&self, clock: &TournamentClock, _kit: &Kit, unit: Unit) -> Result<GameJob> {
        Ok(GameJob::Bomberman(BombermanJob {
            seed: unit.entry.seed,
            manifest_digest: unit.package_digest.to_string(),
            clock: crate::clock::job_clock(clock),
        }))
    }

    fn accept(
        &self,
        arrival: &Arrival,
        _kit: &Kit,
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
