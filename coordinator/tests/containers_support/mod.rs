//! Podman helpers for `containers.rs`: images built from deploy/Dockerfile.* (only the Rust
//! build stage replaced, derived from the Dockerfile text), the compose worker/coordinator
//! services and the k8s worker Deployment translated to `podman run` flags, and a guard that
//! removes every container and volume a test started (by exact name, never by pattern).
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;
use sha2::{Digest, Sha256};

/// podman's default crun fails on this kind of host's hybrid cgroups (CONTAINERS-NOTES.md).
pub const RUNC: &str = "/usr/sbin/runc";
pub const BASE_IMAGE: &str = "docker.io/library/debian:bookworm-slim";
/// Where the test keeps the exact names of the images it built (to replace them, by name).
pub const IMAGE_RECORD_DIR: &str = "/var/cache/matchfarm-ci/containers-test";

/// `podman --runtime runc ARGS...`: (exit code, stdout, stderr).
pub fn podman(args: &[&str]) -> (i32, String, String) {
    let out = Command::new("podman")
        .arg("--runtime")
        .arg(RUNC)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("podman {args:?}: {e}"));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

/// Like `podman`, panicking with its output when it fails.
pub fn podman_ok(args: &[&str]) -> String {
    let (code, out, err) = podman(args);
    assert_eq!(code, 0, "podman {args:?} failed ({code}):\n{out}\n{err}");
    out
}

/// Why this machine cannot run the test (None: it can).
pub fn missing_prerequisite() -> Option<String> {
    match Command::new("podman").arg("--version").output() {
        Ok(o) if o.status.success() => {}
        _ => return Some("podman is not installed (bash tools/install-containers.sh)".into()),
    }
    if !Path::new(RUNC).exists() {
        return Some(format!(
            "{RUNC} is missing (bash tools/install-containers.sh)"
        ));
    }
    if podman(&["image", "exists", BASE_IMAGE]).0 != 0 {
        return Some(format!(
            "no {BASE_IMAGE} image (bash tools/install-containers.sh imports the stand-in)"
        ));
    }
    None
}

// ---------------------------------------------------------------------------------------------
// Dockerfiles

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

// ---------------------------------------------------------------------------------------------
// Containers

/// Removes, when dropped, every container and volume registered with it (by exact name).
#[derive(Default)]
pub struct Guard {
    pub containers: std::sync::Mutex<Vec<String>>,
    pub volumes: std::sync::Mutex<Vec<String>>,
}

impl Guard {
    pub fn container(&self, name: &str) {
        self.containers.lock().unwrap().push(name.to_string());
    }

    /// A fresh podman volume registered for removal; its name.
    pub fn volume(&self, name: &str) -> String {
        self.volumes.lock().unwrap().push(name.to_string());
        podman_ok(&["volume", "create", name]);
        name.to_string()
    }

    pub fn remove_containers(&self) {
        let names: Vec<String> = self.containers.lock().unwrap().drain(..).collect();
        for n in names.iter().rev() {
            let _ = podman(&["rm", "-f", "-t", "0", n]);
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.remove_containers();
        let vols: Vec<String> = self.volumes.lock().unwrap().drain(..).collect();
        for v in vols {
            let _ = podman(&["volume", "rm", "-f", &v]);
        }
    }
}

/// A volume's folder on the host.
pub fn volume_path(name: &str) -> PathBuf {
    PathBuf::from(
        podman_ok(&["volume", "inspect", "--format", "{{.Mountpoint}}", name])
            .trim()
            .to_string(),
    )
}

/// What the test needs to turn a service description into `podman run` flags on this host.
pub struct Host<'a> {
    /// `--network host` shares one port space: every metrics port is moved to a free one.
    pub free_port: &'a dyn Fn() -> u16,
    /// The Redis database the test uses instead of the file's (`/0`, shared).
    pub redis_db: u32,
    /// compose volume name -> podman volume name.
    pub volumes: BTreeMap<String, String>,
    /// compose secret name / k8s Secret name -> host file or folder.
    pub secrets: BTreeMap<String, PathBuf>,
    /// k8s secretKeyRef (name, key) -> value.
    pub secret_values: BTreeMap<(String, String), String>,
    /// k8s hostPath -> host folder.
    pub host_paths: BTreeMap<String, PathBuf>,
    /// Extra environment set for every container (test-only, e.g. FARM_TURN_MS).
    pub extra_env: Vec<(String, String)>,
    /// Repository root (compose bind mounts are relative to deploy/).
    pub repo: PathBuf,
}

