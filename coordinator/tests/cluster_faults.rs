//! Cluster runs under the faults real deployments meet: matches longer than the broker's consumer
//! timeout (lowered at run time, restored after), a fresh run after a killed one with the same
//! tournament identity, and a soak of combined faults (worker kills at random times, a
//! coordinator kill and resume, a broker stop/start, a Redis flush) that must end with every
//! match exactly once and the same results as the embedded farm, and a stranger on the broker
//! (no farm key) putting copies of real jobs on the dead-letter queue.

mod cluster_support;

use std::process::Command;
use std::time::{Duration, Instant};

use cluster_support::*;

/// Lowers RabbitMQ's consumer timeout for the test; restores the previous value when dropped
/// (also when the test fails).
struct ConsumerTimeout {
    previous: Option<String>,
}

fn rabbitmq_eval(expr: &str) -> String {
    let out = Command::new("rabbitmqctl")
        .args(["eval", expr])
        .output()
        .expect("rabbitmqctl");
    assert!(out.status.success(), "rabbitmqctl eval {expr} failed");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

impl ConsumerTimeout {
    fn lower(ms: u64) -> ConsumerTimeout {
        let now = rabbitmq_eval("application:get_env(rabbit, consumer_timeout).");
        let previous = now
            .strip_prefix("{ok,")
            .and_then(|r| r.strip_suffix('}'))
            .map(str::to_string);
        rabbitmq_eval(&format!(
            "application:set_env(rabbit, consumer_timeout, {ms})."
        ));
        ConsumerTimeout { previous }
    }
}

impl Drop for ConsumerTimeout {
    fn drop(&mut self) {
        let expr = match &self.previous {
            Some(v) => format!("application:set_env(rabbit, consumer_timeout, {v})."),
            None => "application:unset_env(rabbit, consumer_timeout).".to_string(),
        };
        let _ = Command::new("rabbitmqctl").args(["eval", &expr]).output();
    }
}

/// How many times the worker logs say match `n` was played.
fn times_played(logs: &str, n: u64) -> usize {
    logs.lines()
        .filter(|l| l.contains(" played ") && l.contains(&format!("#{n} in ")))
        .count()
}

#[test]
fn long_matches_outlive_the_brokers_consumer_timeout() {
    let Some(_g) = setup() else { return };
    // Deadlines of 2 s for a bot that sleeps 0.5 s a turn: long matches, never a timeout.
    std::env::set_var("FARM_TURN_MS", "2000");
    // The broker checks the timeout about once a minute: matches of ~75 s cross it.
    let _timeout = ConsumerTimeout::lower(5000);
    let t = Farm::new("long", 14);
    let w = t.worker("w1", 2);
    let mut coord = t.start_tournament(&[
        "--bots",
        "S1=bots/test/slow.cpp",
        "S2=bots/test/slow.cpp",
        "--anchor",
        "S1",
        "--sizes",
        "2",
        "--seeds",
        "1",
        "--seed",
        "7",
    ]);
    let out = coord.wait_limit(Duration::from_secs(400));
    let logs = w.stop();
    assert_eq!(
        out.status,
        Some(0),
        "the run did not finish:\n{}\nworker:\n{logs}",
        out.stderr
    );
    assert_eq!(t.logged_rows(), 2, "{}", out.stderr);
    for n in [1, 2] {
        assert_eq!(
            times_played(&logs, n),
            1,
            "match {n} not played exactly once:\n{logs}"
        );
    }
    assert!(
        !logs.contains("PRECONDITION_FAILED") && !logs.contains("session ended"),
        "the broker cut the worker off:\n{logs}"
    );
    let replays = std::fs::read_to_string(t.output().join("results.json")).unwrap();
    assert!(!replays.contains("timeout"), "a turn timed out: {replays}");
    t.assert_queues_gone();
}

#[test]
fn a_fresh_run_after_a_killed_one_inherits_nothing() {
    let Some(_g) = setup() else { return };
    let t = Farm::new("fresh", 1);
    let mut w1 = t.worker("w1", 1);
    let mut coord = t.start_cluster(&[]);
    t.wait_for_results(7, &mut coord);
    coord.kill9();
    w1.kill9();
    assert!(t.logged_rows() < reference().len(), "the run ended first");
    // The same command into a new folder, no --resume: everything is played again.
    let again = t.dir.path().join("again");
    let _w2 = t.worker("w2", 2);
    let out = t
        .start_cluster_at(&again, &[])
        .wait_limit(Duration::from_secs(400));
    assert_eq!(
        out.status,
        Some(0),
        "the fresh run did not finish:\n{}",
        out.stderr
    );
    assert_same_results(&again, &reference());
    t.assert_queues_gone();
}

/// A small deterministic generator for fault timings (the seed is printed to reproduce a run).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn between(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }
}

