//! Everything `farm run` checks and decides before the first match: the roster, the schedule
//! (expanded or frozen), the game's referee package (bomberman: its MANIFEST), the bots (checked
//! by the game: every distinct bomberman `.cpp` source compiled once, as the reference run.py
//! does before it starts evaluate.py; every 钳王 script loaded), the run's identity,
//! the output folder (new, or a resume whose identity and saved results are re-checked one by
//! one), and the lock that keeps a second coordinator out of the same folder.
//!
//! The compile check comes before anything is written to the output folder, so a refused run
//! leaves nothing behind (a fresh run can use the same folder). It runs on the coordinator's
//! host in cluster mode too, through the same compile cache and sandbox a worker uses
//! (`crate::botprep::BotPrep`), once per distinct source hash: the coordinator image has g++, and a broken
//! entrant is better refused once here than discovered in every match on every worker.

use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use shared::ordmap::StrMap;
use shared::schedule::{self, Execution, FrozenSchedule, Identity, ScheduleEntry, ScheduleFile};

use super::checkpoint::{self, Row};
use super::game::{EntrantCheck, Game, Kit};
use crate::botprep::{HostSettings, NotCompiled};
use crate::roster::Entry;

/// A checked, ready-to-run tournament.
pub struct Plan {
    /// The game every match plays.
    pub game: Game,
    /// The game's own part of every job (proboj: its config, package and maps).
    pub kit: Kit,
    /// Files every job needs beyond the bots, by sha256 (shipped like the bots' programs).
    pub package_files: Vec<(String, PathBuf)>,
    pub entries: Vec<Entry>,
    pub bot_hashes: Vec<String>,
    pub anchor: String,
    pub sizes: Vec<i64>,
    pub schedule: Vec<ScheduleEntry>,
    pub identity: Identity,
    pub manifest_digest: String,
    pub output: PathBuf,
    pub workers: usize,
    pub report_every: u64,
    /// Results already in the log (resume), in schedule order.
    pub done: Vec<Row>,
    /// Durable results past `done` (resume: the log's side journal), waiting for their turn.
    pub ahead: Vec<Row>,
    /// Held for the whole run: the output folder's lock.
    pub lock: Option<File>,
    /// Tournament id carried by every job (results of other runs are dropped).
    pub tournament: String,
    /// Entrants whose source does not compile (only with --allow-compile-failures; they play
    /// and are eliminated at turn 0), in roster order.
    pub not_compiled: Vec<NotCompiled>,
}

impl Plan {
    /// The schedule entry of match `n` (1-based), or an error naming it.
    pub fn entry(&self, n: u64) -> Result<&ScheduleEntry> {
        n.checked_sub(1)
            .and_then(|i| self.schedule.get(i as usize))
            .with_context(|| {
                format!(
                    "match {n} is not in the schedule of {} matches",
                    self.schedule.len()
                )
            })
    }

    /// The number of seats of match `n`.
    pub fn size_of(&self, n: u64) -> Result<u32> {
        Ok(self.entry(n)?.size as u32)
    }
}

/// Key of identity.json's `scoring_code` naming the bots that did not compile and were let play
/// (--allow-compile-failures), as a JSON list in roster order. Present only when there are such
/// bots: they change every result they are in, so a resume must see the same list. The flag
/// alone changes nothing when every bot compiles, and is not recorded.
pub const DID_NOT_COMPILE: &str = "did_not_compile";

pub use super::game::COMPILE_FAILURES_NAME;

/// The bundled roster for `--formal`, in slot order (slot 1 is the anchor). Four distinct bots;
/// the extra entrants are copies under other names (so the 10-player size has ten seats), and
/// copies of one bot should rate alike: a sanity check on the ratings.
pub const FORMAL_ROSTER: &[(&str, &str)] = &[
    ("Search", "bots/bomberman/search.cpp"),
    ("Base", "bots/bomberman/baseline.cpp"),
    ("Greedy", "bots/bomberman/greedy.cpp"),
    ("Random", "bots/bomberman/random.cpp"),
    ("Search#2", "bots/bomberman/search.cpp"),
    ("Base#2", "bots/bomberman/baseline.cpp"),
    ("Greedy#2", "bots/bomberman/greedy.cpp"),
    ("Random#2", "bots/bomberman/random.cpp"),
    ("Greedy#3", "bots/bomberman/greedy.cpp"),
    ("Random#3", "bots/bomberman/random.cpp"),
];
/// File of the bundled frozen schedule inside the workspace.
pub const FORMAL_SCHEDULE: &str = "schedule-bundled.json";

