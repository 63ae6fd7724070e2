//! The coordinator: the `farm` CLI's commands and their flags (`cmd`, the only layer that
//! sees clap types); the run engine (`run`, with the `--until-settled` and SPRT stop rules of
//! `run::stop` and `sprt`), which takes plain settings; the one dispatcher over the one
//! transport (`dispatch`: every use's jobs go out and their reports come back through it, held
//! to their jobs by `games::accept`); ordered checkpointing, live ratings (Wald and map-unit
//! bootstrap intervals) and metrics; the transports (embedded, RabbitMQ); where a cluster is
//! and proboj on it (`cluster`); proboj games as jobs (`proboj`) and the farm that plays the
//! 钳王 ladder's games (`ladder_farm`, plugged into the `ladder` crate's service by `farm
//! ladder serve`). `farm worker` only turns its flags into a `worker::serve::ServeConfig`: the
//! loop is the worker crate's, and what both sides speak is the `broker` crate. Effectful shell
//! around the pure `shared` and `games`.

pub mod botprep;
pub mod clock;
pub mod cluster;
pub mod cmd;
pub mod dispatch;
pub mod fsio;
pub mod ladder_farm;
pub mod logging;
pub mod metrics;
pub mod proboj;
pub mod replay_file;
pub mod roster;
pub mod run;
pub mod sink;
pub mod sprt;
pub mod transport;
pub mod workspace;
