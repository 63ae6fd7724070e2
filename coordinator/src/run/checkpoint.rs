//! The results log: one JSON line per finished match, appended in schedule order and fsynced
//! (in batches) before a result counts, so a run costs O(1) per result and a crash loses at most
//! the unsynced tail. `results.json` and the reports are views rebuilt from this log. A torn last
//! line (crash mid-write) is cut off on resume, and the operator is told. A failed match that is
//! played again (`--redo-failed`) is appended later as a line with the same number that replaces
//! the failed one, and so is a retraction ([`Row::retraction`], `--redo-suspect`: a saved result
//! taken back because its worker was quarantined, then played again like a failed match);
//! every other line must follow schedule order.
//!
//! A result that arrives ahead of an earlier match is not kept in memory only: it goes to the
//! side journal `results.ahead.jsonl` (fsynced with the log), so that a result is durable before
//! it is acknowledged or marked completed, whatever order results arrive in. A resumed run takes
//! the journal's rows back (they move into the log once the gap before them is filled), and the
//! journal is emptied whenever nothing waits.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// File name of the log inside the output folder.
pub const LOG_NAME: &str = "results.jsonl";
/// File name of the side journal of results that arrived ahead of an earlier match.
pub const AHEAD_NAME: &str = "results.ahead.jsonl";

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

/// The start of a retraction's `failed` reason.
pub const RETRACTED: &str = "retracted: ";

impl Row {
    /// A line that takes back match `number`'s saved result (`why`: e.g. its worker was
    /// quarantined since); the match then counts as failed until it is played again.
    pub fn retraction(number: u64, size: u32, why: &str) -> Row {
        Row {
            number,
            size,
            result: None,
            failed: Some(format!("{RETRACTED}{why}")),
        }
    }

    /// True for a [`Row::retraction`].
    pub fn is_retraction(&self) -> bool {
        self.result.is_none()
            && self
                .failed
                .as_deref()
                .is_some_and(|f| f.starts_with(RETRACTED))
    }
}

/// What reading an existing log found.
pub struct Recovered {
    pub rows: Vec<Row>,
    /// Set when a torn tail was cut off: how many bytes.
    pub torn_bytes: Option<u64>,
    /// Durable results past the end of `rows` (from the side journal), by number, one each.
    pub ahead: Vec<Row>,
}

/// Why a line of the log (or of the side journal) is refused: damage or an edit, never a crash.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadRow {
    #[error("line {line} is not a valid result record ({why}); the log is damaged (not a torn write). Move it aside to start over, or repair that line")]
    Malformed { line: usize, why: String },
    #[error("line {line}: match {number} is outside the schedule (matches 1 to {len}); the log is damaged or edited. Move it aside to start over, or repair that line")]
    OutsideSchedule { line: usize, number: u64, len: u64 },
    #[error("line {line}: match {number} where match {expected} was expected (log out of order or edited)")]
    OutOfOrder {
        line: usize,
        number: u64,
        expected: u64,
    },
}

/// The whole rows of a log's bytes and where they end (past it: a torn tail, to be cut off).
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// Match `n` at index `n - 1` (a failed match played again replaces its first line).
    pub rows: Vec<Row>,
    /// Bytes of whole, valid lines from the start.
    pub good_end: usize,
}

/// One line: a row, or why not. `schedule_len` bounds the match numbers.
fn parse_row(line: &[u8], line_no: usize, schedule_len: u64) -> Result<Row, BadRow> {
    let row: Row = serde_json::from_slice(line).map_err(|e| BadRow::Malformed {
        line: line_no,
        why: e.to_string(),
    })?;
    if row.number == 0 || row.number > schedule_len {
        return Err(BadRow::OutsideSchedule {
            line: line_no,
            number: row.number,
            len: schedule_len,
        });
    }
    Ok(row)
}

/// Parse a log (pure): every whole line must be a row numbered within the schedule, in
/// schedule order, or a failed match played again. A last line without its newline is a torn
/// write, and so is a last line that is not JSON at all (a crash can leave garbage blocks); a
/// whole line that is JSON but not a valid row is an edit, refused wherever it is.
pub fn parse(bytes: &[u8], schedule_len: u64) -> Result<Parsed, BadRow> {
    let mut rows: Vec<Row> = Vec::new();
    let mut good_end = 0usize;
    for (i, line) in bytes.split_inclusive(|&b| b == b'\n').enumerate() {
        let line_no = i + 1;
        let Some(body) = line.strip_suffix(b"\n") else {
            break; // torn tail: the crash happened while writing it
        };
        let is_last = good_end + line.len() == bytes.len();
        let row = match parse_row(body, line_no, schedule_len) {
            Ok(row) => row,
            Err(BadRow::Malformed { .. })
                if is_last && serde_json::from_slice::<Value>(body).is_err() =>
            {
                break
            }
            Err(e) => return Err(e),
        };
        let expected = rows.len() as u64 + 1;
        // `row.number` is at least 1 (parse_row), so the index is within `rows` when below.
        let earlier = usize::try_from(row.number - 1)
            .ok()
            .filter(|_| row.number < expected)
            .and_then(|i| rows.get_mut(i));
        match earlier {
            // A failed match played again (whatever came of it), or a saved result retracted.
            Some(old) if old.failed.is_some() || row.is_retraction() => *old = row,
            _ if row.number == expected => rows.push(row),
            _ => {
                return Err(BadRow::OutOfOrder {
                    line: line_no,
                    number: row.number,
                    expected,
                })
            }
        }
        good_end += line.len();
    }
    Ok(Parsed { rows, good_end })
}

