//! Game rules as deterministic, pure state machines: map generation, the text protocol a bot
//! sees, exact scoring, replays and replay verification. No processes, sockets, clocks or files.
//! [`accept`] is the one function that holds any game's outcome to its job.

pub mod accept;
pub mod bomberman;
pub mod job;
pub mod lowest;
pub mod nim;
pub mod nim_viewer;
pub mod proboj;
pub mod qianwang;
pub mod script;
pub mod seated;
