//! Tournament schedules: the Python-compatible expansion of (entrants, sizes, seed count, seed)
//! into matches, frozen schedules (slot-based, read from a file) and their checks, and the
//! `schedule.json` / `identity.json` shapes the reference tournament script writes.

use crate::ordmap::StrMap;
use crate::pyrandom::{PyRandomError, Random};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use thiserror::Error;

/// Game seeds are drawn from `1..2**31`, as the reference does.
const GAME_SEED_SPAN: u64 = (1 << 31) - 1;
/// The largest match size any game supports.
pub const MAX_MATCH_SIZE: i64 = 10;
/// The most matches an expanded schedule may hold: ten times the 100,800-match schedule of the
/// memory benchmark (136 MiB to plan), so about 1.3 GiB; a larger one is refused before
/// anything is drawn or allocated.
pub const MAX_MATCHES: u64 = 1_000_000;

/// One scheduled match: its size, its map seed and the seats as roster slot indices.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScheduleEntry {
    pub size: usize,
    pub seed: u64,
    pub slots: Vec<usize>,
}

/// Why a schedule could not be made or a frozen schedule was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ScheduleError {
    #[error("at least two entrants required (got {0})")]
    TooFewEntrants(usize),
    #[error("seed count must be positive (got {0})")]
    SeedCount(i64),
    #[error("match sizes {sizes:?} invalid: each match size must be unique and between 2 and min(10, entrant count) = {max}")]
    Sizes { sizes: Vec<i64>, max: i64 },
    #[error("the schedule would hold {} matches; at most {max} can be held", matches.map_or_else(|| "more than 2^64".to_string(), |n| n.to_string()))]
    TooLarge { matches: Option<u64>, max: u64 },
    #[error("cannot draw {count} distinct map seeds: {source}")]
    Sample { count: i64, source: PyRandomError },
    #[error("frozen schedule sizes {frozen:?} differ from the requested sizes {requested:?}")]
    FrozenSizes {
        frozen: Vec<i64>,
        requested: Vec<i64>,
    },
    #[error("frozen schedule roster size differs: it uses slots {used:?} but the roster has {roster} bots (missing slots {missing:?}, unknown slots {unknown:?})")]
    FrozenRoster {
        used: Vec<i64>,
        roster: usize,
        missing: Vec<i64>,
        unknown: Vec<i64>,
    },
    #[error("baseline must occupy its frozen slot {slot}: that slot holds {holder:?}, the anchor is {anchor:?}")]
    FrozenBaseline {
        slot: i64,
        holder: Option<String>,
        anchor: String,
    },
    #[error("invalid frozen match #{number} (size {size}, slots {slots:?}): {why}")]
    FrozenMatch {
        number: usize,
        size: i64,
        slots: Vec<i64>,
        why: &'static str,
    },
    #[error("frozen schedule engine version {frozen:?} differs from the engine's {engine:?}")]
    FrozenVersion { frozen: String, engine: String },
}

/// Expands a schedule exactly like the reference `make_schedule(entrants, sizes, seed_count,
/// seed)`: per size (in the given order) draw `seed_count` map seeds, then for every entrant
/// group (lexicographic combinations of slots), every seed, the forward order (and for sizes
/// above two the reversed order) in each rotation.
pub fn make_schedule(
    entrant_count: usize,
    sizes: &[i64],
    seed_count: i64,
    seed: i128,
) -> Result<Vec<ScheduleEntry>, ScheduleError> {
    make_schedule_with(entrant_count, sizes, seed_count, Random::new(seed))
}

/// [`make_schedule`] with a generator already seeded (e.g. from an arbitrarily large decimal
/// seed via [`Random::from_decimal`]).
pub fn make_schedule_with(
    entrant_count: usize,
    sizes: &[i64],
    seed_count: i64,
    mut rng: Random,
) -> Result<Vec<ScheduleEntry>, ScheduleError> {
    validate_plan(entrant_count, sizes, seed_count)?;
    let mut out = Vec::new();
    for &size in sizes {
        let seeds: Vec<u64> = rng
            .sample(GAME_SEED_SPAN, seed_count as u64)
            .map_err(|source| ScheduleError::Sample {
                count: seed_count,
                source,
            })?
            .into_iter()
            .map(|s| s + 1)
            .collect();
        expand_size(entrant_count, size as usize, &seeds, &mut out);
    }
    Ok(out)
}

/// [`make_schedule`]'s layout with the seeds `1..=seed_count` in every size instead of drawn
/// ones: for a game whose unit is a numbered map rather than a random seed (proboj: seed `s`
/// plays the `s`-th map of its list).
pub fn make_schedule_numbered(
    entrant_count: usize,
    sizes: &[i64],
    seed_count: i64,
) -> Result<Vec<ScheduleEntry>, ScheduleError> {
    validate_plan(entrant_count, sizes, seed_count)?;
    let seeds: Vec<u64> = (1..=seed_count as u64).collect();
    let mut out = Vec::new();
    for &size in sizes {
        expand_size(entrant_count, size as usize, &seeds, &mut out);
    }
    Ok(out)
}

