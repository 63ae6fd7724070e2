//! Replay files on disk: written gzipped (`NAME.json.gz`, a tenth of the plain JSON), read
//! whether gzipped or plain (older folders and hand-edited replays are plain `.json`; the gzip
//! magic bytes decide, not the name), and a tournament's replay of match N found under either
//! name. Every reader of replays (`verify`, `inspect`, `view`, `report`, `--resume`) goes
//! through here.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use flate2::{read::GzDecoder, write::GzEncoder, Compression};

use games::bomberman::replay::{viewer_data, Replay};
use games::bomberman::viewer;

use crate::fsio::write_atomic;

/// The first two bytes of every gzip stream.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// gzip of `bytes` at the best compression (replays are written once and read rarely).
pub fn gzip(bytes: &[u8]) -> Result<Vec<u8>> {
    let mut enc = GzEncoder::new(Vec::with_capacity(bytes.len() / 8), Compression::best());
    enc.write_all(bytes).context("gzip-compressing")?;
    enc.finish().context("gzip-compressing")
}

/// The text of a replay file, gunzipped if it is gzip.
pub fn read_text(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    if bytes.starts_with(&GZIP_MAGIC) {
        let mut text = String::with_capacity(bytes.len() * 8);
        GzDecoder::new(bytes.as_slice())
            .read_to_string(&mut text)
            .with_context(|| format!("{} is damaged gzip (or not UTF-8 inside)", path.display()))?;
        Ok(text)
    } else {
        String::from_utf8(bytes).with_context(|| format!("{} is not UTF-8 text", path.display()))
    }
}

/// Write `replay` gzipped to `path` (atomically; the name should end in `.json.gz`).
pub fn write_gz(replay: &Replay, path: &Path) -> Result<()> {
    let gz = gzip(replay.to_json().as_bytes())?;
    write_atomic(path, &gz)
}

/// Write the self-contained viewer page of one replay (as `farm view` does).
pub fn write_page(replay: &Replay, path: &Path) -> Result<()> {
    let html = viewer::render_html(&viewer_data(replay));
    write_atomic(path, html.as_bytes())
}

/// The file name of match `n`'s replay in a tournament's `replays/` folder.
pub fn match_file_name(n: u64) -> String {
    format!("{n:05}.json.gz")
}

/// Match `n`'s replay in `replays`: `NNNNN.json.gz`, or the plain `NNNNN.json` of a folder
/// written before replays were compressed. None if neither exists.
pub fn find_match(replays: &Path, n: u64) -> Option<PathBuf> {
    [match_file_name(n), format!("{n:05}.json")]
        .into_iter()
        .map(|name| replays.join(name))
        .find(|p| p.is_file())
}

/// The stem of a replay path without `.json.gz` / `.json` (`a/b.json.gz` -> `a/b`).
pub fn stem(path: &Path) -> PathBuf {
    let s = path.to_string_lossy();
    let cut = s
        .strip_suffix(".json.gz")
        .or_else(|| s.strip_suffix(".json"))
        .unwrap_or(&s);
    PathBuf::from(cut)
}

/// One match's data file for the viewer index (`replays/NNNNN.js`, see
/// [`viewer::match_script`]): its viewer data as the index stores it ([`viewer::index_form`]:
/// the moves for the page to re-play, or the frames packed; without the result's timing, which
/// the viewer does not show), gzipped.
pub fn index_data(replay: &Replay, number: u64) -> Result<Vec<u8>> {
    let text = viewer::viewer_json(&viewer::index_form(replay));
    let gz = gzip(text.as_bytes())?;
    Ok(viewer::match_script(number, &gz))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_gzip_and_plain_alike() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("a.json");
        let packed = dir.path().join("a.json.gz");
        std::fs::write(&plain, "{\"x\": \"ż\"}").unwrap();
        std::fs::write(&packed, gzip(b"{\"x\": \"\xc5\xbc\"}").unwrap()).unwrap();
        assert_eq!(read_text(&plain).unwrap(), read_text(&packed).unwrap());
        let torn = dir.path().join("t.json.gz");
        let gz = gzip(b"{\"x\": 1}").unwrap();
        std::fs::write(&torn, &gz[..gz.len() / 2]).unwrap();
        let err = format!("{:#}", read_text(&torn).unwrap_err());
        assert!(err.contains("damaged gzip"), "{err}");
    }

    #[test]
    fn finds_compressed_then_plain_and_cuts_stems() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(find_match(dir.path(), 7), None);
        std::fs::write(dir.path().join("00007.json"), "{}").unwrap();
        assert_eq!(
            find_match(dir.path(), 7),
            Some(dir.path().join("00007.json"))
        );
        std::fs::write(dir.path().join("00007.json.gz"), "").unwrap();
        assert_eq!(
            find_match(dir.path(), 7),
            Some(dir.path().join("00007.json.gz"))
        );
        assert_eq!(stem(Path::new("r/1-A-B.json.gz")), PathBuf::from("r/1-A-B"));
        assert_eq!(stem(Path::new("r/1.json")), PathBuf::from("r/1"));
        assert_eq!(stem(Path::new("r/x.txt")), PathBuf::from("r/x.txt"));
    }
}
