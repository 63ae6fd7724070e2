//! A 钳王 (qianwang) match as a farm job: the two seats' JavaScript programs by hash, played in
//! the embedded JS engine; the report carries the match record.

use shared::msg::{Job, JobFailure};

use super::{Artifacts, JobRunner};

/// The referee version of qianwang jobs.
pub const VERSION: &str = "matchfarm-qianwang/1";

/// Play `job` (a qianwang match).
pub(super) fn play(
    _runner: &JobRunner,
    job: &Job,
    _artifacts: &dyn Artifacts,
) -> Result<String, JobFailure> {
    Err(JobFailure::Unsupported(format!(
        "match {}: the qianwang referee is not built into this worker yet",
        job.number
    )))
}