/// A container as the test starts it.
#[derive(Debug, Clone)]
pub struct RunSpec {
    pub flags: Vec<String>,
    /// Arguments after the image (compose `command:`).
    pub command: Vec<String>,
    /// The metrics port (FARM_METRICS_ADDR after the move), if any.
    pub metrics_port: Option<u16>,
    /// The port the file gave (for healthcheck commands that name it).
    pub file_metrics_port: Option<u16>,
    /// compose `healthcheck.test` (CMD form, without "CMD").
    pub healthcheck: Option<Vec<String>>,
    /// k8s readinessProbe httpGet path.
    pub readiness_path: Option<String>,
    pub replicas: usize,
    /// (mount point, options) of each tmpfs, as passed.
    pub tmpfs: Vec<(String, String)>,
}

impl RunSpec {
    /// `podman run -d --name NAME ... IMAGE COMMAND` for this spec.
    pub fn start(&self, guard: &Guard, name: &str, image: &str, extra: &[String]) {
        guard.container(name);
        let mut args: Vec<String> = vec![
            "run".into(),
            "-d".into(),
            "--name".into(),
            name.into(),
            "--hostname".into(),
            name.into(),
            "--network".into(),
            "host".into(),
        ];
        args.extend(self.flags.iter().cloned());
        args.extend(extra.iter().cloned());
        args.push(image.into());
        args.extend(self.command.iter().cloned());
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        podman_ok(&refs);
    }
}

/// Docker's handling of a compose `tmpfs:` entry: `noexec,nosuid,nodev` are added unless the
/// entry says `exec`/`suid`/`dev` (the later option wins, as in Docker's MergeTmpfsOptions).
pub fn docker_tmpfs(entry: &str) -> (String, String) {
    let (path, opts) = entry.split_once(':').unwrap_or((entry, ""));
    let user: Vec<&str> = opts.split(',').filter(|o| !o.is_empty()).collect();
    let mut merged: Vec<String> = vec!["rw".into()];
    for (def, opposite) in [("noexec", "exec"), ("nosuid", "suid"), ("nodev", "dev")] {
        let last = user.iter().rev().find(|o| **o == def || **o == opposite);
        merged.push(last.map(|s| s.to_string()).unwrap_or(def.to_string()));
    }
    for o in user {
        if !["rw", "exec", "noexec", "suid", "nosuid", "dev", "nodev"].contains(&o) {
            merged.push(o.to_string());
        }
    }
    (path.to_string(), merged.join(","))
}

/// compose `5m` / `300s` / `1m30s` in seconds.
pub fn duration_secs(s: &str) -> u64 {
    let mut total = 0u64;
    let mut num = String::new();
    for c in s.chars() {
        if c.is_ascii_digit() {
            num.push(c);
        } else {
            let n: u64 = num.parse().unwrap_or_else(|_| panic!("duration {s}"));
            num.clear();
            total += n * match c {
                'h' => 3600,
                'm' => 60,
                's' => 1,
                _ => panic!("duration {s}"),
            };
        }
    }
    if !num.is_empty() {
        total += num.parse::<u64>().unwrap();
    }
    total
}

/// `4Gi` / `1Gi` / `512Mi` (k8s) or `4g` (compose) as podman's `4g` form.
pub fn memory(s: &str) -> String {
    for (suf, to) in [
        ("Gi", "g"),
        ("Mi", "m"),
        ("Ki", "k"),
        ("G", "g"),
        ("M", "m"),
    ] {
        if let Some(n) = s.strip_suffix(suf) {
            return format!("{n}{to}");
        }
    }
    s.to_lowercase()
}

