//! The deploy files, run for real with podman (no Docker engine here; see
//! shared/CONTAINERS-NOTES.md and tools/install-containers.sh):
//!
//! 1. both images are built from deploy/Dockerfile.*: only the Rust build stage
//!    (`FROM rust:1-bookworm AS build`) is replaced, by a stage that provides the `farm` binary
//!    cargo built for this test; the substitution is derived from the Dockerfile's text and the
//!    runtime stages run exactly as written (image reused while Dockerfile, binary and context
//!    are unchanged);
//! 2. two workers start with the options docker-compose.yml gives the worker service (read from
//!    the YAML, translated key by key to podman flags, Docker's implied noexec,nosuid,nodev on a
//!    tmpfs included) and one as deploy/k8s/30-worker.yaml runs it (read-only root, memory
//!    emptyDir /tmp, the key at the Secret's mountPath, the node's uid-lease folder);
//! 3. a tournament is played through them against this machine's RabbitMQ and Redis by the host
//!    `farm run --broker`, with one worker `podman kill`ed and one `podman stop`ped mid-run
//!    (replacements started): every match once, results equal to the embedded run, no bot
//!    faults, no uid shared by bots of two containers at once, no bot process left, and a
//!    sandboxed bot cannot reach the network (bots/hostile/connect.cpp with a port this test
//!    listens on compiled in);
//! 4. the coordinator image runs the compose coordinator's command (the bundled formal
//!    tournament) against those workers until it has dispatched and checkpointed matches, is
//!    restarted (its command then takes the `--resume` branch) and checkpoints more.
//!
//! Differences from a real compose/k8s host, all forced by `--network host` on one machine:
//! service names (rabbitmq, redis, redis.matchfarm.svc) resolve to 127.0.0.1 (`--add-host`),
//! Redis uses this test's database 1 instead of 0, metrics ports are moved to free ones (one
//! port space), each container's hostname is its name (as Docker gives each container its own),
//! the k8s hostPath of the uid leases is the host folder of compose's uid-leases volume (the
//! README: every worker of a host shares one lease folder), and FARM_TURN_MS=1000 as in every
//! cluster test. Needs podman (tools/install-containers.sh), RabbitMQ and Redis; skipped with a
//! message without them unless FARM_REQUIRE_BROKER=1.

mod cluster_support;
mod common;
mod containers_support;
mod metrics_yaml;

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::Ordering;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

use cluster_support::{Farm, Proc, BROKER, KEY};
use containers_support::*;