/// Starts the broker's app again if a test stopped it (even when the test fails).
struct BrokerGuard {
    stopped: bool,
}

impl BrokerGuard {
    fn stop(&mut self) {
        let ok = Command::new("rabbitmqctl")
            .arg("stop_app")
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "rabbitmqctl stop_app failed");
        self.stopped = true;
    }
    fn start(&mut self) {
        let ok = Command::new("rabbitmqctl")
            .arg("start_app")
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "rabbitmqctl start_app failed");
        self.stopped = false;
    }
}

impl Drop for BrokerGuard {
    fn drop(&mut self) {
        if self.stopped {
            let _ = Command::new("rabbitmqctl").arg("start_app").status();
        }
    }
}

/// One soak round: returns a description of the faults injected.
fn soak_round(round: u32, seed: u64) -> String {
    let mut rng = Rng(seed | 1);
    let t = Farm::new(&format!("soak{round}"), 15);
    let total = reference().len();
    let broker_restart = std::env::var("FARM_TEST_BROKER_RESTART").as_deref() == Ok("1");
    let mut broker = BrokerGuard { stopped: false };
    let mut workers = vec![t.worker("w0", 1), t.worker("w1", 1)];
    let mut spawned = 2;
    let mut coord = t.start_cluster(&[]);
    let mut faults = Vec::new();
    let kill_coord_at = total * rng.between(10, 25) as usize / 100;
    let broker_at = total * rng.between(35, 50) as usize / 100;
    let flush_at = total * rng.between(55, 75) as usize / 100;
    let (mut coord_killed, mut broker_done, mut flushed) = (false, !broker_restart, false);
    let mut next_worker_kill = Instant::now() + Duration::from_millis(rng.between(2000, 6000));
    let started = Instant::now();
    loop {
        std::thread::sleep(Duration::from_millis(200));
        // Progress: results in the log and those durable ahead of a gap (a lost match holds
        // the log's prefix until it is played again).
        let ahead = std::fs::read_to_string(t.output().join("results.ahead.jsonl"))
            .map(|s| s.lines().count())
            .unwrap_or(0);
        let done = t.logged_rows() + ahead;
        if !coord.running() {
            if coord_killed || done >= total {
                break;
            }
            let out = coord.wait();
            panic!(
                "round {round} (seed {seed}): coordinator exited early with {:?}:\n{}",
                out.status, out.stderr
            );
        }
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "round {round} (seed {seed}): stuck at {done}/{total} after {faults:?}:\n{}",
            coord.stderr()
        );
        if Instant::now() >= next_worker_kill {
            let i = rng.between(0, workers.len() as u64 - 1) as usize;
            workers[i].kill9();
            workers[i] = t.worker(&format!("w{spawned}"), 1);
            spawned += 1;
            faults.push(format!("worker kill at {done}"));
            next_worker_kill = Instant::now() + Duration::from_millis(rng.between(2000, 6000));
        }
        if !coord_killed && done >= kill_coord_at {
            coord.kill9();
            faults.push(format!("coordinator kill at {}", t.logged_rows()));
            std::thread::sleep(Duration::from_millis(rng.between(0, 2000)));
            coord = t.start_cluster(&["--resume"]);
            coord_killed = true;
        }
        if coord_killed && !broker_done && done >= broker_at {
            broker.stop();
            faults.push(format!("broker stop at {done}"));
            std::thread::sleep(Duration::from_millis(rng.between(1000, 4000)));
            broker.start();
            broker_done = true;
        }
        if coord_killed && !flushed && done >= flush_at {
            t.flush_redis();
            faults.push(format!("Redis flush at {done}"));
            flushed = true;
        }
    }
    let out = coord.wait();
    assert_eq!(
        out.status,
        Some(0),
        "round {round} (seed {seed}) after {faults:?}: the coordinator failed:\n{}",
        out.stderr
    );
    assert_same_results(&t.output(), &reference());
    drop(workers);
    t.assert_queues_gone();
    faults.join(", ")
}

