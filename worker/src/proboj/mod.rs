//! A drop-in runner for proboj games (KSP's contest games whose referee is a server program that
//! talks to a runner over stdin/stdout): the input files (`config`), sandboxed processes with a
//! working directory and raw pipes (`process`), each player in a private writable copy of its
//! folder per game (`copies`), the protocol relay (`protocol`, `game`, over the state in `table`), logs
//! (`log`), a game as a farm job's package and bundle (`remote`; every game, on this machine or a
//! cluster, runs as a job: see the coordinator's `proboj` module) and the summary over all games
//! (`summary`).

pub mod config;
pub mod copies;
pub mod game;
pub mod log;
pub mod pipe;
pub mod process;
pub mod protocol;
pub mod remote;
pub mod scores;
pub mod summary;
pub mod table;

pub use config::{load_config, load_games, Config, ConfigError, Game};
pub use game::run_game;
pub use summary::Summary;
pub use table::{Ending, GameOutcome, RunOptions};
