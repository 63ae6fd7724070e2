//! A three-seat game through the whole engine: `farm run --game lowest` with four lowest-unique
//! bots (C++ sources; each group of three plays every rotation, forward and reversed) is rated,
//! its faulty bot's faults are counted in 汇总.md, `farm verify` re-plays every record, and the
//! same tournament on the cluster (RabbitMQ, a `farm worker` process) gives the same results.
//!
//! The cluster half needs RabbitMQ (127.0.0.1:5672) and Redis (127.0.0.1:6379, database 15);
//! skipped with a printed reason without them, unless FARM_REQUIRE_BROKER=1.

mod cluster_support;
mod common;

use std::path::Path;

use serde_json::Value;

/// 4 groups of 3 bots × 3 rotations × 2 orders × 3 seeds.
const MATCHES: usize = 72;

fn args(out: &Path) -> Vec<String> {
    [
        "run",
        "--game",
        "lowest",
        "--bots",
        "One=bots/lowest/one.cpp",
        "Random=bots/lowest/random.cpp",
        "Counter=bots/lowest/counter.cpp",
        "Broken=bots/lowest/broken.cpp",
        "--anchor",
        "Random",
        "--seeds",
        "3",
        "--seed",
        "5",
        "--output",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([out.display().to_string()])
    .collect()
}

fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// Run the embedded tournament into `out` and check what it wrote.
fn embedded(out: &Path) {
    let (code, stdout, err) = common::run(common::farm().args(args(out)));
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{err}");
    let results = json(&out.join("results.json"));
    assert_eq!(results.as_array().unwrap().len(), MATCHES);
    let bt = json(&out.join("bt.json"));
    let rating = |name: &str| {
        bt["ratings"][name]
            .as_f64()
            .unwrap_or_else(|| panic!("{name} in {bt:#}"))
    };
    assert_eq!(rating("Random"), 0.0, "the anchor");
    // Always 1 wins most rounds; the broken bot is out of every game it plays.
    assert!(
        rating("One") > rating("Counter") && rating("One") > rating("Random"),
        "{bt:#}"
    );
    assert!(
        rating("Broken") < rating("Counter") && rating("Broken") < rating("Random"),
        "{bt:#}"
    );
    // The broken bot played 3 of the 4 groups: 3 × 6 orders × 3 seeds, each with its fault.
    let summary = std::fs::read_to_string(out.join("汇总.md")).unwrap();
    assert!(
        summary.contains("|3|Broken|54|0.000|0.0%|0.0%|54|"),
        "{summary}"
    );
    let (code, stdout, err) = common::run(common::farm().args(["verify", out.to_str().unwrap()]));
    assert_eq!(code, 0, "{stdout}\n{err}");
    assert!(stdout.contains("72 of 72 replays"), "{stdout}");
}

#[test]
fn lowest_unique_is_rated_faults_counted_and_verified() {
    let tmp = tempfile::tempdir().unwrap();
    embedded(&tmp.path().join("lowest"));
}

#[test]
fn on_the_cluster_the_same_tournament_gives_the_same_results() {
    let Some(_serial) = cluster_support::setup() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let reference = tmp.path().join("embedded");
    embedded(&reference);

    let f = cluster_support::Farm::new("lowest", 15);
    let _worker = f.worker("w1", 2);
    let mut args = args(&f.output());
    args.extend([
        "--broker".into(),
        cluster_support::BROKER.into(),
        "--redis".into(),
        f.redis_url(),
    ]);
    let (code, stdout, err) = common::run(
        common::farm()
            .args(&args)
            .env("FARM_KEY", cluster_support::KEY),
    );
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{err}");
    assert!(err.contains("RabbitMQ"), "it ran on the cluster:\n{err}");
    assert_eq!(
        common::results_without_timing(&f.output()),
        common::results_without_timing(&reference),
        "the same games"
    );
    std::fs::write(f.dir.path().join("coordinator.err"), &err).unwrap();
    f.assert_queues_gone();
}
