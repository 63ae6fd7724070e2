//! The run's quarantine of bad workers: the shell around [`shared::quarantine`]. Every report
//! the run takes in is counted against the worker that sent it (the bots seated and whether
//! each faulted, or no result at all); a worker whose record stands out from the fleet's is
//! quarantined: its later reports are refused and their matches played elsewhere, the
//! transport is told (a cluster stops handing it jobs), and `quarantine.json` in the output
//! folder keeps the evidence for 汇总.md, report.html and a resumed run. An operator releases
//! a worker with `farm quarantine release` (cluster) or by removing it from `quarantine.json`
//! before a resume. The results a quarantined worker gave before are suspect: `farm run
//! --resume --redo-suspect` takes them back and plays those matches again ([`suspects`]).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;
use shared::quarantine::{Evidence, Quarantine};

use super::checkpoint::Row;
use super::played_by;

/// The record's file in the output folder.
pub const FILE_NAME: &str = "quarantine.json";

/// The counts the quarantine judges by (`shared::quarantine::Counted`), saved after each batch
/// of reports so that a resumed run goes on from them: a worker halfway to its quarantine when
/// the coordinator stopped is not given a clean record by the restart. A view of the reports
/// taken in (no fsync): a crash loses at most the last batch's counts.
pub const COUNTS_FILE_NAME: &str = "quarantine-counts.json";

/// The quarantine of one run, backed by its record file.
pub struct Guard {
    q: Quarantine,
    out: PathBuf,
}

/// The quarantined workers recorded in `out` (none when there is no record; a record that
/// does not parse is reported and read as none, never fatal: it is an operator's view).
pub fn read(out: &Path) -> Vec<Evidence> {
    let path = out.join(FILE_NAME);
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text).unwrap_or_else(|e| {
            tracing::warn!("{}: not a quarantine record ({e}); ignored", path.display());
            Vec::new()
        }),
        Err(_) => Vec::new(),
    }
}

/// The seats of a result row's `result` object: each bot's name and whether it faulted.
pub fn seats(result: &Value) -> Vec<(String, bool)> {
    let names = result.get("names").and_then(Value::as_array);
    let errors = result.get("errors").and_then(Value::as_array);
    let (Some(names), Some(errors)) = (names, errors) else {
        return Vec::new();
    };
    names
        .iter()
        .zip(errors)
        .filter_map(|(n, e)| Some((n.as_str()?.to_string(), e.as_i64().unwrap_or(0) > 0)))
        .collect()
}

/// The saved results that a worker quarantined in `out` gave (`--redo-suspect`): match
/// number → worker, from `played-by.jsonl` (each match's last accepted report) and
/// `quarantine.json`. Only rows of `done` with a result count.
pub fn suspects(out: &Path, done: &[Row]) -> BTreeMap<u64, String> {
    let bad: HashSet<String> = read(out).into_iter().map(|e| e.worker).collect();
    if bad.is_empty() {
        return BTreeMap::new();
    }
    let mut giver: HashMap<u64, String> = HashMap::new();
    for p in played_by::read(out) {
        if p.failed.is_none() {
            giver.insert(p.number, p.worker);
        }
    }
    done.iter()
        .filter(|r| r.result.is_some())
        .filter_map(|r| {
            let w = giver.get(&r.number)?;
            bad.contains(w).then(|| (r.number, w.clone()))
        })
        .collect()
}

impl Guard {
    /// The quarantine of the run writing to `out`, with the counts and the workers it recorded
    /// earlier.
    pub fn open(out: &Path) -> Guard {
        let mut q = Quarantine::default();
        let counts = out.join(COUNTS_FILE_NAME);
        if let Ok(text) = std::fs::read_to_string(&counts) {
            match serde_json::from_str(&text) {
                Ok(counted) => q.resume(counted),
                Err(e) => tracing::warn!(
                    "{}: not a quarantine count ({e}); the workers' records start again from nothing",
                    counts.display()
                ),
            }
        }
        for e in read(out) {
            q.restore(e);
        }
        let guard = Guard {
            q,
            out: out.to_path_buf(),
        };
        guard.show();
        guard
    }

    /// True when `worker`'s reports are refused.
    pub fn refuses(&self, worker: &str) -> bool {
        self.q.is_quarantined(worker)
    }

    /// Count a report of `worker`: `result` is its row's result object, None when it gave
    /// none. Returns the evidence when this report gets the worker quarantined (recorded,
    /// logged and on /metrics by then).
    pub fn took(&mut self, worker: &str, result: Option<&Value>) -> Option<Evidence> {
        let evidence = match result {
            Some(r) => {
                let seats = seats(r);
                let seats: Vec<(&str, bool)> =
                    seats.iter().map(|(n, f)| (n.as_str(), *f)).collect();
                self.q.result(worker, &seats)
            }
            None => self.q.no_result(worker),
        }?;
        tracing::warn!(
            worker,
            "worker quarantined: {evidence}; its reports are refused from now on and its matches played elsewhere"
        );
        self.save();
        self.show();
        Some(evidence)
    }

