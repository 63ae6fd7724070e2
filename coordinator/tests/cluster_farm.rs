//! Cluster mode against the real RabbitMQ (127.0.0.1:5672, guest) and Redis (127.0.0.1:6379):
//! real `farm run --broker` coordinators and `farm worker` processes, real signals. Each scenario
//! ends with every result exactly once and equal to the embedded farm's run of the same
//! tournament. Without a broker the tests print why and pass, unless FARM_REQUIRE_BROKER=1.
//! Scenarios run one at a time (a lock) to keep the 2-core machine's timings sane; each uses
//! its own Redis database and deletes the tournament's queues at the end.

mod cluster_support;

use std::time::{Duration, Instant};

use cluster_support::*;

#[test]
fn cluster_run_equals_embedded() {
    let Some(_g) = setup() else { return };
    let t = Farm::new("equal", 5);
    let w1 = t.worker("w1", 1);
    let w2 = t.worker("w2", 1);
    let out = t.run_cluster(&[]);
    assert_eq!(out.status, Some(0), "coordinator failed:\n{}", out.stderr);
    assert_same_results(&t.output(), &reference());
    assert!(
        out.stderr.contains("live worker"),
        "no worker view:\n{}",
        out.stderr
    );
    let logs = [w1.stop(), w2.stop()];
    // Both workers took part, and the tournament's end reads as normal (no broker error).
    for l in &logs {
        assert!(l.contains("ready"), "worker log:\n{l}");
        let errors: Vec<&str> = l.lines().filter(|x| x.contains("ERROR")).collect();
        assert!(
            errors.is_empty(),
            "worker errors:\n{}\n\nworker log:\n{l}",
            errors.join("\n")
        );
    }
    t.assert_queues_gone();
}

#[test]
fn worker_sigkilled_repeatedly() {
    let Some(_g) = setup() else { return };
    let t = Farm::new("sigkill", 6);
    let _steady = t.worker("steady", 1);
    let mut coord = t.start_cluster(&[]);
    let started = Instant::now();
    let mut kills = 0;
    let mut victim = t.worker("victim0", 1);
    while coord.running() && started.elapsed() < Duration::from_secs(150) {
        std::thread::sleep(Duration::from_millis(1500));
        if !coord.running() {
            break;
        }
        victim.kill9();
        kills += 1;
        victim = t.worker(&format!("victim{kills}"), 1);
    }
    let out = coord.wait();
    assert!(
        kills >= 2,
        "the run ended before two kills ({kills}); make it longer"
    );
    assert_eq!(out.status, Some(0), "coordinator failed:\n{}", out.stderr);
    assert_same_results(&t.output(), &reference());
    victim.stop();
    t.assert_queues_gone();
}

#[test]
fn coordinator_sigkilled_and_resumed() {
    let Some(_g) = setup() else { return };
    let t = Farm::new("resume", 7);
    let _w1 = t.worker("w1", 1);
    let _w2 = t.worker("w2", 1);
    let mut coord = t.start_cluster(&[]);
    t.wait_for_results(8, &mut coord);
    coord.kill9();
    let done_before = t.logged_rows();
    assert!(
        done_before < reference().len(),
        "the run finished before the kill"
    );
    let out = t.run_cluster(&["--resume"]);
    assert_eq!(
        out.status,
        Some(0),
        "resumed coordinator failed:\n{}",
        out.stderr
    );
    assert_same_results(&t.output(), &reference());
    t.assert_queues_gone();
}

#[test]
fn redis_flushed_mid_run() {
    let Some(_g) = setup() else { return };
    let t = Farm::new("flush", 8);
    let _w1 = t.worker("w1", 1);
    let _w2 = t.worker("w2", 1);
    let mut coord = t.start_cluster(&[]);
    t.wait_for_results(5, &mut coord);
    t.flush_redis();
    assert!(coord.running(), "the run ended before the flush");
    assert_eq!(t.artifact_count(), 0);
    // A fresh worker has nothing cached: it needs the artifacts back in Redis.
    let _w3 = t.worker_with_scratch("w3", 1, "fresh");
    let out = coord.wait();
    assert_eq!(out.status, Some(0), "coordinator failed:\n{}", out.stderr);
    assert_same_results(&t.output(), &reference());
    // The 3 bots, and the referee package: each file of its MANIFEST and the manifest itself.
    let package =
        std::fs::read_to_string(root().join("workspace/bomberman/MANIFEST.json")).unwrap();
    let files = serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&package)
        .unwrap()
        .len();
    assert_eq!(
        t.artifact_count(),
        3 + files + 1,
        "the coordinator did not upload the bots and the referee package again"
    );
    t.assert_queues_gone();
}

