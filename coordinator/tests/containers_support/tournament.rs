//! Phase 3 of the containers test, the run itself: the host's `farm run --broker` plays a
//! tournament (with the network probe bot) through the workers while one of them is `podman
//! kill`ed and one `podman stop`ped mid-run, replacements started; what it leaves is checked in
//! `checks`. The stopped worker drains: the matches it held at SIGTERM finish and land.

use std::collections::BTreeSet;
use std::fs::File;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{
    bot_processes_of, container_id, embedded_reference, farm_bin, logs, podman, podman_ok,
    probe_source, repo, tail, tournament, wait_any_busy, wait_busy, wait_rows, Listener, Site,
    Workers,
};
use crate::cluster_support::{Output, Proc, BROKER};

/// What the run left for the checks.
pub struct Played {
    /// The same tournament's results, run embedded on the host.
    pub reference: Vec<Value>,
    /// The probe's listener (it must have accepted nothing).
    pub listener: Listener,
    /// The host coordinator's exit.
    pub out: Output,
    /// How long the tournament took.
    pub took: Duration,
    /// The uid watch: (uids shared by bots of two containers at once, samples, uids seen).
    pub shared_uids: Vec<String>,
    pub samples: usize,
    pub seen_uids: BTreeSet<u32>,
    /// The id of every worker container started, replacements included.
    pub all_ids: Vec<String>,
}

/// Phase 3's run: the tournament, with a kill and a stop mid-run.
pub fn play_with_kill_and_stop(site: &Site, mut workers: Workers, image: &str) -> Played {
    let farm = &site.farm;
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
        .arg(&site.key_file)
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
    site.restore.queues.lock().unwrap().push(farm.jobs_queue());
    let total = reference.len();

    wait_rows(farm, &mut coord, 2, Duration::from_secs(240));
    let killed_at = kill_one(site, &workers, total);
    workers.add_compose_worker(site, &format!("{}-w1b", site.run), image);

    wait_rows(farm, &mut coord, killed_at + 3, Duration::from_secs(240));
    stop_one(site, &workers, total);
    workers.add_compose_worker(site, &format!("{}-w2b", site.run), image);

    let out = {
        let t0 = Instant::now();
        while coord.running() && t0.elapsed() < Duration::from_secs(300) {
            std::thread::sleep(Duration::from_millis(200));
        }
        coord.wait()
    };
    let took = t_run.elapsed();
    let (shared_uids, samples, seen_uids) = workers.watch.finish();
    Played {
        reference,
        listener,
        out,
        took,
        shared_uids,
        samples,
        seen_uids,
        all_ids: workers.all_ids,
    }
}

/// `podman kill` the first worker (once it plays, if it does within 20 s): none of its bot
/// processes survives. The results logged by then.
fn kill_one(site: &Site, workers: &Workers, total: usize) -> usize {
    let (victim, vspec) = workers.list[0].clone();
    let busy = wait_busy(vspec.metrics_port.unwrap(), Duration::from_secs(20));
    let vid = container_id(&victim);
    podman_ok(&["kill", &victim]);
    let _ = podman(&["wait", &victim]);
    let killed_at = site.farm.logged_rows();
    eprintln!("podman kill {victim} after {killed_at}/{total} results (it was playing: {busy})");
    std::thread::sleep(Duration::from_millis(300));
    let left = bot_processes_of(std::slice::from_ref(&vid));
    assert!(
        left.is_empty(),
        "bot processes of the killed worker survive: {left:?}"
    );
    killed_at
}

/// `podman stop` a surviving worker before the run ends: it exits cleanly, saying so, and none of
/// its bot processes survives.
fn stop_one(site: &Site, workers: &Workers, total: usize) {
    // Stop whichever surviving worker is playing first: waiting on one named worker can idle
    // out the clock while the others finish the schedule.
    let survivors: Vec<u16> = workers.list[1..]
        .iter()
        .map(|(_, s)| s.metrics_port.unwrap())
        .collect();
    let (pick, busy) = wait_any_busy(&survivors, Duration::from_secs(20));
    let (stopped, _) = workers.list[1 + pick].clone();
    let stopped_at = site.farm.logged_rows();
    assert!(
        stopped_at < total,
        "the run finished before the stop; make the tournament longer"
    );
    // The matches it holds now (its heartbeat lists them within a few seconds of taking one).
    let held = held_by_container(site, &stopped, Duration::from_secs(8));
    let ts = Instant::now();
    // The compose file's stop_grace_period (the container's --stop-timeout): SIGTERM, and
    // SIGKILL only once the grace has passed.
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
    // Drained, not dropped: every match it held when SIGTERMed was finished by it and its
    // result taken in by the coordinator.
    assert!(
        !held.is_empty() || !busy,
        "{stopped} was playing but its heartbeat listed no match"
    );
    let t0 = Instant::now();
    loop {
        let landed = accepted_from(site, &stopped);
        let missing: Vec<&u64> = held.iter().filter(|n| !landed.contains(n)).collect();
        if missing.is_empty() {
            eprintln!("{stopped} finished the matches it held at SIGTERM ({held:?}) and their results landed");
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "matches {missing:?} that {stopped} held at SIGTERM have no result from it:\n{}",
            tail(&slog, 30)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The match numbers the worker in container `name` (id `<name>-<pid>`) lists in its
/// heartbeat; waits up to `limit` for a non-empty list.
fn held_by_container(site: &Site, name: &str, limit: Duration) -> Vec<u64> {
    let mut con = redis::Client::open(site.farm.redis_url())
        .unwrap()
        .get_connection()
        .unwrap();
    let t0 = Instant::now();
    loop {
        let keys: Vec<String> = redis::cmd("KEYS")
            .arg(format!("farm:worker:{name}-*"))
            .query(&mut con)
            .unwrap();
        let mut held = Vec::new();
        for k in keys {
            let json: Option<String> = redis::cmd("GET").arg(&k).query(&mut con).unwrap();
            let v: Value = json
                .and_then(|j| serde_json::from_str(&j).ok())
                .unwrap_or_default();
            for label in v["current"].as_array().into_iter().flatten() {
                if let Some(n) = label
                    .as_str()
                    .and_then(|l| l.rsplit_once('#'))
                    .and_then(|(_, n)| n.parse().ok())
                {
                    held.push(n);
                }
            }
        }
        if !held.is_empty() || t0.elapsed() >= limit {
            return held;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Matches whose report from the worker in container `name` gave the result (played-by.jsonl).
fn accepted_from(site: &Site, name: &str) -> BTreeSet<u64> {
    let prefix = format!("{name}-");
    std::fs::read_to_string(site.farm.output().join("played-by.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| {
            v["failed"].is_null() && v["worker"].as_str().is_some_and(|w| w.starts_with(&prefix))
        })
        .filter_map(|v| v["number"].as_u64())
        .collect()
}
