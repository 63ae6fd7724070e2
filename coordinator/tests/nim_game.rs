//! The game boundary is real: Nim, a game of a few dozen lines of rules, plays embedded
//! (in-process queue, local worker threads) and on the cluster (RabbitMQ, a separate `farm
//! worker` process fetching the bots from Redis) through the same dispatcher and the same verifying accept, and both give the same records. (`farm run --game
//! nim` and `farm sprt --game nim` play it through the tournament engine: tournament_games.rs.)
//!
//! The cluster half needs RabbitMQ (127.0.0.1:5672) and Redis (127.0.0.1:6379, database 13);
//! skipped with a printed reason without them, unless FARM_REQUIRE_BROKER=1.

mod cluster_support;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use broker::Store;
use cluster_support::{root, setup, Farm, BROKER, KEY};
use coordinator::dispatch::Dispatcher;
use coordinator::transport::embedded::Embedded;
use coordinator::transport::rabbitmq::{ClusterSpec, RabbitMq};
use coordinator::transport::Transport;
use games::accept::Accepted;
use games::nim::NimRecord;
use sandbox::{CoreTokens, SandboxConfig};
use shared::msg::{GameJob, Job, NimJob, ProgramRef, SeatSpec};
use worker::job::{JobRunner, LocalArtifacts};
use worker::CompileCache;

const GAMES: u64 = 6;

fn bots() -> Vec<(String, PathBuf)> {
    ["xor", "first"]
        .iter()
        .map(|n| (n.to_string(), root().join(format!("bots/nim/{n}.cpp"))))
        .collect()
}

fn seat(name: &str, path: &PathBuf) -> SeatSpec {
    let sha = shared::manifest::sha256_hex(&std::fs::read(path).unwrap());
    SeatSpec {
        name: name.into(),
        program: ProgramRef::for_file(&sha, path),
    }
}

/// Game k: seed k, the two bots in both seat orders.
fn jobs(tournament: &str) -> Vec<Job> {
    let b = bots();
    (1..=GAMES)
        .map(|k| {
            let (x, y) = if k % 2 == 1 { (0, 1) } else { (1, 0) };
            games::job::job(
                tournament,
                k,
                vec![seat(&b[x].0, &b[x].1), seat(&b[y].0, &b[y].1)],
                GameJob::Nim(NimJob {
                    seed: k,
                    turn_ms: 2000,
                }),
            )
        })
        .collect()
}

/// Every job through the one dispatcher; each report held to its job by the one accept.
async fn play<T: Transport>(transport: T, tournament: &str) -> Vec<NimRecord> {
    let mut flights = Dispatcher::new(transport, tournament, 4);
    let mut pending = jobs(tournament);
    pending.reverse();
    let mut records: Vec<Option<NimRecord>> = vec![None; GAMES as usize];
    loop {
        while flights.has_room() {
            let Some(j) = pending.pop() else { break };
            flights.publish(j).await.unwrap();
        }
        if flights.in_flight() == 0 {
            break;
        }
        let batch = tokio::time::timeout(Duration::from_secs(120), flights.next_batch())
            .await
            .expect("reports within 2 minutes")
            .unwrap()
            .expect("workers answer");
        for a in batch {
            match a.verdict() {
                Ok(Accepted::Nim(r)) => records[a.job.number as usize - 1] = Some(*r),
                Ok(other) => panic!("game {}: a {} record", a.job.number, other.name()),
                Err(e) => panic!("game {}: refused: {e}", a.job.number),
            }
            flights.ack([a.tag]).await.unwrap();
        }
    }
    flights.shutdown().await.unwrap();
    records
        .into_iter()
        .map(|r| r.expect("every game"))
        .collect()
}

fn assert_played(records: &[NimRecord]) {
    for (k, r) in records.iter().enumerate() {
        assert_eq!(r.seed, k as u64 + 1);
        assert!(r.fault.is_none(), "{r:?}");
        let nim_sum = r.heaps.iter().fold(0, |x, h| x ^ h);
        if r.players[0].name == "xor" && nim_sum != 0 {
            assert_eq!(
                r.winner, 0,
                "the perfect player moves first and wins: {r:?}"
            );
        }
    }
}

fn embedded_records() -> Vec<NimRecord> {
    let dir = tempfile::tempdir().unwrap();
    let cfg = SandboxConfig::default();
    let runner = JobRunner {
        cache: CompileCache::new(dir.path().join("cache"), cfg.clone()).unwrap(),
        sandbox: cfg,
        tokens: CoreTokens::new(2),
        worker_id: "embedded/nim".into(),
        speed: None,
        js_program: None,
    };
    let mut arts = LocalArtifacts::new();
    for (_, path) in bots() {
        arts.insert(
            shared::manifest::sha256_hex(&std::fs::read(&path).unwrap()),
            path,
        );
    }
    cluster_support::rt().block_on(async {
        let t = Embedded::start(2, 4, Arc::new(runner), Arc::new(arts));
        play(t, "nim-embedded").await
    })
}

#[test]
fn nim_plays_embedded_through_the_dispatcher_and_the_accept() {
    let records = embedded_records();
    assert_played(&records);
}

#[test]
fn nim_plays_on_the_cluster_through_the_same_paths() {
    let Some(_serial) = setup() else { return };
    let farm = Farm::new("nim", 13);
    let worker = farm.worker("w1", 2);
    let tournament = format!("nim-cluster-{}", std::process::id());
    let records = cluster_support::rt().block_on(async {
        let store = Store::connect(&farm.redis_url()).await.unwrap();
        let mut artifacts = Vec::new();
        for (_, path) in bots() {
            let bytes = std::fs::read(&path).unwrap();
            let sha = shared::manifest::sha256_hex(&bytes);
            store.put_artifact(&sha, &bytes, false).await.unwrap();
            artifacts.push((sha, path));
        }
        let t = RabbitMq::start(ClusterSpec {
            broker: BROKER.into(),
            key: shared::codec::FarmKey::new(KEY.as_bytes().to_vec()),
            tournament: tournament.clone(),
            store,
            artifacts,
            dead_file: None,
            confirm_window: 64,
            view_every: Duration::from_secs(300),
            completed: Vec::new(),
            terms: broker::Terms::default(),
        })
        .await
        .unwrap();
        play(t, &tournament).await
    });
    let log = worker.stop();
    assert_played(&records);
    // The same games, the same records: the path does not change the game.
    let embedded = embedded_records();
    assert_eq!(records, embedded, "worker log:\n{log}");
}
