use super::*;

/// A small deterministic generator (the tests need no randomness crate).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
    fn pick(&mut self, n: usize) -> usize {
        ((self.next() * n as f64) as usize).min(n - 1)
    }
}

const BOTS: [&str; 6] = ["Base", "Random", "Crashy", "Flaky", "Smart", "Slow"];

/// How often a bot faults on a good worker: Crashy always, Flaky one seat in five.
fn bot_rate(bot: &str) -> f64 {
    match bot {
        "Crashy" => 1.0,
        "Flaky" => 0.2,
        _ => 0.0,
    }
}

/// Play `matches` two-seat matches on `workers` (round robin); worker `bad` (if any) adds a
/// fault to any seat with probability `bad_rate`. Returns (match index, evidence) per quarantine.
fn fleet(
    seed: u64,
    workers: usize,
    matches: usize,
    bad: Option<usize>,
    bad_rate: f64,
) -> Vec<(usize, Evidence)> {
    let mut rng = Lcg(seed);
    let mut q = Quarantine::default();
    let mut out = Vec::new();
    let names: Vec<String> = (0..workers).map(|i| format!("host{i}/w")).collect();
    let mut next = 0usize;
    for m in 0..matches {
        // Quarantined workers get no more jobs: the next free one plays.
        let w = loop {
            let w = next % workers;
            next += 1;
            if !q.is_quarantined(&names[w]) {
                break w;
            }
        };
        let seats: Vec<(&str, bool)> = (0..2)
            .map(|_| {
                let bot = BOTS[rng.pick(BOTS.len())];
                let host = bad == Some(w) && rng.next() < bad_rate;
                (bot, host || rng.next() < bot_rate(bot))
            })
            .collect();
        if let Some(e) = q.result(&names[w], &seats) {
            out.push((m, e));
        }
    }
    out
}

#[test]
fn poisson_tails_match_closed_forms() {
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 + 1e-9 * b.abs();
    assert!(close(poisson_upper_tail(1.0, 1), 1.0 - (-1.0f64).exp()));
    assert!(close(
        poisson_upper_tail(2.0, 3),
        1.0 - 5.0 * (-2.0f64).exp()
    ));
    assert_eq!(poisson_upper_tail(3.0, 0), 1.0);
    // The first term dominates a far tail: e^-0.1 0.1^10 / 10!.
    let first = (-0.1f64).exp() * 0.1f64.powi(10) / 3_628_800.0;
    let tail = poisson_upper_tail(0.1, 10);
    assert!(tail > first && tail < first * 1.01, "{tail} vs {first}");
    assert!(poisson_upper_tail(50.0, 40) > 0.9);
}

#[test]
fn a_worker_whose_bots_time_out_is_quarantined_within_a_bounded_number_of_reports() {
    // (share of its seats the bad host spoils, most of its reports before it is quarantined)
    for (rate, bound) in [(1.0, 12), (0.6, 30)] {
        for seed in 1..=20 {
            let found = fleet(seed, 4, 400, Some(2), rate);
            assert_eq!(found.len(), 1, "seed {seed}: {found:?}");
            let (_, e) = &found[0];
            assert_eq!(e.worker, "host2/w");
            assert_eq!(e.test, Test::BotFaults);
            assert!(e.reports <= bound, "rate {rate}, seed {seed}: {e}");
            assert!(e.p_value < e.threshold && e.observed as f64 > e.expected);
        }
    }
}

#[test]
fn bad_bots_never_get_a_good_worker_quarantined() {
    // Crashy faults in every seat and Flaky in one of five, on every worker: their faults
    // follow the bots, so across many fleets and thousands of matches no worker stands out.
    for seed in 1..=40 {
        let found = fleet(seed, 5, 1500, None, 0.0);
        assert!(found.is_empty(), "seed {seed}: {found:?}");
    }
}

#[test]
fn a_bot_seated_mostly_on_one_worker_predicts_its_own_crashes() {
    let mut q = Quarantine::default();
    // Worker a plays the crashing bot nine times out of ten; b and c rarely.
    for i in 0..300 {
        assert!(q
            .result("a", &[("Crashy", true), ("Base", false)])
            .is_none());
        if i % 10 == 0 {
            assert!(q
                .result("b", &[("Crashy", true), ("Base", false)])
                .is_none());
        }
        assert!(q
            .result("c", &[("Base", false), ("Random", false)])
            .is_none());
    }
    // A bot never seen elsewhere predicts nothing and counts for nothing.
    for _ in 0..100 {
        assert!(q
            .result("c", &[("OnlyHere", true), ("Base", false)])
            .is_none());
    }
    assert_eq!(q.quarantined().count(), 0);
}

