//! Phase 4 of the containers test: the coordinator image, run with the compose coordinator's
//! command against the workers, checkpoints the bundled formal tournament and resumes it after a
//! restart.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{
    compose_service, http_get, logs, metric, podman, podman_ok, queue_in_log, rows, tail,
    volume_path, Guard, Host, Restore,
};

/// Phase 4: the coordinator image runs the compose coordinator's command (the bundled formal
/// tournament) against the workers until it has dispatched and checkpointed matches; restarted,
/// its command takes the `--resume` branch, checkpoints more, and no match is checkpointed twice.
pub fn coordinator_image_resumes(
    run: &str,
    svc_coord: &Value,
    host: &Host,
    guard: &Guard,
    restore: &Restore,
    coord_image: &str,
) {
    let cname = format!("{run}-coordinator");
    let cspec = compose_service("coordinator", svc_coord, host);
    if let Some(ports) = svc_coord["ports"].as_array() {
        for p in ports {
            let container_port: u16 = p
                .as_str()
                .unwrap()
                .rsplit(':')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            assert_eq!(
                Some(container_port),
                cspec.file_metrics_port,
                "compose coordinator publishes {p}, not its metrics port"
            );
        }
    }
    cspec.start(guard, &cname, coord_image, &[]);
    restore.coordinators.lock().unwrap().push(cname.clone());
    let runs = volume_path(&host.volumes["runs"]);
    let formal_log = runs.join("formal/results.jsonl");
    let t0 = Instant::now();
    let mut dispatched = 0.0;
    while rows(&formal_log) < 2 {
        let state = podman(&["inspect", "-f", "{{.State.Status}}", &cname]).1;
        assert_eq!(
            state.trim(),
            "running",
            "coordinator container ended:\n{}",
            tail(&logs(&cname), 40)
        );
        assert!(
            t0.elapsed() < Duration::from_secs(300),
            "the coordinator container checkpointed no 2 results in 5 min:\n{}",
            tail(&logs(&cname), 40)
        );
        if let Some((200, page)) = http_get(cspec.metrics_port.unwrap(), "/metrics") {
            dispatched = metric(&page, "farm_matches_dispatched_total");
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    queue_in_log(&logs(&cname)).expect("the coordinator container logs its queue");
    let first = rows(&formal_log);
    eprintln!(
        "coordinator container: {first} results checkpointed, {dispatched} dispatched, in {:.1?}",
        t0.elapsed()
    );
    assert!(dispatched > 0.0 || first > 0, "nothing dispatched");
    // Restarted, its command takes the --resume branch and goes on from its log.
    podman_ok(&["stop", "-t", "10", &cname]);
    podman_ok(&["start", &cname]);
    let t1 = Instant::now();
    while rows(&formal_log) <= first {
        let state = podman(&["inspect", "-f", "{{.State.Status}}", &cname]).1;
        assert_eq!(
            state.trim(),
            "running",
            "restarted coordinator container ended:\n{}",
            tail(&logs(&cname), 40)
        );
        assert!(
            t1.elapsed() < Duration::from_secs(180),
            "the restarted coordinator checkpointed nothing more:\n{}",
            tail(&logs(&cname), 40)
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    // Still running (without --resume, `farm run` refuses the existing output and exits),
    // more rows, the earlier ones unchanged, each match once.
    let text = std::fs::read_to_string(&formal_log).unwrap();
    let mut seen = BTreeSet::new();
    for l in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(l).unwrap();
        let n = v["match"].as_u64().expect("a match number");
        assert!(
            seen.insert(n),
            "formal run: match {n} checkpointed twice across the restart"
        );
    }
    eprintln!(
        "coordinator container restarted: resumed, {} results now",
        seen.len()
    );
}
