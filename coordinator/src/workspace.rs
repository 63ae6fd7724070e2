//! The referee package (workspace) on disk: its MANIFEST.json is checked file by file before
//! anything runs, and `farm manifest DIR` writes one for a new package. The hashing and path
//! rules are shared::manifest's; this module only reads the files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use shared::ordmap::StrMap;

/// File name of the manifest inside a workspace.
pub const MANIFEST: &str = "MANIFEST.json";

/// Read MANIFEST.json and check every file it names; returns the manifest (path -> sha256) in
/// file order. Paths that escape the workspace and modified or missing files are refused by name.
pub fn check(workspace: &Path) -> Result<StrMap> {
    let root = workspace
        .canonicalize()
        .with_context(|| format!("workspace {} not found", workspace.display()))?;
    let mpath = root.join(MANIFEST);
    let text =
        std::fs::read_to_string(&mpath).with_context(|| format!("reading {}", mpath.display()))?;
    let manifest = shared::manifest::parse(&text)
        .with_context(|| format!("{} is not a valid manifest", mpath.display()))?;
    for (name, digest) in manifest.iter() {
        shared::manifest::check_path(name)
            .with_context(|| format!("{}: invalid manifest path {name:?}", mpath.display()))?;
        let file = root.join(name);
        let resolved = file
            .canonicalize()
            .with_context(|| format!("referee package file missing: {name}"))?;
        if !resolved.starts_with(&root) {
            bail!("invalid manifest path {name:?}: it leads outside the workspace");
        }
        let bytes =
            std::fs::read(&resolved).with_context(|| format!("reading referee file {name}"))?;
        if shared::manifest::sha256_hex(&bytes) != digest {
            bail!("referee package modified: {name} (its sha256 differs from MANIFEST.json)");
        }
    }
    Ok(manifest)
}

/// sha256 over the manifest's canonical text: what jobs carry as `manifest_digest`.
pub fn digest(manifest: &StrMap) -> String {
    shared::manifest::digest(manifest)
}

/// Write MANIFEST.json for every regular file under `dir` (except the manifest itself and
/// hidden files), sorted by path. Returns the number of files. Anything else that is not
/// hidden (a symbolic link, a fifo, a socket, a device) is refused by name before anything is
/// written: a worker receives the listed files' contents only, so a package that needs such an
/// entry would run differently there, and a MANIFEST that left it out would hide that.
pub fn write(dir: &Path) -> Result<usize> {
    let root = dir
        .canonicalize()
        .with_context(|| format!("folder {} not found", dir.display()))?;
    let mut files = BTreeMap::new();
    collect(&root, &root, &mut files)?;
    let mut obj = serde_json::Map::new();
    for (rel, path) in &files {
        let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        obj.insert(rel.clone(), shared::manifest::sha256_hex(&bytes).into());
    }
    let text = serde_json::to_string_pretty(&serde_json::Value::Object(obj))? + "\n";
    crate::fsio::write_atomic(&root.join(MANIFEST), text.as_bytes())?;
    Ok(files.len())
}

fn collect(root: &Path, dir: &Path, out: &mut BTreeMap<String, PathBuf>) -> Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().to_string();
        if name.starts_with('.') {
            continue;
        }
        let path = entry.path();
        let ft = entry
            .file_type()
            .with_context(|| format!("reading the type of {}", path.display()))?;
        let rel = path
            .strip_prefix(root)
            .with_context(|| format!("{} outside {}", path.display(), root.display()))?
            .to_string_lossy()
            .replace('\\', "/");
        if ft.is_dir() {
            collect(root, &path, out)?;
        } else if ft.is_file() {
            if rel != MANIFEST {
                out.insert(rel, path);
            }
        } else {
            let what = if ft.is_symlink() {
                "a symbolic link"
            } else {
                "not a regular file (a fifo, socket or device)"
            };
            bail!(
                "{rel} in {} is {what}: a MANIFEST lists regular files only (workers receive file contents, not links). Replace it with a copy of the file, or move it out of the package; no MANIFEST was written",
                root.display()
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_manifest_checks_and_detects_edits() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("engine")).unwrap();
        std::fs::write(dir.path().join("RULES.md"), "rules").unwrap();
        std::fs::write(dir.path().join("engine/x.txt"), "x").unwrap();
        assert_eq!(write(dir.path()).unwrap(), 2);
        let m = check(dir.path()).unwrap();
        assert_eq!(m.len(), 2);
        std::fs::write(dir.path().join("engine/x.txt"), "y").unwrap();
        let err = check(dir.path()).unwrap_err().to_string();
        assert!(err.contains("modified: engine/x.txt"), "{err}");
        std::fs::write(dir.path().join(MANIFEST), r#"{"../etc/passwd": "00"}"#).unwrap();
        let err = format!("{:#}", check(dir.path()).unwrap_err());
        assert!(err.contains("../etc/passwd"), "{err}");
        let before = std::fs::read(dir.path().join(MANIFEST)).unwrap();
        // A symbolic link (to a file inside or outside, or to a folder) is refused by name.
        for target in ["RULES.md", "/etc/hostname", "engine"] {
            let link = dir.path().join("engine/link");
            std::os::unix::fs::symlink(target, &link).unwrap();
            let err = format!("{:#}", write(dir.path()).unwrap_err());
            assert!(
                err.contains("engine/link") && err.contains("symbolic link"),
                "{target}: {err}"
            );
            assert_eq!(std::fs::read(dir.path().join(MANIFEST)).unwrap(), before);
            std::fs::remove_file(&link).unwrap();
        }
        // A hidden one is skipped, like every hidden file.
        std::os::unix::fs::symlink("RULES.md", dir.path().join(".hidden")).unwrap();
        assert_eq!(write(dir.path()).unwrap(), 2);
    }
}
