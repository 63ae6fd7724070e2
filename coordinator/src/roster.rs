//! The bot roster a user gives on the command line (`Name=program` entries): parsing and the
//! checks every command shares (unique names, no `|` or line breaks, existing programs), so that
//! `farm play` and `farm run` refuse the same bad input with the same words.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// One `Name=program` entry, program resolved to an absolute path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub program: PathBuf,
}

impl Entry {
    /// True when the program is a C++ source that workers compile.
    pub fn is_source(&self) -> bool {
        self.program
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("cpp"))
    }
}

/// Why a roster was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RosterError {
    #[error(
        "bot entry {0:?} is not of the form Name=program (e.g. Base=bots/bomberman/baseline.cpp)"
    )]
    NotAnEntry(String),
    #[error("bot entry {0:?} has an empty name")]
    EmptyName(String),
    #[error("bot name {0:?} contains '|' or a line break; names must not")]
    BadName(String),
    #[error("bot name {0:?} is given twice; names must be unique")]
    Duplicate(String),
    #[error("program of bot {name:?} not found: {path} ({reason})")]
    MissingProgram {
        name: String,
        path: String,
        reason: String,
    },
    #[error("program of bot {name:?} is not a regular file: {path}")]
    NotAFile { name: String, path: String },
    #[error("{count} bots given; a match needs between {min} and {max}")]
    Count {
        count: usize,
        min: usize,
        max: usize,
    },
}

/// Parse and check `Name=program` entries. Relative programs are resolved against `cwd`.
pub fn parse_entries(raw: &[String], cwd: &Path) -> Result<Vec<Entry>, RosterError> {
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(raw.len());
    for item in raw {
        let (name, path) = item
            .split_once('=')
            .ok_or_else(|| RosterError::NotAnEntry(item.clone()))?;
        if name.trim().is_empty() {
            return Err(RosterError::EmptyName(item.clone()));
        }
        if name.contains(['|', '\n', '\r']) {
            return Err(RosterError::BadName(name.to_string()));
        }
        if !seen.insert(name.to_string()) {
            return Err(RosterError::Duplicate(name.to_string()));
        }
        if path.is_empty() {
            return Err(RosterError::NotAnEntry(item.clone()));
        }
        let joined = cwd.join(path);
        let program = joined
            .canonicalize()
            .map_err(|e| RosterError::MissingProgram {
                name: name.to_string(),
                path: path.to_string(),
                reason: e.to_string(),
            })?;
        if !program.is_file() {
            return Err(RosterError::NotAFile {
                name: name.to_string(),
                path: path.to_string(),
            });
        }
        out.push(Entry {
            name: name.to_string(),
            program,
        });
    }
    Ok(out)
}

/// Check the number of bots for one match.
pub fn check_match_size(entries: &[Entry], min: usize, max: usize) -> Result<(), RosterError> {
    if entries.len() < min || entries.len() > max {
        return Err(RosterError::Count {
            count: entries.len(),
            min,
            max,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp_with_file() -> (tempfile::TempDir, String) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.cpp"), "int main(){}").unwrap();
        (dir, "a.cpp".to_string())
    }

    #[test]
    fn accepts_good_entries_and_resolves_paths() {
        let (dir, f) = tmp_with_file();
        let got = parse_entries(&[format!("A={f}"), format!("B b={f}")], dir.path()).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[1].name, "B b");
        assert!(got[0].program.is_absolute());
        assert!(got[0].is_source());
    }

    #[test]
    fn refuses_bad_entries_with_reasons() {
        let (dir, f) = tmp_with_file();
        let cases = [
            (vec!["A".to_string()], "not of the form"),
            (vec![format!("={f}")], "empty name"),
            (vec![format!("A|B={f}")], "contains '|'"),
            (vec![format!("A\nB={f}")], "line break"),
            (vec![format!("A={f}"), format!("A={f}")], "given twice"),
            (vec!["A=nope.cpp".to_string()], "not found: nope.cpp"),
            (vec!["A=.".to_string()], "not a regular file"),
        ];
        for (input, want) in cases {
            let err = parse_entries(&input, dir.path()).unwrap_err().to_string();
            assert!(err.contains(want), "{input:?}: {err}");
        }
    }
}
