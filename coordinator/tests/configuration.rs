//! Configuration comes only through clap, and the README says all of it: every environment
//! variable a `farm` command reads is a flag's `env` (as `--help` shows it), each is in the
//! README's "Configuration" table with its flag and the commands that take it, the table names
//! nothing the binary does not read, and a bad `--log` filter is refused. (That no source reads a
//! `FARM_*` variable by hand is tests/codebase.rs's.)

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::{farm, repo, run};

/// (variable, flag) -> the commands whose `--help` lists it.
type EnvMap = BTreeMap<(String, String), BTreeSet<String>>;

/// The subcommands of `farm <path> --help` ("Commands:" section, without `help`).
fn subcommands(path: &[&str]) -> Vec<String> {
    let (code, out, err) = run(farm().args(path).arg("--help").env_remove("FARM_LOG"));
    assert_eq!(code, 0, "farm {path:?} --help: {err}");
    let mut names = Vec::new();
    let mut inside = false;
    for line in out.lines() {
        if line.trim_end() == "Commands:" {
            inside = true;
            continue;
        }
        if inside {
            if !line.starts_with("  ") {
                break;
            }
            let name = line.split_whitespace().next().unwrap_or_default();
            if !name.is_empty()
                && name != "help"
                && line.starts_with("  ")
                && !line.starts_with("   ")
            {
                names.push(name.to_string());
            }
        }
    }
    names
}

/// Every `[env: NAME]` of `farm <path> --help`, with the long flag it belongs to.
fn env_flags(path: &[&str], into: &mut EnvMap) {
    let (code, out, err) = run(farm().args(path).arg("--help"));
    assert_eq!(code, 0, "farm {path:?} --help: {err}");
    let mut flag: Option<String> = None;
    for line in out.lines() {
        let t = line.trim_start();
        // a flag's own line is indented 2 (`  -c, --x`) or 6 (`      --x`); deeper lines
        // starting with `-` are its possible values
        if t.starts_with('-') && line.len() - t.len() <= 6 {
            flag = t
                .split([' ', ',', '='])
                .find(|w| w.starts_with("--"))
                .map(str::to_string);
        }
        if let Some(i) = line.find("[env: ") {
            let name: String = line[i + 6..]
                .chars()
                .take_while(|c| c.is_ascii_uppercase() || *c == '_' || c.is_ascii_digit())
                .collect();
            let flag = flag
                .clone()
                .unwrap_or_else(|| panic!("farm {path:?}: [env: {name}] before any flag"));
            into.entry((name, flag)).or_default().insert(path.join(" "));
        }
    }
}

/// The README's configuration table: (variable, flag) -> commands (`every command` expanded).
fn readme_table(every: &BTreeSet<String>) -> EnvMap {
    let text = std::fs::read_to_string(repo().join("README.md")).expect("README.md");
    let start = text
        .find("\n## Configuration\n")
        .expect("README has a ## Configuration section");
    let section = &text[start + 1..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
    let mut table = EnvMap::new();
    for line in section.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let var = cells[1].trim_matches('`').to_string();
        let flag = cells[2].trim_matches('`').to_string();
        let commands: BTreeSet<String> = if cells[3] == "every command" {
            every.clone()
        } else {
            cells[3].split(", ").map(str::to_string).collect()
        };
        let old = table.insert((var.clone(), flag), commands);
        assert!(old.is_none(), "README lists {var} twice");
    }
    table
}

#[test]
fn every_environment_variable_is_a_flag_and_the_readme_lists_each_one() {
    let mut paths: Vec<Vec<String>> = Vec::new();
    for c in subcommands(&[]) {
        let subs = subcommands(&[c.as_str()]);
        if subs.is_empty() {
            paths.push(vec![c]);
        } else {
            paths.extend(subs.into_iter().map(|s| vec![c.clone(), s]));
        }
    }
    assert!(paths.len() >= 12, "too few commands found: {paths:?}");
    let mut seen = EnvMap::new();
    for p in &paths {
        let p: Vec<&str> = p.iter().map(String::as_str).collect();
        env_flags(&p, &mut seen);
    }
    let every: BTreeSet<String> = paths.iter().map(|p| p.join(" ")).collect();
    let table = readme_table(&every);
    for ((var, flag), commands) in &seen {
        let listed = table.get(&(var.clone(), flag.clone())).unwrap_or_else(|| {
            panic!(
                "{var} ({flag}, read by {commands:?}) is not in the README's Configuration table"
            )
        });
        assert_eq!(
            listed, commands,
            "README: the commands that read {var} ({flag})"
        );
    }
    for key in table.keys() {
        assert!(
            seen.contains_key(key),
            "README's Configuration table lists {key:?}, which no command's --help shows"
        );
    }
    // The shared groups reach every command they should.
    let sandbox = &seen[&("FARM_SANDBOX".to_string(), "--sandbox".to_string())];
    for c in ["play", "run", "sprt", "worker", "proboj", "ladder serve"] {
        assert!(
            sandbox.contains(c),
            "farm {c} cannot choose the sandbox mode"
        );
    }
}

#[test]
fn a_bad_log_filter_is_refused_naming_the_flag() {
    let (code, _, err) = run(farm().args(["--log", "worker=loud", "verify", "/nonexistent"]));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--log") && err.contains("FARM_LOG") && err.contains("worker=loud"),
        "{err}"
    );
    let (_, _, err) = run(farm()
        .env("FARM_LOG", "info")
        .args(["verify", "/nonexistent"]));
    assert!(!err.contains("not a log filter"), "{err}");
    assert!(err.contains("/nonexistent"), "{err}");
}