/// One size's matches: for every entrant group (lexicographic combinations of slots), every
/// seed, the forward order (and for sizes above two the reversed order) in each rotation.
fn expand_size(entrant_count: usize, size: usize, seeds: &[u64], out: &mut Vec<ScheduleEntry>) {
    let mut group: Vec<usize> = (0..size).collect();
    loop {
        for &seed in seeds {
            let forward = group.clone();
            let reversed: Vec<usize> = group.iter().rev().copied().collect();
            let orders: &[Vec<usize>] = if size <= 2 {
                std::slice::from_ref(&forward)
            } else {
                &[forward.clone(), reversed]
            };
            for order in orders {
                for shift in 0..size {
                    let mut slots = order[shift..].to_vec();
                    slots.extend_from_slice(&order[..shift]);
                    out.push(ScheduleEntry { size, seed, slots });
                }
            }
        }
        if !next_combination(&mut group, entrant_count) {
            break;
        }
    }
}

/// The checks `make_schedule` makes before drawing anything, in the same order.
pub fn validate_plan(
    entrant_count: usize,
    sizes: &[i64],
    seed_count: i64,
) -> Result<(), ScheduleError> {
    if entrant_count < 2 {
        return Err(ScheduleError::TooFewEntrants(entrant_count));
    }
    if seed_count < 1 {
        return Err(ScheduleError::SeedCount(seed_count));
    }
    let max = MAX_MATCH_SIZE.min(entrant_count as i64);
    let unique: BTreeSet<i64> = sizes.iter().copied().collect();
    if sizes.is_empty() || unique.len() != sizes.len() || sizes.iter().any(|&n| n < 2 || n > max) {
        return Err(ScheduleError::Sizes {
            sizes: sizes.to_vec(),
            max,
        });
    }
    // The reference's own refusal (random.sample of more seeds than there are) comes first.
    if seed_count as u64 > GAME_SEED_SPAN {
        return Err(ScheduleError::Sample {
            count: seed_count,
            source: crate::pyrandom::PyRandomError::SampleTooLarge {
                k: seed_count as u64,
                n: GAME_SEED_SPAN,
            },
        });
    }
    match match_count(entrant_count, sizes, seed_count) {
        Some(n) if n <= MAX_MATCHES => Ok(()),
        matches => Err(ScheduleError::TooLarge {
            matches,
            max: MAX_MATCHES,
        }),
    }
}

/// How many matches [`make_schedule`] makes of these (valid) settings, without making them:
/// per size, every group of entrants, every map, every rotation of each seat order (one order
/// for two seats, forward and reversed above). `None` past `u64`.
pub fn match_count(entrant_count: usize, sizes: &[i64], seed_count: i64) -> Option<u64> {
    let seeds = u64::try_from(seed_count).ok()?;
    let mut total = 0u64;
    for &size in sizes {
        let size = u64::try_from(size).ok()?;
        let orders = if size <= 2 { 1 } else { 2 };
        let per_map = combinations(entrant_count as u64, size)?.checked_mul(orders * size)?;
        total = total.checked_add(per_map.checked_mul(seeds)?)?;
    }
    Some(total)
}

/// n choose k, `None` past `u64`.
fn combinations(n: u64, k: u64) -> Option<u64> {
    if k > n {
        return Some(0);
    }
    let mut c: u128 = 1;
    for i in 0..k.min(n - k) {
        c = c * u128::from(n - i) / u128::from(i + 1);
        if c > u128::from(u64::MAX) {
            return None;
        }
    }
    u64::try_from(c).ok()
}

/// Advances `group` (strictly increasing indices below `n`) to the next combination in
/// lexicographic order, as `itertools.combinations` yields them. False when exhausted.
fn next_combination(group: &mut [usize], n: usize) -> bool {
    let r = group.len();
    let mut i = r;
    while i > 0 {
        i -= 1;
        if group[i] != i + n - r {
            group[i] += 1;
            for j in i + 1..r {
                group[j] = group[j - 1] + 1;
            }
            return true;
        }
    }
    false
}

/// A frozen slot schedule as the reference reads it with `--schedule`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrozenSchedule {
    pub sizes: Vec<i64>,
    pub entries: Vec<FrozenEntry>,
    pub baseline_slot: i64,
    pub schedule_seed: i128,
    pub version: String,
}

/// One match of a frozen schedule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrozenEntry {
    pub size: i64,
    pub seed: u64,
    pub slots: Vec<i64>,
}

