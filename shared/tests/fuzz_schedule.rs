//! Fuzzing the schedule files a run reads back (issue 22): a frozen schedule (`--schedule`),
//! `schedule.json` and `identity.json` (`--resume`). Arbitrary text, valid files with bytes
//! edited, and well-formed schedules with arbitrary numbers go through the same parse and
//! checks as `farm run` uses them (`serde_json`, then `FrozenSchedule::validate` /
//! `Identity::difference`): only errors come out, never a panic. Bounded, a few seconds.

use proptest::prelude::*;
use shared::schedule::{FrozenEntry, FrozenSchedule, Identity, ScheduleFile};

const FROZEN: &str = r#"{"sizes":[2,3],"entries":[{"size":2,"seed":5,"slots":[0,1]},{"size":3,"seed":9,"slots":[2,1,0]}],"baseline_slot":2,"schedule_seed":9223372036854775807,"version":"v1"}"#;

fn fixture(name: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

const ROSTER: [&str; 3] = ["A", "B", "Base"];

/// Parses and checks `text` as each kind of schedule file; only errors may come out.
fn read_all(text: &str, identity: &Identity) {
    if let Ok(f) = serde_json::from_str::<FrozenSchedule>(text) {
        let _ = f.validate(&ROSTER, &[2, 3], "Base", "v1");
        let sizes = f.sizes.clone();
        let _ = f.validate(&ROSTER, &sizes, "Base", &f.version);
    }
    let _ = serde_json::from_str::<ScheduleFile>(text);
    if let Ok(saved) = serde_json::from_str::<Identity>(text) {
        let _ = identity.difference(&saved);
        let _ = saved.difference(identity);
    }
}

/// Edits a text at byte level, keeping it a string (invalid UTF-8 is read as text would be).
fn edited(text: &str, edits: &[(usize, u8, u8)]) -> String {
    let mut b = text.as_bytes().to_vec();
    for &(at, byte, how) in edits {
        let i = at % (b.len() + 1);
        match how % 4 {
            0 if i < b.len() => b[i] = byte,
            1 => b.insert(i, byte),
            2 if i < b.len() => {
                b.remove(i);
            }
            _ => b.truncate(i),
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

/// Bytes that make JSON interesting: digits, signs, brackets, quotes.
fn json_byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        prop::sample::select(b"0123456789-+.eE[]{}\",: ntrufalse".to_vec()),
        any::<u8>(),
    ]
}

fn frozen_entry() -> impl Strategy<Value = FrozenEntry> {
    (
        any::<i64>(),
        any::<u64>(),
        prop::collection::vec(prop_oneof![-2i64..5, any::<i64>()], 0..12),
    )
        .prop_map(|(size, seed, slots)| FrozenEntry { size, seed, slots })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn arbitrary_text_never_panics(text in ".{0,300}") {
        let identity: Identity = serde_json::from_str(&fixture("identity.json")).unwrap();
        read_all(&text, &identity);
    }

    #[test]
    fn edited_files_never_panic(
        which in 0usize..3,
        edits in prop::collection::vec((any::<usize>(), json_byte(), any::<u8>()), 1..8),
    ) {
        let identity_text = fixture("identity.json");
        let identity: Identity = serde_json::from_str(&identity_text).unwrap();
        let base = match which {
            0 => FROZEN.to_string(),
            1 => identity_text,
            _ => fixture("schedule-file.json"),
        };
        read_all(&edited(&base, &edits), &identity);
    }

    #[test]
    fn any_numbers_in_a_frozen_schedule_never_panic(
        sizes in prop::collection::vec(any::<i64>(), 0..4),
        entries in prop::collection::vec(frozen_entry(), 0..6),
        baseline_slot in prop_oneof![-1i64..4, any::<i64>()],
        schedule_seed in any::<i128>(),
    ) {
        let f = FrozenSchedule { sizes: sizes.clone(), entries, baseline_slot, schedule_seed, version: "v1".into() };
        let _ = f.validate(&ROSTER, &sizes, "Base", "v1");
        let _ = f.validate(&[], &sizes, "Base", "v1");
        let text = serde_json::to_string(&f).unwrap();
        let back: FrozenSchedule = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(back, f);
    }
}

#[test]
fn the_valid_files_parse() {
    let f: FrozenSchedule = serde_json::from_str(FROZEN).unwrap();
    assert_eq!(f.validate(&ROSTER, &[2, 3], "Base", "v1").unwrap().len(), 2);
    let i: Identity = serde_json::from_str(&fixture("identity.json")).unwrap();
    assert_eq!(i.difference(&i), None);
    serde_json::from_str::<ScheduleFile>(&fixture("schedule-file.json")).unwrap();
}
