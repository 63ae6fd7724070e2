//! The fleet benchmark (issue 25 §3), ignored by default: many `farm worker` processes (200 by
//! default, `BENCH_FLEET`) against one coordinator, RabbitMQ and Redis on this machine, with
//! instant bots so that the farm itself is measured. It prints what each idle worker costs the
//! broker and Redis (with no tournament, and with one announced whose jobs queue is empty), a
//! tournament's matches per second, the coordinator's CPU per match and Redis memory per match;
//! it asserts only that the runs completed.
//!
//! ```sh
//! cargo test --release -p coordinator --test fleet_bench -- --ignored --nocapture
//! ```
//!
//! With `BENCH_ANCHOR_FARM=/path/to/another/farm` the idle phases are measured first with
//! workers of that build (the anchor, e.g. one from before the back-off), in the same run.
//!
//! The workers run with `--sandbox off` (the farm, not the sandbox, is measured here; the
//! sandbox's own costs are in BENCHMARKS.md) and share one compile cache. Broker frames are
//! counted per connection (`rabbitmqctl list_connections`), keeping only the workers' own
//! connections (matched to their pids through `ss`), so other clients of the broker do not
//! count; Redis commands are counted server-wide (`INFO stats`), so run it on a quiet Redis.

mod cluster_support;

use std::collections::HashSet;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cluster_support::*;

fn fleet_size() -> usize {
    std::env::var("BENCH_FLEET")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200)
}

/// The local ports of the broker connections of the processes `pids` (from `ss -tnp`).
fn broker_ports(pids: &HashSet<u32>) -> HashSet<u16> {
    let out = Command::new("ss")
        .args(["-tnpH", "dst", "127.0.0.1:5672"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| {
            l.split("pid=")
                .skip(1)
                .filter_map(|s| s.split(',').next()?.parse::<u32>().ok())
                .any(|p| pids.contains(&p))
        })
        .filter_map(|l| {
            let local = l.split_whitespace().nth(3)?;
            local.rsplit(':').next()?.parse().ok()
        })
        .collect()
}

/// Frames the broker has received and sent on the connections from `ports`, summed.
fn broker_frames(ports: &HashSet<u16>) -> (u64, u64) {
    let out = Command::new("rabbitmqctl")
        .args([
            "-q",
            "list_connections",
            "peer_port",
            "recv_cnt",
            "send_cnt",
        ])
        .output()
        .unwrap();
    let mut sum = (0, 0);
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (Some(port), Some(recv), Some(send)) = (f.first(), f.get(1), f.get(2)) else {
            continue;
        };
        if port.parse().is_ok_and(|p: u16| ports.contains(&p)) {
            sum.0 += recv.parse::<u64>().unwrap_or(0);
            sum.1 += send.parse::<u64>().unwrap_or(0);
        }
    }
    sum
}

fn redis_info(field: &str) -> u64 {
    let mut con = redis::Client::open("redis://127.0.0.1:6379/0")
        .unwrap()
        .get_connection()
        .unwrap();
    let info: String = redis::cmd("INFO").arg("all").query(&mut con).unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// Broker frames (received, sent) per second and Redis commands per second over `secs`.
fn idle_rates(ports: &HashSet<u16>, secs: u64) -> (f64, f64, f64) {
    let (r0, s0) = broker_frames(ports);
    let c0 = redis_info("total_commands_processed");
    std::thread::sleep(Duration::from_secs(secs));
    let (r1, s1) = broker_frames(ports);
    let c1 = redis_info("total_commands_processed");
    let s = secs as f64;
    (
        (r1 - r0) as f64 / s,
        (s1 - s0) as f64 / s,
        (c1 - c0) as f64 / s,
    )
}

/// User + system CPU seconds of the process `pid` so far (from /proc).
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    // Fields 14 and 15 (utime, stime) are at 11 and 12 after the command name.
    (ticks(11) + ticks(12)) as f64 / 100.0
}

/// A fleet of `n` one-slot workers (run through `wrap`, e.g. another build's binary), ready.
struct Fleet {
    workers: Vec<Proc>,
    ports: HashSet<u16>,
}

fn start_fleet(f: &Farm, n: usize, wrap: &[&str], label: &str) -> Fleet {
    let cache = f.dir.path().join("cache");
    let cache_arg = cache.display().to_string();
    let t0 = Instant::now();
    let workers: Vec<Proc> = (0..n)
        .map(|i| {
            let id = format!("{label}{i:04}");
            let extra = ["--sandbox", "off", "--cache-dir", &cache_arg];
            f.worker_under(wrap, &id, 1, &id, &extra)
        })
        .collect();
    let pids: HashSet<u32> = workers.iter().map(Proc::pid).collect();
    f.wait_ready(n, Duration::from_secs(900));
    let started = t0.elapsed().as_secs_f64();
    let rss_kb: u64 = pids
        .iter()
        .filter_map(|p| std::fs::read_to_string(format!("/proc/{p}/status")).ok())
        .filter_map(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        })
        .sum();
    let ports = broker_ports(&pids);
    println!(
        "{label}: {n} workers ready in {started:.1} s; {} broker connections; RSS {:.1} MB per worker",
        ports.len(),
        rss_kb as f64 / 1024.0 / n as f64
    );
    Fleet { workers, ports }
}

