//! The deploy files as `podman run` flags: docker-compose.yml's services and the k8s worker
//! Deployment translated key by key (Docker's implied tmpfs options included), with what one
//! machine forces on them (`--network host`: free metrics ports, service names to 127.0.0.1,
//! the test's Redis database).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;

use super::{podman_ok, Guard};

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