#[test]
fn worker_sigterm_finishes_and_exits() {
    let Some(_g) = setup() else { return };
    let t = Farm::new("sigterm", 9);
    let w1 = t.worker("w1", 1);
    let mut coord = t.start_cluster(&[]);
    t.wait_for_results(4, &mut coord);
    assert!(coord.running(), "the run ended before the SIGTERM");
    let _w2 = t.worker("w2", 1);
    let (code, log) = w1.terminate(Duration::from_secs(60));
    assert_eq!(
        code,
        Some(0),
        "SIGTERMed worker did not exit cleanly:\n{log}"
    );
    assert!(log.contains("stopped"), "worker log:\n{log}");
    let out = coord.wait();
    assert_eq!(out.status, Some(0), "coordinator failed:\n{}", out.stderr);
    assert_same_results(&t.output(), &reference());
    t.assert_queues_gone();
}

#[test]
fn garbage_and_forged_jobs_are_dead_lettered() {
    let Some(_g) = setup() else { return };
    let t = Farm::new("dlq", 10);
    let _w1 = t.worker("w1", 1);
    let mut coord = t.start_cluster(&[]);
    t.wait_for_results(2, &mut coord);
    t.publish_raw_job(b"this is not a farm message at all, just garbage bytes".to_vec());
    t.publish_forged_job();
    let out = coord.wait();
    assert_eq!(out.status, Some(0), "coordinator failed:\n{}", out.stderr);
    assert_same_results(&t.output(), &reference());
    let dead = std::fs::read_to_string(t.output().join("dead-letters.jsonl")).unwrap_or_default();
    let lines: Vec<&str> = dead.lines().collect();
    assert_eq!(lines.len(), 2, "dead letters:\n{dead}");
    assert!(dead.contains("signature does not verify"), "{dead}");
    assert!(
        dead.contains("too short") || dead.contains("wire version"),
        "{dead}"
    );
    t.assert_queues_gone();
}

#[test]
fn artifact_bytes_not_matching_their_hash_are_refused_then_repaired() {
    let Some(_g) = setup() else { return };
    let t = Farm::new("badart", 11);
    // Plant wrong bytes under the random bot's hash before the coordinator uploads (it does not
    // overwrite what is there: content addressing); workers must refuse them.
    t.plant_artifact(RANDOM_BOT, b"int main() { return 1; }\n");
    let w1 = t.worker_with_scratch("w1", 1, "fresh-a");
    let out = t.run_cluster(&[]);
    assert_eq!(out.status, Some(0), "coordinator failed:\n{}", out.stderr);
    assert_same_results(&t.output(), &reference());
    let log = w1.stop();
    assert!(
        log.contains("refused"),
        "worker never saw the bad bytes:\n{log}"
    );
    t.assert_queues_gone();
}

#[test]
fn poison_jobs_are_dead_lettered_reported_and_redone() {
    let Some(_g) = setup() else { return };
    let t = Farm::new("poison", 3);
    // A "worker" that dies on every job: it takes each one and hands it back, until the
    // delivery limit dead-letters it. No real worker runs yet.
    let mut coord = t.start_cluster(&["--seeds", "1"]);
    let queue = t.jobs_queue();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stop2 = stop.clone();
    let crasher = std::thread::spawn(move || {
        rt().block_on(async move {
            use futures_lite::StreamExt;
            let conn = lapin::Connection::connect(BROKER, Default::default())
                .await
                .unwrap();
            let ch = conn.create_channel().await.unwrap();
            let mut c = ch
                .basic_consume(&queue, "crasher", Default::default(), Default::default())
                .await
                .unwrap();
            let mut handed_back = 0u64;
            while !stop2.load(std::sync::atomic::Ordering::Relaxed) {
                let next = tokio::time::timeout(Duration::from_millis(200), c.next()).await;
                if let Ok(Some(Ok(d))) = next {
                    let requeue = lapin::options::BasicNackOptions {
                        requeue: true,
                        ..Default::default()
                    };
                    d.acker.nack(requeue).await.unwrap();
                    handed_back += 1;
                }
            }
            let _ = conn.close(200, "bye").await;
            handed_back
        })
    });
    let out = coord.wait();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let handed_back = crasher.join().unwrap();
    assert_eq!(
        out.status,
        Some(3),
        "expected failed matches:\n{}",
        out.stderr
    );
    assert!(handed_back >= 12, "only {handed_back} deliveries");
    let summary = std::fs::read_to_string(t.output().join("汇总.md")).unwrap();
    assert!(
        summary.contains("delivered"),
        "no reason in the report:\n{summary}"
    );
    // Nothing was scored.
    assert_eq!(results(&t.output()).len(), 0);
    // The operator redoes just those with real workers.
    let _w1 = t.worker("w1", 1);
    let _w2 = t.worker("w2", 1);
    let out = t.run_cluster(&["--seeds", "1", "--resume", "--redo-failed"]);
    assert_eq!(out.status, Some(0), "redo failed:\n{}", out.stderr);
    assert_eq!(results(&t.output()).len(), 12);
    t.assert_queues_gone();
}

