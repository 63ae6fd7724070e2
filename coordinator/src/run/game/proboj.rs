//! proboj in the tournament engine. A proboj game's referee is an external server program
//! (`config.json`'s `server`), so the entrants are config.json's players, the unit of the
//! schedule is a map (the `args` of a games.json entry, each distinct one once, in file order),
//! and a match is one game of its seats' players on its map, played by a worker exactly as
//! `farm proboj` plays it (the same job, the same package of files, the same bundle back).
//!
//! A game cannot be re-simulated, so what the engine keeps of it is what the server said: the
//! accepted bundle (held to its job by `games::accept`) is written as the official runner leaves
//! a game folder (`<output>/games/NNNNN/`: score.json, observer, logs), and its record (players,
//! map, exact scores, ending, the folder's files by sha256) is the match's replay
//! (`replays/NNNNN.json.gz`). The ranks are the scores', higher first, ties sharing a rank. A
//! game the server ended without scores is not a result: it is the referee's or the host's
//! failure (played again, then reported failed), never a player's loss.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use games::accept::Accepted;
use shared::msg::{GameJob, PackageFile, ProbojJob};
use shared::ordmap::StrMap;
use shared::schedule::ScheduleEntry;
use worker::proboj::config::{self, RawConfig};
use worker::proboj::remote;

use super::Package;
use crate::dispatch::Arrival;
use crate::roster::Entry;

/// The files a proboj workspace holds: the runner's config and the games whose `args` are the
/// maps.
pub const CONFIG_FILE: &str = "config.json";
pub const GAMES_FILE: &str = "games.json";
/// Where the game folders go inside a run's output folder.
pub const GAME_FOLDERS: &str = "games";

/// What every job of a proboj run carries beyond its seats and map.
#[derive(Debug, Clone)]
pub struct Kit {
    /// The config as jobs carry it (commands relative to the package root).
    config_json: String,
    files: Vec<PackageFile>,
    /// The maps (games.json `args`), in file order; seed `s` plays map `((s - 1) mod len) + 1`.
    maps: Vec<String>,
    players: Vec<Player>,
    digest: String,
}

#[derive(Debug, Clone)]
struct Player {
    name: String,
    /// The command as config.json writes it.
    command: String,
    language: String,
    timeout_s: f64,
    /// Why its program cannot be found, if it cannot.
    missing: Option<String>,
}

impl Kit {
    /// How many maps the run plays.
    pub fn map_count(&self) -> usize {
        self.maps.len()
    }

    /// The map of schedule seed `seed` (seeds count from 1; a seed past the list wraps).
    pub fn map_of(&self, seed: u64) -> &str {
        let len = self.maps.len().max(1) as u64;
        let i = ((seed % len) + len - 1) % len;
        self.maps.get(i as usize).map_or("", String::as_str)
    }
}

