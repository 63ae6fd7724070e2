//! The coordinator's side of the game boundary: everything the run engine (`farm run`,
//! `farm sprt`, `farm report`, `--resume`, the cluster) needs to know about a game, in one place
//! per game. The engine itself is game-blind: it schedules seats and seeds, publishes jobs,
//! checkpoints rows and rates them; each row's `result` is the shape the scoring reads
//! (`shared::results::GameResult`: names, ranks, validity, per-seat points, errors and faults).
//!
//! A trait, [`TournamentGame`], implemented once per game in its own module ([`bomberman`],
//! [`qianwang`], [`nim`], [`lowest`], [`proboj`]), and a registry, [`GAMES`]: a game is named by
//! its module and its one line there, and nowhere else in the engine (the wire keeps an enum,
//! `shared::msg::GameJob`, as a closed set the codec can decode; docs/adding-a-game.md says why). A run folder says which game it holds through identity.json's
//! `version` (the referee version), so the commands that read a folder ([`Game::of_version`])
//! need no flag.

pub mod bomberman;
pub mod lowest;
pub mod nim;
pub mod proboj;
pub mod qianwang;

use std::any::Any;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Result};
use serde_json::Value;

use shared::msg::GameJob;
use shared::ordmap::StrMap;
use shared::schedule::ScheduleEntry;

use super::checkpoint::Row;
use super::viewer_index::{self, Viewer};
use crate::botprep::{HostSettings, NotCompiled};
use crate::dispatch::Arrival;
use crate::roster::Entry;

/// File in the output folder with the compiler's messages of the bots that did not compile
/// (written only when there are some, with --allow-compile-failures); the report reads it.
pub const COMPILE_FAILURES_NAME: &str = "compile_failures.json";

/// The games the tournament engine plays, in `--game`'s order (the first is the default): a
/// game is registered by its one line here (and its `pub mod` above).
pub static GAMES: &[Game] = &[
    Game(&bomberman::Bomberman),
    Game(&qianwang::Qianwang),
    Game(&nim::Nim),
    Game(&lowest::Lowest),
    Game(&proboj::Proboj),
];

/// A game the tournament engine plays (`--game`): a handle on its [`TournamentGame`], compared
/// by name.
#[derive(Clone, Copy)]
pub struct Game(&'static dyn TournamentGame);

impl std::ops::Deref for Game {
    type Target = dyn TournamentGame;
    fn deref(&self) -> &Self::Target {
        self.0
    }
}

impl PartialEq for Game {
    fn eq(&self, other: &Game) -> bool {
        self.name() == other.name()
    }
}

impl Eq for Game {}

impl std::fmt::Debug for Game {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Game({})", self.name())
    }
}

impl Default for Game {
    /// Bomberman, the first of [`GAMES`].
    fn default() -> Game {
        GAMES[0]
    }
}

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

/// A game's own per-run data its jobs are built from (proboj: the config, files and maps), or
/// nothing; only the game that made it reads it ([`Kit::get`]).
#[derive(Clone, Default)]
pub struct Kit(Option<Arc<dyn Any + Send + Sync>>);

impl Kit {
    /// A kit holding `data`.
    pub fn new<T: Any + Send + Sync>(data: T) -> Kit {
        Kit(Some(Arc::new(data)))
    }

    /// The data, if this kit holds a `T`.
    pub fn get<T: Any>(&self) -> Option<&T> {
        self.0.as_ref()?.downcast_ref()
    }
}

impl std::fmt::Debug for Kit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Kit(..)"
        } else {
            "Kit(none)"
        })
    }
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

/// What the engine needs of a game, one implementation per game in its own module. The
/// methods with a body are what most games do; a game overrides what it does otherwise.
pub trait TournamentGame: Sync {
    /// The name `--game` takes.
    fn name(&self) -> &'static str;

    /// One line for `farm run --help`: seats, entrants, what a pair or unit is.
    fn summary(&self) -> &'static str;

