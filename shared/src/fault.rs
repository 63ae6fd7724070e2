//! The fault taxonomy used everywhere (results, replays, logs, metrics): what went wrong with a
//! bot, named once so that the worker, the referee, the coordinator and the dashboards agree.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Why a bot was eliminated (or failed to take part) outside the game's own rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    /// The program could not be started (missing, not executable, exec failed, sandbox refused).
    StartFailure,
    /// A `.cpp` source did not compile.
    CompileFailure,
    /// No complete answer line within the turn's deadline.
    Timeout,
    /// The process was killed by a signal it did not ask for (segfault, abort, ...).
    Crash,
    /// The process exited (any status) while the match still needed it.
    Exit,
    /// An answer line that does not parse, names the wrong turn, is too long, or has extra lines.
    BadOutput,
    /// Output before being asked (e.g. an answer for a future turn).
    EarlyOutput,
    /// The address-space / memory limit was hit.
    MemoryLimit,
    /// The CPU-seconds limit for the match was used up.
    CpuLimit,
    /// More output (stdout or stderr) than the limit allows.
    OutputFlood,
    /// A syscall the sandbox forbids (seccomp kill).
    ForbiddenSyscall,
}

impl FaultKind {
    /// Every kind, in a fixed order (metrics export all of them as zero-initialised series).
    pub const ALL: [FaultKind; 11] = [
        FaultKind::StartFailure,
        FaultKind::CompileFailure,
        FaultKind::Timeout,
        FaultKind::Crash,
        FaultKind::Exit,
        FaultKind::BadOutput,
        FaultKind::EarlyOutput,
        FaultKind::MemoryLimit,
        FaultKind::CpuLimit,
        FaultKind::OutputFlood,
        FaultKind::ForbiddenSyscall,
    ];

    /// The stable snake_case name (as serialised, as used in metric labels).
    pub fn as_str(self) -> &'static str {
        match self {
            FaultKind::StartFailure => "start_failure",
            FaultKind::CompileFailure => "compile_failure",
            FaultKind::Timeout => "timeout",
            FaultKind::Crash => "crash",
            FaultKind::Exit => "exit",
            FaultKind::BadOutput => "bad_output",
            FaultKind::EarlyOutput => "early_output",
            FaultKind::MemoryLimit => "memory_limit",
            FaultKind::CpuLimit => "cpu_limit",
            FaultKind::OutputFlood => "output_flood",
            FaultKind::ForbiddenSyscall => "forbidden_syscall",
        }
    }

    /// Faults that mean the bot never took part: the match is not valid for scoring.
    pub fn is_start_failure(self) -> bool {
        matches!(self, FaultKind::StartFailure | FaultKind::CompileFailure)
    }
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One fault of one bot: what, on which turn, and a human-readable detail.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fault {
    pub kind: FaultKind,
    /// The turn on which it happened (the turn whose answer was missing or wrong).
    pub turn: u32,
    /// What exactly happened, for the operator and the bot author (bounded in length).
    pub detail: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_serde() {
        for kind in FaultKind::ALL {
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{}\"", kind.as_str()));
            let back: FaultKind = serde_json::from_str(&json).unwrap();
            assert_eq!(back, kind);
        }
    }
}
