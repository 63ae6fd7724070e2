//! The coordinator's side of the game boundary: everything the run engine (`farm run`,
//! `farm sprt`, `farm report`, `--resume`, the cluster) needs to know about a game, in one place
//! per game. The engine itself is game-blind: it schedules seats and seeds, publishes jobs,
//! checkpoints rows and rates them; each row's `result` is the shape the scoring reads
//! (`shared::results::GameResult`: names, ranks, validity, per-seat points, errors and faults).
//!
//! An enum, as on the wire (`shared::msg::GameJob`): each method is one arm per game, calling
//! that game's module ([`bomberman`], [`qianwang`]); a game is named here and in its module, and
//! nowhere else in the engine. A run folder says which game it holds through identity.json's
//! `version` (the referee version), so the commands that read a folder ([`Game::of_version`])
//! need no flag.

pub mod bomberman;
pub mod lowest;
pub mod nim;
pub mod proboj;
pub mod qianwang;

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use serde_json::Value;

use shared::msg::{BombermanJob, GameJob, QianwangJob};
use shared::ordmap::StrMap;
use shared::schedule::ScheduleEntry;

use super::checkpoint::Row;
use super::viewer_index::{self, Viewer};
use crate::botprep::{HostSettings, NotCompiled};
use crate::dispatch::Arrival;
use crate::roster::Entry;

/// A game the tournament engine plays (`--game`, `cmd::flags::GameArg`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Game {
    /// The Bomberman of RULES.md: 2 to 10 seats, C++ sources or executables, maps by seed.
    #[default]
    Bomberman,
    /// 钳王, the 4×4 capture game: 2 seats (black, red), JavaScript bots (`.js`), a pair is
    /// one seed played with both colours.
    Qianwang,
    /// Nim, the farm's smallest game: 2 seats, `.cpp` sources or executables, heaps by seed.
    Nim,
    /// Lowest unique, the three-seat test game: 3 seats, `.cpp` sources or executables.
    Lowest,
    /// A proboj game (its referee an external server program): the players of a config.json,
    /// the maps (`args`) of a games.json.
    Proboj,
}

/// Every game, for the lookups by name and version.
const GAMES: [Game; 5] = [
    Game::Bomberman,
    Game::Qianwang,
    Game::Nim,
    Game::Lowest,
    Game::Proboj,
];

/// What checking the entrants needs of a run's setup.
#[derive(Debug, Clone, Copy)]
pub struct EntrantCheck<'a> {
    pub host: &'a HostSettings,
    /// --allow-compile-failures: bots that do not compile play and lose.
    pub allow_compile_failures: bool,
    /// A resume (a refusal then says how the run was started).
    pub resume: bool,
}

/// What a game plays with beyond its bots: the referee package's files by sha256 (MANIFEST.json)
/// and the digest every job names. A game with no package has an empty manifest and digest.
#[derive(Debug, Clone, Default)]
pub struct Package {
    /// identity.json's `engine_manifest`.
    pub manifest: StrMap,
    pub digest: String,
    /// Files every job needs, by sha256 and where they are here (shipped to workers like the
    /// bots' programs); empty for Bomberman, whose workers fetch its package by the digest.
    pub files: Vec<(String, PathBuf)>,
    /// What the game's part of each job is built from, beyond the clock.
    pub kit: Kit,
}

/// A game's own per-run data its jobs are built from (proboj: the config, files and maps).
#[derive(Debug, Clone, Default)]
pub enum Kit {
    #[default]
    None,
    Proboj(Box<proboj::Kit>),
}

/// One match as its job's game part sees it.
#[derive(Debug, Clone, Copy)]
pub struct Unit<'a> {
    pub number: u64,
    pub entry: &'a ScheduleEntry,
    /// The seats' names, in seat order.
    pub seats: &'a [String],
    /// The referee package's digest (empty when the game has none).
    pub package_digest: &'a str,
}

