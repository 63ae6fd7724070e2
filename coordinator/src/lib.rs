//! The coordinator: the `farm` CLI's commands, dispatch of matches through a transport, ordered
//! checkpointing, live ratings and metrics. Effectful shell around the pure `shared` and `games`.

pub mod botprep;
pub mod clock;
pub mod cluster;
pub mod cmd;
pub mod fsio;
pub mod ladder;
pub mod logging;
pub mod metrics;
pub mod progress;
pub mod roster;
pub mod run;
pub mod sprt;
pub mod transport;
pub mod workspace;
