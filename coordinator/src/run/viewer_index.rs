//! `replays/index.html`, an output folder's one viewer page, kept at almost no cost (the game's
//! page and data files, [`Viewer`], from its module in `super::game`). Three kinds of file, none of them re-verifying a
//! replay that was verified on arrival, none holding a second copy of the list or of a match:
//! - `index.html`: the page, the same bytes for every folder (the viewer embedded once);
//! - `index.js`: the list of matches, one line per match, appended as each result arrives
//!   ([`append`]), and rewritten from the results log (no replay read) when a run starts, when
//!   it ends and by `farm report` ([`write_index`]), which also drops a line torn by a crash;
//! - `NNNNN.js` beside each replay: what the page shows of match N (for Bomberman its viewer
//!   data as the index stores it: as a rule only the moves, which the page re-plays with its
//!   JavaScript copy of the engine, else the frames packed; gzipped; the game's [`Viewer`]),
//!   written once, from the replay just verified, before its row is logged. The page loads it (a `<script>`, which works from disk with no server) only when
//!   the match is opened (`replays/index.html#12` opens match 12).
//!
//! What `farm report` trusts: a row of the results log with a result was logged only after its
//! replay verified and its data file was written, so a data file (not empty) at least as new as
//! its replay is taken as it is (two `stat`s a match). A row whose data file is missing or older than its
//! replay (a folder written before these files, a replay replaced by hand) has its replay
//! verified once and the data file written; a replay that is missing or does not verify is
//! listed with the reason instead of being openable. There are no per-match HTML pages
//! (`farm view REPLAY` writes one to share).

use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use serde_json::{json, Value};

use games::script::{index_list_line, INDEX_LIST_NAME};

use super::checkpoint::{self, Row};
use crate::fsio::write_view;
use crate::replay_file;

/// A game's viewer index: its page, and how a match's data file is written again from its
/// replay's text when it is missing or older than the replay (the replay verified first).
pub struct Viewer {
    pub page: fn() -> String,
    pub rewrite: fn(replays: &Path, n: u64, text: &str) -> Result<()>,
}

/// File name of the index inside `replays/`.
pub const INDEX_NAME: &str = "index.html";

/// What writing the index found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct IndexSummary {
    /// Matches listed (one per row of the log).
    pub listed: usize,
    /// Matches the page can open (their replay verified and their data file is there).
    pub openable: usize,
    /// Bytes of the page and the list (the matches' data files not counted).
    pub bytes: usize,
    /// Replays verified to write a missing or stale data file.
    pub verified: usize,
}

/// The file name of match `n`'s data file in `replays/`.
pub fn data_file_name(n: u64) -> String {
    format!("{n:05}.js")
}

/// Append `row`'s line to the list, as its result arrives (its data file, if it has a result,
/// is written). A view: a failure is logged, not fatal (the end of the run rewrites the list).
pub fn append(dir: &Path, row: &Row) {
    let replays = dir.join("replays");
    let replay = row
        .result
        .as_ref()
        .map(|_| replay_file::match_file_name(row.number));
    let line = index_list_line(&entry(row, replay, None));
    // Opened each time: `farm report` may have replaced the file meanwhile.
    let appended = OpenOptions::new()
        .append(true)
        .create(true)
        .open(replays.join(INDEX_LIST_NAME))
        .and_then(|mut f| f.write_all(line.as_bytes()));
    if let Err(e) = appended {
        tracing::warn!(number = row.number, error = %e, "could not add the match to the viewer index");
    }
}

/// Rebuild `dir/replays/index.html` and its list from the results log (of a schedule of
/// `schedule_len` matches) and the data files beside it.
pub fn write_index(dir: &Path, schedule_len: u64, game: &Viewer) -> Result<IndexSummary> {
    let rec = checkpoint::read_only(&dir.join(checkpoint::LOG_NAME), schedule_len)?;
    let mut rows: Vec<Row> = rec.rows;
    rows.extend(rec.ahead);
    rows.sort_by_key(|r| r.number);
    write_rows(dir, &rows, game)
}

