//! Who played each match: one line per report the coordinator takes in (`played-by.jsonl` in
//! the output folder) with the match number, the worker, its speed signature (reference
//! bot-turns per second from its self-test), the seconds it spent and, when the report carried
//! no usable result, why. Kept beside the results log, never in it: results stay identical
//! between embedded, cluster and resumed runs, while this record says which host played what
//! and how fast it was. A retried match has one line per attempt. An operator's record: a
//! failure to write it is logged, never fatal.

use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};
use shared::msg::JobReport;

/// The record's file in the output folder.
pub const FILE_NAME: &str = "played-by.jsonl";

/// One report taken in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Played {
    pub number: u64,
    pub worker: String,
    /// None: the worker sent no speed signature.
    pub speed: Option<f64>,
    pub seconds: f64,
    /// Why the report gave no result (the worker's failure or the coordinator's refusal);
    /// None: it did.
    pub failed: Option<String>,
}

impl Played {
    pub fn of(report: &JobReport, failed: Option<String>) -> Played {
        Played {
            number: report.number,
            worker: report.worker.clone(),
            speed: report.speed,
            seconds: report.seconds,
            failed,
        }
    }
}

/// Append one line to `out/played-by.jsonl`.
pub fn append(out: &Path, played: &Played) {
    let path = out.join(FILE_NAME);
    let written = serde_json::to_string(played)
        .map_err(std::io::Error::other)
        .and_then(|line| {
            std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(&path)?
                .write_all(format!("{line}\n").as_bytes())
        });
    if let Err(e) = written {
        tracing::warn!(number = played.number, error = %e, "could not add the match to {FILE_NAME}");
    }
}

/// The record's lines (a line that does not parse, e.g. one cut by a crash, is skipped).
pub fn read(out: &Path) -> Vec<Played> {
    std::fs::read_to_string(out.join(FILE_NAME))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::msg::JobFailure;

    #[test]
    fn every_report_is_a_line_and_a_cut_line_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let report = JobReport {
            tournament: "t".into(),
            number: 7,
            worker: "host/w1".into(),
            seconds: 2.5,
            speed: Some(480.0),
            outcome: Err(JobFailure::Infrastructure("disk full".into())),
        };
        append(dir.path(), &Played::of(&report, Some("disk full".into())));
        append(
            dir.path(),
            &Played::of(
                &JobReport {
                    speed: None,
                    ..report.clone()
                },
                None,
            ),
        );
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(dir.path().join(FILE_NAME))
            .unwrap();
        f.write_all(b"{\"number\": 8, \"wor").unwrap();
        let rows = read(dir.path());
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].speed, Some(480.0));
        assert_eq!(rows[0].failed.as_deref(), Some("disk full"));
        assert_eq!((rows[1].worker.as_str(), rows[1].speed), ("host/w1", None));
    }
}
