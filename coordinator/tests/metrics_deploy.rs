//! The compose file, the Prometheus config and the Kubernetes manifests (parsed YAML) against
//! `farm run --help` / `farm worker --help`: the flags, FARM_* variables, images and metrics
//! ports they use must be the ones the binaries define (clap is the one source of truth).

mod common;
mod metrics_yaml;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use common::{farm, repo, run};
use metrics_yaml::{yaml, yaml_docs};

/// `farm <sub> --help`: the long flags and the FARM_* names it documents; None if the
/// subcommand does not exist in this build.
fn help(sub: &str) -> Option<(BTreeSet<String>, BTreeSet<String>)> {
    let (code, out, err) = run(farm().args([sub, "--help"]));
    if code != 0 {
        eprintln!("`farm {sub} --help` failed ({code}): {err}");
        return None;
    }
    Some((words(&out, "--"), words(&out, "FARM_")))
}

/// Tokens of `[A-Za-z0-9_-]` that start with `prefix`.
fn words(text: &str, prefix: &str) -> BTreeSet<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .filter(|w| w.starts_with(prefix) && w.len() > prefix.len())
        .map(|w| w.trim_end_matches('-').to_string())
        .collect()
}

/// What one container says about itself: image, flags in its command/args, FARM_* env names,
/// the metrics port in FARM_METRICS_ADDR.
#[derive(Debug, Default)]
struct Container {
    image: String,
    flags: BTreeSet<String>,
    env: BTreeMap<String, String>,
}

impl Container {
    fn metrics_port(&self) -> u16 {
        let addr = self
            .env
            .get("FARM_METRICS_ADDR")
            .expect("FARM_METRICS_ADDR set");
        addr.rsplit(':')
            .next()
            .unwrap()
            .parse()
            .expect("a port in FARM_METRICS_ADDR")
    }
}

fn command_words(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => s.split_whitespace().map(str::to_string).collect(),
        Value::Array(a) => a.iter().flat_map(command_words).collect(),
        Value::Null => Vec::new(),
        other => panic!("unexpected command form {other}"),
    }
}

fn flags_of(words: &[String]) -> BTreeSet<String> {
    words
        .iter()
        .filter(|w| w.starts_with("--") && w.len() > 2 && !w.starts_with("--\""))
        .map(|w| {
            w.split('=')
                .next()
                .unwrap()
                .trim_end_matches(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .to_string()
        })
        .collect()
}

fn compose_containers() -> BTreeMap<String, Container> {
    let compose = yaml("deploy/docker-compose.yml");
    let mut out = BTreeMap::new();
    for (name, svc) in compose["services"].as_object().expect("services") {
        let mut words = command_words(&svc["entrypoint"]);
        words.extend(command_words(&svc["command"]));
        let env = svc["environment"]
            .as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| {
                        (
                            k.clone(),
                            v.as_str().map(str::to_string).unwrap_or(v.to_string()),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        out.insert(
            name.clone(),
            Container {
                image: svc["image"].as_str().unwrap_or("").to_string(),
                flags: flags_of(&words),
                env,
            },
        );
    }
    out
}

fn k8s_docs() -> Vec<(String, Value)> {
    let dir = repo().join("deploy/k8s");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        for d in yaml_docs(&f) {
            let name = f.file_name().unwrap().to_string_lossy().to_string();
            for k in ["apiVersion", "kind"] {
                assert!(d[k].as_str().is_some(), "{name}: a document without {k}");
            }
            assert!(
                d["metadata"]["name"].as_str().is_some(),
                "{name}: metadata.name"
            );
            if d["kind"] != "Namespace" {
                assert_eq!(
                    d["metadata"]["namespace"], "matchfarm",
                    "{name}: {}",
                    d["metadata"]["name"]
                );
            }
            out.push((name, d));
        }
    }
    out
}

fn k8s_container(doc: &Value) -> (Container, &Value) {
    let spec = &doc["spec"]["template"]["spec"];
    let c = &spec["containers"][0];
    let mut words = command_words(&c["command"]);
    words.extend(command_words(&c["args"]));
    let env = c["env"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|e| {
                    let v = e["value"].as_str().map(str::to_string).unwrap_or_else(|| {
                        format!(
                            "secret:{}",
                            e["valueFrom"]["secretKeyRef"]["name"]
                                .as_str()
                                .unwrap_or("?")
                        )
                    });
                    (e["name"].as_str().unwrap().to_string(), v)
                })
                .collect()
        })
        .unwrap_or_default();
    (
        Container {
            image: c["image"].as_str().unwrap_or("").to_string(),
            flags: flags_of(&words),
            env,
        },
        c,
    )
}

