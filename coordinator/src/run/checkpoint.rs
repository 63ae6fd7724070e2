//! The results log: one JSON line per finished match, appended in schedule order and fsynced
//! (in batches) before a result counts, so a run costs O(1) per result and a crash loses at most
//! the unsynced tail. `results.json` and the reports are views rebuilt from this log. A torn last
//! line (crash mid-write) is cut off on resume, and the operator is told. A failed match that is
//! played again (`--redo-failed`) is appended later as a line with the same number that replaces
//! the failed one; every other line must follow schedule order.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// File name of the log inside the output folder.
pub const LOG_NAME: &str = "results.jsonl";

/// One line of the log: a scored match or a match that could not be played.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Row {
    #[serde(rename = "match")]
    pub number: u64,
    pub size: u32,
    /// The match result (the replay's `result` object), absent when the match failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// Why the match has no result (infrastructure only; never a bot's fault).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
}

/// What reading an existing log found.
pub struct Recovered {
    pub rows: Vec<Row>,
    /// Set when a torn tail was cut off: how many bytes.
    pub torn_bytes: Option<u64>,
}

/// Read the log, cutting off a torn last line. A malformed line before the last is an error
/// naming the line: that is damage, not a crash, and must not be papered over.
pub fn recover(path: &Path) -> Result<Recovered> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Recovered {
                rows: Vec::new(),
                torn_bytes: None,
            })
        }
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let mut rows: Vec<Row> = Vec::new();
    let mut good_end = 0usize;
    let mut start = 0usize;
    let mut line_no = 0usize;
    while start < bytes.len() {
        line_no += 1;
        let end = bytes[start..]
            .iter()
            .position(|&b| b == b'\n')
            .map(|i| start + i);
        let (line, complete) = match end {
            Some(e) => (&bytes[start..e], true),
            None => (&bytes[start..], false),
        };
        let parsed: Option<Row> = serde_json::from_slice(line).ok();
        match (parsed, complete) {
            (Some(row), true) => {
                let expected = rows.len() as u64 + 1;
                let redo = row.number < expected
                    && row.result.is_some()
                    && rows[(row.number - 1) as usize].failed.is_some();
                if redo {
                    let n = row.number as usize;
                    rows[n - 1] = row;
                } else if row.number != expected {
                    bail!(
                        "{} line {line_no}: match {} where match {expected} was expected (log out of order or edited)",
                        path.display(),
                        row.number
                    );
                } else {
                    rows.push(row);
                }
                good_end = end.map(|e| e + 1).unwrap_or(bytes.len());
                start = good_end;
            }
            (_, false) => break, // torn tail: the crash happened while writing it
            (None, true) => {
                let is_last = end.map(|e| e + 1 == bytes.len()).unwrap_or(true);
                if is_last {
                    break;
                }
                bail!(
                    "{} line {line_no} is not a valid result record; the log is damaged (not a torn write). Move it aside to start over, or repair that line",
                    path.display()
                );
            }
        }
    }
    let torn = (good_end < bytes.len()).then(|| (bytes.len() - good_end) as u64);
    if torn.is_some() {
        let f = OpenOptions::new()
            .write(true)
            .open(path)
            .with_context(|| format!("opening {} to cut its torn tail", path.display()))?;
        f.set_len(good_end as u64)
            .with_context(|| format!("cutting the torn tail of {}", path.display()))?;
        f.sync_all()?;
    }
    Ok(Recovered {
        rows,
        torn_bytes: torn,
    })
}

/// Appends rows in schedule order, whatever order they arrive in.
pub struct Log {
    path: PathBuf,
    out: BufWriter<File>,
    /// Next schedule number to append.
    next: u64,
    /// Rows that arrived ahead of `next`.
    waiting: BTreeMap<u64, Row>,
    /// Failed matches being played again: written whenever they arrive.
    redo: std::collections::BTreeSet<u64>,
    unsynced: usize,
}

