//! Game rules as deterministic, pure state machines: map generation, the text protocol a bot
//! sees, exact scoring, replays and replay verification. No processes, sockets, clocks or files.

pub mod bomberman;
pub mod qianwang;
