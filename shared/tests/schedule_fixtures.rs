//! Schedule expansion compared entry by entry with the reference make_schedule
//! (fixtures from tools/reference/gen_schedule.py), plus frozen-schedule and identity shapes.

use serde_json::Value;
use shared::pyrandom::Random;
use shared::schedule::{
    make_schedule, make_schedule_with, FrozenEntry, FrozenSchedule, ScheduleError,
};

fn fixture() -> Value {
    serde_json::from_str(include_str!("fixtures/schedule.json")).unwrap()
}

fn ints(v: &Value) -> Vec<i64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect()
}

#[test]
fn expansion_matches_reference_entry_by_entry() {
    let fx = fixture();
    let cases = fx["cases"].as_array().unwrap();
    assert!(cases.len() >= 15);
    for case in cases {
        let n = case["entrants"].as_u64().unwrap() as usize;
        let sizes = ints(&case["sizes"]);
        let seeds = case["seed_count"].as_i64().unwrap();
        let seed = case["seed"].as_str().unwrap();
        let got = match seed.parse::<i128>() {
            Ok(s) => make_schedule(n, &sizes, seeds, s).unwrap(),
            Err(_) => {
                make_schedule_with(n, &sizes, seeds, Random::from_decimal(seed).unwrap()).unwrap()
            }
        };
        let want = case["entries"].as_array().unwrap();
        assert_eq!(got.len(), want.len(), "entry count for {case:.80}");
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            let w = ints(w);
            assert_eq!(
                g.size as i64, w[0],
                "case n={n} sizes={sizes:?} seed={seed}: entry {i} size"
            );
            assert_eq!(
                g.seed as i64, w[1],
                "case n={n} sizes={sizes:?} seed={seed}: entry {i} seed"
            );
            let slots: Vec<i64> = g.slots.iter().map(|&s| s as i64).collect();
            assert_eq!(
                slots,
                w[2..],
                "case n={n} sizes={sizes:?} seed={seed}: entry {i} slots"
            );
        }
    }
}

#[test]
fn refusals_match_reference_cases() {
    let fx = fixture();
    for case in fx["errors"].as_array().unwrap() {
        let n = case["entrants"].as_u64().unwrap() as usize;
        let sizes = ints(&case["sizes"]);
        let seeds = case["seed_count"].as_i64().unwrap();
        let err = make_schedule(n, &sizes, seeds, 0).unwrap_err();
        let py = case["message"].as_str().unwrap();
        let kind_ok = match &err {
            ScheduleError::TooFewEntrants(_) => py.contains("two entrants"),
            ScheduleError::SeedCount(_) => py.contains("seed count"),
            ScheduleError::Sizes { .. } => py.contains("match size"),
            _ => false,
        };
        assert!(kind_ok, "ours: {err}; reference: {py}");
    }
    let too_many = make_schedule(2, &[2], 1 << 31, 0).unwrap_err();
    assert!(
        matches!(too_many, ScheduleError::Sample { .. }),
        "{too_many}"
    );
}

fn frozen() -> FrozenSchedule {
    let text = r#"{"sizes":[2,3],"entries":[{"size":2,"seed":5,"slots":[0,1]},{"size":3,"seed":9,"slots":[2,1,0]}],
                   "baseline_slot":2,"schedule_seed":9223372036854775807,"version":"v1"}"#;
    serde_json::from_str(text).unwrap()
}

#[test]
fn frozen_schedule_checks_name_what_differs() {
    let roster = ["A", "B", "Base"];
    let f = frozen();
    let ok = f.validate(&roster, &[2, 3], "Base", "v1").unwrap();
    assert_eq!(ok[1].slots, vec![2, 1, 0]);
    assert_eq!(f.schedule_seed, i64::MAX as i128);

    let e = f.validate(&roster, &[3, 2], "Base", "v1").unwrap_err();
    assert!(matches!(e, ScheduleError::FrozenSizes { .. }), "{e}");
    let e = f
        .validate(&["A", "B", "Base", "D"], &[2, 3], "Base", "v1")
        .unwrap_err();
    assert!(e.to_string().contains("missing slots [3]"), "{e}");
    let e = f.validate(&roster, &[2, 3], "A", "v1").unwrap_err();
    assert!(
        e.to_string().contains("\"Base\"") && e.to_string().contains("slot 2"),
        "{e}"
    );
    let e = f.validate(&roster, &[2, 3], "Base", "v2").unwrap_err();
    assert!(
        e.to_string().contains("\"v1\"") && e.to_string().contains("\"v2\""),
        "{e}"
    );

    let mut bad = f.clone();
    bad.entries.push(FrozenEntry {
        size: 3,
        seed: 1,
        slots: vec![0, 0, 1],
    });
    let e = bad.validate(&roster, &[2, 3], "Base", "v1").unwrap_err();
    assert!(
        e.to_string().contains("#3") && e.to_string().contains("twice"),
        "{e}"
    );
    let mut bad = f.clone();
    bad.entries[0].size = 3;
    let e = bad.validate(&roster, &[2, 3], "Base", "v1").unwrap_err();
    assert!(e.to_string().contains("#1"), "{e}");
    let mut bad = f;
    bad.baseline_slot = 7;
    assert!(bad.validate(&roster, &[2, 3], "Base", "v1").is_err());
}

#[test]
fn truncated_frozen_schedule_is_a_parse_error() {
    let text = r#"{"sizes":[2,3],"entries":[{"size":2,"seed":5,"slots":[0,1]}"#;
    let e = serde_json::from_str::<FrozenSchedule>(text).unwrap_err();
    assert!(e.is_eof(), "{e}");
}
