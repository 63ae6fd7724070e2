//! Invariants of the source itself, checked on every crate of the workspace: sibling modules
//! never import each other both ways (no import circles: a module's dependencies can be read
//! from the top down), no library function returns a bare `String` as its error (typed errors
//! say what went wrong in a way a caller can match), and no source reads a `FARM_*` variable
//! by hand (configuration comes only through clap; see tests/configuration.rs).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use common::repo;

const CRATES: &[&str] = &[
    "shared",
    "games",
    "sandbox",
    "broker",
    "worker",
    "ladder",
    "coordinator",
];

/// Every `.rs` file below `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// Every crate's `src` folder with its source files, crate by crate.
fn crate_sources() -> Vec<(&'static str, PathBuf, Vec<PathBuf>)> {
    CRATES
        .iter()
        .map(|krate| {
            let src = repo().join(krate).join("src");
            let mut files = Vec::new();
            sources(&src, &mut files);
            (*krate, src, files)
        })
        .collect()
}

/// The module path of a source file of a crate's `src` (lib.rs, main.rs: the root).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel
        .iter()
        .map(|c| c.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The text without comments (line and block) and string literals, so paths in docs and
/// messages are not taken for imports.
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            i += 2;
            while i < b.len() && !b[i..].starts_with(b"*/") {
                i += 1;
            }
            i += 2;
        } else if b[i] == b'r'
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
            && b[i + 1..].iter().take_while(|&&c| c == b'#').count() + i + 1 < b.len()
            && b[i + 1 + b[i + 1..].iter().take_while(|&&c| c == b'#').count()] == b'"'
        {
            // a raw string r"..." / r#"..."#: skip to its closing quote and hashes
            let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            let body = i + 2 + hashes;
            i = b[body..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(b.len(), |p| body + p + close.len());
            out.push_str("\"\"");
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i] == b'\'' && i + 2 < b.len() && (b[i + 2] == b'\'' || b[i + 1] == b'\\') {
            // a char literal ('x', '\n', '\''): skip it (lifetimes have no closing quote)
            let end = b[i + 1..]
                .iter()
                .skip(1)
                .position(|&c| c == b'\'')
                .map_or(b.len(), |p| i + 2 + p);
            i = end + 1;
        } else {
            let ch = text[i..].chars().next().unwrap();
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// The paths a file names through `crate::` or `super::` (grouped imports expanded), as module
/// paths of the crate (segments after the root; `super` resolved from `module`).
fn referenced_paths(code: &str, module: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < bytes.len() {
        let at_start = i == 0 || !word(bytes[i - 1]) && bytes[i - 1] != b':';
        let (base, rest) = if at_start && code[i..].starts_with("crate::") {
            (Vec::new(), i + 7)
        } else if at_start && code[i..].starts_with("super::") {
            // `super` is the parent of the file's module (for a mod.rs as for a plain file)
            let mut base = module.to_vec();
            let mut j = i;
            while code[j..].starts_with("super::") {
                base.pop();
                j += 7;
            }
            (base, j)
        } else {
            i += 1;
            continue;
        };
        expand(code, rest, base, &mut out);
        i = rest;
    }
    out
}

/// Expand the path that starts at `at` (after `prefix`): `a::b::C`, `a::{b, c::D}`, `{a, b}`.
fn expand(code: &str, at: usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let bytes = code.as_bytes();
    let mut path = prefix;
    let mut i = at;
    loop {
        let start = i;
        while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
            i += 1;
        }
        if i > start {
            path.push(code[start..i].to_string());
        }
        if i == start && code[i..].starts_with('{') {
            return group(code, i + 1, &path, out);
        }
        if code[i..].starts_with("::") {
            i += 2;
            continue;
        }
        out.push(path);
        return;
    }
}

/// The items of a `{...}` group whose first item starts at `from`, split at top-level commas.
fn group(code: &str, from: usize, path: &[String], out: &mut Vec<Vec<String>>) {
    let bytes = code.as_bytes();
    let mut depth = 0;
    let mut item_start = from;
    for (j, &c) in bytes.iter().enumerate().skip(from) {
        match c {
            b'{' => depth += 1,
            b'}' if depth == 0 => return expand_item(code, item_start, j, path, out),
            b'}' => depth -= 1,
            b',' if depth == 0 => {
                expand_item(code, item_start, j, path, out);
                item_start = j + 1;
            }
            _ => {}
        }
    }
}

fn expand_item(code: &str, from: usize, to: usize, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let item = code[from..to].trim();
    if item.is_empty() || item == "self" {
        out.push(prefix.to_vec());
        return;
    }
    let offset = from + code[from..to].find(item).unwrap_or(0);
    expand(code, offset, prefix.to_vec(), out);
}

#[test]
fn sibling_modules_never_import_each_other_both_ways() {
    let mut circles = Vec::new();
    for (krate, src, files) in crate_sources() {
        let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(&src, f)).collect();
        // edges between siblings: (parent, from child, to child)
        let mut edges: BTreeMap<Vec<String>, BTreeSet<(String, String)>> = BTreeMap::new();
        for f in &files {
            let module = module_of(&src, f);
            let text = std::fs::read_to_string(f).unwrap();
            for path in referenced_paths(&code_only(&text), &module) {
                // the longest prefix of the path that is a module of the crate
                let target = (0..=path.len())
                    .rev()
                    .map(|n| path[..n].to_vec())
                    .find(|p| modules.contains(p))
                    .unwrap_or_default();
                let common = module
                    .iter()
                    .zip(&target)
                    .take_while(|(a, b)| a == b)
                    .count();
                if common < module.len() && common < target.len() {
                    edges
                        .entry(module[..common].to_vec())
                        .or_default()
                        .insert((module[common].clone(), target[common].clone()));
                }
            }
        }
        for (parent, pairs) in &edges {
            for (a, b) in pairs {
                if a < b && pairs.contains(&(b.clone(), a.clone())) {
                    let at = if parent.is_empty() {
                        String::new()
                    } else {
                        format!("{}::", parent.join("::"))
                    };
                    circles.push(format!("{krate}: {at}{a} <-> {at}{b}"));
                }
            }
        }
        // longer circles among siblings
        for (parent, pairs) in &edges {
            let mut graph: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
            for (a, b) in pairs {
                graph.entry(a).or_default().push(b);
            }
            if let Some(cycle) = find_cycle(&graph) {
                if cycle.len() > 2 {
                    circles.push(format!("{krate}: under {parent:?}: {}", cycle.join(" -> ")));
                }
            }
        }
    }
    assert!(
        circles.is_empty(),
        "import circles:\n{}",
        circles.join("\n")
    );
}

