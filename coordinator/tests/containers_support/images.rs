//! Images for the containers test: deploy/Dockerfile.* parsed into stages, the Rust build stage
//! replaced by one that copies the `farm` binary cargo built (derived from the Dockerfile text),
//! and the build itself, reused while the Dockerfile, binary and context are unchanged.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use sha2::{Digest, Sha256};

use super::{podman, IMAGE_RECORD_DIR, RUNC};

/// One build stage of a Dockerfile: its FROM image, its name, its text (FROM line included).
#[derive(Debug, Clone)]
pub struct Stage {
    pub base: String,
    pub name: Option<String>,
    pub text: String,
}

/// (text before the first FROM, the stages in order).
pub fn parse_stages(dockerfile: &str) -> (String, Vec<Stage>) {
    let mut preamble = String::new();
    let mut stages: Vec<Stage> = Vec::new();
    let mut continued = false;
    for line in dockerfile.split_inclusive('\n') {
        let t = line.trim_start();
        let is_comment = t.starts_with('#');
        let starts_from =
            !continued && !is_comment && t.len() > 5 && t[..5].eq_ignore_ascii_case("FROM ");
        if starts_from {
            let words: Vec<&str> = t
                .split_whitespace()
                .skip(1)
                .filter(|w| !w.starts_with("--"))
                .collect();
            let base = words.first().expect("FROM without an image").to_string();
            let name = match words.get(1) {
                Some(a) if a.eq_ignore_ascii_case("AS") => Some(words[2].to_string()),
                _ => None,
            };
            stages.push(Stage {
                base,
                name,
                text: line.to_string(),
            });
        } else if let Some(s) = stages.last_mut() {
            s.text.push_str(line);
        } else {
            preamble.push_str(line);
        }
        if !is_comment && !t.trim().is_empty() {
            continued = t.trim_end().ends_with('\\');
        }
    }
    (preamble, stages)
}