fn redis_for_test(url: &str, db: u32) -> (String, String) {
    let rest = url
        .strip_prefix("redis://")
        .unwrap_or_else(|| panic!("FARM_REDIS {url}"));
    let hostport = rest.split('/').next().unwrap();
    let host = hostport
        .rsplit_once(':')
        .map(|(h, _)| h)
        .unwrap_or(hostport);
    assert!(
        hostport.ends_with(":6379"),
        "FARM_REDIS {url}: the test's Redis is on 6379"
    );
    (format!("redis://{hostport}/{db}"), host.to_string())
}

fn amqp_host(url: &str) -> String {
    let rest = url.split_once("://").map(|(_, r)| r).unwrap_or(url);
    let hostport = rest.rsplit_once('@').map(|(_, h)| h).unwrap_or(rest);
    let hostport = hostport.split('/').next().unwrap();
    assert!(
        hostport.ends_with(":5672"),
        "FARM_BROKER {url}: the test's RabbitMQ is on 5672"
    );
    hostport.rsplit_once(':').unwrap().0.to_string()
}

/// The environment a container gets, with what must change on this host changed: service
/// host names resolve to 127.0.0.1 (`--add-host`), Redis uses the test's database, metrics
/// ports are moved to free ones (one port space with `--network host`).
fn env_flags(env: &[(String, String)], host: &Host, spec: &mut RunSpec) {
    let mut hosts: Vec<String> = Vec::new();
    for (k, v) in env.iter().chain(host.extra_env.iter()) {
        let v = match k.as_str() {
            "FARM_REDIS" => {
                let (url, h) = redis_for_test(v, host.redis_db);
                hosts.push(h);
                url
            }
            "FARM_BROKER" => {
                hosts.push(amqp_host(v));
                v.clone()
            }
            "FARM_METRICS_ADDR" => {
                let (ip, port) = v.rsplit_once(':').expect("HOST:PORT");
                spec.file_metrics_port = Some(port.parse().unwrap());
                let p = (host.free_port)();
                spec.metrics_port = Some(p);
                format!("{ip}:{p}")
            }
            _ => v.clone(),
        };
        spec.flags.push("-e".into());
        spec.flags.push(format!("{k}={v}"));
    }
    hosts.sort();
    hosts.dedup();
    for h in hosts {
        if h != "127.0.0.1" && h != "localhost" {
            spec.flags.push("--add-host".into());
            spec.flags.push(format!("{h}:127.0.0.1"));
        }
    }
}

fn words(v: &Value) -> Vec<String> {
    match v {
        Value::Array(a) => a
            .iter()
            .map(|x| x.as_str().expect("string").to_string())
            .collect(),
        Value::String(s) => s.split_whitespace().map(str::to_string).collect(),
        Value::Null => Vec::new(),
        other => panic!("unexpected command form {other}"),
    }
}

