//! An idle fleet costs next to nothing and still starts at once (issue 25 §3): a worker whose
//! queues are empty backs off (its looks at the broker and Redis come later and later, up to
//! `--idle-poll-max`), and a coordinator's first job wakes it through the `farm.wake` exchange.
//!
//! The worker here may back off to 10 minutes. After 33 s idle its looks have come at 0, 0.25,
//! 0.75, 1.75, 3.75, 7.75, 15.75 and 31.75 s, and the next is due at 63.75 s: without a
//! wake-up it could take no job for another 30 s. The tournament (two instant bots, one
//! match each way) must be over well before that.

mod cluster_support;

use std::time::{Duration, Instant};

use cluster_support::*;

#[test]
fn an_idle_worker_backs_off_and_a_coordinators_first_job_wakes_it() {
    let Some(_g) = setup() else { return };
    let f = Farm::new("idle", 15);
    let w = f.worker_args("i1", 1, "i1", &["--idle-poll-max", "600"]);
    f.wait_ready(1, Duration::from_secs(120));
    std::thread::sleep(Duration::from_secs(33));

    let t0 = Instant::now();
    let mut coord = f.start_tournament(&[
        "--bots",
        "A=bots/test/answer.cpp",
        "B=bots/test/answer.cpp",
        "--anchor",
        "A",
        "--sizes",
        "2",
        "--seeds",
        "1",
        "--seed",
        "5",
    ]);
    let out = coord.wait();
    let took = t0.elapsed();
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert_eq!(results(&f.output()).len(), 2);
    assert!(
        took < Duration::from_secs(25),
        "the tournament took {took:?}: the backed-off worker was not woken (its next look was \
         due 30 s after the coordinator started)\nworker log:\n{}",
        w.stderr()
    );
    eprintln!("a worker idle for 33 s played a 2-match tournament in {took:?}");
}