#[test]
fn soak_of_combined_faults_loses_nothing() {
    let Some(_g) = setup() else { return };
    let rounds: u32 = std::env::var("FARM_SOAK_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let base: u64 = std::env::var("FARM_SOAK_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    for round in 0..rounds {
        let seed = base.wrapping_add(round as u64);
        let t0 = Instant::now();
        let faults = soak_round(round, seed);
        eprintln!(
            "soak round {round} (FARM_SOAK_SEED={seed}) passed in {:.0} s: {faults}",
            t0.elapsed().as_secs_f64()
        );
    }
}

#[test]
fn a_worker_needs_no_local_referee_package() {
    let Some(_g) = setup() else { return };
    let t = Farm::new("nopkg", 1);
    // A worker started in an empty folder: no workspace/, no bots/; everything from Redis.
    let empty = tempfile::tempdir().unwrap();
    let log = t.dir.path().join("worker-bare.log");
    let child = Command::new(farm())
        .current_dir(empty.path())
        .args(["worker", "--broker", BROKER, "--redis", &t.redis_url()])
        .args(["--slots", "2", "--id", "nopkg-bare", "--scratch"])
        .arg(t.dir.path().join("scratch-bare"))
        .env("FARM_KEY", KEY)
        .stdout(std::fs::File::create(&log).unwrap())
        .stderr(std::fs::File::create(log.with_extension("err")).unwrap())
        .spawn()
        .unwrap();
    let w = Proc {
        child: Some(child),
        log,
    };
    let out = t
        .start_cluster(&["--seeds", "1"])
        .wait_limit(Duration::from_secs(300));
    let logs = w.stop();
    assert_eq!(out.status, Some(0), "{}\nworker:\n{logs}", out.stderr);
    assert_eq!(t.logged_rows(), 12, "{}", out.stderr);
    assert!(
        !logs.contains("no referee package"),
        "the worker wants a local package:\n{logs}"
    );
    t.assert_queues_gone();
}

/// Headers as RabbitMQ sets them when a quorum queue dead-letters a message at its delivery
/// limit: anyone who can publish can write them too.
fn forged_death(jobs_queue: &str) -> lapin::types::FieldTable {
    use lapin::types::{AMQPValue, FieldArray, FieldTable, LongString};
    let s = |v: &str| AMQPValue::LongString(LongString::from(v.as_bytes().to_vec()));
    let mut death = FieldTable::default();
    death.insert("count".into(), AMQPValue::LongLongInt(5));
    death.insert("reason".into(), s("delivery_limit"));
    death.insert("queue".into(), s(jobs_queue));
    death.insert("exchange".into(), s(""));
    death.insert(
        "routing-keys".into(),
        AMQPValue::FieldArray(FieldArray::from(vec![s(jobs_queue)])),
    );
    let mut h = FieldTable::default();
    h.insert(
        "x-death".into(),
        AMQPValue::FieldArray(FieldArray::from(vec![AMQPValue::FieldTable(death)])),
    );
    h.insert("x-first-death-reason".into(), s("delivery_limit"));
    h.insert("x-first-death-queue".into(), s(jobs_queue));
    h.insert("x-first-death-exchange".into(), s(""));
    h
}

/// Issue 22, item 5: with no farm key, take two jobs off the jobs queue and publish each three
/// times to the dead-letter exchange a few seconds apart, one with a worker's refusal header,
/// one with the broker's own delivery-limit headers forged. No match fails: every result is the
/// clean run's and the run exits 0; every copy is listed, and none failed a match.
#[test]
fn dead_letters_from_a_stranger_on_the_broker_change_no_result() {
    let Some(_g) = setup() else { return };
    let t = Farm::new("strangerdlq", 10);
    let mut coord = t.start_cluster(&[]);
    let stolen = t.steal_jobs(2);
    let queue = t.jobs_queue();
    let mut refusal = lapin::types::FieldTable::default();
    refusal.insert(
        "x-farm-reason".into(),
        lapin::types::AMQPValue::LongString("refused by worker evil: nope".into()),
    );
    for _ in 0..3 {
        t.publish_dead(&stolen[0], refusal.clone());
        t.publish_dead(&stolen[1], forged_death(&queue));
        std::thread::sleep(Duration::from_secs(2));
    }
    // The workers come only now, so no result can overtake a letter.
    let _w1 = t.worker("w1", 1);
    let _w2 = t.worker("w2", 1);
    let out = coord.wait_limit(Duration::from_secs(600));
    assert_eq!(out.status, Some(0), "coordinator failed:\n{}", out.stderr);
    assert_same_results(&t.output(), &reference());
    let dead = std::fs::read_to_string(t.output().join("dead-letters.jsonl")).unwrap_or_default();
    let entries: Vec<serde_json::Value> = dead
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // (More than six only if a failed earlier run of this test left letters on the queue.)
    assert!(entries.len() >= 6, "dead letters:\n{dead}");
    let verdicts: Vec<&str> = entries
        .iter()
        .map(|e| e["verdict"].as_str().unwrap_or(""))
        .collect();
    // The copies with a refusal header are never signed refusals; of the forged broker dead
    // letters at most the first counts (a loss: published again), its copies never.
    let rejected = verdicts.iter().filter(|v| **v == "rejected").count();
    assert!(rejected + 1 >= entries.len(), "dead letters:\n{dead}");
    assert!(
        verdicts.iter().all(|v| *v != "failed the match"),
        "dead letters:\n{dead}"
    );
    assert!(dead.contains("already counted"), "dead letters:\n{dead}");
    t.assert_queues_gone();
}