/// A compose service as `podman run` flags, key by key; a key the test does not know how to
/// reproduce fails the test (so it follows the file).
pub fn compose_service(name: &str, svc: &Value, host: &Host) -> RunSpec {
    let mut spec = RunSpec {
        flags: Vec::new(),
        command: Vec::new(),
        metrics_port: None,
        file_metrics_port: None,
        healthcheck: None,
        readiness_path: None,
        replicas: 1,
        tmpfs: Vec::new(),
    };
    let mut env: Vec<(String, String)> = Vec::new();
    for (k, v) in svc.as_object().expect("service is a mapping") {
        match k.as_str() {
            // The image is the one the test built from `build.dockerfile`; checked by the caller.
            "build" | "image" => {}
            // Every service it depends on already runs on this host (RabbitMQ, Redis).
            "depends_on" => {}
            // `--network host`: the container's ports are the host's (checked by the caller).
            "ports" => {}
            "environment" => {
                for (ek, ev) in v.as_object().expect("environment as a mapping") {
                    env.push((
                        ek.clone(),
                        ev.as_str().map(str::to_string).unwrap_or(ev.to_string()),
                    ));
                }
            }
            "secrets" => {
                for s in v.as_array().unwrap() {
                    let s = s.as_str().expect("short secret syntax");
                    let file = host.secrets.get(s).unwrap_or_else(|| panic!("secret {s}"));
                    spec.flags.push("-v".into());
                    spec.flags
                        .push(format!("{}:/run/secrets/{s}:ro", file.display()));
                }
            }
            "privileged" => {
                if v == true {
                    spec.flags.push("--privileged".into());
                }
            }
            "cgroup" => spec
                .flags
                .push(format!("--cgroupns={}", v.as_str().unwrap())),
            "tmpfs" => {
                let entries = match v {
                    Value::String(s) => vec![s.clone()],
                    Value::Array(a) => a.iter().map(|x| x.as_str().unwrap().to_string()).collect(),
                    other => panic!("tmpfs {other}"),
                };
                for e in entries {
                    let (path, opts) = docker_tmpfs(&e);
                    spec.flags.push("--tmpfs".into());
                    spec.flags.push(format!("{path}:{opts}"));
                    spec.tmpfs.push((path, opts));
                }
            }
            "volumes" => {
                for m in v.as_array().unwrap() {
                    let m = m.as_str().expect("short volume syntax");
                    let parts: Vec<&str> = m.split(':').collect();
                    let (src, rest) = (parts[0], parts[1..].join(":"));
                    let src = if src.starts_with('.') || src.starts_with('/') {
                        host.repo.join("deploy").join(src).display().to_string()
                    } else {
                        host.volumes
                            .get(src)
                            .unwrap_or_else(|| panic!("volume {src} of {name}"))
                            .clone()
                    };
                    spec.flags.push("-v".into());
                    spec.flags.push(format!("{src}:{rest}"));
                }
            }
            "stop_grace_period" => {
                spec.flags.push("--stop-timeout".into());
                spec.flags
                    .push(duration_secs(v.as_str().unwrap()).to_string());
            }
            "restart" => {
                spec.flags.push("--restart".into());
                spec.flags.push(v.as_str().unwrap().to_string());
            }
            "healthcheck" => {
                let t = words(&v["test"]);
                assert_eq!(
                    t.first().map(String::as_str),
                    Some("CMD"),
                    "healthcheck of {name}: CMD form"
                );
                spec.healthcheck = Some(t[1..].to_vec());
            }
            "entrypoint" => {
                spec.flags.push("--entrypoint".into());
                spec.flags.push(serde_json::to_string(&words(v)).unwrap());
            }
            "command" => spec.command = words(v),
            "deploy" => {
                for (dk, dv) in v.as_object().unwrap() {
                    match dk.as_str() {
                        "replicas" => spec.replicas = dv.as_u64().unwrap() as usize,
                        "resources" => {
                            for (rk, rv) in dv.as_object().unwrap() {
                                assert_eq!(rk, "limits", "deploy.resources.{rk} of {name}");
                                for (lk, lv) in rv.as_object().unwrap() {
                                    let lv =
                                        lv.as_str().map(str::to_string).unwrap_or(lv.to_string());
                                    match lk.as_str() {
                                        "cpus" => spec.flags.push(format!("--cpus={lv}")),
                                        "memory" => {
                                            spec.flags.push(format!("--memory={}", memory(&lv)))
                                        }
                                        other => {
                                            panic!("deploy.resources.limits.{other} of {name}")
                                        }
                                    }
                                }
                            }
                        }
                        other => {
                            panic!("compose deploy.{other} of {name}: not translated by the test")
                        }
                    }
                }
            }
            other => panic!(
                "compose key `{other}` of service {name}: the test does not know how to run it"
            ),
        }
    }
    env_flags(&env, host, &mut spec);
    spec
}

