//! `replays/index.html`, an output folder's one viewer page: every match of the results log
//! listed, and every match whose replay verifies openable in the replay viewer, from disk with
//! no network (games::bomberman::viewer::render_index: the page embeds each match's viewer data
//! gzipped; `replays/index.html#12` opens match 12). Written at the end of a run and by
//! `farm report`; there are no per-match HTML pages (`farm view REPLAY` writes one to share).

use std::path::Path;

use anyhow::{Context, Result};
use serde_json::{json, Value};

use games::bomberman::replay;
use games::bomberman::viewer::{self, IndexBlob};

use super::checkpoint::{self, Row};
use crate::fsio::write_view;
use crate::replay_file;

/// File name of the index inside `replays/`.
pub const INDEX_NAME: &str = "index.html";

/// What writing the index found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct IndexSummary {
    /// Matches listed (one per row of the log).
    pub listed: usize,
    /// Matches the page can open (their replay verified).
    pub openable: usize,
    /// Bytes of the page.
    pub bytes: usize,
}

/// Rebuild `dir/replays/index.html` from the results log (of a schedule of `schedule_len`
/// matches) and the replays beside it. A replay
/// that is missing or does not verify is listed with the reason instead of being openable.
pub fn write_index(dir: &Path, schedule_len: u64) -> Result<IndexSummary> {
    let rec = checkpoint::recover(&dir.join(checkpoint::LOG_NAME), schedule_len)?;
    let mut rows: Vec<Row> = rec.rows;
    rows.extend(rec.ahead);
    rows.sort_by_key(|r| r.number);
    let replays = dir.join("replays");
    let mut list = Vec::with_capacity(rows.len());
    let mut blobs: Vec<IndexBlob> = Vec::with_capacity(rows.len());
    for row in &rows {
        let (entry, blob) = index_entry(row, &replays);
        list.push(entry);
        blobs.extend(blob);
    }
    let page = viewer::render_index(&Value::Array(list), &blobs);
    write_view(&replays.join(INDEX_NAME), page.as_bytes())
        .with_context(|| format!("writing the viewer index in {}", replays.display()))?;
    Ok(IndexSummary {
        listed: rows.len(),
        openable: blobs.len(),
        bytes: page.len(),
    })
}

/// One row's list entry and, when its replay verifies, its embedded viewer data.
fn index_entry(row: &Row, replays: &Path) -> (Value, Option<IndexBlob>) {
    let n = row.number;
    let mut entry = json!({"n": n, "size": row.size});
    let Some(result) = &row.result else {
        entry["failed"] = json!(row.failed.as_deref().unwrap_or("no result"));
        return (entry, None);
    };
    for key in ["names", "ranks", "points", "turns"] {
        entry[key] = result.get(key).cloned().unwrap_or(Value::Null);
    }
    entry["valid"] = result
        .get("valid_for_scoring")
        .cloned()
        .unwrap_or(Value::Null);
    let opened = replay_file::find_match(replays, n)
        .ok_or_else(|| anyhow::anyhow!("replay missing"))
        .and_then(|path| {
            let text = replay_file::read_text(&path)?;
            let rp = replay::verify(&text).context("replay does not verify")?;
            let blob = replay_file::index_blob(&rp, n)?;
            Ok((path, blob))
        });
    match opened {
        Ok((path, blob)) => {
            let name = path.file_name().map(|s| s.to_string_lossy().into_owned());
            entry["replay"] = json!(name);
            (entry, Some(blob))
        }
        Err(e) => {
            tracing::warn!(number = n, error = %format!("{e:#}"), "match left out of the viewer index");
            entry["failed"] = json!(format!("{e:#}"));
            (entry, None)
        }
    }
}
