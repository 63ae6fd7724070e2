//! Game rules as deterministic, pure state machines: map generation, the text protocol a bot
//! sees, exact scoring, replays and replay verification. No processes, sockets, clocks or files.
//! [`accept`] is the one function that holds any game's outcome to its job.

pub mod accept;
pub mod job;
pub mod nim_viewer;
pub mod script;
pub mod seated;

use accept::{AcceptError, Holder};
use shared::msg::{GameJob, GameKind};

/// Declares the games of [`shared::for_each_game!`]'s list: `Variant(module::Payload) = "name"`
/// declares `pub mod module`, its
/// [`Accepted`] variant, its rules version in [`version_of`] and [`VERSIONS`], and its accept.
/// `Variant` is the game's [`GameJob`] variant; its module holds what the farm asks of a game's
/// rules:
///
/// - `VERSION`, the rules version a job names and a worker must run exactly;
/// - `Record`, what a report of the game is accepted as;
/// - `accept(payload, text, holder) -> Result<Record, AcceptError>`: the report's text held to
///   the job (the record re-verified by the rules, its seed and seats the job's); a seat game's
///   is `accept::seated` (`docs/adding-a-game.md`).
macro_rules! games {
    ($($variant:ident($module:ident::$payload:ident) = $name:literal),+ $(,)?) => {
        $(pub mod $module;)+

        /// A report that passed [`accept::accept`], typed by its game.
        #[derive(Debug, Clone)]
        pub enum Accepted {
            $(#[doc = concat!("A record of `", stringify!($module), "`.")]
              $variant(Box<$module::Record>),)+
        }

        impl Accepted {
            /// Which game it is.
            pub fn kind(&self) -> GameKind {
                match self {
                    $(Accepted::$variant(_) => GameKind::$variant,)+
                }
            }
        }

        /// The rules version of the game of `game`: what a job names and a worker must run
        /// exactly.
        pub fn version_of(game: &GameJob) -> &'static str {
            match game {
                $(GameJob::$variant(_) => $module::VERSION,)+
            }
        }

        /// The rules versions of every game, in the wire's order (what a worker plays).
        pub const VERSIONS: &[&str] = &[$($module::VERSION),+];

        /// A report's text held to its job by the game's own rules.
        fn accept_record(text: &str, holder: &Holder) -> Result<Accepted, AcceptError> {
            match &holder.job().game {
                $(GameJob::$variant(j) => {
                    $module::accept(j, text, holder).map(|r| Accepted::$variant(Box::new(r)))
                })+
            }
        }
    };
}

shared::for_each_game!(games);

impl Accepted {
    /// The game's name, as [`GameJob::name`] gives it.
    pub fn name(&self) -> &'static str {
        self.kind().name()
    }
}
