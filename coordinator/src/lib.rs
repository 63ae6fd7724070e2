//! The coordinator: the `farm` CLI's commands (`cmd`, `run` with `--until-settled`, `sprt`),
//! the one dispatcher over the one transport (`dispatch`: every use's jobs go out and their
//! reports come back through it, held to their jobs by `games::accept`), ordered
//! checkpointing, live ratings (Wald and map-unit bootstrap intervals) and metrics, the cluster
//! worker loop (`cluster::consumer`), and the farm that plays the 钳王 ladder's games
//! (`ladder_farm`, plugged into the `ladder` crate's service by `farm ladder serve`).
//! Effectful shell around the pure `shared` and `games`.

pub mod botprep;
pub mod broker;
pub mod clock;
pub mod cluster;
pub mod cmd;
pub mod dispatch;
pub mod fsio;
pub mod ladder_farm;
pub mod logging;
pub mod metrics;
pub mod progress;
pub mod replay_file;
pub mod roster;
pub mod run;
pub mod shutdown;
pub mod sprt;
pub mod transport;
pub mod workspace;
