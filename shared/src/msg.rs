//! The farm's job and result messages: what a coordinator asks a worker to play and what comes
//! back. Jobs carry hashes, not trust: programs are named by sha256 and fetched and re-hashed by
//! the worker. The wire form (versioned, signed) lives in [`crate::codec`].

use serde::{Deserialize, Serialize};

/// A program a seat runs, named by the sha256 of its bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProgramRef {
    /// sha256 (hex) of the program's bytes (a `.cpp` source or an executable).
    pub sha256: String,
    /// The file name the operator gave (kept for messages and to know a `.cpp` from a binary).
    pub file_name: String,
}

impl ProgramRef {
    /// The reference for a program file whose bytes hash to `sha256`.
    pub fn for_file(sha256: &str, path: &std::path::Path) -> ProgramRef {
        ProgramRef {
            sha256: sha256.to_string(),
            file_name: path
                .file_name()
                .map(|f| f.to_string_lossy().to_string())
                .unwrap_or_default(),
        }
    }

    /// True when the program is a C++ source the worker must compile.
    pub fn is_source(&self) -> bool {
        self.file_name.to_ascii_lowercase().ends_with(".cpp")
    }
}

/// One seat of a match: the bot's name and its program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatSpec {
    pub name: String,
    pub program: ProgramRef,
}

/// One match to play. Identified by its schedule number within a tournament: the tournament,
/// the number, the seats and the game's own payload (its seed, package, clock). Built only by
/// `games::job`, which derives `referee_version` from the game.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Job {
    /// The tournament this job belongs to (results of other tournaments are dropped).
    pub tournament: String,
    /// 1-based schedule number.
    pub number: u64,
    /// The version of the game's rules the worker must run exactly (the game itself is
    /// [`Job::game`]); derived from the game where the job is built (`games::job`).
    pub referee_version: String,
    /// The seats, in seat order, of a game whose entrants are programs (none for proboj, whose
    /// players are commands of its package).
    pub seats: Vec<SeatSpec>,
    /// Which game this is, with what that game needs beyond the seats.
    pub game: GameJob,
}

/// A job as the cluster transport publishes it: the job and a fresh id of this one publication
/// (random, never reused), inside the signature. A dead letter or a worker's refusal counts at
/// most once per publication, and only for the latest publication of a match still pending, so
/// a copied or replayed one is harmless.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Posting {
    pub publication: u64,
    pub job: Job,
}

/// A worker's refusal of one publication of a job (wrong tournament, referee version or
/// package), signed with the farm key like a report: the only dead letter of a worker that can
/// fail a match. A job whose signature a worker cannot verify gets no signed refusal (the worker
/// cannot tell which job it is); it is listed and the match is published again as lost.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    pub tournament: String,
    pub number: u64,
    /// [`Posting::publication`] of the refused job.
    pub publication: u64,
    /// The refusing worker's id.
    pub worker: String,
    pub reason: String,
}

/// The game a job plays: the one place a worker and the coordinator learn what a job is. A
/// worker plays each variant with that game's module, the coordinator accepts its outcome
/// through one verifying function (`games::accept`); adding a game adds a variant here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum GameJob {
    /// A bomberman match: its map seed, referee package and clock.
    Bomberman(BombermanJob),
    /// A 钳王 match: two seats (black, then red) and the seed of its draws.
    Qianwang(QianwangJob),
    /// One game of a proboj games.json, with the files its commands need.
    Proboj(Box<ProbojJob>),
    /// A game of Nim, the farm's smallest game (the proof and the template of the game
    /// boundary, see `docs/adding-a-game.md`).
    Nim(NimJob),
    /// A game of lowest unique, the three-seat test game (`games::lowest`).
    Lowest(LowestJob),
}

impl GameJob {
    /// The game's name, for messages and metrics.
    pub fn name(&self) -> &'static str {
        match self {
            GameJob::Bomberman(_) => "bomberman",
            GameJob::Qianwang(_) => "qianwang",
            GameJob::Proboj(_) => "proboj",
            GameJob::Nim(_) => "nim",
            GameJob::Lowest(_) => "lowest",
        }
    }
}

impl GameJob {
    /// The seed the match is played from (proboj has none: its server draws its own).
    pub fn seed(&self) -> Option<u64> {
        match self {
            GameJob::Bomberman(j) => Some(j.seed),
            GameJob::Qianwang(j) => Some(j.seed),
            GameJob::Nim(j) => Some(j.seed),
            GameJob::Lowest(j) => Some(j.seed),
            GameJob::Proboj(_) => None,
        }
    }

