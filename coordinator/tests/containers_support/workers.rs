//! Phase 2 of the containers test: workers started with the deploy files' own settings (compose's
//! worker replicas and one pod as deploy/k8s/30-worker.yaml runs it), after checking that those
//! settings put the bots' scratch on an exec tmpfs and pass the worker's self-test; then their
//! healthcheck, readiness probe and mounts are checked as the files say.

use std::time::{Duration, Instant};

use super::{
    container_id, docker_tmpfs, http_get, k8s_pod, logs, mount_line, mounts_of, podman, tail,
    wait_for_log, RunSpec, Site, UidWatch,
};

/// The running workers, handed to phase 3.
pub struct Workers {
    /// (container name, how it was started), replacements appended.
    pub list: Vec<(String, RunSpec)>,
    /// The container started as the k8s pod.
    pub k8s_name: String,
    /// Watches every worker container for uids shared by bots of two of them.
    pub watch: UidWatch,
    /// The id of every worker container started, for the bot processes left at the end.
    pub all_ids: Vec<String>,
    /// When every first worker had logged "ready".
    pub ready: Instant,
}

impl Workers {
    /// Starts `name` as a further compose worker, watched like the others.
    pub fn add_compose_worker(&mut self, site: &Site, name: &str, image: &str) {
        let spec = site.compose_worker();
        spec.start(&site.guard, name, image, &[]);
        self.watch.watch(name);
        self.all_ids.push(container_id(name));
        self.list.push((name.to_string(), spec));
    }
}

/// Phase 2: the compose replicas and one k8s pod, checked and ready.
pub fn start_workers(site: &Site, image: &str) -> Workers {
    let spec0 = site.compose_worker();
    assert_eq!(spec0.replicas, 2, "compose runs two worker replicas");
    scratch_on_exec_tmpfs(site, &spec0);
    self_test(site, image);

    let watch = UidWatch::start();
    let mut list: Vec<(String, RunSpec)> = Vec::new();
    for i in 1..=spec0.replicas {
        let name = format!("{}-w{i}", site.run);
        let spec = site.compose_worker();
        spec.start(&site.guard, &name, image, &[]);
        list.push((name, spec));
    }
    let k8s_name = format!("{}-k1", site.run);
    let k8s_spec = k8s_pod(&site.files.deployment, &site.host);
    k8s_spec.start(&site.guard, &k8s_name, image, &[]);
    list.push((k8s_name.clone(), k8s_spec.clone()));
    let mut all_ids: Vec<String> = Vec::new();
    for (name, _) in &list {
        watch.watch(name);
        all_ids.push(container_id(name));
    }
    for (name, _) in &list {
        wait_for_log(name, "ready", Duration::from_secs(180));
    }
    let ready = Instant::now();
    for (name, _) in &list {
        let l = logs(name);
        assert!(
            !l.contains("no referee package"),
            "{name}: a worker still wants a referee package of its own:\n{}",
            tail(&l, 20)
        );
    }
    let workers = Workers {
        list,
        k8s_name,
        watch,
        all_ids,
        ready,
    };
    check_probes_and_mounts(&workers);
    workers
}

/// The bots' scratch folder is on an exec tmpfs, in compose and in k8s.
fn scratch_on_exec_tmpfs(site: &Site, spec0: &RunSpec) {
    let tmp = spec0
        .tmpfs
        .iter()
        .find(|(p, _)| p == "/tmp")
        .expect("compose worker: a tmpfs on /tmp");
    eprintln!("compose worker /tmp as Docker mounts it: {}", tmp.1);
    let k8s_env = &site.files.deployment["spec"]["template"]["spec"]["containers"][0]["env"];
    let k8s_scratch = k8s_env
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "FARM_SCRATCH_DIR")
        .and_then(|e| e["value"].as_str())
        .expect("30-worker.yaml sets FARM_SCRATCH_DIR");
    let compose_scratch = site.files.worker_env()["FARM_SCRATCH_DIR"]
        .as_str()
        .expect("compose sets FARM_SCRATCH_DIR");
    let k8s_probe = k8s_pod(&site.files.deployment, &site.host);
    for (what, dir, spec) in [
        ("compose", compose_scratch, spec0),
        ("k8s", k8s_scratch, &k8s_probe),
    ] {
        let on = spec
            .tmpfs
            .iter()
            .filter(|(p, _)| dir == p || dir.starts_with(&format!("{p}/")))
            .max_by_key(|(p, _)| p.len())
            .unwrap_or_else(|| panic!("{what}: FARM_SCRATCH_DIR={dir} is on no tmpfs"));
        assert!(
            !on.1.split(',').any(|o| o == "noexec"),
            "{what}: FARM_SCRATCH_DIR={dir} is on a noexec tmpfs ({})",
            on.1
        );
    }
}