impl Log {
    /// Open for appending after `done` rows already in the file.
    pub fn open(path: &Path, done: u64) -> Result<Log> {
        let f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("opening {}", path.display()))?;
        Ok(Log {
            path: path.to_path_buf(),
            out: BufWriter::with_capacity(1 << 16, f),
            next: done + 1,
            waiting: BTreeMap::new(),
            redo: Default::default(),
            unsynced: 0,
        })
    }

    /// Let a failed match already in the log be written again (its new line replaces it).
    pub fn allow_redo(&mut self, number: u64) {
        if number < self.next {
            self.redo.insert(number);
        }
    }

    /// True when `number` is already in the log or waiting to be written.
    pub fn has(&self, number: u64) -> bool {
        (number < self.next && !self.redo.contains(&number)) || self.waiting.contains_key(&number)
    }

    fn write(&mut self, row: &Row) -> Result<()> {
        serde_json::to_writer(&mut self.out, row)
            .with_context(|| format!("writing {}", self.path.display()))?;
        self.out.write_all(b"\n")?;
        self.unsynced += 1;
        Ok(())
    }

    /// Accept a row; returns the rows that became writable (in order), already buffered for
    /// writing. Call [`Log::sync`] before treating them as counted.
    pub fn push(&mut self, row: Row) -> Result<Vec<Row>> {
        if self.has(row.number) {
            return Ok(Vec::new());
        }
        if self.redo.remove(&row.number) {
            self.write(&row)?;
            return Ok(vec![row]);
        }
        self.waiting.insert(row.number, row);
        let mut ready = Vec::new();
        while let Some(row) = self.waiting.remove(&self.next) {
            self.write(&row)?;
            self.next += 1;
            ready.push(row);
        }
        Ok(ready)
    }

    /// Make everything written so far durable (no-op when nothing is pending).
    pub fn sync(&mut self) -> Result<()> {
        if self.unsynced == 0 {
            return Ok(());
        }
        self.out
            .flush()
            .with_context(|| format!("flushing {}", self.path.display()))?;
        self.out
            .get_ref()
            .sync_data()
            .with_context(|| format!("syncing {}", self.path.display()))?;
        self.unsynced = 0;
        Ok(())
    }

    /// Number of rows durably or pending-durably in order.
    pub fn written(&self) -> u64 {
        self.next - 1
    }

    /// Rows held back waiting for an earlier match.
    pub fn waiting(&self) -> usize {
        self.waiting.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(n: u64) -> Row {
        Row {
            number: n,
            size: 2,
            result: Some(serde_json::json!({"ranks": [1, 2]})),
            failed: None,
        }
    }

    #[test]
    fn writes_in_schedule_order_and_recovers() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(LOG_NAME);
        let mut log = Log::open(&p, 0).unwrap();
        assert!(log.push(row(2)).unwrap().is_empty());
        assert!(log.push(row(3)).unwrap().is_empty());
        let ready = log.push(row(1)).unwrap();
        assert_eq!(
            ready.iter().map(|r| r.number).collect::<Vec<_>>(),
            [1, 2, 3]
        );
        assert!(
            log.push(row(2)).unwrap().is_empty(),
            "duplicates are ignored"
        );
        log.sync().unwrap();
        drop(log);
        let rec = recover(&p).unwrap();
        assert_eq!(rec.rows.len(), 3);
        assert!(rec.torn_bytes.is_none());
    }

    #[test]
    fn torn_tail_is_cut_and_reported_but_damage_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(LOG_NAME);
        let mut log = Log::open(&p, 0).unwrap();
        log.push(row(1)).unwrap();
        log.push(row(2)).unwrap();
        log.sync().unwrap();
        drop(log);
        let mut f = OpenOptions::new().append(true).open(&p).unwrap();
        f.write_all(b"{\"match\":3,\"si").unwrap();
        drop(f);
        let rec = recover(&p).unwrap();
        assert_eq!(rec.rows.len(), 2);
        assert_eq!(rec.torn_bytes, Some(14));
        assert_eq!(recover(&p).unwrap().torn_bytes, None, "file was repaired");

        let text = std::fs::read_to_string(&p).unwrap();
        std::fs::write(&p, text.replacen("\"match\":1", "\"match\":x", 1)).unwrap();
        let err = recover(&p).err().unwrap().to_string();
        assert!(err.contains("line 1"), "{err}");
    }
}
