//! The fixture game of the conformance tests (`proboj_fixture/`) and the comparison with what
//! the official proboj runner left for it (`proboj_fixture/expected/<gamefolder>/`).

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{gunzip, repo_root, show};

pub fn fixture() -> PathBuf {
    repo_root().join("coordinator/tests/proboj_fixture")
}

/// A copy of the fixture in a fresh folder (`bin/python` made here: the runner's PATH finds
/// `python` in it, as contestants' machines do).
pub fn fixture_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fixture_copy_into(dir.path());
    dir
}

/// The same copy in `dir` (created), readable to everyone from `dir` down.
pub fn fixture_copy_into(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let out = Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", fixture().display()))
        .arg(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", show(&out));
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    std::os::unix::fs::symlink("/usr/bin/python3", dir.join("bin/python")).unwrap();
    Command::new("chmod")
        .arg("-R")
        .arg("a+rX")
        .arg(dir)
        .status()
        .unwrap();
}

/// Compare the game folder `game` under `dir` with what the official runner left.
pub fn assert_as_official(dir: &Path, game: &str) {
    let expected = fixture().join("expected").join(game);
    let folder = dir.join(game);
    assert_eq!(
        std::fs::read_to_string(folder.join("score.json")).unwrap(),
        std::fs::read_to_string(expected.join("score.json")).unwrap(),
        "{game}: score.json"
    );
    assert_eq!(
        gunzip(&folder.join("observer.gz")),
        std::fs::read_to_string(expected.join("observer")).unwrap(),
        "{game}: observer stream"
    );
    for e in std::fs::read_dir(&expected).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "txt") {
            continue;
        }
        let name = p.file_stem().unwrap().to_string_lossy().into_owned();
        // `{start}`: the start folder (in a program path the official runner names).
        let want = std::fs::read_to_string(&p)
            .unwrap()
            .replace("{start}", &dir.display().to_string());
        let got = gunzip(&folder.join("logs").join(format!("{name}.gz")));
        assert_official_lines(&want, &got, &format!("{game}: log {name}"));
    }
}

/// Every line of `want` is in `got`, in order; what farm adds are only runner lines.
fn assert_official_lines(want: &str, got: &str, what: &str) {
    let mut want_lines = want.lines().peekable();
    for line in got.lines() {
        if want_lines.peek() == Some(&line) {
            want_lines.next();
        } else {
            assert!(
                line.starts_with("[proboj] "),
                "{what}: line {line:?} is not the official runner's\n--- official:\n{want}\n--- farm:\n{got}"
            );
        }
    }
    assert!(
        want_lines.peek().is_none(),
        "{what}: official line {:?} is missing\n--- official:\n{want}\n--- farm:\n{got}",
        want_lines.peek()
    );
}