/// What the scoring code is, for identity.json (a change of scoring refuses a resume).
pub fn scoring_code() -> StrMap {
    let mut m = StrMap::default();
    m.insert(
        "bt".to_string(),
        format!("matchfarm-shared {} bt", env!("CARGO_PKG_VERSION")),
    );
    m.insert(
        "report".to_string(),
        format!("matchfarm-shared {} report", env!("CARGO_PKG_VERSION")),
    );
    m
}

/// What a run plays: the roster (`Name=program` entries in slot order), its anchor and sizes,
/// and where its schedule comes from.
#[derive(Debug, Clone)]
pub struct Tournament {
    pub bots: Vec<String>,
    pub anchor: String,
    pub sizes: Vec<i64>,
    pub schedule: ScheduleSource,
    /// Entries added to identity.json's `scoring_code`: settings that change which results a
    /// run keeps (e.g. --until-settled, an SPRT's parameters), so a resume must repeat them.
    pub scoring_extra: Vec<(String, String)>,
}

/// Where the schedule comes from.
#[derive(Debug, Clone)]
pub enum ScheduleSource {
    /// `make_schedule` of the roster, sizes and seed count; the seed drawn when absent; with
    /// `rounds`, played in rounds ([`shared::settle::in_rounds`]).
    Expand {
        seeds: i64,
        seed: Option<String>,
        rounds: bool,
    },
    /// [`ScheduleSource::Expand`]'s layout with the seeds `1..=seeds` (a game whose unit is a
    /// numbered map: proboj), the schedule seed only recorded.
    Numbered {
        seeds: i64,
        seed: Option<String>,
        rounds: bool,
    },
    /// A frozen slot schedule file; with `own_sizes` its sizes are the run's (--formal).
    Frozen { path: PathBuf, own_sizes: bool },
    /// A schedule built by the caller (e.g. `farm sprt`'s pairs), recorded with `seed`.
    Given {
        entries: Vec<ScheduleEntry>,
        seed: i128,
    },
}

impl ScheduleSource {
    /// An expanded schedule of a game whose seeds are numbered units (`per` seeds for each
    /// `--seeds`: proboj's maps) instead of drawn seeds; any other source as it is.
    fn in_units(self, per: Option<i64>) -> ScheduleSource {
        match (self, per) {
            (
                ScheduleSource::Expand {
                    seeds,
                    seed,
                    rounds,
                },
                Some(per),
            ) => ScheduleSource::Numbered {
                seeds: seeds.saturating_mul(per),
                seed,
                rounds,
            },
            (source, _) => source,
        }
    }
}

/// How and where a run is set up (the flags every run command shares).
#[derive(Debug, Clone)]
pub struct Setup {
    /// The game the run plays (`--game`).
    pub game: Game,
    pub workspace: PathBuf,
    pub output: PathBuf,
    pub resume: bool,
    pub workers: Option<i64>,
    pub report_every: i64,
    pub allow_compile_failures: bool,
    /// How bots run on this host (the compile-first check uses it).
    pub host: HostSettings,
    /// The match clock (turn limit, time bank): part of the identity when not the rules'.
    pub clock: crate::clock::TournamentClock,
}