/// Read `<workspace>/config.json` and `<workspace>/games.json` (commands resolve against the
/// directory farm runs in, as under the official runner) and pack every file the server and
/// the players need (their folders, and the workspace when it lies under the start directory)
/// by sha256, as `farm proboj --broker` ships a game. The identity's manifest holds those files,
/// the config (without `game_root`, which only says where folders go) and the maps.
pub fn package(workspace: &Path, output: &Path) -> Result<Package> {
    let start = std::env::current_dir().context("reading the current directory")?;
    let config_path = workspace.join(CONFIG_FILE);
    let games_path = workspace.join(GAMES_FILE);
    if !config_path.is_file() {
        bail!(
            "--game proboj reads {CONFIG_FILE} and {GAMES_FILE} from --workspace, and {} has no {CONFIG_FILE}: give --workspace DIR, the folder of the game's config.json and games.json (e.g. --workspace bots/proboj)",
            workspace.display()
        );
    }
    let raw = config::read_raw_config(&config_path)?;
    let mut checked = config::check_config(raw.clone(), &config_path, &start)?;
    let maps = maps_of(&config::load_games(&games_path, &checked)?, &games_path)?;
    // The run's output folder is never packed (its game folders, replays and logs).
    checked.game_root = start.join(output);
    let probe = [config::Game {
        gamefolder: format!("{:05}", 1),
        players: Vec::new(),
        args: String::new(),
    }];
    let data: Vec<PathBuf> = std::fs::canonicalize(workspace)
        .ok()
        .and_then(|w| {
            Some(
                w.strip_prefix(start.canonicalize().ok()?)
                    .ok()?
                    .to_path_buf(),
            )
        })
        .into_iter()
        .collect();
    let pkg = remote::build_package(&raw, &checked, &probe, &start, &data)
        .with_context(|| format!("packing the game of {}", config_path.display()))?;
    let players = players_of(&raw, &checked);
    let mut manifest = StrMap::default();
    for f in &pkg.files {
        manifest.insert(f.path.clone(), f.sha256.clone());
    }
    manifest.insert("(config)".into(), config_digest(&raw)?);
    manifest.insert(
        "(maps)".into(),
        shared::manifest::sha256_hex(serde_json::to_string(&maps)?.as_bytes()),
    );
    let files = pkg
        .files
        .iter()
        .zip(&pkg.sources)
        .map(|(f, src)| (f.sha256.clone(), src.clone()))
        .collect();
    Ok(Package {
        manifest,
        digest: pkg.digest.clone(),
        files,
        kit: super::Kit::new(Kit {
            config_json: pkg.config_json,
            files: pkg.files,
            maps,
            players,
            digest: pkg.digest,
        }),
    })
}

/// The distinct `args` of games.json, in file order: the maps.
fn maps_of(games: &[config::Game], path: &Path) -> Result<Vec<String>> {
    let mut maps: Vec<String> = Vec::new();
    for g in games {
        if !maps.contains(&g.args) {
            maps.push(g.args.clone());
        }
    }
    if maps.is_empty() {
        bail!(
            "{} lists no game: a proboj tournament plays the `args` of its games as maps",
            path.display()
        );
    }
    Ok(maps)
}