/// Read the log, cutting off a torn last line. A malformed line before the last, or a match
/// number outside the schedule's `schedule_len` matches, is an error naming the file and line:
/// that is damage, not a crash, and must not be papered over (nothing is cut or rewritten then).
pub fn recover(path: &Path, schedule_len: u64) -> Result<Recovered> {
    let (rec, good_end) = read_log(path, schedule_len)?;
    if rec.torn_bytes.is_some() {
        let f = OpenOptions::new()
            .write(true)
            .open(path)
            .with_context(|| format!("opening {} to cut its torn tail", path.display()))?;
        f.set_len(good_end as u64)
            .with_context(|| format!("cutting the torn tail of {}", path.display()))?;
        f.sync_all()?;
    }
    Ok(rec)
}

/// Read the log as [`recover`] does but change nothing: a reader beside a running coordinator
/// (`farm report`, the viewer index) must not cut the line it is writing.
pub fn read_only(path: &Path, schedule_len: u64) -> Result<Recovered> {
    Ok(read_log(path, schedule_len)?.0)
}

/// The log's rows, its torn tail's length and where the whole lines end.
fn read_log(path: &Path, schedule_len: u64) -> Result<(Recovered, usize)> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let rec = Recovered {
                rows: Vec::new(),
                torn_bytes: None,
                ahead: recover_ahead(path, 0, schedule_len)?,
            };
            return Ok((rec, 0));
        }
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let Parsed { rows, good_end } =
        parse(&bytes, schedule_len).map_err(|e| anyhow::anyhow!("{} {e}", path.display()))?;
    let torn = (good_end < bytes.len()).then(|| (bytes.len() - good_end) as u64);
    let ahead = recover_ahead(path, rows.len() as u64, schedule_len)?;
    let rec = Recovered {
        rows,
        torn_bytes: torn,
        ahead,
    };
    Ok((rec, good_end))
}

/// The journal beside the log at `log_path`.
pub fn ahead_path(log_path: &Path) -> PathBuf {
    log_path.with_file_name(AHEAD_NAME)
}

/// The journal's whole rows numbered after `done` (the log's length), sorted, one per number;
/// a torn last line is ignored (it was never synced, so never acknowledged). Rows at or below
/// `done` already moved into the log; a number outside the schedule is refused by line.
fn recover_ahead(log_path: &Path, done: u64, schedule_len: u64) -> Result<Vec<Row>> {
    let path = ahead_path(log_path);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let mut rows = BTreeMap::new();
    let mut lines = bytes.split(|&b| b == b'\n').peekable();
    let mut line_no = 0;
    while let Some(line) = lines.next() {
        line_no += 1;
        let last = lines.peek().is_none();
        if line.is_empty() {
            continue;
        }
        match parse_row(line, line_no, schedule_len) {
            Ok(row) if row.number > done => {
                rows.entry(row.number).or_insert(row);
            }
            Ok(_) => {}
            Err(BadRow::Malformed { .. }) if last => {} // torn tail: never synced, never acknowledged
            Err(e) => bail!(
                "{} {e} (the journal of results that arrived early: move it aside to play those matches again)",
                path.display()
            ),
        }
    }
    Ok(rows.into_values().collect())
}

/// Appends rows in schedule order, whatever order they arrive in.
pub struct Log {
    path: PathBuf,
    out: BufWriter<File>,
    /// The side journal of rows written ahead of `next`.
    ahead: BufWriter<File>,
    ahead_unsynced: usize,
    /// Bytes in the journal (0: nothing to empty).
    ahead_bytes: u64,
    /// Next schedule number to append.
    next: u64,
    /// Rows that arrived ahead of `next`.
    waiting: BTreeMap<u64, Row>,
    /// Failed matches being played again: written whenever they arrive.
    redo: std::collections::BTreeSet<u64>,
    /// Redone failed matches accepted and not yet popped.
    redo_ready: std::collections::VecDeque<Row>,
    unsynced: usize,
}

