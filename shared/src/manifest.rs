//! Referee-package manifests (`MANIFEST.json`: relative path -> sha256 of the file's bytes):
//! hashing, parsing, the check that a listed path stays inside the workspace, building one from
//! files, and comparing a file against its entry. Reading the files is the caller's job.

use crate::ordmap::StrMap;
use sha2::{Digest, Sha256};
use thiserror::Error;

/// Why a manifest or one of its entries was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ManifestError {
    #[error("MANIFEST.json is not a JSON object of path -> sha256 strings: {0}")]
    Parse(String),
    #[error("invalid manifest path {path:?}: {why}")]
    Path { path: String, why: &'static str },
    #[error("manifest entry {path:?}: {digest:?} is not a sha256 hex digest")]
    Digest { path: String, digest: String },
    #[error("referee package modified: {path} (manifest sha256 {expected}, file sha256 {actual})")]
    Modified {
        path: String,
        expected: String,
        actual: String,
    },
    #[error("file {0:?} is listed twice")]
    Duplicate(String),
}

/// Lower-case hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Checks that a manifest path is relative, `/`-separated and stays inside the workspace:
/// no absolute or drive paths, no `..` or `.` components, no empty components, no
/// backslashes or control characters.
pub fn check_path(path: &str) -> Result<(), ManifestError> {
    let bad = |why| {
        Err(ManifestError::Path {
            path: path.to_string(),
            why,
        })
    };
    if path.is_empty() {
        return bad("empty path");
    }
    if path.starts_with('/') {
        return bad("absolute path");
    }
    let b = path.as_bytes();
    if b.len() >= 2 && b[1] == b':' && b[0].is_ascii_alphabetic() {
        return bad("drive-qualified path");
    }
    if path.contains('\\') {
        return bad("backslash in path (use '/')");
    }
    if path.chars().any(char::is_control) {
        return bad("control character in path");
    }
    for part in path.split('/') {
        match part {
            "" => return bad("empty path component"),
            "." => return bad("'.' component"),
            ".." => return bad("'..' component escapes the workspace"),
            _ => {}
        }
    }
    Ok(())
}

fn is_sha256_hex(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
}

/// Parses `MANIFEST.json`, checking every path and digest; entries keep the file's order.
pub fn parse(text: &str) -> Result<StrMap, ManifestError> {
    let map: StrMap =
        serde_json::from_str(text).map_err(|e| ManifestError::Parse(e.to_string()))?;
    for (path, digest) in map.iter() {
        check_path(path)?;
        if !is_sha256_hex(digest) {
            return Err(ManifestError::Digest {
                path: path.to_string(),
                digest: digest.to_string(),
            });
        }
    }
    Ok(map)
}

/// Compares a file's bytes with its manifest digest.
pub fn verify_file(path: &str, expected: &str, bytes: &[u8]) -> Result<(), ManifestError> {
    let actual = sha256_hex(bytes);
    if actual == expected {
        Ok(())
    } else {
        Err(ManifestError::Modified {
            path: path.to_string(),
            expected: expected.to_string(),
            actual,
        })
    }
}

/// Builds a manifest from `(relative path, bytes)` pairs, sorted case-insensitively by path
/// (ties by exact path), as the bundled referee packages list their files.
pub fn build<'a, I>(files: I) -> Result<StrMap, ManifestError>
where
    I: IntoIterator<Item = (&'a str, &'a [u8])>,
{
    let hashed: Vec<(&str, String)> = files.into_iter().map(|(p, b)| (p, sha256_hex(b))).collect();
    from_digests(hashed.iter().map(|(p, h)| (*p, h.as_str())))
}

/// The digest of a whole manifest (what a job names and a worker checks): sha256 over its
/// `path<TAB>sha256<LF>` lines in order.
pub fn digest(manifest: &StrMap) -> String {
    sha256_hex(canonical_text(manifest).as_bytes())
}

/// The manifest's canonical text (`path<TAB>sha256<LF>` per entry, in order): what [`digest`]
/// hashes, and the form in which a referee package's manifest travels by its digest.
pub fn canonical_text(manifest: &StrMap) -> String {
    let mut text = String::new();
    for (k, v) in manifest.iter() {
        text.push_str(k);
        text.push('\t');
        text.push_str(v);
        text.push('\n');
    }
    text
}

/// Parse [`canonical_text`] back, checking every path and digest.
pub fn parse_canonical(text: &str) -> Result<StrMap, ManifestError> {
    let mut out = StrMap::default();
    for line in text.lines() {
        let (path, digest) = line
            .split_once('\t')
            .ok_or_else(|| ManifestError::Parse(format!("line {line:?} has no tab")))?;
        check_path(path)?;
        if digest.len() != 64
            || !digest
                .bytes()
                .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        {
            return Err(ManifestError::Digest {
                path: path.to_string(),
                digest: digest.to_string(),
            });
        }
        if out.get(path).is_some() {
            return Err(ManifestError::Duplicate(path.to_string()));
        }
        out.insert(path.to_string(), digest.to_string());
    }
    Ok(out)
}

/// A manifest from `(relative path, sha256)` pairs already hashed, sorted like [`build`].
pub fn from_digests<'a, I>(files: I) -> Result<StrMap, ManifestError>
where
    I: IntoIterator<Item = (&'a str, &'a str)>,
{
    let mut entries: Vec<(String, String)> = Vec::new();
    for (path, sha) in files {
        check_path(path)?;
        if !is_sha256_hex(sha) {
            return Err(ManifestError::Digest {
                path: path.to_string(),
                digest: sha.to_string(),
            });
        }
        entries.push((path.to_string(), sha.to_string()));
    }
    entries.sort_by(|a, b| {
        a.0.to_lowercase()
            .cmp(&b.0.to_lowercase())
            .then_with(|| a.0.cmp(&b.0))
    });
    if let Some(w) = entries.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(ManifestError::Duplicate(w[0].0.clone()));
    }
    Ok(StrMap(entries))
}

/// `MANIFEST.json` text for a manifest: pretty-printed with two-space indentation.
pub fn to_json(manifest: &StrMap) -> String {
    let mut s = serde_json::to_string_pretty(manifest).unwrap_or_default();
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_text_round_trips_and_hashes_to_the_digest() {
        let mut m = StrMap::default();
        m.insert("RULES.md".into(), sha256_hex(b"rules"));
        m.insert("dir/VERSION".into(), sha256_hex(b"v1"));
        let text = canonical_text(&m);
        assert_eq!(sha256_hex(text.as_bytes()), digest(&m));
        assert_eq!(parse_canonical(&text).unwrap(), m);
        assert!(parse_canonical("../x\tabc\n").is_err());
        assert!(parse_canonical("x\tnot-a-digest\n").is_err());
        assert!(parse_canonical("no tab here\n").is_err());
        let twice = format!("{text}RULES.md\t{}\n", sha256_hex(b"rules"));
        assert!(matches!(
            parse_canonical(&twice),
            Err(ManifestError::Duplicate(_))
        ));
    }
}
