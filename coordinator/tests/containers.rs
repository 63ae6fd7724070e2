//! The deploy files, run for real with podman (no Docker engine here; see
//! ../shared/CONTAINERS-NOTES.md and tools/install-containers.sh):
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
//! The phases live in containers_support/: `workers` (2), `tournament` and `checks` (3),
//! `coordinator_image` (4), and what they share (the deploy files read, this run's names,
//! volumes, secrets and guards) in `site`.
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

use std::fs::File;
use std::io::Write;
use std::time::Instant;

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
    // The deploy files, checked against the binary under test (containers_support/site.rs).
    let files = DeployFiles::read();

    // --- 1. images
    let work = tempfile::tempdir().unwrap();
    let t0 = Instant::now();
    let worker_image = build_image(&repo(), "worker", &farm_bin(), work.path());
    let coord_image = build_image(&repo(), "coordinator", &farm_bin(), work.path());
    let t_images = t0.elapsed();

    // --- per-run names, volumes, secrets: what the phases share
    let site = Site::new(files, REDIS_DB);

    // --- 2. workers: compose replicas and one k8s pod (containers_support/workers.rs)
    let workers = start_workers(&site, &worker_image);
    let t_workers_ready = workers.ready.duration_since(t_start);

    // --- 3. the tournament, with a kill and a stop mid-run (tournament.rs), and its checks
    // (checks.rs)
    let played = play_with_kill_and_stop(&site, workers, &worker_image);
    let t_tournament = played.took;
    check_tournament(&site, &played);

    // --- 4. the coordinator image with the compose coordinator's command
    let t4 = Instant::now();
    coordinator_image_resumes(
        &site.run,
        site.files.svc_coord(),
        &site.host,
        &site.guard,
        &site.restore,
        &coord_image,
    );
    let t_coordinator = t4.elapsed();

    // --- clean up, then: no bot process of any of these containers is left on the host
    clean_up_then_no_bot_left(site, &played.all_ids);
    let mut report = File::create(work.path().join("timings")).unwrap();
    let line = format!(
        "timings: images {t_images:.1?}, workers ready at {t_workers_ready:.1?}, tournament {t_tournament:.1?}, \
         coordinator image {t_coordinator:.1?}, total {:.1?}",
        t_start.elapsed()
    );
    writeln!(report, "{line}").unwrap();
    eprintln!("{line}");
}