#[test]
fn a_worker_whose_reports_fail_is_quarantined_and_one_flaky_report_is_not() {
    let mut q = Quarantine::default();
    let mut found = None;
    for i in 0..200 {
        for w in ["a", "b", "c"] {
            // b fails every other report; a fails once.
            let fails = (w == "b" && i % 2 == 0) || (w == "a" && i == 7);
            let e = if fails {
                q.no_result(w)
            } else {
                q.result(w, &[("Base", false), ("Random", false)])
            };
            if let Some(e) = e {
                assert!(found.is_none(), "a second quarantine: {e}");
                found = Some((i, e));
            }
        }
    }
    let (i, e) = found.expect("worker b is quarantined");
    assert_eq!((e.worker.as_str(), e.test), ("b", Test::NoResult));
    assert!(i < 30, "after {i} rounds: {e}");
    assert!(e.to_string().contains("reports without a result"), "{e}");
}

#[test]
fn never_more_than_half_the_fleet_nor_a_lone_worker() {
    // Alone, a worker has nothing to be compared with.
    let mut q = Quarantine::default();
    for _ in 0..200 {
        assert!(q.no_result("only").is_none());
    }
    // Two workers, both failing most reports: at most one goes, the other keeps playing.
    let mut q = Quarantine::default();
    for _ in 0..1000 {
        q.result("good", &[("Base", false)]);
    }
    let mut gone = 0;
    for _ in 0..300 {
        for w in ["x", "y"] {
            gone += usize::from(q.no_result(w).is_some());
        }
    }
    // Three workers seen: at most one quarantined.
    assert_eq!(gone, 1);
    assert_eq!(q.quarantined().count(), 1);
}

#[test]
fn a_released_worker_starts_again_from_nothing() {
    let mut q = Quarantine::default();
    let round = |q: &mut Quarantine, bad: bool| {
        let mut hit = None;
        for w in ["a", "b", "c", "d"] {
            let faulted = bad && w == "d";
            if let Some(e) = q.result(w, &[("Base", faulted), ("Random", faulted)]) {
                hit = Some(e);
            }
        }
        hit
    };
    for _ in 0..10 {
        assert!(round(&mut q, false).is_none());
    }
    let first = (0..30).find_map(|_| round(&mut q, true)).expect("d goes");
    assert_eq!(first.worker, "d");
    assert!(q.is_quarantined("d"));
    // Quarantined: its reports are not counted any more.
    assert!(q.result("d", &[("Base", true)]).is_none());
    assert!(q.release("d"));
    assert!(!q.is_quarantined("d") && !q.release("d"));
    // Repaired, it plays clean and stays; the others' record of the bots is intact.
    for _ in 0..200 {
        assert!(round(&mut q, false).is_none());
    }
    // Broken again, it goes again.
    assert!((0..30).find_map(|_| round(&mut q, true)).is_some());
    let restored: Vec<Evidence> = q.quarantined().cloned().collect();
    let mut again = Quarantine::default();
    again.restore(restored[0].clone());
    assert!(again.is_quarantined("d"));
}

/// Counts saved mid-run (through their JSON form, as a resumed run reads them) and resumed
/// judge as if the run had never stopped: the bad worker is quarantined at the same report with
/// the same evidence, where a tracker that started from nothing would need the reports again.
#[test]
fn counts_saved_and_resumed_judge_as_an_unbroken_run() {
    let names: Vec<String> = (0..6).map(|i| format!("h{i}")).collect();
    let mut rng = Lcg(17);
    let reports: Vec<(usize, Vec<(&str, bool)>)> = (0..600)
        .map(|m| {
            let w = m % names.len();
            let seats = (0..2)
                .map(|_| {
                    let bot = BOTS[rng.pick(BOTS.len())];
                    let host = w == 3 && rng.next() < 0.6;
                    (bot, host || rng.next() < bot_rate(bot))
                })
                .collect();
            (w, seats)
        })
        .collect();
    let first_hit = |q: &mut Quarantine, from: usize| {
        reports[from..]
            .iter()
            .enumerate()
            .find_map(|(i, (w, seats))| q.result(&names[*w], seats).map(|e| (from + i, e)))
    };
    let mut unbroken = Quarantine::default();
    let (at, evidence) = first_hit(&mut unbroken, 0).expect("the bad host is found");
    assert_eq!(evidence.worker, "h3");
    let cut = at - 2; // stopped two reports before the quarantine
    let mut before = Quarantine::default();
    for (w, seats) in &reports[..cut] {
        assert!(before.result(&names[*w], seats).is_none());
    }
    let saved = serde_json::to_string(&before.counted()).unwrap();
    let mut resumed = Quarantine::default();
    resumed.resume(serde_json::from_str(&saved).unwrap());
    assert_eq!(resumed.counted(), before.counted());
    assert_eq!(first_hit(&mut resumed, cut), Some((at, evidence)));
    // From nothing, the same reports after the cut do not suffice.
    let fresh = first_hit(&mut Quarantine::default(), cut);
    assert!(fresh.as_ref().is_none_or(|(i, _)| *i > at), "{fresh:?}");
}
