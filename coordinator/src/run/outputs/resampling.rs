//! The map-unit bootstrap of a run's views: the scored games kept compactly (a name index and a
//! rank per seat, so a 100k-match run stays small), each match's map read once from
//! identity.json, and the bootstrap recomputed within its budget: a live refresh at most every
//! [`BOOTSTRAP_REFRESH`] or 50 times its last cost (at most 2% of the loop's time), a final
//! write or `farm report` on every result. Its owner ([`super::Live`]) reads the last fit.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use shared::bootstrap::{self, BootstrapFit};
use shared::results::GameResult;

/// Resamples of the bootstrap intervals.
pub const BOOTSTRAP_RESAMPLES: usize = 1000;
/// A live report recomputes the bootstrap at most this often.
pub const BOOTSTRAP_REFRESH: Duration = Duration::from_secs(5);
/// What a bootstrap unit is (text for bt.json).
pub const BOOTSTRAP_UNIT: &str =
    "map: the (size, seed) of each match in the schedule, all its groups and seat rotations";

/// A scored game as compactly as the bootstrap needs it (the rows of a 100k-match run stay
/// small): size, validity, and per seat the name (an index into `Resampling::interned`) and rank.
pub(super) struct Scored {
    size: usize,
    valid: bool,
    seats: Vec<(u32, i64)>,
}

/// The part of identity.json the bootstrap reads (the rosters are skipped, not held).
#[derive(serde::Deserialize)]
struct IdentityMaps {
    schedule: ScheduleMaps,
}

#[derive(serde::Deserialize)]
struct ScheduleMaps {
    schedule_seed: i128,
    entries: Vec<MapOf>,
}

#[derive(serde::Deserialize)]
struct MapOf {
    size: usize,
    seed: u64,
}

/// The map of each match and the resampling seed, from identity.json.
struct Maps {
    /// `(size, seed)` of match `n` at index `n - 1`.
    of_match: Vec<(usize, u64)>,
    seed: u64,
}

/// The last bootstrap computed, and on what.
pub(super) struct Boot {
    /// `Resampling::generation` when it was computed; fresh while that has not moved.
    pub(super) generation: u64,
    /// Results (games) it was computed on.
    pub(super) games: u64,
    pub(super) at: Instant,
    pub(super) took: Duration,
    pub(super) result: Result<BootstrapFit, NoBootstrap>,
}

/// Why a run has no bootstrap intervals (yet).
#[derive(Debug, Clone, thiserror::Error)]
pub enum NoBootstrap {
    #[error("the maps of the matches are unknown: reading {path}: {why}")]
    MapsUnread {
        path: std::path::PathBuf,
        why: String,
    },
    #[error("the maps of the matches are unknown: {path} is malformed: {why}")]
    MapsMalformed {
        path: std::path::PathBuf,
        why: String,
    },
    #[error("the maps of the matches are unknown")]
    MapsNotRead,
    #[error("match {0} is not in identity.json's schedule")]
    NotInSchedule(u64),
    #[error("{0}")]
    Fit(#[from] bootstrap::BootstrapError),
}

/// The scored games and their last bootstrap.
pub(super) struct Resampling {
    names: Vec<String>,
    sizes: Vec<usize>,
    anchor: String,
    /// Scored games by match number.
    pub(super) games: BTreeMap<u64, Scored>,
    /// Seat names of the scored games: the roster, then any other name met.
    interned: Vec<String>,
    /// Bumped by every added game.
    pub(super) generation: u64,
    /// The schedule's maps; `None` until read from the folder, `Err` if it cannot be.
    maps: Option<Result<Maps, NoBootstrap>>,
    pub(super) boot: Option<Boot>,
    /// A live refresh recomputes the bootstrap at most this often ([`BOOTSTRAP_REFRESH`]).
    pub(super) refresh: Duration,
}

impl Resampling {
    pub(super) fn new(names: &[String], sizes: &[usize], anchor: &str) -> Resampling {
        Resampling {
            names: names.to_vec(),
            sizes: sizes.to_vec(),
            anchor: anchor.to_string(),
            games: BTreeMap::new(),
            interned: names.to_vec(),
            generation: 0,
            maps: None,
            boot: None,
            refresh: BOOTSTRAP_REFRESH,
        }
    }

    /// Keep the scored game of match `n`.
    pub(super) fn add(&mut self, n: u64, g: &GameResult) {
        let scored = self.compact(g);
        self.games.insert(n, scored);
        self.generation += 1;
    }