    /// The digest of the package the worker must hold to play it (bomberman's referee
    /// package, proboj's files), if the game has one.
    pub fn package_digest(&self) -> Option<&str> {
        match self {
            GameJob::Bomberman(j) => Some(&j.manifest_digest),
            GameJob::Proboj(p) => Some(&p.manifest_digest),
            GameJob::Qianwang(_) | GameJob::Nim(_) | GameJob::Lowest(_) => None,
        }
    }
}

/// A bomberman match: the map seed, the referee package and the clock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BombermanJob {
    pub seed: u64,
    /// sha256 over the referee package's MANIFEST (what the worker must be able to satisfy).
    pub manifest_digest: String,
    /// The tournament's clock (None: the rules' clock).
    pub clock: Option<BombermanClock>,
}

/// A 钳王 match: the seed of the game's draws (`game.random`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct QianwangJob {
    pub seed: u64,
}

/// A Nim game: its heaps' seed and each answer's limit in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct NimJob {
    pub seed: u64,
    pub turn_ms: u64,
}

/// A lowest-unique game: its seed (the number of rounds) and each answer's limit in
/// milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LowestJob {
    pub seed: u64,
    pub turn_ms: u64,
}

/// The clock a bomberman match is played under: it travels in the job so that every worker
/// plays a tournament's matches alike, whatever its own environment says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BombermanClock {
    /// Answer limit of every turn after turn 0, milliseconds (turn 0 gets at least the rules'
    /// start-up allowance).
    pub turn_ms: u64,
    /// Each bot's time bank for the match, milliseconds (0: none).
    pub time_bank_ms: u64,
    /// Both limits are stated for a host of this speed (reference bot-turns per second, the
    /// workers' self-test signature): each worker plays them scaled by reference / its own
    /// speed and records the scaling in the replay. None: played as stated.
    pub reference_speed: Option<u32>,
}

/// One proboj game for a remote worker: the runner's config and the game's entry (both as the
/// JSON the user wrote, paths relative to the package root), and every file of the package.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbojJob {
    /// The digest of the package's file list (its MANIFEST): what the worker checks `files`
    /// against.
    pub manifest_digest: String,
    /// config.json with `game_root` relative to the package root.
    pub config_json: String,
    /// The games.json entry of this game.
    pub game_json: String,
    /// Files laid out under the package root before the game starts.
    pub files: Vec<PackageFile>,
    /// Stop players while the server is not waiting on them (the CPU-fair scheme).
    pub fair: bool,
    /// End the game when the server is silent this long (milliseconds; None: never).
    pub server_timeout_ms: Option<u64>,
}

/// A file of a package: where it goes (relative, `/`-separated) and its bytes by hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackageFile {
    pub path: String,
    pub sha256: String,
    pub executable: bool,
}

impl PackageFile {
    /// The artifact reference of this file (fetched and re-hashed like a bot's program).
    pub fn program(&self) -> ProgramRef {
        ProgramRef {
            sha256: self.sha256.clone(),
            file_name: self
                .path
                .rsplit('/')
                .next()
                .unwrap_or(&self.path)
                .to_string(),
        }
    }
}

/// Why a job produced no result (infrastructure, never a bot's fault).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum JobFailure {
    /// The worker cannot run this referee version / manifest.
    Unsupported(String),
    /// An artifact was missing or did not match its hash.
    Artifact(String),
    /// Anything else on the worker's side (I/O, sandbox set-up...).
    Infrastructure(String),
}

impl std::fmt::Display for JobFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JobFailure::Unsupported(s) => write!(f, "unsupported: {s}"),
            JobFailure::Artifact(s) => write!(f, "artifact: {s}"),
            JobFailure::Infrastructure(s) => write!(f, "infrastructure: {s}"),
        }
    }
}

impl std::error::Error for JobFailure {}

/// What a worker sends back for a job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobReport {
    pub tournament: String,
    pub number: u64,
    /// Which worker played it (host/id), for the operator.
    pub worker: String,
    /// Seconds the worker spent on the match.
    pub seconds: f64,
    /// The worker's speed signature (reference bot-turns per second, from its self-test), for
    /// the operator; None when it has none.
    pub speed: Option<f64>,
    /// The verified replay (JSON text), or why there is none.
    pub outcome: Result<String, JobFailure>,
}