/// The instructions of a stage as logical lines (continuations joined, comments dropped).
pub fn instructions(stage_text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for line in stage_text.lines() {
        let t = line.trim();
        if t.starts_with('#') || (t.is_empty() && cur.is_empty()) {
            continue;
        }
        if let Some(head) = t.strip_suffix('\\') {
            cur.push_str(head);
            cur.push(' ');
        } else {
            cur.push_str(t);
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// What the derived Dockerfile is made of.
#[derive(Debug)]
pub struct Derived {
    pub text: String,
    /// Name of the replaced stage (e.g. `build`).
    pub stage: String,
    /// Paths the later stages copy out of it (each gets the host-built `farm`).
    pub provided: Vec<String>,
    /// Context paths the kept stages COPY (for the image's cache key).
    pub context_sources: Vec<String>,
}

/// Replace the Rust build stage (`FROM rust:... AS NAME`) by a stage that provides the
/// host-built binary (from the additional build context `farmbin`) at every path the later
/// stages `COPY --from=NAME`; everything else stays byte for byte.
pub fn derive_dockerfile(text: &str) -> Derived {
    let (preamble, stages) = parse_stages(text);
    let rust: Vec<usize> = (0..stages.len())
        .filter(|&i| {
            let b = stages[i].base.trim_start_matches("docker.io/library/");
            b.starts_with("rust:") || b == "rust"
        })
        .collect();
    assert_eq!(
        rust.len(),
        1,
        "expected exactly one `FROM rust:... AS name` stage: {stages:?}"
    );
    let ri = rust[0];
    assert!(
        ri + 1 < stages.len(),
        "the Rust stage is the last one: nothing runs as written"
    );
    let name = stages[ri]
        .name
        .clone()
        .expect("the Rust build stage has a name (AS build)");
    let mut provided = Vec::new();
    let mut context_sources = Vec::new();
    for s in &stages[ri + 1..] {
        for ins in instructions(&s.text) {
            let words: Vec<&str> = ins.split_whitespace().collect();
            if !words
                .first()
                .is_some_and(|w| w.eq_ignore_ascii_case("COPY") || w.eq_ignore_ascii_case("ADD"))
            {
                continue;
            }
            let from = words.iter().find_map(|w| w.strip_prefix("--from="));
            let args: Vec<&str> = words[1..]
                .iter()
                .copied()
                .filter(|w| !w.starts_with("--"))
                .collect();
            assert!(
                args.len() >= 2,
                "COPY without source and destination: {ins}"
            );
            let srcs = &args[..args.len() - 1];
            match from {
                Some(f) if f == name || f == ri.to_string() => {
                    for src in srcs {
                        assert!(
                            src.ends_with("/farm"),
                            "the runtime copies {src} from the Rust stage; only the `farm` binary can be provided"
                        );
                        provided.push(src.to_string());
                    }
                }
                Some(_) => {}
                None => context_sources.extend(srcs.iter().map(|s| s.to_string())),
            }
        }
    }
    assert!(
        !provided.is_empty(),
        "no later stage copies anything from stage {name}"
    );
    let mut out = preamble;
    for (i, s) in stages.iter().enumerate() {
        if i == ri {
            out.push_str(&format!(
                "# Stand-in for `{}` (containers.rs): the host-built farm binary.\nFROM scratch AS {name}\n",
                stages[ri].base
            ));
            for p in &provided {
                out.push_str(&format!("COPY --from=farmbin farm {p}\n"));
            }
            out.push('\n');
        } else {
            out.push_str(&s.text);
        }
    }
    Derived {
        text: out,
        stage: name,
        provided,
        context_sources,
    }
}

fn hash_file(h: &mut Sha256, path: &Path) {
    let mut f = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
}

fn hash_tree(h: &mut Sha256, root: &Path, path: &Path) {
    let meta = std::fs::symlink_metadata(path).unwrap();
    h.update(
        path.strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .as_bytes(),
    );
    if meta.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for e in entries {
            hash_tree(h, root, &e);
        }
    } else if meta.is_file() {
        hash_file(h, path);
    }
}

/// Build (or reuse) the image of `deploy/Dockerfile.<what>` with the Rust stage replaced by
/// the host binary `farm`. The tag carries a hash of the derived Dockerfile, the binary and
/// the context files the runtime COPYs: an unchanged input reuses the image.
pub fn build_image(repo: &Path, what: &str, farm: &Path, work: &Path) -> String {
    let file = repo.join(format!("deploy/Dockerfile.{what}"));
    let text = std::fs::read_to_string(&file).unwrap();
    let derived = derive_dockerfile(&text);
    let mut h = Sha256::new();
    h.update(derived.text.as_bytes());
    hash_file(&mut h, farm);
    for src in &derived.context_sources {
        let p = repo.join(src);
        if p.exists() {
            hash_tree(&mut h, repo, &p);
        }
    }
    let ignore = repo.join(format!("deploy/Dockerfile.{what}.dockerignore"));
    if ignore.exists() {
        hash_file(&mut h, &ignore);
    }
    let digest = hex::encode(h.finalize());
    let tag = format!("localhost/matchfarm-test/{what}:{}", &digest[..16]);
    if podman(&["image", "exists", &tag]).0 == 0 {
        eprintln!("image {tag}: reused (Dockerfile, binary and context unchanged)");
        return tag;
    }
    let dir = work.join(format!("build-{what}"));
    let bin = dir.join("farmbin");
    std::fs::create_dir_all(&bin).unwrap();
    let target = bin.join("farm");
    let _ = std::fs::remove_file(&target);
    if std::fs::hard_link(farm, &target).is_err() {
        std::fs::copy(farm, &target).unwrap();
    }
    let df = dir.join(format!("Dockerfile.{what}"));
    std::fs::write(&df, &derived.text).unwrap();
    let log = dir.join("build.log");
    let t0 = Instant::now();
    let mut args: Vec<String> = vec![
        "build".into(),
        "--network".into(),
        "host".into(),
        "--layers".into(),
        "--build-context".into(),
        format!("farmbin={}", bin.display()),
        "-f".into(),
        df.display().to_string(),
        "-t".into(),
        tag.clone(),
    ];
    if ignore.exists() {
        args.push("--ignorefile".into());
        args.push(ignore.display().to_string());
    }
    args.push(repo.display().to_string());
    let out = Command::new("podman")
        .arg("--runtime")
        .arg(RUNC)
        .args(&args)
        .stdout(std::fs::File::create(&log).unwrap())
        .stderr(std::fs::File::create(log.with_extension("err")).unwrap())
        .status()
        .unwrap();
    let logs = format!(
        "{}{}",
        std::fs::read_to_string(&log).unwrap_or_default(),
        std::fs::read_to_string(log.with_extension("err")).unwrap_or_default()
    );
    assert!(
        out.success(),
        "podman build of deploy/Dockerfile.{what} (Rust stage `{}` replaced) failed:\n{}\n--- derived Dockerfile:\n{}",
        derived.stage,
        tail(&logs, 60),
        derived.text
    );
    eprintln!("image {tag}: built in {:.0?}", t0.elapsed());
    // Keep one image per Dockerfile: remove the one this test built last time, by its name.
    let record = Path::new(IMAGE_RECORD_DIR).join(what);
    if let Ok(old) = std::fs::read_to_string(&record) {
        let old = old.trim();
        if !old.is_empty() && old != tag {
            let _ = podman(&["rmi", old]);
        }
    }
    if std::fs::create_dir_all(IMAGE_RECORD_DIR).is_ok() {
        let _ = std::fs::write(&record, &tag);
    }
    let _ = std::fs::remove_file(&target);
    tag
}

pub fn tail(text: &str, lines: usize) -> String {
    let v: Vec<&str> = text.lines().collect();
    v[v.len().saturating_sub(lines)..].join("\n")
}