    /// The bootstrap on every result so far (computed now unless it already is). Needs the
    /// folder (for the maps) once.
    pub(super) fn now(&mut self, dir: &Path) -> Result<BootstrapFit, NoBootstrap> {
        self.load_maps(dir);
        self.refresh(true);
        match &self.boot {
            Some(b) => b.result.clone(),
            None => self.compute(), // never: a forced refresh always sets it
        }
    }

    /// The last fit when it covers every result so far.
    pub(super) fn fresh(&self) -> Option<&BootstrapFit> {
        self.boot
            .as_ref()
            .filter(|b| b.generation == self.generation)
            .and_then(|b| b.result.as_ref().ok())
    }

    /// A scored game as the statistics read it: its seats' names and ranks (points unused).
    pub(super) fn game_result(&self, g: &Scored) -> GameResult {
        GameResult {
            size: g.size,
            valid_for_scoring: g.valid,
            names: g
                .seats
                .iter()
                .map(|&(i, _)| self.interned[i as usize].clone())
                .collect(),
            ranks: g.seats.iter().map(|&(_, r)| r).collect(),
            survival_points: Vec::new(),
            kill_points: Vec::new(),
            points: Vec::new(),
            errors: Vec::new(),
        }
    }

    /// Read (once) each match's map and the schedule seed from the folder's identity.json.
    pub(super) fn load_maps(&mut self, dir: &Path) {
        if self.maps.is_some() {
            return;
        }
        let path = dir.join("identity.json");
        let maps = std::fs::File::open(&path)
            .map_err(|e| NoBootstrap::MapsUnread {
                path: path.clone(),
                why: e.to_string(),
            })
            .and_then(|file| {
                serde_json::from_reader::<_, IdentityMaps>(std::io::BufReader::new(file)).map_err(
                    |e| NoBootstrap::MapsMalformed {
                        path: path.clone(),
                        why: e.to_string(),
                    },
                )
            })
            .map(|id| Maps {
                of_match: id
                    .schedule
                    .entries
                    .iter()
                    .map(|e| (e.size, e.seed))
                    .collect(),
                // The low 64 bits: the seed itself for every seed below 2^64.
                seed: id.schedule.schedule_seed as u64,
            });
        self.maps = Some(maps);
    }

    /// The bootstrap of every result so far (pure given the games and the maps).
    fn compute(&self) -> Result<BootstrapFit, NoBootstrap> {
        let maps = match &self.maps {
            Some(Ok(m)) => m,
            Some(Err(e)) => return Err(e.clone()),
            None => return Err(NoBootstrap::MapsNotRead),
        };
        let mut games = Vec::with_capacity(self.games.len());
        let mut units = Vec::with_capacity(self.games.len());
        for (&n, g) in &self.games {
            let Some(&map) = (n as usize)
                .checked_sub(1)
                .and_then(|i| maps.of_match.get(i))
            else {
                return Err(NoBootstrap::NotInSchedule(n));
            };
            games.push(self.game_result(g));
            units.push(map);
        }
        bootstrap::bootstrap(
            &games,
            &units,
            &self.names,
            &self.sizes,
            &self.anchor,
            BOOTSTRAP_RESAMPLES,
            maps.seed,
        )
        .map_err(NoBootstrap::from)
    }

    /// Recompute the bootstrap if results came in since the last one; unless `force`, only
    /// when the last one is older than the refresh interval and 50 times its own cost (so it
    /// takes at most 2% of the time).
    /// A fresh successful one goes to the metrics gauges.
    pub(super) fn refresh(&mut self, force: bool) {
        if let Some(b) = &self.boot {
            if b.generation == self.generation {
                return;
            }
            if !force && b.at.elapsed() < self.refresh.max(b.took * 50) {
                return;
            }
        }
        let at = Instant::now();
        let result = self.compute();
        if let Ok(b) = &result {
            crate::metrics::global().bootstrap(b);
        }
        self.boot = Some(Boot {
            generation: self.generation,
            games: self.games.len() as u64,
            at,
            took: at.elapsed(),
            result,
        });
    }

    /// A game as the bootstrap keeps it.
    fn compact(&mut self, g: &GameResult) -> Scored {
        let mut seats = Vec::with_capacity(g.names.len());
        for (name, &rank) in g.names.iter().zip(&g.ranks) {
            let i = match self.interned.iter().position(|n| n == name) {
                Some(i) => i,
                None => {
                    self.interned.push(name.clone());
                    self.interned.len() - 1
                }
            };
            seats.push((i as u32, rank));
        }
        Scored {
            size: g.size,
            valid: g.valid_for_scoring,
            seats,
        }
    }
}
