//! The settings of a run's engine and how a run ended: what the commands (`farm run`,
//! `farm sprt`) hand the engine ([`Engine`]) and get back ([`Finished`]), plain data shared by
//! the loop (`super::execute`), the batch shell (`super::shell`), the end of a run
//! (`super::finish`) and the cluster (`super::cluster`).

use std::path::PathBuf;
use std::process::ExitCode;

use super::stop::Stopped;
use crate::botprep::HostSettings;
use crate::cluster::Cluster;

/// How the engine runs a plan: where the referee package is, how bots run on this host (for
/// embedded workers), the cluster to use (if any) and the match clock every job carries (a
/// resume plays failed matches again, `redo_failed` or not, unless a stop rule runs). Filled by `farm run` and `farm sprt` from their
/// flags; the engine never sees clap arguments.
#[derive(Debug, Clone)]
pub struct Engine {
    pub workspace: PathBuf,
    pub redo_failed: bool,
    /// With a resume: take back the results that workers quarantined since gave, and play
    /// those matches again.
    pub redo_suspect: bool,
    /// Cluster mode when set (embedded local workers otherwise).
    pub cluster: Option<Cluster>,
    pub host: HostSettings,
    /// The match clock every job carries.
    pub clock: crate::clock::TournamentClock,
    /// `--min-speed`: reports from slower workers are refused and played elsewhere.
    pub min_speed: Option<f64>,
}

/// How a run ended.
pub struct Finished {
    pub code: ExitCode,
    /// Set when a stop rule ended the run before the end of the schedule.
    pub stopped: Option<Stopped>,
}