/// Everything before the first match, for any run command: checks, compile-first, identity,
/// output folder (new, or a resume re-checked result by result) and its lock.
pub fn prepare_with(args: &Setup, tournament: Tournament) -> Result<Plan> {
    let workers = workers_of(args)?;
    let cwd = std::env::current_dir().context("reading the current directory")?;
    let Tournament {
        bots: raw_bots,
        anchor,
        sizes,
        schedule: source,
        scoring_extra,
    } = tournament;
    let game = args.game;
    game.check_sizes(&sizes)?;
    let output = args.output.clone();
    let package = game.package(&args.workspace, &output)?;
    let entries = game.entrants(&package.kit, &raw_bots, &cwd)?;
    if !entries.iter().any(|e| e.name == anchor) {
        bail!("--anchor must name a bot included in --bots (got {anchor:?})");
    }
    let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
    let source = source.in_units(game.seeds_per_unit(&package.kit));
    let (schedule, seed, sizes) = schedule_of(game, source, &names, sizes, &anchor)?;
    if output.exists() && !args.resume {
        bail!(
            "output {} exists; use --resume or a new directory",
            output.display()
        );
    }
    if args.resume && !output.exists() {
        bail!("nothing to resume: {} does not exist", output.display());
    }
    let bot_hashes = game.bot_hashes(&package.kit, &entries)?;
    let check = EntrantCheck {
        host: &args.host,
        allow_compile_failures: args.allow_compile_failures,
        resume: args.resume,
    };
    let not_compiled = game.check_entrants(check, &entries, &bot_hashes, &output)?;
    let mut scoring = scoring_code();
    for (k, v) in scoring_extra {
        scoring.insert(k, v);
    }
    if !not_compiled.is_empty() {
        let names: Vec<&str> = not_compiled.iter().map(|n| n.name.as_str()).collect();
        scoring.insert(DID_NOT_COMPILE.to_string(), serde_json::to_string(&names)?);
    }
    if let Some((k, v)) = crate::clock::identity_entry(&args.clock) {
        crate::clock::warn_if_not_rules(&args.clock);
        scoring.insert(k, v); // only a non-default clock: parity and old identities unchanged
    }
    let roster_pairs: Vec<(String, String)> = entries
        .iter()
        .map(|e| (e.name.clone(), e.program.to_string_lossy().to_string()))
        .collect();
    let identity = Identity {
        version: game.version().to_string(),
        anchor: anchor.clone(),
        sizes: sizes.clone(),
        execution: Execution {
            workers: workers as u64,
        },
        scoring_code: scoring,
        engine_manifest: package.manifest,
        bot_hashes: hash_map(&names, &bot_hashes),
        schedule: ScheduleFile::from_entries(seed, &schedule, &roster_pairs),
    };
    let tournament = shared::manifest::sha256_hex(serde_json::to_string(&identity)?.as_bytes());
    let saved = Saved {
        game,
        schedule: &schedule,
        names: &names,
        hashes: &bot_hashes,
    };
    let (lock, done, ahead) = match args.resume {
        true => open_resumed(&output, &identity, &saved)?,
        false => (open_new(&output, &identity)?, Vec::new(), Vec::new()),
    };
    write_compile_failures(&output, &not_compiled)?;
    Ok(Plan {
        game,
        kit: package.kit,
        package_files: package.files,
        entries,
        bot_hashes,
        anchor,
        sizes,
        schedule,
        identity,
        manifest_digest: package.digest,
        output,
        workers,
        report_every: args.report_every as u64,
        done,
        ahead,
        lock: Some(lock),
        tournament,
        not_compiled,
    })
}

/// identity.json's `bot_hashes`: each name's program hash, in roster order.
fn hash_map(names: &[&str], hashes: &[String]) -> StrMap {
    let mut map = StrMap::default();
    for (name, hash) in names.iter().zip(hashes) {
        map.insert(name.to_string(), hash.clone());
    }
    map
}

/// The concurrent matches of a run (default: the cores), after checking --report-every.
fn workers_of(args: &Setup) -> Result<usize> {
    if args.report_every < 1 {
        bail!("--workers and --report-every must be positive");
    }
    match args.workers {
        None => Ok(std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)),
        Some(w) if w >= 1 => Ok(w as usize),
        Some(_) => bail!("--workers and --report-every must be positive"),
    }
}

/// The schedule a run plays, its seed and sizes: expanded from the roster (the seed drawn when
/// absent), read from a frozen file (checked against the roster, sizes, anchor and the game's
/// referee version) or given by the caller.
fn schedule_of(
    game: Game,
    source: ScheduleSource,
    names: &[&str],
    sizes: Vec<i64>,
    anchor: &str,
) -> Result<(Vec<ScheduleEntry>, i128, Vec<i64>)> {
    match source {
        ScheduleSource::Expand {
            seeds,
            ref seed,
            rounds,
        }
        | ScheduleSource::Numbered {
            seeds,
            ref seed,
            rounds,
        } => {
            let numbered = matches!(source, ScheduleSource::Numbered { .. });
            let seed: i128 = match seed {
                Some(s) => parse_seed(s)?,
                None => random_seed()?,
            };
            let entries = match numbered {
                true => schedule::make_schedule_numbered(names.len(), &sizes, seeds)?,
                false => schedule::make_schedule(names.len(), &sizes, seeds, seed)?,
            };
            let entries = match rounds {
                true => shared::settle::in_rounds(&entries),
                false => entries,
            };
            Ok((entries, seed, sizes))
        }
        ScheduleSource::Frozen { path, own_sizes } => {
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("reading frozen schedule {}", path.display()))?;
            let frozen: FrozenSchedule = serde_json::from_str(&text)
                .with_context(|| format!("frozen schedule {} is malformed", path.display()))?;
            let sizes = if own_sizes {
                frozen.sizes.clone()
            } else {
                sizes
            };
            let entries = frozen
                .validate(names, &sizes, anchor, game.version())
                .with_context(|| format!("frozen schedule {}", path.display()))?;
            Ok((entries, frozen.schedule_seed, sizes))
        }
        ScheduleSource::Given { entries, seed } => Ok((entries, seed, sizes)),
    }
}

