//! Bots' code on disk: content-addressed in `<data>/code/<sha256>.js` ([`CodeFolder`], which
//! also serves it to embedded workers as their [`Artifacts`], re-hashed before use), the
//! training bots the smoke test plays against ([`load_training`]), and the JavaScript engine's
//! load check ([`check_code`], the only call into `worker::qianwang` here).

use std::path::{Path, PathBuf};

use shared::msg::{JobFailure, ProgramRef};
use worker::job::Artifacts;

/// Why code could not be stored in the code folder.
#[derive(Debug, thiserror::Error)]
pub enum CodeError {
    #[error("creating the code folder {}", dir.display())]
    CreateFolder {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("writing {}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Why the training bots could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum TrainingError {
    #[error("reading the training bots folder {}", dir.display())]
    ReadFolder {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("no training bots (*.js) in {}", dir.display())]
    Empty { dir: PathBuf },
    #[error("reading {}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Store(#[from] CodeError),
}

/// Why code was refused before any game (from the engine's load check, in a sandboxed child
/// process of this program: `farm __js-bot`).
pub fn check_code(code: &str) -> Result<(), worker::qianwang::LoadError> {
    let host = worker::qianwang::JsHost::this_program(Default::default());
    worker::qianwang::check_code(&host, code, &worker::qianwang::Limits::default())
}

/// Programs by hash in one folder: `<dir>/<sha256>.js`, re-hashed before use.
#[derive(Debug)]
pub struct CodeFolder {
    dir: PathBuf,
}

impl CodeFolder {
    pub fn new(dir: PathBuf) -> Result<CodeFolder, CodeError> {
        std::fs::create_dir_all(&dir).map_err(|source| CodeError::CreateFolder {
            dir: dir.clone(),
            source,
        })?;
        Ok(CodeFolder { dir })
    }

    pub fn path(&self, sha256: &str) -> PathBuf {
        self.dir.join(format!("{sha256}.js"))
    }

    /// Writes `code` under its hash, atomically: each writer writes a temporary file of its
    /// own in the folder and renames it into place, so concurrent writers of the same code
    /// never share a file; the content is addressed by its hash, so whichever rename lands
    /// last leaves the same bytes. Nothing to do when it is already there.
    pub fn put(&self, code: &str) -> Result<String, CodeError> {
        use std::io::Write;
        let sha = shared::manifest::sha256_hex(code.as_bytes());
        let path = self.path(&sha);
        if path.exists() {
            return Ok(sha);
        }
        let write = |source| CodeError::Write {
            path: path.clone(),
            source,
        };
        let mut tmp = tempfile::Builder::new()
            .prefix(&format!(".{sha}."))
            .suffix(".tmp")
            .tempfile_in(&self.dir)
            .map_err(write)?;
        tmp.write_all(code.as_bytes()).map_err(write)?;
        tmp.as_file().sync_all().map_err(write)?;
        tmp.persist(&path).map_err(|e| write(e.error))?;
        Ok(sha)
    }

    pub fn program(&self, sha256: &str) -> ProgramRef {
        ProgramRef::for_file(sha256, &self.path(sha256))
    }
}

impl Artifacts for CodeFolder {
    fn path_for(&self, program: &ProgramRef) -> Result<PathBuf, JobFailure> {
        let ok = program.sha256.len() == 64
            && program
                .sha256
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !ok {
            return Err(JobFailure::Artifact(format!(
                "{:?} is not a sha256",
                program.sha256
            )));
        }
        let path = self.path(&program.sha256);
        let bytes = std::fs::read(&path)
            .map_err(|e| JobFailure::Artifact(format!("reading {}: {e}", path.display())))?;
        let got = shared::manifest::sha256_hex(&bytes);
        if got != program.sha256 {
            return Err(JobFailure::Artifact(format!(
                "{} hashes to {got}, not {}",
                path.display(),
                program.sha256
            )));
        }
        Ok(path)
    }
}

/// A training bot (smoke-test opponent).
#[derive(Debug, Clone)]
pub struct TrainingBot {
    pub name: String,
    pub sha256: String,
}

/// Loads every `*.js` in `dir` (sorted by name) into the code folder.
pub fn load_training(dir: &Path, code: &CodeFolder) -> Result<Vec<TrainingBot>, TrainingError> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|source| TrainingError::ReadFolder {
            dir: dir.to_path_buf(),
            source,
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "js"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(TrainingError::Empty {
            dir: dir.to_path_buf(),
        });
    }
    files
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).map_err(|source| TrainingError::Read {
                path: p.clone(),
                source,
            })?;
            let sha = code.put(&text)?;
            let name = p
                .file_stem()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_default();
            Ok(TrainingBot { name, sha256: sha })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_is_stored_by_hash_and_checked_on_use() {
        let dir = tempfile::tempdir().unwrap();
        let folder = CodeFolder::new(dir.path().join("code")).unwrap();
        let sha = folder.put("function f() {}").unwrap();
        assert_eq!(sha, shared::manifest::sha256_hex(b"function f() {}"));
        assert_eq!(folder.put("function f() {}").unwrap(), sha);
        assert_eq!(
            folder.path_for(&folder.program(&sha)).unwrap(),
            folder.path(&sha)
        );
        std::fs::write(folder.path(&sha), "tampered").unwrap();
        assert!(folder.path_for(&folder.program(&sha)).is_err());
        let bad = ProgramRef {
            sha256: "../x".into(),
            file_name: "x.js".into(),
        };
        assert!(folder.path_for(&bad).is_err());
    }

    /// Eight writers of one new 60 KB program at once, round after round: each gets the hash,
    /// the file holds the code, and no temporary file is left (writers once shared one
    /// temporary name, so a rename found it gone).
    #[test]
    fn concurrent_writers_of_the_same_code_all_succeed() {
        let dir = tempfile::tempdir().unwrap();
        let folder = CodeFolder::new(dir.path().join("code")).unwrap();
        for round in 0..20 {
            let code = format!("// round {round}\n{}", "x".repeat(60_000));
            let want = shared::manifest::sha256_hex(code.as_bytes());
            let got: Vec<Result<String, CodeError>> = std::thread::scope(|s| {
                let handles: Vec<_> = (0..8).map(|_| s.spawn(|| folder.put(&code))).collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            for r in got {
                assert_eq!(r.unwrap(), want, "round {round}");
            }
            assert_eq!(std::fs::read_to_string(folder.path(&want)).unwrap(), code);
        }
        let left: Vec<_> = std::fs::read_dir(dir.path().join("code"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .filter(|n| n.ends_with(".tmp"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn training_bots_load_sorted_and_an_empty_folder_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let folder = CodeFolder::new(dir.path().join("code")).unwrap();
        let bots = dir.path().join("bots");
        std::fs::create_dir(&bots).unwrap();
        let err = load_training(&bots, &folder).unwrap_err();
        assert!(matches!(err, TrainingError::Empty { .. }), "{err}");
        std::fs::write(bots.join("b.js"), "// b").unwrap();
        std::fs::write(bots.join("a.js"), "// a").unwrap();
        std::fs::write(bots.join("notes.txt"), "not a bot").unwrap();
        let t = load_training(&bots, &folder).unwrap();
        let names: Vec<&str> = t.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert!(folder.path(&t[0].sha256).exists());
    }
}