impl Log {
    /// Open for appending after `done` rows already in the file, with `ahead` (durable rows
    /// past them, from [`recover`]) waiting for their turn. The journal is rewritten to hold
    /// exactly `ahead`.
    pub fn open(path: &Path, done: u64, ahead: &[Row]) -> Result<Log> {
        let f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("opening {}", path.display()))?;
        let jpath = ahead_path(path);
        let mut text = Vec::new();
        for row in ahead {
            serde_json::to_writer(&mut text, row)?;
            text.push(b'\n');
        }
        crate::fsio::write_atomic(&jpath, &text)?;
        let j = OpenOptions::new()
            .append(true)
            .open(&jpath)
            .with_context(|| format!("opening {}", jpath.display()))?;
        let mut log = Log {
            path: path.to_path_buf(),
            out: BufWriter::with_capacity(1 << 16, f),
            ahead: BufWriter::with_capacity(1 << 16, j),
            ahead_unsynced: 0,
            ahead_bytes: text.len() as u64,
            next: done + 1,
            waiting: BTreeMap::new(),
            redo: Default::default(),
            redo_ready: Default::default(),
            unsynced: 0,
        };
        for row in ahead {
            if row.number > done {
                log.waiting.insert(row.number, row.clone());
            }
        }
        Ok(log)
    }

    /// Rows that were durable ahead of the log when it was opened, or pushed since, that are
    /// still waiting for an earlier match (their numbers, sorted).
    pub fn waiting_numbers(&self) -> Vec<u64> {
        self.waiting.keys().copied().collect()
    }

    /// Let a failed match already in the log be written again (its new line replaces it).
    pub fn allow_redo(&mut self, number: u64) {
        if number < self.next {
            self.redo.insert(number);
        }
    }

    /// Take back the saved result of match `number` (written now as a retraction line, durable
    /// at the next [`Log::sync`]) and let the match be written again.
    pub fn retract(&mut self, number: u64, size: u32, why: &str) -> Result<()> {
        if number >= self.next {
            bail!("match {number} has no saved result to take back");
        }
        self.write(&Row::retraction(number, size, why))?;
        self.redo.insert(number);
        Ok(())
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
    /// writing. Call [`Log::sync`] before treating them as counted. ([`Log::offer`] and
    /// [`Log::pop_ready`] one at a time, for a caller that may stop between two rows.)
    pub fn push(&mut self, row: Row) -> Result<Vec<Row>> {
        self.offer(row)?;
        let mut ready = Vec::new();
        while let Some(row) = self.pop_ready()? {
            ready.push(row);
        }
        Ok(ready)
    }

    /// Accept a row without writing it in order yet: a row ahead of the next one goes to the
    /// side journal (durable at the next [`Log::sync`]); the next row (or a failed match
    /// played again) waits for [`Log::pop_ready`]. A row already in the log is ignored.
    pub fn offer(&mut self, row: Row) -> Result<()> {
        if self.has(row.number) || self.redo_ready.iter().any(|r| r.number == row.number) {
            return Ok(());
        }
        if self.redo.remove(&row.number) {
            self.redo_ready.push_back(row);
            return Ok(());
        }
        if row.number != self.next {
            let mut line = serde_json::to_vec(&row)?;
            line.push(b'\n');
            self.ahead
                .write_all(&line)
                .with_context(|| format!("writing {}", ahead_path(&self.path).display()))?;
            self.ahead_unsynced += 1;
            self.ahead_bytes += line.len() as u64;
        }
        self.waiting.insert(row.number, row);
        Ok(())
    }

    /// Write the next row that can go into the log in order (a redone failed match first) and
    /// return it; `None` when the next row has not arrived. Every row still waiting when the
    /// caller stops popping is in the side journal (only the next row skips it, and that one
    /// is always popped first).
    pub fn pop_ready(&mut self) -> Result<Option<Row>> {
        if let Some(row) = self.redo_ready.pop_front() {
            self.write(&row)?;
            return Ok(Some(row));
        }
        let Some(row) = self.waiting.remove(&self.next) else {
            return Ok(None);
        };
        self.write(&row)?;
        self.next += 1;
        Ok(Some(row))
    }

    /// Make everything pushed so far durable, in the log or in the journal (no-op when nothing
    /// is pending). Once nothing waits, the journal is emptied (its rows are all in the log).
    pub fn sync(&mut self) -> Result<()> {
        if self.ahead_unsynced > 0 {
            let jpath = ahead_path(&self.path);
            self.ahead
                .flush()
                .with_context(|| format!("flushing {}", jpath.display()))?;
            self.ahead
                .get_ref()
                .sync_data()
                .with_context(|| format!("syncing {}", jpath.display()))?;
            self.ahead_unsynced = 0;
        }
        if self.unsynced > 0 {
            self.out
                .flush()
                .with_context(|| format!("flushing {}", self.path.display()))?;
            self.out
                .get_ref()
                .sync_data()
                .with_context(|| format!("syncing {}", self.path.display()))?;
            self.unsynced = 0;
        }
        if self.waiting.is_empty() && self.ahead_bytes > 0 {
            let jpath = ahead_path(&self.path);
            let f = self.ahead.get_ref();
            f.set_len(0)
                .and_then(|_| f.sync_data())
                .with_context(|| format!("emptying {}", jpath.display()))?;
            self.ahead_bytes = 0;
        }
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
mod tests;