#[test]
fn worker_refuses_jobs_of_another_referee_package() {
    let Some(_g) = setup() else { return };
    let t = Farm::new("manifest", 2);
    // This worker's referee package differs from the coordinator's (one file changed).
    let pkg = t.dir.path().join("other-package");
    std::fs::create_dir_all(&pkg).unwrap();
    let src = root().join("workspace/bomberman");
    for f in ["RULES.md", "VERSION", "schedule-bundled.json"] {
        std::fs::copy(src.join(f), pkg.join(f)).unwrap();
    }
    std::fs::write(pkg.join("RULES.md"), "# other rules\n").unwrap();
    let st = std::process::Command::new(farm())
        .arg("manifest")
        .arg(&pkg)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(st.success());
    let _w = t.worker_args("w1", 1, "w1", &["--workspace", pkg.to_str().unwrap()]);
    let out = t.run_cluster(&["--seeds", "1"]);
    assert_eq!(
        out.status,
        Some(3),
        "expected refused matches:\n{}",
        out.stderr
    );
    assert_eq!(results(&t.output()).len(), 0);
    let dead = std::fs::read_to_string(t.output().join("dead-letters.jsonl")).unwrap();
    assert!(dead.contains("MANIFEST digest"), "{dead}");
    let summary = std::fs::read_to_string(t.output().join("汇总.md")).unwrap();
    assert!(
        summary.contains("MANIFEST digest"),
        "no reason in the report:\n{summary}"
    );
    t.assert_queues_gone();
}

/// A worker killed in the middle of a match while the jobs queue still holds jobs: its match is
/// published again once its heartbeat expired, not only when the queue has drained (a long
/// tournament's in-order log would stand still behind it until then).
#[test]
fn a_killed_workers_match_is_played_again_while_jobs_are_queued() {
    let Some(_g) = setup() else { return };
    let t = Farm::new("holder", 6);
    // Two bots that sleep 25 ms a turn: matches of several seconds, no timeout.
    let slow = std::fs::read_to_string(root().join("bots/test/slow.cpp")).unwrap();
    let slow = slow.replace("argc > 1 ? std::atoi(argv[1]) : 500", "25");
    assert!(slow.contains("milliseconds(ms)") && !slow.contains(": 500"));
    let bot = t.dir.path().join("slow25.cpp");
    std::fs::write(&bot, slow).unwrap();
    let (s1, s2) = (
        format!("S1={}", bot.display()),
        format!("S2={}", bot.display()),
    );
    let _steady = t.worker("steady", 1);
    let mut victim = t.worker("victim", 1);
    let total = 8;
    let mut coord = t.start_tournament(&[
        "--bots", &s1, &s2, "--anchor", "S1", "--sizes", "2", "--seeds", "4", "--seed", "7",
    ]);
    // Kill the victim once it has listed one job for 3 s (the coordinator, which looks every
    // 2 s, has seen it hold the job).
    let started = Instant::now();
    let mut held: Option<(String, Instant)> = None;
    let lost = loop {
        assert!(coord.running(), "the run ended first:\n{}", coord.stderr());
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the victim held no job for 3 s:\n{}",
            coord.stderr()
        );
        let now = t.held_by("victim").into_iter().next();
        held = match (held, now) {
            (Some((job, since)), Some(n)) if job == n => {
                if since.elapsed() >= Duration::from_secs(3) {
                    break job;
                }
                Some((job, since))
            }
            (_, Some(n)) => Some((n, Instant::now())),
            (_, None) => None,
        };
        std::thread::sleep(Duration::from_millis(100));
    };
    victim.kill9();
    let killed = Instant::now();
    let number = lost.rsplit('#').next().unwrap().to_string();
    let (after, done_then) = loop {
        let log = coord.stderr();
        if log.contains("its heartbeat expired") {
            break (killed.elapsed(), t.logged_rows());
        }
        assert!(coord.running(), "the run ended first:\n{log}");
        assert!(
            killed.elapsed() < Duration::from_secs(60),
            "match {lost} not published again 60 s after its worker was killed:\n{log}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    eprintln!(
        "match {lost} published again {:.1} s after its worker was killed, with {done_then}/{total} results logged",
        after.as_secs_f64()
    );
    // Under the queue-empty rule the steady worker would have played nearly every other match
    // first: at least 3 matches (the lost one among them) must still be unplayed.
    assert!(
        done_then + 3 <= total,
        "published again only after {done_then}/{total} results:\n{}",
        coord.stderr()
    );
    let out = coord.wait_limit(Duration::from_secs(400));
    assert_eq!(out.status, Some(0), "the run failed:\n{}", out.stderr);
    assert_eq!(t.logged_rows(), total, "{}", out.stderr);
    let line = out
        .stderr
        .lines()
        .find(|l| l.contains("its heartbeat expired"))
        .unwrap_or_default()
        .to_string();
    assert!(
        line.contains(&format!("number={number}")) && line.contains("victim"),
        "the republish names another match or worker than {lost}: {line}"
    );
    let results = std::fs::read_to_string(t.output().join("results.json")).unwrap();
    assert!(
        !results.contains("\"failed\"") && !results.contains("timeout"),
        "{results}"
    );
    t.assert_queues_gone();
}