    /// The referee version: identity.json's `version`, every job's `referee_version`.
    fn version(&self) -> &'static str;

    /// How a match scores, for the per-size tables of 汇总.md and report.html.
    fn scoring(&self) -> shared::report::Scoring {
        shared::report::Scoring::WinDrawLoss
    }

    /// Whether the game's saved records name its version first (`{"version":"…"`), which is how
    /// [`Game::of_replay`] tells them apart; the one game whose replays do not is the fallback.
    fn record_names_version(&self) -> bool {
        true
    }

    /// `farm verify` of a replay file's text: what it found, or why it is rejected; None when
    /// the command verifies the game's replays itself (Bomberman's, with their clock lines).
    fn verify_record(&self, text: &str) -> Option<Result<String>>;

    /// Refuse a clock the game does not take. By default a game plays under its own limits and
    /// refuses every Bomberman clock flag.
    fn check_clock(&self, clock: &crate::clock::TournamentClock) -> Result<()> {
        if *clock == crate::clock::TournamentClock::default() {
            return Ok(());
        }
        bail!(
            "--turn-ms, --time-bank-ms and --scale-clock (FARM_TURN_MS, FARM_TIME_BANK_MS, \
             FARM_SCALE_CLOCK) set the Bomberman clock; {}: drop them with --game {}",
            self.own_clock(),
            self.name()
        )
    }

    /// What a game that refuses the Bomberman clock plays under instead, for that refusal.
    fn own_clock(&self) -> &'static str {
        "this game plays under its own rules' limits"
    }

    /// The match sizes when `--sizes` is not given (a game always played by as many), or None
    /// when the operator must choose.
    fn default_sizes(&self) -> Option<Vec<i64>> {
        None
    }

    /// Refuse match sizes the game cannot play, saying which it can: by default a game with
    /// [`default_sizes`](Self::default_sizes) plays only those, any other every size the schedule
    /// takes (2 to 10).
    fn check_sizes(&self, sizes: &[i64]) -> Result<()> {
        match self.default_sizes() {
            Some(only) if sizes != only.as_slice() => bail!(
                "--game {} plays matches of {}: give --sizes {} (got {sizes:?})",
                self.name(),
                sizes_words(&only, " or "),
                sizes_words(&only, " ")
            ),
            _ => Ok(()),
        }
    }

    /// The referee package of a run (checked against its MANIFEST), or none; `output` is the
    /// run's folder (never packed).
    fn package(&self, _workspace: &Path, _output: &Path) -> Result<Package> {
        Ok(Package::default())
    }

    /// The entrants, in slot order: `Name=program` entries (`--bots`) by default.
    fn entrants(&self, _kit: &Kit, bots: &[String], cwd: &Path) -> Result<Vec<Entry>> {
        Ok(crate::roster::parse_entries(bots, cwd)?)
    }

    /// Each entrant's hash (identity.json's `bot_hashes`, every result's `hashes`): by default
    /// its program file's sha256.
    fn bot_hashes(&self, _kit: &Kit, entries: &[Entry]) -> Result<Vec<String>> {
        entries
            .iter()
            .map(|e| crate::botprep::file_sha256(&e.program))
            .collect()
    }

    /// True when each entrant is a program file a seat carries (shipped by hash).
    fn seats_carry_programs(&self) -> bool {
        true
    }

    /// How many schedule seeds one `--seeds` stands for, when they are numbered units rather
    /// than drawn seeds (None: drawn).
    fn seeds_per_unit(&self, _kit: &Kit) -> Option<i64> {
        None
    }

    /// Check every entrant before anything is written (compile, load): the bots that cannot
    /// play (returned only when `--allow-compile-failures` lets them play and lose), or an error
    /// naming each bot and why.
    fn check_entrants(
        &self,
        check: EntrantCheck,
        entries: &[Entry],
        hashes: &[String],
        output: &Path,
    ) -> Result<Vec<NotCompiled>>;

    /// The game part of a match's job.
    fn job(&self, clock: &crate::clock::TournamentClock, kit: &Kit, unit: Unit) -> Result<GameJob>;

    /// Accept a report through the one verifying function (`games::accept`), check it against
    /// its schedule entry, and save its replay as `out/replays/NNNNN.json.gz` (and the viewer's
    /// data file): the row result scoring reads.
    fn accept(
        &self,
        arrival: &Arrival,
        kit: &Kit,
        entry: &ScheduleEntry,
        bot_hashes: &[String],
        out: &Path,
    ) -> Result<Value>;

    /// A saved replay's text re-verified (a resume trusts nothing it did not check): the row
    /// results it may have been logged with (the current form first).
    fn saved_results(&self, text: &str) -> Result<Vec<Value>>;

    /// The game's viewer index (`replays/index.html`), if it has one.
    fn viewer(&self) -> Option<&'static Viewer> {
        None
    }
}

