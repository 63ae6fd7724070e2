//! Several tournaments on one fleet (issue 25 §3): workers split their time between them as
//! the operators' `--share`s say, and a tournament asking for `--min-speed` is served by no
//! slower worker (the coordinator's fleet view names them).
//!
//! Two coordinators, `--share 3` and `--share 1`, publish the same kind of matches (two bots
//! that sleep 3 ms a turn, two seats) before any worker starts; two one-slot workers then serve
//! both. Both records are read as they grow, and the split is taken when the 3-share
//! tournament is down to its last two matches (from then on its queue is dry and the other may
//! take the free worker): the seconds the
//! workers spent on each (their reports in played-by.jsonl) must stand 3:1 within ±10%.
//!
//! Precedence (`--priority`, which `farm ladder serve` uses for its challenges on a cluster): a
//! short tournament at priority 1 announced while a long one at 0 keeps a worker busy is played
//! before the long one gets more than the match in hand.

mod cluster_support;

use std::path::Path;
use std::time::Duration;

use cluster_support::*;

/// Seconds of play in the reports a run took in (played-by.jsonl) and how many there were.
fn played(out: &Path) -> (f64, usize) {
    let text = std::fs::read_to_string(out.join("played-by.jsonl")).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["failed"].is_null())
        .fold((0.0, 0), |(s, n), v| {
            (s + v["seconds"].as_f64().unwrap_or(0.0), n + 1)
        })
}

fn announced(f: &Farm) -> usize {
    let mut con = redis::Client::open(f.redis_url())
        .unwrap()
        .get_connection()
        .unwrap();
    let members: Vec<String> = redis::cmd("SMEMBERS")
        .arg("farm:tournaments")
        .query(&mut con)
        .unwrap();
    members.len()
}

/// Two bots that sleep 3 ms a turn (matches long enough that a coordinator always has the
/// next job queued), on two seats, `seeds` seeds, tournament seed `seed`.
fn two_seat(seeds: &str, seed: &str) -> Vec<String> {
    let bot = "bots/test/stress_sleep.cpp";
    [
        "--bots".to_string(),
        format!("S1={bot}"),
        format!("S2={bot}"),
        "--anchor".into(),
        "S1".into(),
        "--sizes".into(),
        "2".into(),
        "--seeds".into(),
        seeds.into(),
        "--seed".into(),
        seed.into(),
    ]
    .into()
}

#[test]
fn two_tournaments_at_three_to_one_get_three_quarters_and_a_quarter_of_the_time() {
    let Some(_g) = setup() else { return };
    let f = Farm::new("shares", 10);
    let (out_a, out_b) = (f.dir.path().join("a"), f.dir.path().join("b"));
    let a_args = two_seat("40", "101");
    let b_args = two_seat("40", "202");
    let a_args: Vec<&str> = a_args.iter().map(String::as_str).collect();
    let b_args: Vec<&str> = b_args.iter().map(String::as_str).collect();
    // A window of 12 jobs each: neither queue runs dry between a result and the next publish.
    let mut a = f.start_tournament_at(&out_a, &a_args, &["--share", "3", "--workers", "6"]);
    let mut b = f.start_tournament_at(&out_b, &b_args, &["--share", "1", "--workers", "6"]);
    wait_until(Duration::from_secs(120), || match announced(&f) {
        2 => Ok(()),
        n => Err(format!("{n} of 2 tournaments announced")),
    });
    std::thread::sleep(Duration::from_secs(2));
    let w1 = f.worker("s1", 1);
    let w2 = f.worker("s2", 1);
    // Both records are read together until the 3-share tournament is down to the matches its
    // two workers hold: from then on its queue is dry and the other takes a worker by right.
    let (mut at, t0) = (None, std::time::Instant::now());
    while a.running() && t0.elapsed() < Duration::from_secs(600) {
        let (pa, pb) = (played(&out_a), played(&out_b));
        if pa.1 + 2 >= 80 {
            at = Some((pa, pb));
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = a.wait_limit(Duration::from_secs(600));
    b.kill9();
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    let ((sa, na), (sb, nb)) = at.expect("the 3-share tournament's record was never read");
    let ratio = sa / sb;
    eprintln!(
        "share 3: {na} matches, {sa:.1} s; share 1: {nb} matches, {sb:.1} s; time ratio {ratio:.2}, match ratio {:.2}",
        na as f64 / nb.max(1) as f64
    );
    assert!(
        (2.7..=3.3).contains(&ratio),
        "the workers' time split {sa:.1} s : {sb:.1} s = {ratio:.2}, not 3 ± 10%\nworker logs:\n{}\n{}",
        w1.stderr(),
        w2.stderr()
    );
}

#[test]
fn a_tournament_asking_for_a_faster_host_is_served_by_no_slower_worker() {
    let Some(_g) = setup() else { return };
    let f = Farm::new("minspeed", 10);
    let w = f.worker("m1", 1);
    f.wait_ready(1, Duration::from_secs(120));
    let args = two_seat("1", "303");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut coord = f.start_tournament_at(&f.output(), &args, &["--min-speed", "1e12"]);
    wait_until(Duration::from_secs(60), || {
        let log = w.stderr();
        match log.contains("not serving the tournament") {
            true => Ok(()),
            false => Err(format!("the worker did not say it stays away:\n{log}")),
        }
    });
    let log = w.stderr();
    assert!(log.contains("below the tournament's --min-speed"), "{log}");
    wait_until(Duration::from_secs(60), || {
        let c = coord.stderr();
        match c.contains("1 below --min-speed") {
            true => Ok(()),
            false => Err(format!("the coordinator's view does not name it:\n{c}")),
        }
    });
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(f.logged_rows(), 0, "a slower worker played a match");
    coord.kill9();
}

#[test]
fn a_tournament_at_a_higher_priority_is_played_ahead_of_a_long_one() {
    let Some(_g) = setup() else { return };
    let f = Farm::new("priority", 10);
    let (out_long, out_first) = (f.dir.path().join("long"), f.dir.path().join("first"));
    let long_args = two_seat("40", "404");
    let long_args: Vec<&str> = long_args.iter().map(String::as_str).collect();
    let mut long = f.start_tournament_at(&out_long, &long_args, &["--workers", "4"]);
    let w = f.worker("p1", 1);
    wait_until(Duration::from_secs(180), || match played(&out_long).1 {
        n if n >= 3 => Ok(()),
        n => Err(format!("the long tournament played {n} matches")),
    });
    let first_args = two_seat("5", "505");
    let first_args: Vec<&str> = first_args.iter().map(String::as_str).collect();
    let mut first = f.start_tournament_at(
        &out_first,
        &first_args,
        &["--priority", "1", "--workers", "4"],
    );
    wait_until(Duration::from_secs(120), || match announced(&f) {
        2 => Ok(()),
        n => Err(format!("{n} of 2 tournaments announced")),
    });
    let before = played(&out_long).1;
    let done = first.wait_limit(Duration::from_secs(300));
    let during = played(&out_long).1 - before;
    long.kill9();
    assert_eq!(done.status, Some(0), "{}", done.stderr);
    assert_eq!(played(&out_first).1, 10, "{}", done.stderr);
    // The match in hand when the other was announced, and those the worker may have taken before
    // it read the announcement (2 measured alone); at equal priority the long one had 12.
    assert!(
        during <= 5,
        "the long tournament played {during} matches while the priority one ran\nworker log:\n{}",
        w.stderr()
    );
    eprintln!("the long tournament played {during} matches while the priority one's 10 ran");
}