/// What the idle fleet costs: with no tournament, then with one announced whose jobs queue
/// stays empty.
fn idle_phases(f: &Farm, fleet: &Fleet, label: &str) {
    let n = fleet.workers.len();
    let ports = &fleet.ports;
    let rt = rt();
    let store = rt.block_on(broker::Store::connect(&f.redis_url())).unwrap();
    let (recv, send, cmds) = idle_rates(ports, 20);
    println!(
        "{label}: idle, no tournament: broker {recv:.1} frames/s in, {send:.1} out ({:.3} in per worker); Redis {cmds:.1} commands/s ({:.3} per worker)",
        recv / n as f64,
        cmds / n as f64
    );
    let tournament = format!("fleetidle{:08x}", std::process::id());
    let names = broker::Names::for_tournament(&tournament);
    let conn = rt
        .block_on(lapin::Connection::connect(BROKER, Default::default()))
        .unwrap();
    let ch = rt.block_on(conn.create_channel()).unwrap();
    rt.block_on(names.declare(&ch)).unwrap();
    rt.block_on(store.register(&tournament, &broker::Terms::default()))
        .unwrap();
    // Long enough for every worker to have backed off to its cap (8 s by default).
    std::thread::sleep(Duration::from_secs(20));
    let (recv, send, cmds) = idle_rates(ports, 30);
    println!(
        "{label}: idle, one tournament with an empty queue: broker {recv:.1} frames/s in, {send:.1} out ({:.3} in per worker); Redis {cmds:.1} commands/s ({:.3} per worker)",
        recv / n as f64,
        cmds / n as f64
    );
    rt.block_on(store.unregister(&tournament)).unwrap();
    std::thread::sleep(Duration::from_secs(2));
    for q in [&names.jobs, &names.results, &names.dlq] {
        let _ = rt.block_on(ch.queue_delete(q, Default::default()));
    }
    let _ = rt.block_on(ch.exchange_delete(&names.dlx, Default::default()));
    let _ = rt.block_on(conn.close(200, "bye"));
}

#[test]
#[ignore]
fn fleet_of_many_workers() {
    let Some(_g) = setup() else { return };
    let n = fleet_size();
    let f = Farm::new("fleet", 12);
    // The anchor first (another build's workers, e.g. from before the back-off), when given.
    if let Ok(anchor) = std::env::var("BENCH_ANCHOR_FARM") {
        let exec = format!("shift; exec {anchor} \"$@\"");
        let wrap = ["sh", "-c", exec.as_str(), "sh"];
        let fleet = start_fleet(&f, n, &wrap, "anchor");
        idle_phases(&f, &fleet, "anchor");
        drop(fleet);
        f.flush_redis();
        std::thread::sleep(Duration::from_secs(12));
    }
    let fleet = start_fleet(&f, n, &[], "this build");
    idle_phases(&f, &fleet, "this build");
    let ports = fleet.ports.clone();

    // A tournament of instant bots on the whole fleet.
    let seeds = std::env::var("BENCH_SEEDS").unwrap_or_else(|_| "250".into());
    let out = f.output();
    let mem0 = redis_info("used_memory");
    let mut coord = Command::new(farm())
        .current_dir(root())
        .args(["run", "--bots"])
        .args(["A=bots/test/answer.cpp", "B=bots/test/answer.cpp"])
        .args(["C=bots/test/answer.cpp", "D=bots/test/answer.cpp"])
        .args(["--anchor", "A", "--sizes", "2", "--seeds", &seeds])
        .args(["--seed", "7", "--sandbox", "off"])
        .args(["--workers", &n.to_string(), "--broker", BROKER])
        .args(["--redis", &f.redis_url(), "--output"])
        .arg(&out)
        .env("FARM_KEY", KEY)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(f.dir.path().join("coordinator.err")).unwrap())
        .spawn()
        .unwrap();
    let pid = coord.id();
    let t0 = Instant::now();
    let (mut cpu, mut mem_peak) = (0.0, mem0);
    let status = loop {
        if let Some(st) = coord.try_wait().unwrap() {
            break st;
        }
        cpu = cpu_seconds(pid).max(cpu);
        mem_peak = mem_peak.max(redis_info("used_memory"));
        std::thread::sleep(Duration::from_millis(200));
    };
    let wall = t0.elapsed().as_secs_f64();
    let err = std::fs::read_to_string(f.dir.path().join("coordinator.err")).unwrap_or_default();
    assert!(status.success(), "{err}");
    let matches = results(&out).len();
    let (recv, _) = broker_frames(&ports);
    println!(
        "tournament: {matches} matches of 2 instant bots on {n} workers in {wall:.1} s = {:.1} matches/s; coordinator CPU {cpu:.2} s (at least; sampled) = {:.2} ms per match; Redis memory {:.1} MB at the start, peak +{:.1} MB = {:.0} bytes per match ({:.1} MB per 10,000 matches); workers' broker frames in so far {recv}",
        matches as f64 / wall,
        1000.0 * cpu / matches as f64,
        mem0 as f64 / 1e6,
        (mem_peak - mem0) as f64 / 1e6,
        (mem_peak - mem0) as f64 / matches as f64,
        (mem_peak - mem0) as f64 / matches as f64 * 10_000.0 / 1e6
    );
    drop(fleet);
}
