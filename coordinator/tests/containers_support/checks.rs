//! Phase 3's checks of the containers test, on what the tournament left: the coordinator
//! succeeded with results equal to the embedded run, every match once, no bot faults, the
//! network probe blocked, its queues gone, no uid shared by bots of two containers; and, after the
//! clean-up, no bot process of any of the test's containers left on the host.

use std::collections::BTreeSet;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::Value;

use super::{bot_processes_of, processes_in_uid_range, Played, Site, UID_BASE, UID_COUNT};
use crate::{cluster_support, common};

/// Phase 3's checks.
pub fn check_tournament(site: &Site, played: &Played) {
    let farm = &site.farm;
    let out = &played.out;
    assert_eq!(out.status, Some(0), "coordinator failed:\n{}", out.stderr);
    cluster_support::assert_same_results(&farm.output(), &played.reference);
    let results = cluster_support::results(&farm.output());
    every_match_once(site, &results);
    no_bot_faults(&results);
    let probed = network_blocked(site, played, &results);
    farm.assert_queues_gone();
    site.restore.queues.lock().unwrap().clear();
    let (total, t_tournament) = (played.reference.len(), played.took);
    let (samples, seen_uids) = (played.samples, &played.seen_uids);
    eprintln!(
        "tournament: {total} matches in {t_tournament:.1?}, equal to the embedded run; {probed} probe matches blocked; \
         uid sampler: {samples} samples, uids seen {seen_uids:?}"
    );
    no_uid_shared(site, played);
}

/// No match twice in results.json, none checkpointed twice in results.jsonl.
fn every_match_once(site: &Site, results: &[Value]) {
    let numbers: BTreeSet<u64> = results
        .iter()
        .map(|r| r["match"].as_u64().unwrap())
        .collect();
    assert_eq!(
        numbers.len(),
        results.len(),
        "a match twice in results.json"
    );
    let logged = std::fs::read_to_string(site.farm.output().join("results.jsonl")).unwrap();
    let mut once = BTreeSet::new();
    for l in logged.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(l).unwrap();
        let n = v["match"].as_u64().or_else(|| v["number"].as_u64());
        if let Some(n) = n {
            assert!(once.insert(n), "match {n} checkpointed twice");
        }
    }
}

fn no_bot_faults(results: &[Value]) {
    for r in results {
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
}

/// The network probe: blocked inside the sandbox, nothing reached the listener. The number of
/// probe matches.
fn network_blocked(site: &Site, played: &Played, results: &[Value]) -> usize {
    let port = played.listener.port;
    let mut probed = 0;
    for r in results {
        let names = r["result"]["names"].as_array().unwrap();
        let Some(seat) = names.iter().position(|n| n == "N") else {
            continue;
        };
        let replay: Value = common::replay_json(&site.farm.output().join(format!(
            "replays/{:05}.json.gz",
            r["match"].as_u64().unwrap()
        )));
        let err = replay["stderr_tails"][seat].as_str().unwrap_or("");
        let want = format!("ATTACK connect 127.0.0.1:{port}: blocked");
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
        played.listener.accepted.load(Ordering::Relaxed),
        0,
        "a bot connected to the test's port"
    );
    probed
}

/// No host uid ran bots of two containers at once, and the workers leased their uids in the
/// shared uid-leases volume.
fn no_uid_shared(site: &Site, played: &Played) {
    let shared_uids = &played.shared_uids;
    assert!(
        shared_uids.is_empty(),
        "bots of two containers ran under one host uid at once: {shared_uids:?}"
    );
    let leases: Vec<String> = std::fs::read_dir(&site.uid_leases)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().to_string())
                .collect()
        })
        .unwrap_or_default();
    assert!(
        leases.iter().any(|l| l.ends_with(".lock")),
        "no uid lease files in the shared uid-leases volume ({}): {leases:?}",
        site.uid_leases.display()
    );
}

/// Cleans up (queues and Redis restored, every container removed), then: no bot process of any
/// of `all_ids` is left on the host, nor any of the bot uid pool in a container.
pub fn clean_up_then_no_bot_left(site: Site, all_ids: &[String]) {
    drop(site.restore);
    site.guard.remove_containers();
    std::thread::sleep(Duration::from_millis(300));
    let left = bot_processes_of(all_ids);
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
}