/// A cycle of the directed graph, if there is one (as the nodes on it, in order).
fn find_cycle<'a>(graph: &BTreeMap<&'a str, Vec<&'a str>>) -> Option<Vec<&'a str>> {
    fn visit<'a>(
        n: &'a str,
        graph: &BTreeMap<&'a str, Vec<&'a str>>,
        state: &mut BTreeMap<&'a str, u8>,
        stack: &mut Vec<&'a str>,
    ) -> Option<Vec<&'a str>> {
        state.insert(n, 1);
        stack.push(n);
        for &m in graph.get(n).into_iter().flatten() {
            match state.get(m).copied().unwrap_or(0) {
                1 => {
                    let from = stack.iter().position(|&s| s == m).unwrap();
                    return Some(stack[from..].to_vec());
                }
                0 => {
                    if let Some(c) = visit(m, graph, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(n, 2);
        None
    }
    let mut state = BTreeMap::new();
    for &n in graph.keys() {
        if state.get(n).copied().unwrap_or(0) == 0 {
            if let Some(c) = visit(n, graph, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn the_import_scan_sees_grouped_and_inline_paths() {
    let code = code_only(
        "use crate::{a::X, b::{c::Y, self}};\n// crate::d::Z in a comment\nfn f() { crate::e::g(\"crate::h\"); super::super::k::L; }\nconst S: &str = r#\"crate::z \"q\" \"#; fn g() { crate::y::W }",
    );
    let mut got = referenced_paths(&code, &["m".into(), "n".into()]);
    got.sort();
    let want: Vec<Vec<String>> = vec![
        vec!["a", "X"],
        vec!["b"],
        vec!["b", "c", "Y"],
        vec!["e", "g"],
        vec!["k", "L"],
        vec!["y", "W"],
    ]
    .into_iter()
    .map(|v| v.into_iter().map(String::from).collect())
    .collect();
    assert_eq!(got, want);
}

#[test]
fn no_library_function_returns_a_bare_string_error() {
    let mut found = Vec::new();
    for (_, _, files) in crate_sources() {
        for f in files {
            if f.file_name().is_some_and(|n| n == "main.rs") {
                continue;
            }
            let code = code_only(&std::fs::read_to_string(&f).unwrap());
            let flat: String = code.split_whitespace().collect::<Vec<_>>().join(" ");
            let mut at = 0;
            while let Some(i) = flat[at..].find("-> Result<") {
                let start = at + i + "-> Result<".len();
                let mut depth = 1;
                let mut end = start;
                for (k, c) in flat[start..].char_indices() {
                    match c {
                        '<' => depth += 1,
                        '>' => depth -= 1,
                        _ => {}
                    }
                    if depth == 0 {
                        end = start + k;
                        break;
                    }
                }
                let args = &flat[start..end];
                if args.ends_with(", String") || args.ends_with(",String") {
                    found.push(format!("{}: -> Result<{args}>", f.display()));
                }
                at = end.max(start);
            }
        }
    }
    assert!(
        found.is_empty(),
        "bare String errors:\n{}",
        found.join("\n")
    );
}

/// `FARM_*` reads that do not go through clap: `file:line` each.
#[test]
fn no_source_reads_a_farm_variable_outside_clap() {
    let mut found = Vec::new();
    for (_, _, files) in crate_sources() {
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            for (n, line) in text.lines().enumerate() {
                let l = line.replace(' ', "");
                if ["var(\"FARM_", "var_os(\"FARM_", "from_env(\"FARM_"]
                    .iter()
                    .any(|p| l.contains(p))
                {
                    found.push(format!("{}:{}: {}", f.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(found.is_empty(), "read outside clap:\n{}", found.join("\n"));
}

/// clap belongs to the CLI: only `coordinator/src/cmd/` and `main.rs` may name it, so no clap
/// type reaches the engine or a library (they take plain settings); and nothing below the CLI
/// calls into it (`cmd::`).
#[test]
fn clap_is_used_only_by_the_command_layer() {
    let mut found = Vec::new();
    for (krate, src, files) in crate_sources() {
        for f in files {
            let module = module_of(&src, &f);
            let cli = krate == "coordinator"
                && (module.first().is_some_and(|m| m == "cmd")
                    || f.file_name().is_some_and(|n| n == "main.rs"));
            if cli {
                continue;
            }
            let code = code_only(&std::fs::read_to_string(&f).unwrap());
            if code.contains("clap") {
                found.push(format!("{}: names clap", f.display()));
            }
            if krate == "coordinator" && code.contains("cmd::") {
                found.push(format!("{}: calls the CLI layer (cmd::)", f.display()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "clap outside the CLI layer:\n{}",
        found.join("\n")
    );
}

/// The tournament engine is game-blind: outside `run::game` (one module per game and the
/// registry), nothing of the engine (`run`, `dispatch`, the engine loop `sink`, `transport`,
/// `metrics`, and the commands `farm run`, `farm sprt`, `farm report`) names a game: no
/// `GameJob::`/`Accepted::` variant, no game's module of the `games` crate or of `run::game`. A
/// new game is added in its own module and the registry, and the engine gives it everything
/// (docs/adding-a-game.md).
#[test]
fn the_tournament_engine_names_no_game() {
    let src = repo().join("coordinator/src");
    let mut files = Vec::new();
    for dir in ["run", "transport"] {
        sources(&src.join(dir), &mut files);
    }
    for f in [
        "dispatch.rs",
        "sink.rs",
        "metrics.rs",
        "cmd/run.rs",
        "cmd/sprt.rs",
        "cmd/report.rs",
    ] {
        files.push(src.join(f));
    }
    let game_modules = ["bomberman", "qianwang", "nim", "lowest", "proboj"];
    let mut found = Vec::new();
    for f in files
        .iter()
        .filter(|f| !f.starts_with(src.join("run/game")))
    {
        let text = std::fs::read_to_string(f).unwrap();
        let code = code_only(&text);
        let mut names: Vec<String> = ["GameJob::", "Accepted::", "bm::", "qw::"]
            .iter()
            .filter(|t| code.contains(*t))
            .map(|t| t.to_string())
            .collect();
        names.extend(
            game_modules
                .iter()
                .flat_map(|g| [format!("games::{g}"), format!("game::{g}")])
                .filter(|t| code.contains(t.as_str())),
        );
        // A game looked up by its name (`Game::by_name("nim")`) is named too.
        names.extend(
            game_modules
                .iter()
                .map(|g| format!("\"{g}\""))
                .filter(|t| text.contains(t.as_str())),
        );
        if !names.is_empty() {
            found.push(format!("{}: {}", f.display(), names.join(", ")));
        }
    }
    assert!(
        found.is_empty(),
        "the engine names a game outside run::game:\n{}",
        found.join("\n")
    );
}

/// A game is registered in the coordinator by one line: of the lines of `run/game/mod.rs` that
/// name a game's module, there are exactly two, its `pub mod` and its entry in `GAMES`, and
/// every module of `run/game/` is in `GAMES` (docs/adding-a-game.md). Everything else the
/// engine needs of a game (`--game`'s value and help, the sizes, the clock check, the job, the
/// accept, the viewer) is the game's `TournamentGame` implementation in its own module.
#[test]
fn a_game_is_registered_in_the_engine_by_one_line() {
    let dir = repo().join("coordinator/src/run/game");
    let registry = std::fs::read_to_string(dir.join("mod.rs")).unwrap();
    let code = code_only(&registry);
    let mut modules: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().ok()?;
            let stem = name.strip_suffix(".rs")?;
            (stem != "mod").then(|| stem.to_string())
        })
        .collect();
    modules.sort();
    assert!(modules.len() >= 5, "game modules: {modules:?}");
    let games_list = code
        .split("pub static GAMES")
        .nth(1)
        .and_then(|rest| rest.split("];").next())
        .expect("run/game/mod.rs declares `pub static GAMES: &[Game] = &[...];`");
    let mut wrong = Vec::new();
    for m in &modules {
        let naming: Vec<&str> = code
            .lines()
            .map(str::trim)
            .filter(|l| names_word(l, m))
            .collect();
        let registered = games_list.contains(&format!("{m}::"));
        let expected = [format!("pub mod {m};")];
        let other: Vec<&&str> = naming
            .iter()
            .filter(|l| !expected.contains(&l.to_string()) && !games_list.contains(*l))
            .collect();
        if !registered || naming.len() != 2 || !other.is_empty() {
            wrong.push(format!(
                "{m}: in GAMES: {registered}; lines naming it: {naming:?}"
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "a game is named in run/game/mod.rs beyond its `pub mod` and its GAMES line:\n{}",
        wrong.join("\n")
    );
}

/// A game is registered in `shared`, `games` and `worker` by one line in all three: its line in
/// `shared::for_each_game!` (`shared/src/msg.rs`), the list each crate's `games!` registry is
/// written from (`shared::for_each_game!(games)` in `games/src/lib.rs` and
/// `worker/src/job/mod.rs`: the wire's `GameJob` and `GameKind`, the rules' `Accepted`,
/// `version_of` and accept, the worker's play). Of the code outside the games' own modules (the
/// registries, the wire codec, the accept and job builder, the worker's job runner, serve loop
/// and metrics), the only line that names a game is its line in that list
/// (docs/adding-a-game.md).
#[test]
fn every_crate_registers_a_game_by_one_line() {
    let root = repo();
    let games = [
        ("Bomberman", "bomberman"),
        ("Qianwang", "qianwang"),
        ("Proboj", "proboj"),
        ("Nim", "nim"),
        ("Lowest", "lowest"),
    ];
    let list = "shared/src/msg.rs";
    let registries = ["games/src/lib.rs", "worker/src/job/mod.rs"];
    let mut files: Vec<PathBuf> = [
        "shared/src/codec.rs",
        "games/src/accept.rs",
        "games/src/job.rs",
        "games/src/seated.rs",
        "worker/src/metrics.rs",
        list,
    ]
    .iter()
    .chain(&registries)
    .map(|f| root.join(f))
    .collect();
    sources(&root.join("worker/src/serve"), &mut files);
    let mut wrong = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        // Unit tests may build any game's job.
        let code = code_only(text.split("#[cfg(test)]").next().unwrap_or(""));
        let is_list = f.ends_with(list);
        let listed = code
            .split("macro_rules! for_each_game {")
            .nth(1)
            .and_then(|rest| rest.split("\n}").next())
            .unwrap_or("");
        if is_list && listed.is_empty() {
            wrong.push(format!("{}: no `for_each_game!` list", f.display()));
        }
        if registries.iter().any(|r| f.ends_with(r))
            && !code.contains("shared::for_each_game!(games);")
        {
            wrong.push(format!(
                "{}: no `shared::for_each_game!(games)` registry",
                f.display()
            ));
        }
        for (variant, module) in games {
            let naming: Vec<&str> = code
                .lines()
                .filter(|l| names_word(l, variant) || names_word(l, module))
                .collect();
            let allowed = is_list && naming.len() == 1 && listed.lines().any(|l| l == naming[0]);
            if !naming.is_empty() && !allowed || is_list && naming.len() != 1 {
                wrong.push(format!(
                    "{}: {module}: {:?}",
                    f.display(),
                    naming.iter().map(|l| l.trim()).collect::<Vec<_>>()
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "a game is named outside its modules and its one line in `shared::for_each_game!`:\n{}",
        wrong.join("\n")
    );
}

/// `line` names `word` as a whole word (not inside a longer identifier).
fn names_word(line: &str, word: &str) -> bool {
    line.match_indices(word).any(|(i, _)| {
        let before = line[..i].chars().next_back();
        let after = line[i + word.len()..].chars().next();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
            && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}
