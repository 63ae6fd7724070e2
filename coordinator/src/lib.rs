//! The coordinator: the `farm` CLI's commands (`cmd`, `run` with `--until-settled`, `sprt`),
//! dispatch of matches through the one transport with an optional stop rule, ordered
//! checkpointing, live ratings (Wald and map-unit bootstrap intervals) and metrics, the cluster
//! worker loop (`cluster::consumer`) and the 钳王 ladder service. Effectful shell around the
//! pure `shared` and `games`.

pub mod botprep;
pub mod clock;
pub mod cluster;
pub mod cmd;
pub mod fsio;
pub mod ladder;
pub mod logging;
pub mod metrics;
pub mod progress;
pub mod replay_file;
pub mod roster;
pub mod run;
pub mod sprt;
pub mod transport;
pub mod workspace;