/// The index rebuilt from the results log (see [`write_index`]); the line `farm report` prints.
pub fn write_index_line(dir: &Path, schedule_len: u64, game: &Viewer) -> Result<String> {
    let index = write_index(dir, schedule_len, game)?;
    Ok(format!(
        "viewer: {} ({} of {} matches openable){}",
        dir.join("replays").join(INDEX_NAME).display(),
        index.openable,
        index.listed,
        match index.verified {
            0 => String::new(),
            v => format!("; {v} replays verified to write their missing or stale viewer data"),
        }
    ))
}

/// The index of the results so far (a resume's), before any match is played: from then on
/// each result adds its line. A view: a failure is logged, and the end of the run writes it.
pub fn start(dir: &Path, rows: &[Row], game: &Viewer) {
    if let Err(e) = write_rows(dir, rows, game) {
        tracing::warn!("could not write the viewer index before the run: {e:#}");
    }
}

/// Write the page and the list of `rows` (in schedule order), checking each data file.
pub fn write_rows(dir: &Path, rows: &[Row], game: &Viewer) -> Result<IndexSummary> {
    let replays = dir.join("replays");
    let mut list = String::with_capacity(rows.len() * 200);
    let mut summary = IndexSummary {
        listed: rows.len(),
        ..IndexSummary::default()
    };
    for row in rows {
        let (replay, failed) = match row.result {
            None => (None, None),
            Some(_) => match openable(row.number, &replays, game, &mut summary.verified) {
                Ok(name) => {
                    summary.openable += 1;
                    (Some(name), None)
                }
                Err(e) => {
                    tracing::warn!(number = row.number, error = %format!("{e:#}"), "match left out of the viewer index");
                    (None, Some(format!("{e:#}")))
                }
            },
        };
        list.push_str(&index_list_line(&entry(row, replay, failed)));
    }
    let page = (game.page)();
    write_view(&replays.join(INDEX_NAME), page.as_bytes())
        .and_then(|()| write_view(&replays.join(INDEX_LIST_NAME), list.as_bytes()))
        .with_context(|| format!("writing the viewer index in {}", replays.display()))?;
    summary.bytes = page.len() + list.len();
    Ok(summary)
}

/// Match `n`'s replay file name if the page can open it: its data file is there and at least as
/// new as the replay, or else the replay verifies now and the data file is written
/// (`verified` counts those).
fn openable(n: u64, replays: &Path, game: &Viewer, verified: &mut usize) -> Result<String> {
    let path = replay_file::find_match(replays, n).context("replay missing")?;
    let name = path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let meta = |p: &Path| std::fs::metadata(p).ok();
    let data = replays.join(data_file_name(n));
    if let (Some(d), Some(r)) = (meta(&data), meta(&path)) {
        if d.len() > 0 && d.modified().ok() >= r.modified().ok() {
            return Ok(name);
        }
    }
    let text = replay_file::read_text(&path)?;
    (game.rewrite)(replays, n, &text)?;
    *verified += 1;
    Ok(name)
}

/// One row's list entry: `replay` names its replay when the page can open it, `failed` says why
/// it cannot when it has a result.
fn entry(row: &Row, replay: Option<String>, failed: Option<String>) -> Value {
    let mut entry = json!({"n": row.number, "size": row.size});
    let Some(result) = &row.result else {
        entry["failed"] = json!(row.failed.as_deref().unwrap_or("no result"));
        return entry;
    };
    for key in ["names", "ranks", "points", "turns"] {
        entry[key] = result.get(key).cloned().unwrap_or(Value::Null);
    }
    entry["valid"] = result
        .get("valid_for_scoring")
        .cloned()
        .unwrap_or(Value::Null);
    match (replay, failed) {
        (Some(name), _) => entry["replay"] = json!(name),
        (None, why) => entry["failed"] = json!(why.unwrap_or_else(|| "replay missing".into())),
    }
    entry
}