/// The first container of a k8s Deployment/Job pod template as `podman run` flags.
pub fn k8s_pod(doc: &Value, host: &Host) -> RunSpec {
    let pod = &doc["spec"]["template"]["spec"];
    let mut spec = RunSpec {
        flags: Vec::new(),
        command: Vec::new(),
        metrics_port: None,
        file_metrics_port: None,
        healthcheck: None,
        readiness_path: None,
        replicas: doc["spec"]["replicas"].as_u64().unwrap_or(1) as usize,
        tmpfs: Vec::new(),
    };
    let volumes: BTreeMap<String, Value> = pod["volumes"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|v| (v["name"].as_str().unwrap().to_string(), v.clone()))
                .collect()
        })
        .unwrap_or_default();
    for (k, v) in pod.as_object().unwrap() {
        match k.as_str() {
            "containers" | "volumes" => {}
            "terminationGracePeriodSeconds" => {
                spec.flags.push("--stop-timeout".into());
                spec.flags.push(v.as_u64().unwrap().to_string());
            }
            // No service account, no service links: nothing to do in a plain container.
            "automountServiceAccountToken" | "enableServiceLinks" => {}
            "initContainers" => panic!("initContainers: not translated by the test yet"),
            other => panic!("pod spec `{other}`: not translated by the test"),
        }
    }
    let containers = pod["containers"].as_array().unwrap();
    assert_eq!(containers.len(), 1, "one container per worker pod");
    let c = &containers[0];
    let mut env: Vec<(String, String)> = Vec::new();
    for (k, v) in c.as_object().unwrap() {
        match k.as_str() {
            "name" | "image" | "imagePullPolicy" | "ports" => {}
            "env" => {
                for e in v.as_array().unwrap() {
                    let n = e["name"].as_str().unwrap().to_string();
                    let val = if let Some(s) = e["value"].as_str() {
                        s.to_string()
                    } else {
                        let r = &e["valueFrom"]["secretKeyRef"];
                        let key = (
                            r["name"].as_str().expect("secretKeyRef.name").to_string(),
                            r["key"].as_str().unwrap().to_string(),
                        );
                        host.secret_values
                            .get(&key)
                            .unwrap_or_else(|| panic!("secret value {key:?}"))
                            .clone()
                    };
                    env.push((n, val));
                }
            }
            "readinessProbe" | "livenessProbe" | "startupProbe" => {
                if k == "readinessProbe" {
                    spec.readiness_path = Some(
                        v["httpGet"]["path"]
                            .as_str()
                            .expect("httpGet probe")
                            .to_string(),
                    );
                }
            }
            "command" => {
                spec.flags.push("--entrypoint".into());
                spec.flags.push(serde_json::to_string(&words(v)).unwrap());
            }
            "args" => spec.command = words(v),
            "resources" => {
                let l = &v["limits"];
                if let Some(cpu) = l["cpu"].as_str() {
                    spec.flags.push(format!("--cpus={cpu}"));
                }
                if let Some(m) = l["memory"].as_str() {
                    spec.flags.push(format!("--memory={}", memory(m)));
                }
            }
            "securityContext" => {
                for (sk, sv) in v.as_object().unwrap() {
                    match sk.as_str() {
                        "privileged" if sv == true => spec.flags.push("--privileged".into()),
                        "privileged" => {}
                        "runAsUser" => spec.flags.push(format!(
                            "--user={}:{}",
                            sv,
                            v["runAsGroup"].as_u64().unwrap_or(0)
                        )),
                        "runAsGroup" | "allowPrivilegeEscalation" => {}
                        "readOnlyRootFilesystem" if sv == true => {
                            // Only the pod's volumes are writable (no podman-added tmpfs).
                            spec.flags.push("--read-only".into());
                            spec.flags.push("--read-only-tmpfs=false".into());
                        }
                        "readOnlyRootFilesystem" => {}
                        other => panic!("securityContext.{other}: not translated by the test"),
                    }
                }
            }
            "volumeMounts" => {
                for m in v.as_array().unwrap() {
                    let vname = m["name"].as_str().unwrap();
                    let path = m["mountPath"].as_str().unwrap();
                    let ro = m["readOnly"] == true;
                    let vol = volumes
                        .get(vname)
                        .unwrap_or_else(|| panic!("volume {vname}"));
                    if let Some(secret) = vol["secret"]["secretName"].as_str() {
                        let dir = host
                            .secrets
                            .get(secret)
                            .unwrap_or_else(|| panic!("Secret {secret}"));
                        spec.flags.push("-v".into());
                        spec.flags.push(format!("{}:{path}:ro", dir.display()));
                    } else if vol["emptyDir"].is_object() {
                        let ed = &vol["emptyDir"];
                        if ed["medium"] == "Memory" {
                            // kubelet mounts a memory emptyDir as a plain tmpfs (no noexec).
                            let mut opts = "rw,exec".to_string();
                            if let Some(sz) = ed["sizeLimit"].as_str() {
                                opts.push_str(&format!(",size={}", memory(sz)));
                            }
                            spec.flags.push("--tmpfs".into());
                            spec.flags.push(format!("{path}:{opts}"));
                            spec.tmpfs.push((path.to_string(), opts));
                        } else {
                            let vol = host
                                .volumes
                                .get(vname)
                                .unwrap_or_else(|| panic!("emptyDir {vname}: a podman volume"));
                            spec.flags.push("-v".into());
                            spec.flags.push(format!("{vol}:{path}"));
                        }
                    } else if let Some(hp) = vol["hostPath"]["path"].as_str() {
                        let dir = host
                            .host_paths
                            .get(hp)
                            .unwrap_or_else(|| panic!("hostPath {hp}"));
                        std::fs::create_dir_all(dir).unwrap();
                        spec.flags.push("-v".into());
                        spec.flags.push(format!(
                            "{}:{path}{}",
                            dir.display(),
                            if ro { ":ro" } else { "" }
                        ));
                    } else {
                        panic!("volume {vname}: kind not translated by the test: {vol}");
                    }
                }
            }
            other => panic!("container `{other}`: not translated by the test"),
        }
    }
    env_flags(&env, host, &mut spec);
    spec
}