fn players_of(raw: &RawConfig, checked: &config::Config) -> Vec<Player> {
    checked
        .players
        .iter()
        .map(|p| Player {
            name: p.name.clone(),
            command: raw
                .players
                .get(&p.name)
                .and_then(|v| v.get("command"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            language: p.language.clone(),
            timeout_s: p.timeout.as_secs_f64(),
            missing: p.missing.clone(),
        })
        .collect()
}

/// The config as it decides a game: everything but `game_root`.
fn config_digest(raw: &RawConfig) -> Result<String> {
    let mut raw = raw.clone();
    raw.game_root = String::new();
    Ok(shared::manifest::sha256_hex(
        serde_json::to_string(&raw)?.as_bytes(),
    ))
}

/// The entrants: the players named by --bots (their config.json names), or every player of
/// config.json in its order. A player whose program cannot be found is refused by name.
pub fn entrants(kit: &Kit, bots: &[String]) -> Result<Vec<Entry>> {
    let chosen: Vec<&Player> = if bots.is_empty() {
        kit.players.iter().collect()
    } else {
        let mut chosen = Vec::new();
        for b in bots {
            let Some(p) = kit.players.iter().find(|p| &p.name == b) else {
                let known: Vec<&str> = kit.players.iter().map(|p| p.name.as_str()).collect();
                bail!("--bots {b:?}: a proboj entrant is a player of {CONFIG_FILE} named by its name (it has {known:?})");
            };
            if chosen.iter().any(|c: &&Player| c.name == p.name) {
                bail!("--bots names {b:?} twice");
            }
            chosen.push(p);
        }
        chosen
    };
    if let Some(p) = chosen.iter().find(|p| p.missing.is_some()) {
        bail!(
            "player {:?} cannot play: {} (build it, fix its command in {CONFIG_FILE}, or leave it out of --bots)",
            p.name,
            p.missing.as_deref().unwrap_or_default()
        );
    }
    Ok(chosen
        .into_iter()
        .map(|p| Entry {
            name: p.name.clone(),
            program: PathBuf::from(&p.command),
        })
        .collect())
}

/// A player's hash for the identity and each result: its command, language and timeout, and
/// the package it runs in (any changed file of the game changes every player's hash).
pub fn bot_hashes(kit: &Kit, entries: &[Entry]) -> Result<Vec<String>> {
    entries
        .iter()
        .map(|e| {
            let p = kit
                .players
                .iter()
                .find(|p| p.name == e.name)
                .with_context(|| format!("{:?} is not a player of {CONFIG_FILE}", e.name))?;
            let text = format!(
                "{}\n{}\n{}\n{}",
                p.command, p.language, p.timeout_s, kit.digest
            );
            Ok(shared::manifest::sha256_hex(text.as_bytes()))
        })
        .collect()
}

/// The job's game: one games.json entry (folder `NNNNN`, the seats' players, the map of the
/// entry's seed) with the package.
pub fn job(kit: &Kit, number: u64, entry: &ScheduleEntry, seats: &[String]) -> GameJob {
    let game = json!({
        "gamefolder": format!("{number:05}"),
        "players": seats,
        "args": kit.map_of(entry.seed),
    });
    GameJob::Proboj(ProbojJob {
        manifest_digest: kit.digest.clone(),
        config_json: kit.config_json.clone(),
        game_json: game.to_string(),
        files: kit.files.clone(),
        fair: true,
        server_timeout_ms: None,
    })
}

/// What the engine keeps of a game: the replay record (the version first, so a file names its
/// game).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub version: String,
    pub number: u64,
    pub seed: u64,
    pub map: String,
    /// In seat order.
    pub players: Vec<String>,
    /// Each seat's player hash.
    pub hashes: Vec<String>,
    /// The last SCORES, exact, in the server's order.
    pub scores: Vec<(String, f64)>,
    pub ending: String,
    pub warnings: Vec<String>,
    pub commands: u64,
    /// The game folder's files as written (path under `games/NNNNN`, sha256).
    pub files: Vec<(String, String)>,
}

/// A proboj report accepted (its bundle held to the job's game by `games::accept`), its
/// folder written into `<out>/games/NNNNN` (a retried game's earlier folder replaced) and its
/// record saved as the match's replay: the row result. A game without scores is refused.
pub fn accept(
    arrival: &Arrival,
    kit: &Kit,
    entry: &ScheduleEntry,
    bot_hashes: &[String],
    out: &Path,
) -> Result<Value> {
    let n = arrival.job.number;
    let bundle = match arrival.verdict()? {
        Accepted::Proboj(b) => b,
        other => bail!(
            "match {n}: a proboj tournament got a {} record",
            other.name()
        ),
    };
    let scores = match (&bundle.scores, bundle.ending.as_str()) {
        (Some(s), "end" | "server-exited") => s.clone(),
        _ => bail!(
            "match {n}: the server ended the game without scores ({}): not a result, the referee's or the host's failure",
            bundle.ending
        ),
    };
    let root = out.join(GAME_FOLDERS);
    let folder = root.join(&bundle.gamefolder);
    if folder.exists() {
        std::fs::remove_dir_all(&folder)
            .with_context(|| format!("removing an earlier try's {}", folder.display()))?;
    }
    remote::unpack(&bundle, &root)?;
    let mut files = Vec::with_capacity(bundle.files.len());
    for f in &bundle.files {
        let path = folder.join(&f.path);
        files.push((f.path.clone(), crate::botprep::file_sha256(&path)?));
    }
    let hashes = entry
        .slots
        .iter()
        .map(|&s| {
            bot_hashes
                .get(s)
                .cloned()
                .context("a seat outside the roster")
        })
        .collect::<Result<Vec<String>>>()?;
    let record = Record {
        version: games::proboj::VERSION.to_string(),
        number: n,
        seed: entry.seed,
        map: kit.map_of(entry.seed).to_string(),
        players: bundle.players.clone(),
        hashes,
        scores,
        ending: bundle.ending.clone(),
        warnings: bundle.warnings.clone(),
        commands: bundle.commands,
        files,
    };
    let result = row_result(&record)?;
    let path = out
        .join("replays")
        .join(crate::replay_file::match_file_name(n));
    let text = serde_json::to_string(&record)?;
    crate::fsio::write_atomic(&path, &crate::replay_file::gzip(text.as_bytes())?)?;
    Ok(result)
}

/// A saved record read again: the row result it was logged with (a proboj game cannot be
/// re-played; its record is held to its own shape and scores).
pub fn saved_results(text: &str) -> Result<Vec<Value>> {
    Ok(vec![row_result(&read(text)?)?])
}

/// `farm verify` of a saved record: what it holds, or why it is refused.
pub fn verify_text(text: &str) -> Result<String> {
    let r = read(text)?;
    row_result(&r)?;
    let scores: Vec<String> = r.scores.iter().map(|(p, s)| format!("{p} {s}")).collect();
    Ok(format!(
        "proboj game {} on map {:?}: {} ({}, {} commands); a proboj game is not re-played (its referee is an external program): its record is checked, and its folder is games/{:05}",
        r.number,
        r.map,
        scores.join(", "),
        r.ending,
        r.commands,
        r.number
    ))
}

fn read(text: &str) -> Result<Record> {
    let r: Record = serde_json::from_str(text).context("not a proboj game record")?;
    if r.version != games::proboj::VERSION {
        bail!(
            "the record is of {:?}, this farm plays {:?}",
            r.version,
            games::proboj::VERSION
        );
    }
    Ok(r)
}

/// What the ratings and reports read of a game (pure): names, ranks by score (higher first,
/// ties share a rank), points (the exact scores), no faults (a proboj server scores a player's
/// misbehaviour itself), and what a resume re-checks (seed, player hashes as `bot_i`).
pub fn row_result(r: &Record) -> Result<Value> {
    if r.hashes.len() != r.players.len() {
        bail!(
            "the record has {} players and {} hashes",
            r.players.len(),
            r.hashes.len()
        );
    }
    let mut points = Vec::with_capacity(r.players.len());
    for p in &r.players {
        let Some((_, s)) = r.scores.iter().find(|(name, _)| name == p) else {
            bail!("the server gave no score for player {p:?}: not a result");
        };
        if !s.is_finite() {
            bail!("the server gave player {p:?} the score {s}: not a result");
        }
        points.push(*s);
    }
    let ranks: Vec<i64> = points
        .iter()
        .map(|s| 1 + points.iter().filter(|o| *o > s).count() as i64)
        .collect();
    let hashes: serde_json::Map<String, Value> = r
        .hashes
        .iter()
        .enumerate()
        .map(|(i, h)| (format!("bot_{i}"), json!(h)))
        .collect();
    let seats = r.players.len();
    Ok(json!({
        "names": r.players,
        "ranks": ranks,
        "valid_for_scoring": true,
        "points": points,
        "errors": vec![0; seats],
        "faults": vec![Vec::<Value>::new(); seats],
        "seed": r.seed,
        "map": r.map,
        "hashes": hashes,
        "turns": r.commands,
    }))
}

/// proboj in the registry (`run::game::GAMES`): its entrants, maps and package come from the
/// kit [`package`] reads.
pub struct Proboj;

impl Proboj {
    fn kit(kit: &super::Kit) -> Result<&Kit> {
        kit.get::<Kit>()
            .context("a proboj run without its game's kit (config.json, games.json)")
    }
}

impl super::TournamentGame for Proboj {
    fn name(&self) -> &'static str {
        "proboj"
    }

    fn summary(&self) -> &'static str {
        "A proboj game (its referee an external server): the entrants are players of the \
         config.json in --workspace, named by their names; every map (`args` of its games.json) \
         played --seeds times per seating"
    }

    fn version(&self) -> &'static str {
        games::proboj::VERSION
    }

    fn verify_record(&self, text: &str) -> Option<Result<String>> {
        Some(verify_text(text))
    }

    fn own_clock(&self) -> &'static str {
        "a proboj game plays under its config.json's `timeout` per language"
    }

    fn package(&self, workspace: &Path, output: &Path) -> Result<Package> {
        package(workspace, output)
    }

    fn entrants(&self, kit: &super::Kit, bots: &[String], _cwd: &Path) -> Result<Vec<Entry>> {
        entrants(Self::kit(kit)?, bots)
    }

    fn bot_hashes(&self, kit: &super::Kit, entries: &[Entry]) -> Result<Vec<String>> {
        bot_hashes(Self::kit(kit)?, entries)
    }

    fn seats_carry_programs(&self) -> bool {
        false // a player is a command of the game's package
    }

    fn seeds_per_unit(&self, kit: &super::Kit) -> Option<i64> {
        kit.get::<Kit>().map(|k| k.map_count() as i64)
    }

    fn check_entrants(
        &self,
        _check: super::EntrantCheck,
        _entries: &[Entry],
        _hashes: &[String],
        _output: &Path,
    ) -> Result<Vec<crate::botprep::NotCompiled>> {
        Ok(Vec::new()) // its players were checked as the kit was read
    }

    fn job(
        &self,
        _clock: &crate::clock::TournamentClock,
        kit: &super::Kit,
        unit: super::Unit,
    ) -> Result<GameJob> {
        Ok(job(Self::kit(kit)?, unit.number, unit.entry, unit.seats))
    }

    fn accept(
        &self,
        arrival: &Arrival,
        kit: &super::Kit,
        entry: &ScheduleEntry,
        bot_hashes: &[String],
        out: &Path,
    ) -> Result<Value> {
        accept(arrival, Self::kit(kit)?, entry, bot_hashes, out)
    }

    fn saved_results(&self, text: &str) -> Result<Vec<Value>> {
        saved_results(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(scores: &[(&str, f64)]) -> Record {
        Record {
            version: games::proboj::VERSION.into(),
            number: 4,
            seed: 2,
            map: "rounds=5".into(),
            players: vec!["two".into(), "one".into(), "three".into()],
            hashes: vec!["h2".into(), "h1".into(), "h3".into()],
            scores: scores.iter().map(|(p, s)| (p.to_string(), *s)).collect(),
            ending: "end".into(),
            warnings: Vec::new(),
            commands: 40,
            files: Vec::new(),
        }
    }

    #[test]
    fn ranks_follow_the_scores_in_seat_order_and_ties_share_a_rank() {
        let r = row_result(&record(&[("one", 3.5), ("two", 7.0), ("three", 3.5)])).unwrap();
        assert_eq!(r["names"], json!(["two", "one", "three"]));
        assert_eq!(r["ranks"], json!([1, 2, 2]));
        assert_eq!(r["points"], json!([7.0, 3.5, 3.5]));
        assert_eq!(
            r["hashes"],
            json!({"bot_0": "h2", "bot_1": "h1", "bot_2": "h3"})
        );
        let g = shared::results::GameResult::from_results_row(&json!({"size": 3, "result": r}), 1)
            .expect("a scoring row");
        assert_eq!(g.ranks, vec![1, 2, 2]);
    }

    #[test]
    fn a_missing_or_unreal_score_is_no_result() {
        assert!(row_result(&record(&[("one", 1.0), ("two", 2.0)])).is_err());
        assert!(row_result(&record(&[("one", 1.0), ("two", f64::NAN), ("three", 0.0)])).is_err());
    }

    #[test]
    fn seeds_take_the_maps_in_turn() {
        let kit = Kit {
            config_json: String::new(),
            files: Vec::new(),
            maps: vec!["a".into(), "b".into(), "c".into()],
            players: Vec::new(),
            digest: String::new(),
        };
        let maps: Vec<&str> = (0..=7).map(|s| kit.map_of(s)).collect();
        assert_eq!(maps, ["c", "a", "b", "c", "a", "b", "c", "a"]);
    }

    #[test]
    fn a_record_round_trips_and_names_its_game() {
        let r = record(&[("one", 1.0), ("two", 2.0), ("three", 0.0)]);
        let text = serde_json::to_string(&r).unwrap();
        assert!(text.starts_with(&format!("{{\"version\":\"{}\"", games::proboj::VERSION)));
        assert_eq!(saved_results(&text).unwrap(), vec![row_result(&r).unwrap()]);
        assert!(verify_text(&text).unwrap().contains("not re-played"));
        assert!(saved_results(&text.replace("matchfarm-proboj", "other")).is_err());
    }
}