/// The self-test, as deployed, and on the tmpfs as Docker mounted the old `/tmp:size=512m`.
fn self_test(site: &Site, image: &str) {
    let name = format!("{}-selftest", site.run);
    let spec = site.compose_worker();
    // One-shot runs: without the restart policy (a failing self-test would be restarted).
    let flags: Vec<String> = spec
        .flags
        .iter()
        .enumerate()
        .filter(|(i, f)| *f != "--restart" && (*i == 0 || spec.flags[i - 1] != "--restart"))
        .map(|(_, f)| f.clone())
        .collect();
    let mut args = vec![
        "run".to_string(),
        "--name".into(),
        name.clone(),
        "--network".into(),
        "host".into(),
    ];
    args.extend(flags.iter().cloned());
    args.push(image.to_string());
    args.push("--self-test".into());
    site.guard.container(&name);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, out, err) = podman(&refs);
    assert_eq!(
        code, 0,
        "`farm worker --self-test` with the compose options failed:\n{out}{err}"
    );
    let bad = format!("{}-selftest-noexec", site.run);
    let mut args: Vec<String> = vec![
        "run".into(),
        "--name".into(),
        bad.clone(),
        "--network".into(),
        "host".into(),
    ];
    let old = docker_tmpfs("/tmp:size=512m");
    for f in flags.iter() {
        args.push(if f.starts_with("/tmp:") {
            format!("{}:{}", old.0, old.1)
        } else {
            f.clone()
        });
    }
    args.push(image.to_string());
    args.push("--self-test".into());
    site.guard.container(&bad);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, out, err) = podman(&refs);
    let text = format!("{out}{err}");
    assert_ne!(code, 0, "the self-test passed on a noexec /tmp:\n{text}");
    assert!(
        text.contains("noexec") || text.contains("exec"),
        "the self-test's failure on a noexec scratch does not say why:\n{text}"
    );
}

/// Healthcheck (compose) and readiness probe (k8s), mounts as the files say.
fn check_probes_and_mounts(workers: &Workers) {
    for (name, spec) in &workers.list {
        let port = spec.metrics_port.expect("workers serve metrics");
        if let Some(cmd) = &spec.healthcheck {
            let file_port = spec.file_metrics_port.unwrap().to_string();
            let mut args: Vec<String> = vec!["exec".into(), name.clone()];
            args.extend(cmd.iter().map(|w| w.replace(&file_port, &port.to_string())));
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            let (code, out, err) = podman(&refs);
            assert_eq!(
                code, 0,
                "{name}: the compose healthcheck fails:\n{out}{err}"
            );
        }
        if let Some(path) = &spec.readiness_path {
            let r = http_get(port, path);
            assert_eq!(
                r.as_ref().map(|r| r.0),
                Some(200),
                "{name}: readiness {path}: {r:?}"
            );
        }
        let mounts = mounts_of(name);
        let tmp = mount_line(&mounts, "/tmp")
            .unwrap_or_else(|| panic!("{name}: no /tmp mount:\n{mounts}"));
        let opts = tmp.split_whitespace().nth(3).unwrap();
        assert!(
            !opts.split(',').any(|o| o == "noexec"),
            "{name}: /tmp is noexec ({tmp}): bots cannot run from their scratch folders"
        );
        if name == &workers.k8s_name {
            let root = mount_line(&mounts, "/").unwrap();
            assert!(
                root.split_whitespace()
                    .nth(3)
                    .unwrap()
                    .split(',')
                    .any(|o| o == "ro"),
                "{name}: root filesystem not read-only: {root}"
            );
        } else {
            for o in ["nosuid", "nodev"] {
                assert!(
                    opts.split(',').any(|x| x == o),
                    "{name}: /tmp lacks Docker's {o}: {tmp}"
                );
            }
        }
    }
}