/// Wait until `podman logs NAME` contains `what`; panics with the logs when the container
/// ends first or `limit` passes.
pub fn wait_for_log(name: &str, what: &str, limit: Duration) -> String {
    let t0 = Instant::now();
    loop {
        let (_, out, err) = podman(&["logs", name]);
        let logs = format!("{out}{err}");
        if logs.contains(what) {
            return logs;
        }
        let state = podman(&["inspect", "-f", "{{.State.Status}}", name]).1;
        assert!(
            state.trim() == "running" || state.trim() == "created",
            "container {name} is {} before logging {what:?}:\n{}",
            state.trim(),
            tail(&logs, 40)
        );
        assert!(
            t0.elapsed() < limit,
            "container {name}: no {what:?} in its log after {limit:?}:\n{}",
            tail(&logs, 40)
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

pub fn logs(name: &str) -> String {
    let (_, out, err) = podman(&["logs", name]);
    format!("{out}{err}")
}

/// The container's full id (for matching host processes by cgroup).
pub fn container_id(name: &str) -> String {
    podman_ok(&["inspect", "-f", "{{.Id}}", name])
        .trim()
        .to_string()
}

/// (pid, uid, cgroup text) of every host process whose real uid is in `uids`.
pub fn processes_in_uid_range(uids: std::ops::Range<u32>) -> Vec<(i32, u32, String)> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(status) = std::fs::read_to_string(e.path().join("status")) else {
            continue;
        };
        let uid = status
            .lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|r| r.split_whitespace().next())
            .and_then(|u| u.parse::<u32>().ok());
        if let Some(uid) = uid.filter(|u| uids.contains(u)) {
            let cg = std::fs::read_to_string(e.path().join("cgroup")).unwrap_or_default();
            out.push((pid, uid, cg));
        }
    }
    out
}

/// GET http://127.0.0.1:PORT/PATH: (status, body); None if nothing answers.
pub fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    let agent = ureq::AgentBuilder::new()
        .timeout(Duration::from_secs(5))
        .build();
    match agent.get(&format!("http://127.0.0.1:{port}{path}")).call() {
        Ok(r) => Some((r.status(), r.into_string().unwrap_or_default())),
        Err(ureq::Error::Status(code, r)) => Some((code, r.into_string().unwrap_or_default())),
        Err(_) => None,
    }
}

/// The value of a metric series (sum over its label sets) in a Prometheus text page.
pub fn metric(page: &str, name: &str) -> f64 {
    page.lines()
        .filter(|l| !l.starts_with('#'))
        .filter(|l| {
            l.strip_prefix(name)
                .is_some_and(|r| r.starts_with(' ') || r.starts_with('{'))
        })
        .filter_map(|l| l.rsplit(' ').next().and_then(|v| v.parse::<f64>().ok()))
        .sum()
}