const REDIS_DB: u32 = 1;
#[test]
fn deploy_files_run_in_podman_containers() {
    let t_start = Instant::now();
    let require = std::env::var("FARM_REQUIRE_BROKER").as_deref() == Ok("1");
    if let Some(why) = missing_prerequisite() {
        assert!(!require, "FARM_REQUIRE_BROKER=1 but {why}");
        eprintln!("skipped: {why}");
        return;
    }
    if !services_up() {
        assert!(!require, "FARM_REQUIRE_BROKER=1 but RabbitMQ (127.0.0.1:5672) or Redis (127.0.0.1:6379) is not reachable");
        eprintln!("skipped: RabbitMQ at 127.0.0.1:5672 or Redis at 127.0.0.1:6379 not reachable");
        return;
    }
    std::env::set_var("FARM_TURN_MS", "1000");

    let (wflags, wenv) = worker_help();
    // Every feature the deploy files rely on must be in the binary under test.
    assert!(
        wflags.contains("--self-test"),
        "`farm worker --self-test` is missing"
    );
    assert!(
        wenv.contains("FARM_UID_LEASE_DIR") && wenv.contains("FARM_SCRATCH_DIR"),
        "`farm worker` lacks FARM_UID_LEASE_DIR / FARM_SCRATCH_DIR"
    );
    let (has_self_test, has_lease_dir, no_workspace_flag) = (true, true, true);

    let compose = metrics_yaml::yaml("deploy/docker-compose.yml");
    let svc_worker = &compose["services"]["worker"];
    let svc_coord = &compose["services"]["coordinator"];
    for (svc, what) in [(svc_worker, "worker"), (svc_coord, "coordinator")] {
        assert_eq!(
            svc["build"]["dockerfile"],
            format!("deploy/Dockerfile.{what}"),
            "compose {what} builds another Dockerfile"
        );
        assert_eq!(
            svc["build"]["context"], "..",
            "compose {what}: context is the repository"
        );
    }
    let wenv_file = svc_worker["environment"].as_object().unwrap();
    for k in ["FARM_UID_BASE", "FARM_UID_COUNT"] {
        assert!(
            !wenv_file.contains_key(k),
            "compose sets {k}: update UID_BASE/UID_COUNT here"
        );
    }
    assert!(
        !wenv_file.contains_key("FARM_WORKSPACE"),
        "workers need no referee package of their own any more"
    );
    let k8s_docs = metrics_yaml::yaml_docs(&repo().join("deploy/k8s/30-worker.yaml"));
    let deployment = k8s_docs
        .iter()
        .find(|d| d["kind"] == "Deployment")
        .expect("30-worker.yaml has the worker Deployment")
        .clone();
    let secret_docs = metrics_yaml::yaml_docs(&repo().join("deploy/k8s/10-secret.yaml"));

    // --- 1. images
    let work = tempfile::tempdir().unwrap();
    let t0 = Instant::now();
    let worker_image = build_image(&repo(), "worker", &farm_bin(), work.path());
    let coord_image = build_image(&repo(), "coordinator", &farm_bin(), work.path());
    let t_images = t0.elapsed();

    // --- per-run names, volumes, secrets
    let run = format!(
        "mfct-{}-{}",
        std::process::id(),
        &hex::encode(rand::random::<[u8; 3]>())
    );
    let guard = Guard::default();
    let farm = Farm::new("containers", REDIS_DB);
    let restore = Restore {
        redis: farm.redis_url(),
        queues: Mutex::new(Vec::new()),
        coordinators: Mutex::new(Vec::new()),
    };
    let key_file = farm.dir.path().join("farm.key");
    std::fs::write(&key_file, KEY).unwrap();
    // The k8s Secret farm-key as a folder of its keys (the test's key under each).
    let secret_dir = farm.dir.path().join("secret-farm-key");
    std::fs::create_dir_all(&secret_dir).unwrap();
    let farm_key_secret = secret_docs
        .iter()
        .find(|d| d["kind"] == "Secret" && d["metadata"]["name"] == "farm-key")
        .expect("10-secret.yaml: Secret farm-key");
    for k in farm_key_secret["stringData"].as_object().unwrap().keys() {
        let p = secret_dir.join(k);
        std::fs::write(&p, KEY).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o400)).unwrap();
    }
    let mut volumes = BTreeMap::new();
    for v in compose["volumes"].as_object().unwrap().keys() {
        volumes.insert(v.clone(), format!("{run}-{v}"));
    }
    for v in ["compile-cache", "uid-leases", "runs"] {
        let name = volumes
            .get(v)
            .unwrap_or_else(|| panic!("compose volume {v}"))
            .clone();
        guard.volume(&name);
    }
    // k8s emptyDir volumes that are not in memory: fresh podman volumes too.
    for v in deployment["spec"]["template"]["spec"]["volumes"]
        .as_array()
        .unwrap()
    {
        let ed = &v["emptyDir"];
        if ed.is_object() && ed["medium"] != "Memory" {
            let n = v["name"].as_str().unwrap();
            volumes.insert(n.to_string(), guard.volume(&format!("{run}-k8s-{n}")));
        }
    }
    let uid_leases = volume_path(&volumes["uid-leases"]);
    let mut host_paths = BTreeMap::new();
    for v in deployment["spec"]["template"]["spec"]["volumes"]
        .as_array()
        .unwrap()
    {
        if let Some(p) = v["hostPath"]["path"].as_str() {
            assert_eq!(
                p, "/var/lib/matchfarm/uids",
                "30-worker.yaml: the only hostPath is the node's uid-lease folder"
            );
            host_paths.insert(p.to_string(), uid_leases.clone());
        }
    }
    let port_fn = free_port;
    let host = Host {
        free_port: &port_fn,
        redis_db: REDIS_DB,
        volumes,
        secrets: BTreeMap::from([
            ("farm_key".to_string(), key_file.clone()),
            ("farm-key".to_string(), secret_dir.clone()),
        ]),
        secret_values: BTreeMap::from([(
            ("farm-broker".to_string(), "amqp".to_string()),
            BROKER.to_string(),
        )]),
        host_paths,
        extra_env: vec![("FARM_TURN_MS".into(), "1000".into())],
        repo: repo(),
    };

    // --- 2. workers: compose replicas and one k8s pod
    let compose_spec = |h: &Host| compose_service("worker", svc_worker, h);
    let spec0 = compose_spec(&host);
    assert_eq!(spec0.replicas, 2, "compose runs two worker replicas");
    let tmp = spec0
        .tmpfs
        .iter()
        .find(|(p, _)| p == "/tmp")
        .expect("compose worker: a tmpfs on /tmp");
    eprintln!("compose worker /tmp as Docker mounts it: {}", tmp.1);
    // The bots' scratch folder is on an exec tmpfs, in compose and in k8s.
    let k8s_env = &deployment["spec"]["template"]["spec"]["containers"][0]["env"];
    let k8s_scratch = k8s_env
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "FARM_SCRATCH_DIR")
        .and_then(|e| e["value"].as_str())
        .expect("30-worker.yaml sets FARM_SCRATCH_DIR");
    let compose_scratch = wenv_file["FARM_SCRATCH_DIR"]
        .as_str()
        .expect("compose sets FARM_SCRATCH_DIR");
    let k8s_probe = k8s_pod(&deployment, &host);
    for (what, dir, spec) in [
        ("compose", compose_scratch, &spec0),
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

    // The self-test, as deployed, and on the tmpfs as Docker mounted the old `/tmp:size=512m`.
    if has_self_test {
        let name = format!("{run}-selftest");
        let spec = compose_spec(&host);
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
        args.push(worker_image.clone());
        args.push("--self-test".into());
        guard.container(&name);
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, out, err) = podman(&refs);
        assert_eq!(
            code, 0,
            "`farm worker --self-test` with the compose options failed:\n{out}{err}"
        );
        let bad = format!("{run}-selftest-noexec");
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
        args.push(worker_image.clone());
        args.push("--self-test".into());
        guard.container(&bad);
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, out, err) = podman(&refs);
        let text = format!("{out}{err}");
        assert_ne!(code, 0, "the self-test passed on a noexec /tmp:\n{text}");
        assert!(
            text.contains("noexec") || text.contains("exec"),
            "the self-test's failure on a noexec scratch does not say why:\n{text}"
        );
    }

    let watch = UidWatch::start();
    let mut workers: Vec<(String, RunSpec)> = Vec::new();
    for i in 1..=spec0.replicas {
        let name = format!("{run}-w{i}");
        let spec = compose_spec(&host);
        spec.start(&guard, &name, &worker_image, &[]);
        workers.push((name, spec));
    }
    let k8s_name = format!("{run}-k1");
    let k8s_spec = k8s_pod(&deployment, &host);
    k8s_spec.start(&guard, &k8s_name, &worker_image, &[]);
    workers.push((k8s_name.clone(), k8s_spec.clone()));
    let mut all_ids: Vec<String> = Vec::new();
    for (name, _) in &workers {
        watch.watch(name);
        all_ids.push(container_id(name));
    }
    for (name, _) in &workers {
        wait_for_log(name, "ready", Duration::from_secs(180));
    }
    let t_workers_ready = t_start.elapsed();
    if no_workspace_flag {
        for (name, _) in &workers {
            let l = logs(name);
            assert!(
                !l.contains("no referee package"),
                "{name}: a worker still wants a referee package of its own:\n{}",
                tail(&l, 20)
            );
        }
    }

    // Healthcheck (compose) and readiness probe (k8s), mounts as the files say.
    for (name, spec) in &workers {
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
        if name == &k8s_name {
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

    // --- 3. the tournament, with a kill and a stop mid-run
    let listener = Listener::start();
    // A stable path and content per port: the embedded reference run stays cached.
    let probe = std::env::temp_dir().join(format!(
        "matchfarm-containers-netprobe-{}.cpp",
        listener.port
    ));
    std::fs::write(&probe, probe_source(listener.port)).unwrap();
    let args = tournament(&probe);
    let bots: Vec<PathBuf> = args
        .iter()
        .filter_map(|a| a.split_once('=').map(|(_, p)| p))
        .filter(|p| p.ends_with(".cpp"))
        .map(|p| repo().join(p))
        .collect();
    let reference = embedded_reference(&args, &bots);
    let coord_log = farm.dir.path().join("coordinator.log");
    let child = Command::new(farm_bin())
        .current_dir(repo())
        .arg("run")
        .args(&args)
        .args([
            "--broker",
            BROKER,
            "--redis",
            &farm.redis_url(),
            "--key-file",
        ])
        .arg(&key_file)
        .arg("--output")
        .arg(farm.output())
        .env("FARM_TURN_MS", "1000")
        .stdout(File::create(&coord_log).unwrap())
        .stderr(File::create(coord_log.with_extension("err")).unwrap())
        .spawn()
        .unwrap();
    let mut coord = Proc {
        child: Some(child),
        log: coord_log,
    };
    let t_run = Instant::now();
    restore.queues.lock().unwrap().push(farm.jobs_queue());
    let total = reference.len();

    wait_rows(&farm, &mut coord, 2, Duration::from_secs(240));
    let (victim, vspec) = workers[0].clone();
    let busy = wait_busy(vspec.metrics_port.unwrap(), Duration::from_secs(20));
    let vid = container_id(&victim);
    podman_ok(&["kill", &victim]);
    let _ = podman(&["wait", &victim]);
    let killed_at = farm.logged_rows();
    eprintln!("podman kill {victim} after {killed_at}/{total} results (it was playing: {busy})");
    std::thread::sleep(Duration::from_millis(300));
    let left = bot_processes_of(std::slice::from_ref(&vid));
    assert!(
        left.is_empty(),
        "bot processes of the killed worker survive: {left:?}"
    );
    let r1 = format!("{run}-w1b");
    let spec = compose_spec(&host);
    spec.start(&guard, &r1, &worker_image, &[]);
    watch.watch(&r1);
    all_ids.push(container_id(&r1));
    workers.push((r1.clone(), spec));

    wait_rows(&farm, &mut coord, killed_at + 3, Duration::from_secs(240));
    // Stop whichever surviving worker is playing first: waiting on one named worker can idle
    // out the clock while the others finish the schedule.
    let survivors: Vec<u16> = workers[1..]
        .iter()
        .map(|(_, s)| s.metrics_port.unwrap())
        .collect();
    let (pick, busy) = wait_any_busy(&survivors, Duration::from_secs(20));
    let (stopped, _) = workers[1 + pick].clone();
    let stopped_at = farm.logged_rows();
    assert!(
        stopped_at < total,
        "the run finished before the stop; make the tournament longer"
    );
    let ts = Instant::now();
    podman_ok(&["stop", &stopped]);
    let stop_took = ts.elapsed();
    let code = podman_ok(&["inspect", "-f", "{{.State.ExitCode}}", &stopped]);
    let slog = logs(&stopped);
    eprintln!("podman stop {stopped} after {stopped_at}/{total} results (it was playing: {busy}): exit {} in {stop_took:.1?}", code.trim());
    assert_eq!(
        code.trim(),
        "0",
        "SIGTERMed worker did not exit cleanly:\n{}",
        tail(&slog, 30)
    );
    assert!(
        slog.contains("stopped"),
        "worker log of {stopped}:\n{}",
        tail(&slog, 30)
    );
    let left = bot_processes_of(&[container_id(&stopped)]);
    assert!(
        left.is_empty(),
        "bot processes of the stopped worker survive: {left:?}"
    );
    let r2 = format!("{run}-w2b");
    let spec = compose_spec(&host);
    spec.start(&guard, &r2, &worker_image, &[]);
    watch.watch(&r2);
    all_ids.push(container_id(&r2));
    workers.push((r2.clone(), spec));

    let out = {
        let t0 = Instant::now();
        while coord.running() && t0.elapsed() < Duration::from_secs(300) {
            std::thread::sleep(Duration::from_millis(200));
        }
        coord.wait()
    };
    let t_tournament = t_run.elapsed();
    let (shared_uids, samples, seen_uids) = watch.finish();
    assert_eq!(out.status, Some(0), "coordinator failed:\n{}", out.stderr);
    cluster_support::assert_same_results(&farm.output(), &reference);
    let results = cluster_support::results(&farm.output());
    let numbers: BTreeSet<u64> = results
        .iter()
        .map(|r| r["match"].as_u64().unwrap())
        .collect();
    assert_eq!(
        numbers.len(),
        results.len(),
        "a match twice in results.json"
    );
    let logged = std::fs::read_to_string(farm.output().join("results.jsonl")).unwrap();
    let mut once = BTreeSet::new();
    for l in logged.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(l).unwrap();
        let n = v["match"].as_u64().or_else(|| v["number"].as_u64());
        if let Some(n) = n {
            assert!(once.insert(n), "match {n} checkpointed twice");
        }
    }
    for r in &results {
        let faults = &r["result"]["faults"];
        for (seat, f) in faults.as_array().unwrap().iter().enumerate() {
            let f = f.as_array().unwrap();
            assert!(
                f.is_empty(),
                "match {} seat {seat} ({}): faults {f:?} (compile_failure/start_failure mean the \
                 container's sandbox could not build or start the bot)",
                r["match"],
                r["result"]["names"][seat]
            );
        }
    }
    // The network probe: blocked inside the sandbox, nothing reached the listener.
    let mut probed = 0;
    for r in &results {
        let names = r["result"]["names"].as_array().unwrap();
        let Some(seat) = names.iter().position(|n| n == "N") else {
            continue;
        };
        let replay: Value = common::replay_json(&farm.output().join(format!(
            "replays/{:05}.json.gz",
            r["match"].as_u64().unwrap()
        )));
        let err = replay["stderr_tails"][seat].as_str().unwrap_or("");
        let want = format!("ATTACK connect 127.0.0.1:{}: blocked", listener.port);
        assert!(
            err.contains(&want),
            "match {}: the probe's stderr lacks {want:?}:\n{err}",
            r["match"]
        );
        assert!(
            !err.contains("SUCCEEDED"),
            "match {}: a sandboxed bot reached the network:\n{err}",
            r["match"]
        );
        probed += 1;
    }
    assert!(probed > 0, "no match of the network probe");
    assert_eq!(
        listener.accepted.load(Ordering::Relaxed),
        0,
        "a bot connected to the test's port"
    );
    farm.assert_queues_gone();
    restore.queues.lock().unwrap().clear();
    eprintln!(
        "tournament: {total} matches in {t_tournament:.1?}, equal to the embedded run; {probed} probe matches blocked; \
         uid sampler: {samples} samples, uids seen {seen_uids:?}"
    );
    if has_lease_dir {
        assert!(
            shared_uids.is_empty(),
            "bots of two containers ran under one host uid at once: {shared_uids:?}"
        );
        let leases: Vec<String> = std::fs::read_dir(&uid_leases)
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().to_string())
                    .collect()
            })
            .unwrap_or_default();
        assert!(
            leases.iter().any(|l| l.ends_with(".lock")),
            "no uid lease files in the shared uid-leases volume ({}): {leases:?}",
            uid_leases.display()
        );
    } else if !shared_uids.is_empty() {
        eprintln!("NOT CHECKED (FARM_UID_LEASE_DIR missing): uids shared across containers were seen, as expected before it lands: {:?}", &shared_uids[..shared_uids.len().min(5)]);
    }

    // --- 4. the coordinator image with the compose coordinator's command
    let t4 = Instant::now();
    coordinator_image_resumes(&run, svc_coord, &host, &guard, &restore, &coord_image);
    let t_coordinator = t4.elapsed();

    // --- clean up, then: no bot process of any of these containers is left on the host
    drop(restore);
    guard.remove_containers();
    std::thread::sleep(Duration::from_millis(300));
    let left = bot_processes_of(&all_ids);
    assert!(
        left.is_empty(),
        "bot processes survive their containers: {left:?}"
    );
    let stray: Vec<_> = processes_in_uid_range(UID_BASE..UID_BASE + UID_COUNT)
        .into_iter()
        .filter(|(_, _, cg)| cg.contains("libpod"))
        .collect();
    assert!(
        stray.is_empty(),
        "processes of the bot uid pool left in containers: {stray:?}"
    );
    let mut report = File::create(work.path().join("timings")).unwrap();
    let line = format!(
        "timings: images {t_images:.1?}, workers ready at {t_workers_ready:.1?}, tournament {t_tournament:.1?}, \
         coordinator image {t_coordinator:.1?}, total {:.1?}",
        t_start.elapsed()
    );
    writeln!(report, "{line}").unwrap();
    eprintln!("{line}");
}