impl Game {
    /// The name `--game` takes.
    pub fn name(self) -> &'static str {
        match self {
            Game::Bomberman => "bomberman",
            Game::Qianwang => "qianwang",
            Game::Nim => "nim",
            Game::Lowest => "lowest",
            Game::Proboj => "proboj",
        }
    }

    /// How a match scores, for the per-size tables of 汇总.md and report.html.
    pub fn scoring(self) -> shared::report::Scoring {
        match self {
            Game::Bomberman => shared::report::Scoring::SurvivalKill,
            Game::Qianwang | Game::Nim | Game::Lowest | Game::Proboj => {
                shared::report::Scoring::WinDrawLoss
            }
        }
    }

    /// The referee version: identity.json's `version`, every job's `referee_version`.
    pub fn version(self) -> &'static str {
        match self {
            Game::Bomberman => games::bomberman::VERSION,
            Game::Qianwang => games::qianwang::VERSION,
            Game::Nim => games::nim::VERSION,
            Game::Lowest => games::lowest::VERSION,
            Game::Proboj => games::proboj::VERSION,
        }
    }

    /// The game of a run folder, from identity.json's `version`.
    pub fn of_version(version: &str) -> Result<Game> {
        if let Some(game) = GAMES.into_iter().find(|g| g.version() == version) {
            return Ok(game);
        }
        let known: Vec<&str> = GAMES.iter().map(|g| g.version()).collect();
        bail!("identity.json names referee {version:?}, which this farm does not run (it runs {known:?})")
    }

    /// The game of a replay file's text: a record of any game but Bomberman names its referee
    /// version first (`{"version":"matchfarm-qianwang/1"`); anything else is read as a Bomberman
    /// replay.
    pub fn of_replay(text: &str) -> Game {
        let head = text.trim_start();
        [Game::Qianwang, Game::Nim, Game::Lowest, Game::Proboj]
            .into_iter()
            .find(|g| head.starts_with(&format!("{{\"version\":\"{}\"", g.version())))
            .unwrap_or(Game::Bomberman)
    }

    /// `farm verify` of a replay file's text: what it found, or why it is rejected (Bomberman's
    /// replays are verified by the command itself, with their clock lines).
    pub fn verify_record(self, text: &str) -> Option<Result<String>> {
        match self {
            Game::Bomberman => None,
            Game::Qianwang => Some(qianwang::verify_text(text)),
            Game::Nim => Some(nim::verify_text(text)),
            Game::Lowest => Some(lowest::verify_text(text)),
            Game::Proboj => Some(proboj::verify_text(text)),
        }
    }

    /// Refuse a clock the game does not take: 钳王 plays under its own rules' limits (thinking
    /// points and a wall limit per move), never the Bomberman clock flags.
    pub fn check_clock(self, clock: &crate::clock::TournamentClock) -> Result<()> {
        match self {
            Game::Bomberman => Ok(()),
            Game::Nim => nim::check_clock(clock),
            Game::Lowest => lowest::check_clock(clock),
            Game::Qianwang | Game::Proboj if *clock == crate::clock::TournamentClock::default() => {
                Ok(())
            }
            Game::Proboj => bail!(
                "--turn-ms, --time-bank-ms and --scale-clock (FARM_TURN_MS, FARM_TIME_BANK_MS, \
                 FARM_SCALE_CLOCK) set the Bomberman clock; a proboj game plays under its \
                 config.json's `timeout` per language: drop them with --game proboj"
            ),
            Game::Qianwang => bail!(
                "--turn-ms, --time-bank-ms and --scale-clock (FARM_TURN_MS, FARM_TIME_BANK_MS, \
                 FARM_SCALE_CLOCK) set the Bomberman clock; 钳王 plays under its rules' limits \
                 (thinking points and a wall limit per move): drop them with --game qianwang"
            ),
        }
    }

    /// The match sizes when `--sizes` is not given (a game always played by as many), or None
    /// when the operator must choose.
    pub fn default_sizes(self) -> Option<Vec<i64>> {
        match self {
            Game::Bomberman | Game::Proboj => None,
            Game::Qianwang | Game::Nim => Some(vec![2]),
            Game::Lowest => Some(vec![3]),
        }
    }

    /// Refuse match sizes the game cannot play, saying which it can.
    pub fn check_sizes(self, sizes: &[i64]) -> Result<()> {
        match self {
            Game::Bomberman | Game::Proboj => Ok(()), // the schedule checks 2..=10
            Game::Qianwang => qianwang::check_sizes(sizes),
            Game::Nim => nim::check_sizes(sizes),
            Game::Lowest => lowest::check_sizes(sizes),
        }
    }

    /// The referee package of a run (checked against its MANIFEST), or none; `output` is the
    /// run's folder (never packed).
    pub fn package(self, workspace: &Path, output: &Path) -> Result<Package> {
        match self {
            Game::Bomberman => bomberman::package(workspace),
            Game::Proboj => proboj::package(workspace, output),
            Game::Qianwang | Game::Nim | Game::Lowest => Ok(Package::default()),
        }
    }

    /// The entrants, in slot order: `Name=program` entries (`--bots`), or for proboj the
    /// config's players named by --bots (all of them when it is empty).
    pub fn entrants(self, kit: &Kit, bots: &[String], cwd: &Path) -> Result<Vec<Entry>> {
        match (self, kit) {
            (Game::Proboj, Kit::Proboj(kit)) => proboj::entrants(kit, bots),
            _ => Ok(crate::roster::parse_entries(bots, cwd)?),
        }
    }

    /// Each entrant's hash (identity.json's `bot_hashes`, every result's `hashes`): its
    /// program file's sha256, or for proboj its player's.
    pub fn bot_hashes(self, kit: &Kit, entries: &[Entry]) -> Result<Vec<String>> {
        match (self, kit) {
            (Game::Proboj, Kit::Proboj(kit)) => proboj::bot_hashes(kit, entries),
            _ => entries
                .iter()
                .map(|e| crate::botprep::file_sha256(&e.program))
                .collect(),
        }
    }

    /// True when each entrant is a program file a seat carries (shipped by hash); a proboj
    /// player is a command of the game's package.
    pub fn seats_carry_programs(self) -> bool {
        self != Game::Proboj
    }

    /// How many schedule seeds one `--seeds` stands for, and whether they are numbered rather
    /// than drawn: a proboj `--seeds N` plays every map N times (seed `s` is map `s mod maps`).
    pub fn seeds_per_unit(self, kit: &Kit) -> Option<i64> {
        match kit {
            Kit::Proboj(kit) => Some(kit.map_count() as i64),
            Kit::None => None,
        }
    }

    /// Check every entrant before anything is written (compile, load): the bots that cannot
    /// play (returned only when `--allow-compile-failures` lets them play and lose), or an error
    /// naming each bot and why.
    pub fn check_entrants(
        self,
        check: EntrantCheck,
        entries: &[Entry],
        hashes: &[String],
        output: &Path,
    ) -> Result<Vec<NotCompiled>> {
        match self {
            Game::Bomberman => bomberman::check_entrants(check, entries, hashes, output),
            Game::Qianwang => qianwang::check_entrants(check.host, entries),
            Game::Nim => nim::check_entrants(check.host, entries, hashes),
            Game::Lowest => lowest::check_entrants(check.host, entries, hashes),
            Game::Proboj => Ok(Vec::new()), // its players were checked as the kit was read
        }
    }

    /// The game part of a match's job (bomberman: the clock travels in the job; proboj: the
    /// game entry and package).
    pub fn job(self, clock: &crate::clock::TournamentClock, kit: &Kit, unit: Unit) -> GameJob {
        let seed = unit.entry.seed;
        match (self, kit) {
            (Game::Proboj, Kit::Proboj(kit)) => {
                proboj::job(kit, unit.number, unit.entry, unit.seats)
            }
            (Game::Bomberman | Game::Proboj, _) => GameJob::Bomberman(BombermanJob {
                seed,
                manifest_digest: unit.package_digest.to_string(),
                clock: crate::clock::job_clock(clock),
            }),
            (Game::Qianwang, _) => GameJob::Qianwang(QianwangJob { seed }),
            (Game::Nim, _) => nim::job(clock, seed),
            (Game::Lowest, _) => lowest::job(clock, seed),
        }
    }

    /// Accept a report through the one verifying function (`games::accept`), check it against
    /// its schedule entry, and save its replay as `out/replays/NNNNN.json.gz` (and the viewer's
    /// data file): the row result scoring reads.
    pub fn accept(
        self,
        arrival: &Arrival,
        kit: &Kit,
        entry: &ScheduleEntry,
        bot_hashes: &[String],
        out: &Path,
    ) -> Result<Value> {
        match (self, kit) {
            (Game::Bomberman, _) => bomberman::accept(arrival, entry, bot_hashes, out),
            (Game::Qianwang, _) => qianwang::accept(arrival, entry, bot_hashes, out),
            (Game::Nim, _) => nim::accept(arrival, entry, bot_hashes, out),
            (Game::Lowest, _) => lowest::accept(arrival, entry, bot_hashes, out),
            (Game::Proboj, Kit::Proboj(kit)) => {
                proboj::accept(arrival, kit, entry, bot_hashes, out)
            }
            (Game::Proboj, Kit::None) => bail!("a proboj run without its game's kit"),
        }
    }

    /// A saved replay's text re-verified (a resume trusts nothing it did not check): the row
    /// results it may have been logged with (the current form first).
    pub fn saved_results(self, text: &str) -> Result<Vec<Value>> {
        match self {
            Game::Bomberman => bomberman::saved_results(text),
            Game::Qianwang => qianwang::saved_results(text),
            Game::Nim => nim::saved_results(text),
            Game::Lowest => lowest::saved_results(text),
            Game::Proboj => proboj::saved_results(text),
        }
    }

    /// The game's viewer index (`replays/index.html`), if it has one.
    fn viewer(self) -> Option<&'static Viewer> {
        match self {
            Game::Bomberman => Some(&bomberman::VIEWER),
            Game::Qianwang => Some(&qianwang::VIEWER),
            Game::Nim => Some(&nim::VIEWER),
            Game::Lowest | Game::Proboj => None,
        }
    }

    /// Write the folder's viewer index from its results log, when the game has one; the
    /// summary line `farm report` prints, or None.
    pub fn write_viewer_index(self, dir: &Path, schedule_len: u64) -> Result<Option<String>> {
        self.viewer()
            .map(|v| viewer_index::write_index_line(dir, schedule_len, v))
            .transpose()
    }

    /// Start the viewer index of a run before its first match (a resume lists what it has).
    pub fn start_viewer_index(self, dir: &Path, rows: &[Row]) {
        if let Some(v) = self.viewer() {
            viewer_index::start(dir, rows, v);
        }
    }

    /// Add one row's line to the viewer index as its result arrives.
    pub fn index_row(self, dir: &Path, row: &Row) {
        if self.viewer().is_some() {
            viewer_index::append(dir, row);
        }
    }
}
