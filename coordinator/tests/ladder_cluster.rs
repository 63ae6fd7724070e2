//! The ladder on a cluster: `farm ladder serve --broker --redis` publishes its games (smoke tests
//! and challenges) as jobs to RabbitMQ, a separate `farm worker` process plays them with the code
//! fetched from Redis, and the results come back through the same API as on the embedded farm;
//! a SIGTERM with the worker connected leaves nothing of the ladder on the broker.
//!
//! Needs RabbitMQ (127.0.0.1:5672) and Redis (127.0.0.1:6379, database 15 is this test's);
//! skipped with a printed reason without them, unless FARM_REQUIRE_BROKER=1.

mod ladder_support;

use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

use ladder_support::{bot, Backend, Ladder, Opts};

const BROKER: &str = "amqp://guest:guest@127.0.0.1:5672/%2f";
const REDIS: &str = "redis://127.0.0.1:6379/15";
const KEY: &str = "ladder-cluster-test-key-0123456789";

#[test]
fn ladder_games_run_on_cluster_workers() {
    let up =
        |a: &str| TcpStream::connect_timeout(&a.parse().unwrap(), Duration::from_secs(2)).is_ok();
    if !up("127.0.0.1:5672") || !up("127.0.0.1:6379") {
        if std::env::var("FARM_REQUIRE_BROKER").as_deref() == Ok("1") {
            panic!("FARM_REQUIRE_BROKER=1 but RabbitMQ or Redis is not reachable");
        }
        eprintln!("skipped: RabbitMQ at 127.0.0.1:5672 or Redis at 127.0.0.1:6379 not reachable");
        return;
    }
    // One cluster scenario at a time across test processes: nextest's `shared-services` test
    // group (.config/nextest.toml).
    let dir = tempfile::tempdir().unwrap();
    let name = format!("ladder-test-{}", std::process::id());
    let worker = Command::new(env!("CARGO_BIN_EXE_farm"))
        .current_dir(dir.path())
        .args([
            "worker", "--broker", BROKER, "--redis", REDIS, "--slots", "2",
        ])
        .args(["--id", &format!("{name}-w")])
        .arg("--scratch")
        .arg(dir.path().join("scratch"))
        .env("FARM_KEY", KEY)
        .env("FARM_CACHE_DIR", dir.path().join("cache"))
        .env("FARM_LOG", "warn")
        .stdout(Stdio::null())
        .spawn()
        .expect("farm worker starts");
    // Killed when the test ends, also when it fails: no worker outlives its scratch folder.
    let worker = KillOnDrop(worker);
    let l = Ladder::start(
        Backend::Sqlite,
        Opts {
            extra: vec![
                "--broker".into(),
                BROKER.into(),
                "--redis".into(),
                REDIS.into(),
                "--cluster-name".into(),
                name.clone(),
            ],
            env: vec![("FARM_KEY".into(), KEY.into())],
            ..Opts::default()
        },
    );
    let (a_id, a) = l.player("osc-cluster", true);
    let (b_id, b) = l.player("quit-cluster", true);
    // The smoke tests (6 games each) run on the worker.
    let r = l.submit(&a, &bot("osc.js"));
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(l.publish(&b, &bot("quit.js")), 1);
    let r = l.submit(&b, &bot("thrower.js"));
    assert_eq!(r.status, 422, "{}", r.text);
    assert_eq!(r.json["failures"][0]["reason"], "error");

    // A challenge: osc beats quit in both games, RP settled as on the embedded farm.
    let r = l.challenge(&a, b_id);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.json["result"], "win");
    assert_eq!(r.json["rpDelta"], 25);
    assert_eq!(r.json["opponent"]["rpDelta"], -15);
    let url = r.json["matches"][1]["urlId"].as_str().unwrap().to_string();
    let m = l.get(&format!("/api/match/{url}"), None);
    assert_eq!(m.json["red"]["botId"], a_id);
    assert_eq!(m.json["winner"], "red");
    assert_eq!(m.json["reason"], "error");

    // The code went to the workers through Redis.
    let mut redis = redis::Client::open(REDIS)
        .unwrap()
        .get_connection()
        .unwrap();
    let sha = l.get("/api/agent/bot/info", Some(&a)).json["codeSha256"]
        .as_str()
        .unwrap()
        .to_string();
    let n: i64 = redis::cmd("EXISTS")
        .arg(format!("farm:art:{sha}"))
        .query(&mut redis)
        .unwrap();
    assert_eq!(n, 1, "osc's code is a Redis artifact");

    // SIGTERM with the worker still connected: the ladder's queues and dead-letter exchange
    // go with it, as a finished tournament's do.
    let mut l = l;
    let prefix = broker::Names::for_tournament(&name)
        .jobs
        .trim_end_matches(".jobs")
        .to_string();
    assert!(
        broker_names("list_queues")
            .iter()
            .any(|q| q.starts_with(&prefix)),
        "no queue {prefix}.* while the ladder serves"
    );
    l.stop();
    for what in ["list_queues", "list_exchanges"] {
        let left: Vec<String> = broker_names(what)
            .into_iter()
            .filter(|q| q.starts_with(&prefix))
            .collect();
        assert!(
            left.is_empty(),
            "left on the broker after SIGTERM: {left:?}"
        );
    }
    drop(l);
    drop(worker);
    let _: () = redis::cmd("FLUSHDB").query(&mut redis).unwrap();
}

/// The names `rabbitmqctl <what> name` lists (queues or exchanges of the default vhost).
fn broker_names(what: &str) -> Vec<String> {
    let out = Command::new("rabbitmqctl")
        .args([what, "name", "--quiet", "--no-table-headers"])
        .output()
        .expect("rabbitmqctl runs");
    assert!(out.status.success(), "rabbitmqctl {what} failed");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.trim().to_string())
        .collect()
}

struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