/// `sizes` as words: `2`, `2 or 3`.
fn sizes_words(sizes: &[i64], sep: &str) -> String {
    sizes
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(sep)
}

/// The clock check of a game that takes only the answer limit (`--turn-ms`): a bank or a
/// scaled clock is Bomberman's.
pub fn turn_limit_only(clock: &crate::clock::TournamentClock, game: &str) -> Result<()> {
    if clock.spec.bank_ms > 0 || clock.reference_speed.is_some() {
        bail!(
            "--time-bank-ms and --scale-clock (FARM_TIME_BANK_MS, FARM_SCALE_CLOCK) are the \
             Bomberman clock's; a game of {game} takes only --turn-ms"
        );
    }
    Ok(())
}

/// An accepted seat game's record (`games::seated::SeatedRecord`) checked against the roster
/// (its jobs were built from it, so a difference is a bug of this process) and saved, as `json`,
/// as match `n`'s replay (`out/replays/NNNNN.json.gz`).
pub fn save_seated<R: games::seated::SeatedRecord>(
    n: u64,
    record: &R,
    json: &str,
    entry: &ScheduleEntry,
    bot_hashes: &[String],
    out: &Path,
) -> Result<()> {
    let seats = record.seats();
    for (i, &slot) in entry.slots.iter().enumerate() {
        anyhow::ensure!(
            seats.get(i).map(|s| s.1) == bot_hashes.get(slot).map(String::as_str),
            "match {n}: the program of seat {i} differs from the roster's"
        );
    }
    let path = out
        .join("replays")
        .join(crate::replay_file::match_file_name(n));
    crate::fsio::write_atomic(&path, &crate::replay_file::gzip(json.as_bytes())?)?;
    Ok(())
}

impl Game {
    /// The game `--game NAME` names.
    pub fn by_name(name: &str) -> Option<Game> {
        GAMES.iter().copied().find(|g| g.name() == name)
    }

    /// The game of a run folder, from identity.json's `version`.
    pub fn of_version(version: &str) -> Result<Game> {
        if let Some(game) = GAMES.iter().copied().find(|g| g.version() == version) {
            return Ok(game);
        }
        let known: Vec<&str> = GAMES.iter().map(|g| g.version()).collect();
        bail!("identity.json names referee {version:?}, which this farm does not run (it runs {known:?})")
    }

    /// The game of a replay file's text: a record that names its referee version first
    /// (`{"version":"matchfarm-qianwang/1"`) is that game's; anything else is read as the
    /// replay of the game whose records do not (Bomberman).
    pub fn of_replay(text: &str) -> Game {
        let head = text.trim_start();
        let names = |g: &Game| {
            g.record_names_version()
                && head.starts_with(&format!("{{\"version\":\"{}\"", g.version()))
        };
        GAMES
            .iter()
            .copied()
            .find(names)
            .or_else(|| GAMES.iter().copied().find(|g| !g.record_names_version()))
            .unwrap_or_default()
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
