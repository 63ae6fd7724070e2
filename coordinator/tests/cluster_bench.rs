//! Cluster benchmarks, ignored by default (`cargo test --release -p coordinator --test
//! cluster_bench -- --ignored --nocapture`): the coordinator's raw dispatch rate through RabbitMQ
//! with publisher confirms, and trivial-bot match throughput with 2 workers against the embedded
//! farm. They print figures; they assert only that the runs completed.

mod cluster_support;

use std::process::Stdio;
use std::time::{Duration, Instant};

use broker::Store;
use cluster_support::*;
use coordinator::transport::rabbitmq::{ClusterSpec, RabbitMq};
use coordinator::transport::Transport;
use shared::msg::{ProgramRef, SeatSpec};

#[test]
#[ignore]
fn raw_dispatch_rate_with_confirms() {
    let Some(_g) = setup() else { return };
    let n: u64 = std::env::var("BENCH_JOBS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let store = Store::connect("redis://127.0.0.1:6379/14").await.unwrap();
        let tournament = format!("bench{:016x}", std::process::id());
        let mut t = RabbitMq::start(ClusterSpec {
            broker: BROKER.into(),
            key: shared::codec::FarmKey::new(KEY.as_bytes().to_vec()),
            tournament: tournament.clone(),
            store,
            artifacts: Vec::new(),
            dead_file: None,
            confirm_window: 512,
            view_every: Duration::from_secs(3600),
            completed: Vec::new(),
            terms: broker::Terms::default(),
        })
        .await
        .unwrap();
        let seat = |name: &str| SeatSpec {
            name: name.into(),
            program: ProgramRef {
                sha256: "0".repeat(64),
                file_name: "bot.cpp".into(),
            },
        };
        let t0 = Instant::now();
        for number in 1..=n {
            let game = shared::msg::GameJob::Bomberman(shared::msg::BombermanJob {
                seed: number * 7919,
                manifest_digest: "0".repeat(64),
                clock: None,
            });
            let seats = vec![seat("A"), seat("B"), seat("C")];
            let job = games::job::job(&tournament, number, seats, game);
            t.publish(job).await.unwrap();
        }
        t.flush().await.unwrap();
        let secs = t0.elapsed().as_secs_f64();
        let conn = lapin::Connection::connect(BROKER, Default::default())
            .await
            .unwrap();
        let ch = conn.create_channel().await.unwrap();
        let q = ch
            .queue_declare(
                &t.names().jobs,
                lapin::options::QueueDeclareOptions {
                    passive: true,
                    ..Default::default()
                },
                Default::default(),
            )
            .await
            .unwrap();
        assert_eq!(q.message_count() as u64, n, "jobs in the queue");
        let _ = conn.close(200, "bye").await;
        println!(
            "raw dispatch: {n} signed persistent jobs confirmed in {secs:.2} s = {:.0} jobs/s",
            n as f64 / secs
        );
        t.shutdown().await.unwrap();
    });
}

#[test]
#[ignore]
fn trivial_match_throughput_cluster_vs_embedded() {
    let Some(_g) = setup() else { return };
    let dir = tempfile::tempdir().unwrap();
    // Three instant answerers (distinct files, same behaviour), every size-2 and size-3 match.
    let mut bots = Vec::new();
    for name in ["A", "B", "C"] {
        let p = dir.path().join(format!("{name}.cpp"));
        let src = std::fs::read_to_string(root().join(ANSWER_BOT)).unwrap();
        std::fs::write(&p, format!("{src}\n// {name}\n")).unwrap();
        bots.push(format!("{name}={}", p.display()));
    }
    let seeds = std::env::var("BENCH_SEEDS").unwrap_or_else(|_| "40".into());
    let args = |out: &std::path::Path, seeds: &str| {
        let mut v: Vec<String> = vec!["run".into(), "--bots".into()];
        v.extend(bots.iter().cloned());
        for s in [
            "--anchor",
            "A",
            "--sizes",
            "2",
            "3",
            "--seeds",
            seeds,
            "--seed",
            "99",
            "--workers",
            "2",
        ] {
            v.push(s.into());
        }
        v.push("--output".into());
        v.push(out.display().to_string());
        v
    };
    let timed = |cmd: &mut std::process::Command| {
        let t0 = Instant::now();
        let st = cmd
            .current_dir(root())
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(st.success());
        t0.elapsed().as_secs_f64()
    };
    // Warm the compile cache first (not measured).
    timed(std::process::Command::new(farm()).args(args(&dir.path().join("warm"), "1")));
    let emb = timed(std::process::Command::new(farm()).args(args(&dir.path().join("emb"), &seeds)));
    let f = Farm::new("bench", 13);
    let _w1 = f.worker("b1", 1);
    let _w2 = f.worker("b2", 1);
    std::thread::sleep(Duration::from_secs(1));
    let out = dir.path().join("cluster");
    let mut c = std::process::Command::new(farm());
    c.args(args(&out, &seeds))
        .args(["--broker", BROKER, "--redis", &f.redis_url()])
        .env("FARM_KEY", KEY);
    let clu = timed(&mut c);
    let matches = results(&out).len();
    println!(
        "throughput: {matches} trivial matches; embedded (2 workers) {emb:.2} s = {:.1}/s; RabbitMQ, 2 worker processes x 1 slot {clu:.2} s = {:.1}/s; ratio {:.0}%",
        matches as f64 / emb,
        matches as f64 / clu,
        100.0 * emb / clu
    );
}
