//! Matches and faults per worker, kept incrementally (O(1) per report and per result): which
//! worker played each match (from the coordinator's played-by record), its speed signature,
//! its attempts that gave no result, and the bot faults in the matches it played. A machine's
//! trouble follows the machine across bots, so the operator reads it here, beside the faults
//! by bot.

use std::collections::{BTreeMap, HashMap};

use super::WorkerLine;

/// The per-worker tally behind the page's workers table.
#[derive(Debug, Clone, Default)]
pub struct WorkerTally {
    lines: BTreeMap<String, WorkerLine>,
    /// Match number → the worker whose report gave its result.
    played_by: HashMap<u64, String>,
    /// Bot faults of results whose worker is not known yet (the result came first).
    faults_waiting: HashMap<u64, u64>,
}

impl WorkerTally {
    /// A report of match `number` by `worker` (speed signature `speed`, `seconds` spent);
    /// `ok` when it gave the match's result. A second result of one match is ignored.
    pub fn played(
        &mut self,
        number: u64,
        worker: &str,
        speed: Option<f64>,
        seconds: f64,
        ok: bool,
    ) {
        if ok && self.played_by.contains_key(&number) {
            return;
        }
        let line = self
            .lines
            .entry(worker.to_string())
            .or_insert_with(|| WorkerLine {
                worker: worker.to_string(),
                ..WorkerLine::default()
            });
        if speed.is_some() {
            line.speed = speed;
        }
        line.seconds += seconds;
        if !ok {
            line.failed += 1;
            return;
        }
        line.matches += 1;
        line.bot_faults += self.faults_waiting.remove(&number).unwrap_or(0);
        self.played_by.insert(number, worker.to_string());
    }

    /// Match `number`'s result had `faults` bot faults.
    pub fn faults(&mut self, number: u64, faults: u64) {
        if faults == 0 {
            return;
        }
        match self
            .played_by
            .get(&number)
            .and_then(|w| self.lines.get_mut(w))
        {
            Some(line) => line.bot_faults += faults,
            None => *self.faults_waiting.entry(number).or_default() += faults,
        }
    }

    /// The table, by worker name.
    pub fn lines(&self) -> Vec<WorkerLine> {
        self.lines.values().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_follow_the_worker_whichever_comes_first() {
        let mut t = WorkerTally::default();
        t.faults(1, 2); // result before its played-by line
        t.played(1, "a", Some(400.0), 1.5, true);
        t.played(2, "b", Some(200.0), 0.0, false);
        t.played(2, "a", None, 1.0, true);
        t.faults(2, 1);
        t.played(2, "c", None, 1.0, true); // a duplicate result: ignored
        let lines = t.lines();
        assert_eq!(lines.len(), 2, "{lines:?}");
        let (a, b) = (&lines[0], &lines[1]);
        assert_eq!((a.matches, a.bot_faults, a.failed), (2, 3, 0));
        assert_eq!((a.speed, a.seconds), (Some(400.0), 2.5));
        assert_eq!((b.matches, b.failed, b.speed), (0, 1, Some(200.0)));
    }
}