/// Flags and FARM_* names used by a container must be the binary's own.
fn check_against_help(what: &str, c: &Container, help: &(BTreeSet<String>, BTreeSet<String>)) {
    for f in &c.flags {
        assert!(
            help.0.contains(f),
            "{what}: {f} is not a flag of the binary ({:?})",
            help.0
        );
    }
    for e in c.env.keys().filter(|k| k.starts_with("FARM_")) {
        assert!(
            help.1.contains(e),
            "{what}: {e} is not read by the binary ({:?})",
            help.1
        );
    }
}

fn dockerfile_exposes(file: &str) -> BTreeSet<u16> {
    let text = std::fs::read_to_string(repo().join(file)).unwrap();
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("EXPOSE "))
        .flat_map(|p| {
            p.split_whitespace()
                .map(|x| x.parse::<u16>().expect("EXPOSE port"))
        })
        .collect()
}

#[test]
fn compose_prometheus_and_k8s_use_the_binaries_config_names() {
    let run_help = help("run").expect("farm run exists");
    assert!(run_help.0.contains("--metrics-addr") && run_help.1.contains("FARM_METRICS_ADDR"));
    let worker_help = help("worker");
    if worker_help.is_none() {
        eprintln!("SKIPPED worker checks: this build has no `farm worker` yet");
    }

    // Compose: the coordinator runs `farm run`, workers `farm worker` (image entrypoint).
    let compose = compose_containers();
    let coord = &compose["coordinator"];
    let work = &compose["worker"];
    assert!(coord.flags.contains("--output"), "{coord:?}");
    check_against_help("compose coordinator", coord, &run_help);
    let worker_entry = std::fs::read_to_string(repo().join("deploy/Dockerfile.worker")).unwrap();
    assert!(
        worker_entry
            .contains(r#"ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/farm", "worker"]"#),
        "the worker image runs `farm worker`"
    );
    if let Some(h) = &worker_help {
        check_against_help("compose worker", work, h);
        assert!(
            h.1.contains("FARM_METRICS_ADDR"),
            "farm worker must serve metrics"
        );
    }
    for svc in [
        "rabbitmq",
        "redis",
        "prometheus",
        "grafana",
        "coordinator",
        "worker",
    ] {
        assert!(compose.contains_key(svc), "compose lacks {svc}");
    }
    // Ports: what the binaries are told, what the images expose, what Prometheus scrapes.
    let (cport, wport) = (coord.metrics_port(), work.metrics_port());
    assert!(dockerfile_exposes("deploy/Dockerfile.coordinator").contains(&cport));
    assert!(dockerfile_exposes("deploy/Dockerfile.worker").contains(&wport));
    let prom = yaml("deploy/prometheus/prometheus.yml");
    let jobs: BTreeMap<&str, &Value> = prom["scrape_configs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| (j["job_name"].as_str().unwrap(), j))
        .collect();
    assert_eq!(
        jobs["farm-coordinator"]["static_configs"][0]["targets"][0],
        format!("coordinator:{cport}")
    );
    assert_eq!(
        jobs["farm-workers"]["dns_sd_configs"][0]["names"][0],
        "worker"
    );
    assert_eq!(jobs["farm-workers"]["dns_sd_configs"][0]["port"], wport);
    // Broker, Redis and key point at the compose services and the mounted secret.
    for c in [coord, work] {
        assert!(c.env["FARM_BROKER"].contains("@rabbitmq:5672"), "{c:?}");
        assert!(
            c.env["FARM_REDIS"].starts_with("redis://redis:6379"),
            "{c:?}"
        );
        assert_eq!(c.env["FARM_KEY_FILE"], "/run/secrets/farm_key");
        assert!(
            !c.env.contains_key("FARM_KEY"),
            "the key itself never sits in a compose file"
        );
    }

    // Kubernetes.
    let docs = k8s_docs();
    let find = |kind: &str, name: &str| -> &Value {
        &docs
            .iter()
            .find(|(_, d)| d["kind"] == kind && d["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("k8s: no {kind} {name}"))
            .1
    };
    let secrets: BTreeMap<&str, &Value> = docs
        .iter()
        .filter(|(_, d)| d["kind"] == "Secret")
        .map(|(_, d)| (d["metadata"]["name"].as_str().unwrap(), &d["stringData"]))
        .collect();
    let deployment = find("Deployment", "farm-worker");
    let job = find("Job", "farm-coordinator");
    let (kw, kwc) = k8s_container(deployment);
    let (kc, kcc) = k8s_container(job);
    assert_eq!(
        kw.image, work.image,
        "worker image differs between compose and k8s"
    );
    assert_eq!(
        kc.image, coord.image,
        "coordinator image differs between compose and k8s"
    );
    check_against_help("k8s coordinator Job", &kc, &run_help);
    if let Some(h) = &worker_help {
        check_against_help("k8s worker Deployment", &kw, h);
    }
    for (c, spec, svc, port) in [
        (&kw, kwc, "farm-worker", wport),
        (&kc, kcc, "farm-coordinator", cport),
    ] {
        assert_eq!(
            c.metrics_port(),
            port,
            "{svc}: k8s and compose metrics ports differ"
        );
        assert_eq!(
            spec["ports"][0]["containerPort"], port,
            "{svc}: containerPort"
        );
        let service = find("Service", svc);
        assert_eq!(
            service["spec"]["ports"][0]["port"], port,
            "{svc}: Service port"
        );
        for e in spec["env"].as_array().unwrap() {
            let r = &e["valueFrom"]["secretKeyRef"];
            if let Some(name) = r["name"].as_str() {
                let key = r["key"].as_str().unwrap();
                assert!(
                    secrets.get(name).is_some_and(|s| s.get(key).is_some()),
                    "{svc}: secret {name}/{key} is not defined"
                );
            }
        }
        for m in spec["volumeMounts"].as_array().unwrap() {
            if m["name"] == "farm-key" {
                assert_eq!(
                    c.env["FARM_KEY_FILE"],
                    format!("{}/key", m["mountPath"].as_str().unwrap()),
                    "{svc}: FARM_KEY_FILE is not the mounted Secret"
                );
            }
        }
        assert!(
            !c.env.contains_key("FARM_KEY"),
            "{svc}: the key itself in a manifest"
        );
    }
    let annotations = &deployment["spec"]["template"]["metadata"]["annotations"];
    assert_eq!(annotations["prometheus.io/port"], wport.to_string());
    // The worker's sandbox needs its privileges and bounded resources.
    let limits = &kwc["resources"]["limits"];
    assert!(
        limits["cpu"].is_string() && limits["memory"].is_string(),
        "worker limits: {limits}"
    );
    assert_eq!(
        kwc["resources"]["requests"]["cpu"], limits["cpu"],
        "worker cpu requests = limits"
    );
    assert_eq!(kwc["securityContext"]["privileged"], true);
    assert_eq!(kwc["securityContext"]["runAsUser"], 0);
    let grace = deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"].as_u64();
    assert!(
        grace.is_some_and(|g| g >= 60),
        "workers need time to finish matches on SIGTERM"
    );
    // KEDA scales the worker Deployment on the jobs queues.
    let so = find("ScaledObject", "farm-worker");
    assert_eq!(so["spec"]["scaleTargetRef"]["name"], "farm-worker");
    let trig = &so["spec"]["triggers"][0];
    assert_eq!(trig["type"], "rabbitmq");
    assert_eq!(trig["metadata"]["mode"], "QueueLength");
    let auth = find(
        "TriggerAuthentication",
        trig["authenticationRef"]["name"].as_str().unwrap(),
    );
    let host = &auth["spec"]["secretTargetRef"][0];
    assert!(secrets
        .get(host["name"].as_str().unwrap())
        .is_some_and(|s| s.get(host["key"].as_str().unwrap()).is_some()));
    let queue = trig["metadata"]["queueName"].as_str().unwrap();
    assert_eq!(
        queue, r"^farm\..+\.jobs$",
        "KEDA's pattern of the jobs queues"
    );
    // The pattern's meaning (prefix, anything, suffix) holds for the names the cluster uses.
    let jobs = broker::Names::for_tournament(&"0f".repeat(32)).jobs;
    let middle = jobs
        .strip_prefix("farm.")
        .and_then(|r| r.strip_suffix(".jobs"));
    assert!(
        middle.is_some_and(|m| !m.is_empty()),
        "jobs queue {jobs} does not match {queue}"
    );
}