/// What a resume re-checks each saved result against.
struct Saved<'a> {
    game: Game,
    schedule: &'a [ScheduleEntry],
    names: &'a [&'a str],
    hashes: &'a [String],
}

/// A new output folder: created, locked, with identity.json and schedule.json.
fn open_new(output: &Path, identity: &Identity) -> Result<File> {
    std::fs::create_dir_all(output).with_context(|| format!("creating {}", output.display()))?;
    let lock = lock_output(output)?;
    crate::fsio::write_atomic(
        &output.join("identity.json"),
        (serde_json::to_string_pretty(identity)? + "\n").as_bytes(),
    )?;
    crate::fsio::write_atomic(
        &output.join("schedule.json"),
        (serde_json::to_string_pretty(&identity.schedule)? + "\n").as_bytes(),
    )?;
    Ok(lock)
}

/// A resumed output folder: locked, its identity the run's, every saved result (in order and
/// ahead) re-checked against its schedule entry, the bots and its replay.
fn open_resumed(
    output: &Path,
    identity: &Identity,
    saved: &Saved,
) -> Result<(File, Vec<Row>, Vec<Row>)> {
    let lock = lock_output(output)?;
    let saved_path = output.join("identity.json");
    let saved_text = std::fs::read_to_string(&saved_path)
        .with_context(|| format!("reading {}", saved_path.display()))?;
    let then: Identity = serde_json::from_str(&saved_text)
        .with_context(|| format!("{} is malformed", saved_path.display()))?;
    check_same_compile_failures(identity, &then)?;
    if let Some(diff) = identity.difference(&then) {
        bail!("referee, bots or schedule changed; resume rejected: {diff}");
    }
    let len = saved.schedule.len();
    let rec = checkpoint::recover(&output.join(checkpoint::LOG_NAME), len as u64)?;
    if let Some(torn) = rec.torn_bytes {
        eprintln!(
            "note: the results log ended in a torn record ({torn} bytes, a crash mid-write); recovered every whole record before it"
        );
    }
    if rec.rows.len() > len {
        bail!(
            "too many saved results: {} for a schedule of {len}",
            rec.rows.len()
        );
    }
    if let Some(row) = rec.ahead.iter().find(|r| r.number > len as u64) {
        bail!(
            "{}: a saved result for match {} of a schedule of {len}",
            checkpoint::AHEAD_NAME,
            row.number
        );
    }
    for row in rec.rows.iter().chain(&rec.ahead) {
        check_saved(saved, row, output)?;
    }
    Ok((lock, rec.rows, rec.ahead))
}

/// On resume, the bots that did not compile must be those that did not compile when the run
/// started: the saved matches were played with them (or without them), the rest would not be.
fn check_same_compile_failures(now: &Identity, saved: &Identity) -> Result<()> {
    let (now, then) = (
        now.scoring_code.get(DID_NOT_COMPILE),
        saved.scoring_code.get(DID_NOT_COMPILE),
    );
    match (then, now) {
        (None, Some(now)) => bail!(
            "resume rejected: {now} did not compile now, but every bot compiled when this run \
             started (its saved matches were played with them); fix the compile, or start a new run"
        ),
        (Some(then), None) => bail!(
            "resume rejected: when this run started {then} did not compile and played eliminated \
             at turn 0 (--allow-compile-failures); now every bot compiles, which would change the \
             remaining matches; start a new run"
        ),
        (Some(then), Some(now)) if then != now => {
            bail!("resume rejected: the bots that do not compile differ: saved {then}, now {now}")
        }
        _ => Ok(()),
    }
}

