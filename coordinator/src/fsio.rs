//! Durable file writes for everything the coordinator leaves on disk: write to a temporary file
//! beside the target, fsync, then rename, so a crash never leaves a half-written file behind.

use std::fs;
use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};

/// Atomically replace `path` with `bytes` (temp file + fsync + rename + directory fsync).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_replace(path, bytes, true)
}

/// Atomically replace a view that can be rebuilt from durable data (e.g. 汇总.md from the
/// results log): temp file + rename, no fsync. A crash may leave the previous version, never a
/// torn one.
pub fn write_view(path: &Path, bytes: &[u8]) -> Result<()> {
    write_replace(path, bytes, false)
}

/// [`write_atomic`] of what `write` writes, streamed into the temporary file (a large output is
/// never held whole in memory).
pub fn write_atomic_by(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    replace_by(path, write, true)
}

fn write_replace(path: &Path, bytes: &[u8], durable: bool) -> Result<()> {
    replace_by(path, |w| w.write_all(bytes), durable)
}

fn replace_by(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    durable: bool,
) -> Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    fs::create_dir_all(dir).with_context(|| format!("creating folder {}", dir.display()))?;
    let file_name = path
        .file_name()
        .with_context(|| format!("{} has no file name", path.display()))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{}.", file_name.to_string_lossy()))
        .suffix(".tmp")
        .tempfile_in(dir)
        .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
    {
        let mut out = std::io::BufWriter::new(tmp.as_file_mut());
        write(&mut out)
            .and_then(|()| out.flush())
            .with_context(|| format!("writing {}", path.display()))?;
    }
    // Readable like any file the operator writes (tempfile creates 0600).
    use std::os::unix::fs::PermissionsExt;
    let _ = tmp
        .as_file()
        .set_permissions(fs::Permissions::from_mode(0o644));
    if durable {
        tmp.as_file()
            .sync_all()
            .with_context(|| format!("syncing {}", path.display()))?;
    }
    tmp.persist(path)
        .map_err(|e| e.error)
        .with_context(|| format!("renaming into {}", path.display()))?;
    if durable {
        if let Ok(d) = fs::File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_content_and_leaves_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/x.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        let names: Vec<_> = fs::read_dir(dir.path().join("sub")).unwrap().collect();
        assert_eq!(names.len(), 1);
        write_atomic_by(&p, |w| w.write_all(b"three")).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"three");
        let failed = write_atomic_by(&p, |_| Err(std::io::Error::other("no room")));
        assert!(failed.is_err());
        assert_eq!(
            fs::read(&p).unwrap(),
            b"three",
            "a failed write replaces nothing"
        );
        assert_eq!(fs::read_dir(dir.path().join("sub")).unwrap().count(), 1);
    }
}
