//! Bomberman (rules v0.5-public-state): parameters, maps, the turn state machine, the bot text
//! protocol, exact scoring, the match clock (turn limits, optional time bank, optionally scaled to the host's speed), and replays with their verification, viewer data and text inspection.

mod accept;
pub mod action;
pub mod clock;
pub mod events;
mod explosion;
pub mod game;
#[cfg(test)]
mod internal_tests;
pub mod map;
pub mod mapgen;
mod movement;
pub mod outcome;
pub mod params;
pub mod replay;
pub mod rng;
pub mod scaled_clock;
pub mod text;
mod index_pack;
mod index_sim;
pub mod viewer;

pub use accept::{accept, Record};
pub use action::{parse_answer, Action, AnswerError, Input, Move, MAX_ANSWER_BYTES};
pub use clock::{Bank, Charge, ClockRecord, ClockSpec, ClockTurn};
pub use events::{BombFailure, DeathCause, Event};
pub use game::{Bomb, FlameSource, Game, GameError};
pub use map::{parse_map, Map, MapError, Tile};
pub use mapgen::{check_constraints, generate_map, spawn_ring, MapFault};
pub use outcome::Outcome;
pub use params::{Params, ParamsError, MAX_PLAYERS, MIN_PLAYERS};
pub use scaled_clock::Scaling;

/// The rules version this engine implements; stored in every replay and result.
pub const VERSION: &str = "matchfarm-bomberman/0.5-public-state";