    /// An operator released `worker`: its reports count again, from a clean record.
    pub fn release(&mut self, worker: &str) {
        if self.q.release(worker) {
            tracing::info!(worker, "worker released from quarantine");
            crate::metrics::global()
                .quarantined
                .with_label_values(&[worker])
                .set(0);
            self.save();
        }
    }

    /// Save the counts so far (after a batch of reports is in the log).
    pub fn save_counts(&self) {
        let written = serde_json::to_vec(&self.q.counted())
            .map_err(anyhow::Error::from)
            .and_then(|text| crate::fsio::write_view(&self.out.join(COUNTS_FILE_NAME), &text));
        if let Err(e) = written {
            tracing::warn!("could not save the quarantine's counts: {e:#}");
        }
    }

    /// The quarantined workers, by name.
    pub fn quarantined(&self) -> Vec<Evidence> {
        self.q.quarantined().cloned().collect()
    }

    fn save(&self) {
        let text = serde_json::to_string_pretty(&self.quarantined()).unwrap_or_default() + "\n";
        if let Err(e) = crate::fsio::write_atomic(&self.out.join(FILE_NAME), text.as_bytes()) {
            tracing::warn!("could not record the quarantine: {e:#}");
        }
    }

    fn show(&self) {
        let m = crate::metrics::global();
        for e in self.q.quarantined() {
            m.quarantined.with_label_values(&[&e.worker]).set(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seats_come_from_the_rows_names_and_errors() {
        let r = serde_json::json!({"names": ["a", "b", "c"], "errors": [0, 2, 0]});
        assert_eq!(
            seats(&r),
            [("a".into(), false), ("b".into(), true), ("c".into(), false)]
        );
        assert!(seats(&serde_json::json!({"names": ["a"]})).is_empty());
    }

    #[test]
    fn the_record_survives_a_restart_and_a_release() {
        let dir = tempfile::tempdir().unwrap();
        let mut g = Guard::open(dir.path());
        let clean = serde_json::json!({"names": ["A", "B"], "errors": [0, 0]});
        let bad = serde_json::json!({"names": ["A", "B"], "errors": [1, 1]});
        for _ in 0..5 {
            for w in ["w1", "w2", "w3", "w4"] {
                assert!(g.took(w, Some(&clean)).is_none());
            }
        }
        let hit = (0..30).find_map(|_| {
            ["w1", "w2", "w3"]
                .iter()
                .for_each(|w| assert!(g.took(w, Some(&clean)).is_none()));
            g.took("w4", Some(&bad))
        });
        assert_eq!(hit.map(|e| e.worker), Some("w4".to_string()));
        assert!(g.refuses("w4") && !g.refuses("w1"));
        let again = Guard::open(dir.path());
        assert!(again.refuses("w4"));
        assert_eq!(read(dir.path()).len(), 1);
        let mut again = again;
        again.release("w4");
        assert!(!again.refuses("w4"));
        assert!(read(dir.path()).is_empty());
        // A record that does not parse is read as none.
        std::fs::write(dir.path().join(FILE_NAME), "{oops").unwrap();
        assert!(Guard::open(dir.path()).quarantined().is_empty());
    }

    /// A coordinator stopped and resumed goes on from the saved counts: the bad worker is
    /// quarantined at the same report as in an unbroken run; without the counts file it starts
    /// again from nothing and needs more.
    #[test]
    fn the_counts_survive_a_restart() {
        let clean = serde_json::json!({"names": ["A", "B"], "errors": [0, 0]});
        let bad = serde_json::json!({"names": ["A", "B"], "errors": [1, 1]});
        // Round r: w1..w3 report clean, w4 (from round 5 on) bad; the round w4 is quarantined.
        let rounds = |g: &mut Guard, from: usize, to: usize| {
            (from..to).find(|&r| {
                for w in ["w1", "w2", "w3"] {
                    assert!(g.took(w, Some(&clean)).is_none());
                }
                g.took("w4", Some(if r < 5 { &clean } else { &bad }))
                    .is_some()
            })
        };
        let unbroken = tempfile::tempdir().unwrap();
        let at = rounds(&mut Guard::open(unbroken.path()), 0, 60).expect("quarantined");
        assert!(at > 6, "{at}");

        let dir = tempfile::tempdir().unwrap();
        let mut g = Guard::open(dir.path());
        assert_eq!(rounds(&mut g, 0, at - 1), None);
        g.save_counts();
        drop(g);
        let mut resumed = Guard::open(dir.path());
        assert_eq!(rounds(&mut resumed, at - 1, 60), Some(at));
        // Released offline (its entry removed from quarantine.json before a resume): it starts
        // again from a clean record, as a live release does.
        resumed.save_counts();
        drop(resumed);
        std::fs::write(dir.path().join(FILE_NAME), "[]\n").unwrap();
        let mut released = Guard::open(dir.path());
        assert!(!released.refuses("w4"));
        assert!(released.took("w4", Some(&bad)).is_none());
        drop(released);

        std::fs::remove_file(dir.path().join(COUNTS_FILE_NAME)).unwrap();
        let mut fresh = Guard::open(dir.path());
        assert_ne!(rounds(&mut fresh, at - 1, 60), Some(at));
    }
}
