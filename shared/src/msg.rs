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

/// What a game's part of a job tells the farm beyond its own fields, implemented by each game's
/// payload in its own module (`shared::msg::<game>`). Every method has the answer of a game that
/// does not need it, so a game overrides only what it uses.
pub trait JobPayload {
    /// The seed the match is played from (None: the game draws its own, as a proboj server).
    fn seed(&self) -> Option<u64> {
        None
    }

    /// The MANIFEST digest of the referee package a worker must hold to play it (bomberman's).
    fn referee_package(&self) -> Option<&str> {
        None
    }

    /// Files beyond the seats' programs a worker fetches by hash before it plays (proboj's
    /// package).
    fn files(&self) -> Vec<ProgramRef> {
        Vec::new()
    }

    /// How many players play, when the seats do not say (None: one per seat).
    fn players(&self) -> Option<usize> {
        None
    }
}

/// Declares the games of the wire from [`for_each_game!`]'s list: `Variant(module::Payload) = "name"` declares
/// `pub mod module` (the payload and its [`JobPayload`] impl), the [`GameJob`] variant, its
/// [`GameKind`] and its name. A game appended at the end keeps every other game's bytes on the
/// wire (bincode numbers variants in order), so an older worker decodes the jobs it knows as
/// before and refuses the new game's as undecodable, naming itself (`farm worker`'s dead
/// letter); a game must never be inserted before another or removed.
macro_rules! games {
    ($($variant:ident($module:ident::$payload:ident) = $name:literal),+ $(,)?) => {
        $(pub mod $module; pub use $module::*;)+

        /// The game a job plays, with what that game needs beyond the seats: the one place a
        /// worker and the coordinator learn what a job is (`docs/adding-a-game.md`).
        #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
        pub enum GameJob {
            $(#[doc = concat!("A ", $name, " match.")] $variant($payload),)+
        }

        /// Which game, without its payload (the variants of [`GameJob`]).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum GameKind {
            $(#[doc = concat!("The game `", $name, "`.")] $variant,)+
        }

        impl GameKind {
            /// Every game of the wire, in its order there.
            pub const ALL: &'static [GameKind] = &[$(GameKind::$variant),+];

            /// The game's name, for messages, metrics and `--game`.
            pub fn name(self) -> &'static str {
                match self {
                    $(GameKind::$variant => $name,)+
                }
            }
        }

        impl GameJob {
            /// Which game this is.
            pub fn kind(&self) -> GameKind {
                match self {
                    $(GameJob::$variant(_) => GameKind::$variant,)+
                }
            }

            /// The game's own part of the job.
            pub fn payload(&self) -> &dyn JobPayload {
                match self {
                    $(GameJob::$variant(p) => p,)+
                }
            }
        }
    };
}

/// The farm's games, one line each, in the wire's order: `Variant(module::Payload) = "name"`.
/// It is the one list of games in the workspace: it calls the macro named `$registry` (here
/// `games!`; in the `games` and `worker` crates theirs, `shared::for_each_game!(games)`) with
/// the list, so each crate's registry writes its declarations and matches from it. A game is
/// appended at the end, never inserted or removed (see the `games!` registry above); its module
/// of that name is then required in `shared::msg`, `games` and `worker::job`
/// (`docs/adding-a-game.md`).
#[macro_export]
macro_rules! for_each_game {
    ($registry:ident) => {
        $registry! {
            Bomberman(bomberman::BombermanJob) = "bomberman",
            Qianwang(qianwang::QianwangJob) = "qianwang",
            Proboj(proboj::ProbojJob) = "proboj",
            Nim(nim::NimJob) = "nim",
            Lowest(lowest::LowestJob) = "lowest",
        }
    };
}

for_each_game!(games);

impl GameJob {
    /// The game's name, for messages and metrics.
    pub fn name(&self) -> &'static str {
        self.kind().name()
    }

    /// The seed the match is played from (proboj has none: its server draws its own).
    pub fn seed(&self) -> Option<u64> {
        self.payload().seed()
    }
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
