//! Fuzz target (proptest, bounded: a few seconds) for the results log, whose bytes a resume and
//! `farm report` read from disk as they find them: arbitrary bytes, and lines that look like
//! rows with arbitrary numbers and fields, fed to the row parser and to the resume path's
//! loader (log and early-results journal), must give rows or an error, never a panic; a
//! refusal leaves the file as it was, and every row kept is numbered within the schedule.

use coordinator::run::checkpoint::{self, parse, recover};
use proptest::prelude::*;

/// A line that is, or is nearly, a row: the number and fields drawn from awkward values.
fn row_like() -> impl Strategy<Value = Vec<u8>> {
    let number = prop_oneof![
        (0u64..12).prop_map(|n| n.to_string()),
        any::<u64>().prop_map(|n| n.to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        Just("1e3".to_string()),
        Just("2.5".to_string()),
        Just("-0".to_string()),
        Just("123456789012345678901234567890".to_string()),
        Just("\"3\"".to_string()),
        Just("null".to_string()),
    ];
    let tail = prop_oneof![
        Just(r#","size":2,"result":{"ranks":[1,2]}}"#.to_string()),
        Just(r#","size":2,"failed":"host"}"#.to_string()),
        Just(r#","size":-1}"#.to_string()),
        Just(r#","size":2,"result":null,"failed":null}"#.to_string()),
        Just(r#"}"#.to_string()),
        Just(r#","size":2"#.to_string()),
        "[ -~]{0,12}",
    ];
    (number, tail).prop_map(|(n, t)| format!("{{\"match\":{n}{t}").into_bytes())
}

/// A log: row-like lines and raw bytes, each maybe ending in a newline.
fn log_bytes() -> impl Strategy<Value = Vec<u8>> {
    let line = prop_oneof![
        3 => row_like(),
        1 => proptest::collection::vec(any::<u8>(), 0..40),
    ];
    proptest::collection::vec((line, any::<bool>()), 0..10).prop_map(|lines| {
        let mut out = Vec::new();
        for (mut l, newline) in lines {
            if newline {
                l.push(b'\n');
            }
            out.extend(l);
        }
        out
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn the_row_parser_gives_rows_or_an_error(bytes in log_bytes(), len in 0u64..16) {
        if let Ok(p) = parse(&bytes, len) {
            prop_assert!(p.good_end <= bytes.len());
            for (i, row) in p.rows.iter().enumerate() {
                prop_assert_eq!(row.number, i as u64 + 1);
                prop_assert!(row.number <= len);
            }
        }
    }

    #[test]
    fn the_resume_loader_gives_rows_or_an_error_and_a_refusal_changes_nothing(
        log in log_bytes(),
        journal in log_bytes(),
        len in 1u64..16,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(checkpoint::LOG_NAME);
        std::fs::write(&path, &log).unwrap();
        std::fs::write(checkpoint::ahead_path(&path), &journal).unwrap();
        match recover(&path, len) {
            Ok(rec) => {
                let kept = std::fs::read(&path).unwrap();
                prop_assert!(log.starts_with(&kept), "only a torn tail is cut");
                for row in rec.rows.iter().chain(&rec.ahead) {
                    prop_assert!((1..=len).contains(&row.number));
                }
            }
            Err(e) => {
                prop_assert!(e.to_string().contains(" line "), "{e}");
                prop_assert_eq!(std::fs::read(&path).unwrap(), log);
            }
        }
    }
}
