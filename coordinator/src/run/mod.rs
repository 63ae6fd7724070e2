//! The run engine behind `farm run` and `farm sprt`: a whole tournament, with the checks and
//! files of the reference evaluate.py (same outputs, same numbers), dispatched through a transport (embedded by
//! default), checkpointed in schedule order and rated live with Bradley–Terry. Like the
//! reference run.py, every `.cpp` entrant is compiled before anything is scheduled or played.
//! With `--until-settled` the run stops after the first whole unit (one map with all its seat
//! rotations) at which the Bradley–Terry ranking is settled (see [`stop`]).
//!
//! The engine ([`execute::drive`] on the engine loop [`crate::sink::pump`], [`dispatch`]) takes
//! a [`prepare::Plan`] and an [`engine::Engine`]: plain settings the commands (`cmd::run`,
//! `cmd::sprt`) fill from their flags; no clap type reaches it.

pub mod checkpoint;
pub mod cluster;
pub mod engine;
pub mod execute;
pub mod finish;
pub mod flow;
pub mod game;
pub mod outputs;
pub mod played_by;
pub mod prepare;
pub mod progress;
pub mod quarantine;
pub mod shell;
pub mod stop;
pub mod viewer_index;

use anyhow::Result;

/// Run a prepared plan on the engine's cluster, or on embedded local workers when it names
/// none, with an optional stop rule.
pub async fn dispatch(
    plan: prepare::Plan,
    engine: &engine::Engine,
    stop: Option<&mut dyn stop::StopRule>,
) -> Result<engine::Finished> {
    match &engine.cluster {
        Some(cluster) => cluster::execute(plan, engine, cluster, stop).await,
        None => execute::embedded(plan, engine, stop).await,
    }
}