/// Record the compiler's messages of the bots let play without compiling (none: no file).
fn write_compile_failures(output: &Path, not_compiled: &[NotCompiled]) -> Result<()> {
    if not_compiled.is_empty() {
        return Ok(());
    }
    let list: Vec<serde_json::Value> = not_compiled
        .iter()
        .map(|n| {
            serde_json::json!({
                "name": n.name,
                "program": n.program.to_string_lossy(),
                "message": n.message,
            })
        })
        .collect();
    crate::fsio::write_atomic(
        &output.join(COMPILE_FAILURES_NAME),
        (serde_json::to_string_pretty(&list)? + "\n").as_bytes(),
    )
}

/// Re-check one saved result against its schedule entry, the bot hashes and its replay.
fn check_saved(saved: &Saved, row: &Row, output: &Path) -> Result<()> {
    let n = row.number;
    let Some(entry) = n
        .checked_sub(1)
        .and_then(|i| saved.schedule.get(i as usize))
    else {
        bail!("saved match {n} is not in the schedule");
    };
    if row.size as usize != entry.size {
        bail!(
            "saved match {n} differs from the schedule (size {} vs {})",
            row.size,
            entry.size
        );
    }
    let Some(result) = &row.result else {
        return Ok(()); // a failed match: nothing to check, it will be reported (or redone)
    };
    let want_names: Vec<&str> = entry.slots.iter().map(|&s| saved.names[s]).collect();
    let got_names: Vec<&str> = result["names"]
        .as_array()
        .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default();
    if result["seed"].as_u64() != Some(entry.seed) || got_names != want_names {
        bail!("saved match {n} differs from the schedule (seed or seats)");
    }
    for (i, &slot) in entry.slots.iter().enumerate() {
        if result["hashes"][format!("bot_{i}")].as_str() != Some(saved.hashes[slot].as_str()) {
            bail!("saved match {n}: bot hashes differ from the current programs");
        }
    }
    let replays = output.join("replays");
    let Some(path) = crate::replay_file::find_match(&replays, n) else {
        bail!(
            "saved match {n}: its replay is missing (neither {} nor {n:05}.json in {})",
            crate::replay_file::match_file_name(n),
            replays.display()
        );
    };
    let text = crate::replay_file::read_text(&path)
        .with_context(|| format!("saved match {n}: reading its replay {}", path.display()))?;
    let results = saved
        .game
        .saved_results(&text)
        .with_context(|| format!("saved match {n}: replay {}", path.display()))?;
    if !results.contains(result) {
        bail!("saved match {n}: result and replay differ");
    }
    Ok(())
}

/// Take an exclusive lock on the output folder (released when the file is dropped).
fn lock_output(output: &Path) -> Result<File> {
    let path = output.join(".lock");
    let f = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| format!("creating {}", path.display()))?;
    // A coordinator that was just killed may take a moment to disappear with its bots: wait a
    // few seconds before calling the folder busy.
    let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let locked = loop {
        // The lock lives as long as the File.
        let locked = sandbox::fdio::try_lock_exclusive(&f);
        if locked || std::time::Instant::now() >= until {
            break locked;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    if !locked {
        bail!(
            "another coordinator is already running on {} (its lock is held); wait for it or use another --output",
            output.display()
        );
    }
    Ok(f)
}

/// A `--seed`: a decimal integer of at most 127 bits and a sign (what identity.json records
/// exactly); a larger one, which evaluate.py would take, is refused saying the range.
fn parse_seed(text: &str) -> Result<i128> {
    let t = text.trim();
    let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        bail!("--seed {text:?} is not an integer");
    }
    match t.parse::<i128>() {
        Ok(seed) => Ok(seed),
        Err(_) => bail!(
            "--seed {text:?} is out of range: the farm takes seeds from -2^127 to 2^127 - 1 ({}), not every Python integer",
            i128::MAX
        ),
    }
}

/// A 63-bit schedule seed from the OS's randomness.
fn random_seed() -> Result<i128> {
    let mut buf = [0u8; 8];
    use std::io::Read;
    File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut buf))
        .context("reading /dev/urandom for a schedule seed")?;
    Ok((u64::from_le_bytes(buf) >> 1) as i128)
}