impl FrozenSchedule {
    /// Checks the frozen schedule against the roster (names in slot order), the requested sizes,
    /// the anchor and the engine version, in the reference's order, and returns the matches.
    pub fn validate(
        &self,
        roster: &[&str],
        sizes: &[i64],
        anchor: &str,
        engine_version: &str,
    ) -> Result<Vec<ScheduleEntry>, ScheduleError> {
        if self.sizes != sizes {
            return Err(ScheduleError::FrozenSizes {
                frozen: self.sizes.clone(),
                requested: sizes.to_vec(),
            });
        }
        let used: BTreeSet<i64> = self
            .entries
            .iter()
            .flat_map(|e| e.slots.iter().copied())
            .collect();
        let expected: BTreeSet<i64> = (0..roster.len() as i64).collect();
        if used != expected {
            return Err(ScheduleError::FrozenRoster {
                used: used.iter().copied().collect(),
                roster: roster.len(),
                missing: expected.difference(&used).copied().collect(),
                unknown: used.difference(&expected).copied().collect(),
            });
        }
        let holder = usize::try_from(self.baseline_slot)
            .ok()
            .and_then(|i| roster.get(i));
        if holder.copied() != Some(anchor) {
            return Err(ScheduleError::FrozenBaseline {
                slot: self.baseline_slot,
                holder: holder.map(|h| h.to_string()),
                anchor: anchor.to_string(),
            });
        }
        let mut out = Vec::with_capacity(self.entries.len());
        for (i, e) in self.entries.iter().enumerate() {
            let bad = |why| ScheduleError::FrozenMatch {
                number: i + 1,
                size: e.size,
                slots: e.slots.clone(),
                why,
            };
            if !(2..=MAX_MATCH_SIZE).contains(&e.size) {
                return Err(bad("size must be between 2 and 10"));
            }
            if e.slots.len() as i64 != e.size {
                return Err(bad("slot count differs from the size"));
            }
            if e.slots.iter().collect::<BTreeSet<_>>().len() != e.slots.len() {
                return Err(bad("a slot appears twice"));
            }
            out.push(ScheduleEntry {
                size: e.size as usize,
                seed: e.seed,
                slots: e.slots.iter().map(|&s| s as usize).collect(),
            });
        }
        if self.version != engine_version {
            return Err(ScheduleError::FrozenVersion {
                frozen: self.version.clone(),
                engine: engine_version.to_string(),
            });
        }
        Ok(out)
    }
}

/// One match as `schedule.json` writes it: the roster as `[name, program path]` pairs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScheduleFileEntry {
    pub size: usize,
    pub seed: u64,
    pub roster: Vec<(String, String)>,
}

/// `schedule.json` (and the `schedule` member of `identity.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScheduleFile {
    pub schedule_seed: i128,
    pub entries: Vec<ScheduleFileEntry>,
}

impl ScheduleFile {
    /// Names each entry's slots with the roster's `(name, path)` pairs.
    pub fn from_entries(
        schedule_seed: i128,
        entries: &[ScheduleEntry],
        roster: &[(String, String)],
    ) -> Self {
        let entries = entries
            .iter()
            .map(|e| ScheduleFileEntry {
                size: e.size,
                seed: e.seed,
                roster: e.slots.iter().map(|&s| roster[s].clone()).collect(),
            })
            .collect();
        ScheduleFile {
            schedule_seed,
            entries,
        }
    }
}

/// `execution` member of identity.json.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Execution {
    pub workers: u64,
}

/// `identity.json`: everything a resumed run must share with the run it continues.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    pub version: String,
    pub anchor: String,
    pub sizes: Vec<i64>,
    pub execution: Execution,
    pub scoring_code: StrMap,
    pub engine_manifest: StrMap,
    pub bot_hashes: StrMap,
    pub schedule: ScheduleFile,
}

impl Identity {
    /// Compares with a saved identity as the reference does (maps compare as sets of key/value
    /// pairs) and names the first member that differs, or `None` if they are equal.
    pub fn difference(&self, saved: &Identity) -> Option<String> {
        if self.version != saved.version {
            return Some(format!(
                "engine version: saved {:?}, now {:?}",
                saved.version, self.version
            ));
        }
        if self.anchor != saved.anchor {
            return Some(format!(
                "anchor: saved {:?}, now {:?}",
                saved.anchor, self.anchor
            ));
        }
        if self.sizes != saved.sizes {
            return Some(format!(
                "sizes: saved {:?}, now {:?}",
                saved.sizes, self.sizes
            ));
        }
        if self.execution != saved.execution {
            return Some(format!(
                "workers: saved {}, now {}",
                saved.execution.workers, self.execution.workers
            ));
        }
        for (what, now, then) in [
            ("scoring code", &self.scoring_code, &saved.scoring_code),
            (
                "engine manifest",
                &self.engine_manifest,
                &saved.engine_manifest,
            ),
            ("bot hashes", &self.bot_hashes, &saved.bot_hashes),
        ] {
            if let Some(d) = now.difference(then) {
                return Some(format!("{what}: {d}"));
            }
        }
        let (a, b) = (&self.schedule, &saved.schedule);
        if a.schedule_seed != b.schedule_seed {
            return Some(format!(
                "schedule seed: saved {}, now {}",
                b.schedule_seed, a.schedule_seed
            ));
        }
        if a.entries.len() != b.entries.len() {
            return Some(format!(
                "schedule length: saved {} matches, now {}",
                b.entries.len(),
                a.entries.len()
            ));
        }
        if let Some(i) = a.entries.iter().zip(&b.entries).position(|(x, y)| x != y) {
            return Some(format!(
                "schedule match {}: saved {:?}, now {:?}",
                i + 1,
                b.entries[i],
                a.entries[i]
            ));
        }
        None
    }
}
