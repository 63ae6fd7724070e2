//! Operator input the farm must refuse with a clear message, never a panic or an abort: a
//! results log edited to hold a match number outside the schedule (refused by file and line by
//! `--resume` and `farm report`, the file left as it was), schedule sizes too large to hold,
//! and colour codes in log lines written to a pipe.

mod common;

use std::path::Path;

use common::{farm, run};

/// A finished six-match run (three bots, size 2, one map).
fn small_run(out: &Path) -> Vec<String> {
    let mut args: Vec<String> = [
        "run",
        "--bots",
        "Base=bots/bomberman/baseline.cpp",
        "Greedy=bots/bomberman/greedy.cpp",
        "Random=bots/bomberman/random.cpp",
        "--anchor",
        "Base",
        "--sizes",
        "2",
        "--seeds",
        "1",
        "--seed",
        "5",
        "--workers",
        "2",
        "--output",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(out.display().to_string());
    let (code, o, e) = run(farm().args(&args));
    assert_eq!(code, 0, "{o}\n{e}");
    args.push("--resume".into());
    args
}

#[test]
fn a_log_row_numbered_outside_the_schedule_is_refused_by_line_and_nothing_is_lost() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    let resume = small_run(&out);
    let log = out.join("results.jsonl");
    let clean = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = clean.lines().collect();
    assert_eq!(lines.len(), 6);
    let huge = "123456789012345678901234567890";
    // (number, on which line of the edited log, what the message says)
    let cases = [
        ("0", 3, "match 0 is outside the schedule (matches 1 to 6)"),
        ("0", 6, "match 0 is outside the schedule"),
        ("7", 6, "match 7 is outside the schedule (matches 1 to 6)"),
        ("18446744073709551615", 2, "outside the schedule"),
        ("-1", 4, "not a valid result record"),
        ("-1", 6, "not a valid result record"),
        (huge, 6, "not a valid result record"),
        ("2.5", 5, "not a valid result record"),
        ("\"3\"", 3, "not a valid result record"),
    ];
    for (number, line, says) in cases {
        let mut edited: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        let old = format!("\"match\":{line}");
        assert!(edited[line - 1].contains(&old), "{}", edited[line - 1]);
        edited[line - 1] = edited[line - 1].replacen(&old, &format!("\"match\":{number}"), 1);
        let text = edited.join("\n") + "\n";
        std::fs::write(&log, &text).unwrap();
        let want = format!("{} line {line}", log.display());
        for (what, cmd) in [
            ("--resume", farm().args(&resume)),
            ("farm report", farm().arg("report").arg(&out)),
        ] {
            let (code, o, e) = run(cmd);
            assert!(
                code != 0 && code != 101 && !e.contains("panicked"),
                "{what} with match {number} on line {line}: exit {code}\n{o}\n{e}"
            );
            assert!(
                e.contains(&want) && e.contains(says),
                "{what} with match {number} on line {line}: want {want:?} and {says:?} in\n{e}"
            );
            assert_eq!(
                std::fs::read_to_string(&log).unwrap(),
                text,
                "{what} changed the refused log"
            );
        }
    }
    // The journal of early results is held to the schedule the same way.
    std::fs::write(&log, lines[..4].join("\n") + "\n").unwrap();
    let row6 = lines[5].to_string();
    for (number, says) in [("0", "match 0 is outside"), ("9", "match 9 is outside")] {
        let row = row6.replacen("\"match\":6", &format!("\"match\":{number}"), 1);
        std::fs::write(out.join("results.ahead.jsonl"), row + "\n").unwrap();
        let (code, o, e) = run(farm().args(&resume));
        assert!(code != 0 && !e.contains("panicked"), "{code}\n{o}\n{e}");
        assert!(
            e.contains("results.ahead.jsonl line 1") && e.contains(says),
            "{e}"
        );
        assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 4);
    }
    // Repaired, the run resumes and finishes.
    std::fs::remove_file(out.join("results.ahead.jsonl")).unwrap();
    let (code, o, e) = run(farm().args(&resume));
    assert_eq!(code, 0, "{o}\n{e}");
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 6);
}

#[test]
fn log_lines_on_a_pipe_carry_no_colour_codes() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    // FARM_TURN_MS=1000 (set by `farm()`) makes every run warn that it is not the rules' clock.
    let (code, o, e) = run(farm()
        .args(["run", "--bots", "Base=bots/bomberman/baseline.cpp"])
        .args(["Greedy=bots/bomberman/greedy.cpp", "--anchor", "Base"])
        .args(["--sizes", "2", "--seeds", "1", "--seed", "1", "--plan-only"])
        .arg("--output")
        .arg(&out));
    assert_eq!(code, 0, "{o}\n{e}");
    assert!(e.contains("WARN") && e.contains("per-turn deadline"), "{e}");
    assert!(
        !e.contains('\u{1b}') && !o.contains('\u{1b}'),
        "escape codes on a pipe: {e:?}"
    );
}

#[test]
fn a_schedule_too_large_to_hold_is_refused_up_front_naming_the_flag() {
    let tmp = tempfile::tempdir().unwrap();
    for seeds in ["1000000000", "9223372036854775807"] {
        let out = tmp.path().join(format!("o{seeds}"));
        let (code, o, e) = run(farm()
            .args(["run", "--bots", "Base=bots/bomberman/baseline.cpp"])
            .args(["Greedy=bots/bomberman/greedy.cpp", "--anchor", "Base"])
            .args([
                "--sizes",
                "2",
                "--seeds",
                seeds,
                "--seed",
                "1",
                "--plan-only",
            ])
            .arg("--output")
            .arg(&out));
        assert!(
            code == 2 && !e.contains("panicked") && !e.contains("memory allocation"),
            "--seeds {seeds}: exit {code}\n{o}\n{e}"
        );
        // More seeds than there are map seeds: evaluate.py's own refusal (random.sample), first.
        let refusal = if seeds == "1000000000" {
            e.contains("--seeds") && e.contains("at most")
        } else {
            e.contains("sample larger than population")
        };
        assert!(refusal, "--seeds {seeds}: {e}");
        assert!(!out.exists(), "nothing is written for a refused schedule");
    }
}

/// A tmpfs mounted over a folder for one test, unmounted when dropped (also when the test
/// fails).
struct Mount(std::path::PathBuf);

impl Mount {
    /// A full one-page tmpfs at `dir` (None, saying why, where this host cannot mount).
    fn full(dir: &Path) -> Option<Mount> {
        std::fs::create_dir_all(dir).unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=4k,mode=0755", "tmpfs"])
            .arg(dir)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("skipped: cannot mount a tmpfs here (needs root)");
            return None;
        }
        let m = Mount(dir.to_path_buf());
        // Fill the one page, so that every replay write hits ENOSPC.
        let mut f = std::fs::File::create(dir.join("filler")).unwrap();
        let _ = std::io::Write::write_all(&mut f, &[0u8; 8192]);
        Some(m)
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
    }
}

#[test]
fn matches_failed_by_a_full_disk_are_played_again_by_a_plain_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    let mut args: Vec<String> = [
        "run",
        "--bots",
        "Base=bots/bomberman/baseline.cpp",
        "Greedy=bots/bomberman/greedy.cpp",
        "--anchor",
        "Base",
        "--sizes",
        "2",
        "--seeds",
        "1",
        "--seed",
        "3",
        "--workers",
        "2",
        "--output",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(out.display().to_string());
    let (code, o, e) = run(farm().args(&args).arg("--plan-only"));
    assert_eq!(code, 0, "{o}\n{e}");
    args.push("--resume".into());
    let Some(full) = Mount::full(&out.join("replays")) else {
        return;
    };
    let (code, o, e) = run(farm().args(&args));
    // Exit 2: the views in replays/ (index.html) cannot be written either.
    assert_eq!(code, 2, "the replays cannot be written\n{o}\n{e}");
    assert!(e.contains("2 matches failed"), "{e}");
    assert!(e.contains("No space left on device"), "{e}");
    assert!(
        e.contains("--resume: it plays them again"),
        "the message says what to do: {e}"
    );
    let log = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    assert_eq!(log.matches("\"failed\"").count(), 2, "{log}");
    // Space again: a plain --resume plays the failed matches, and the run is whole.
    drop(full);
    let (code, o, e) = run(farm().args(&args));
    assert_eq!(code, 0, "{o}\n{e}");
    assert!(e.contains("playing again 2 matches that failed"), "{e}");
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(results.as_array().unwrap().len(), 2);
    for n in 1..=2 {
        assert!(out.join(format!("replays/{n:05}.json.gz")).is_file());
    }
}

#[test]
fn a_seed_past_127_bits_is_refused_saying_the_range() {
    let tmp = tempfile::tempdir().unwrap();
    let two_127 = "170141183460469231731687303715884105728";
    let plan = |seed: &str, out: &Path| {
        run(farm()
            .args(["run", "--bots", "Base=bots/bomberman/baseline.cpp"])
            .args(["Greedy=bots/bomberman/greedy.cpp", "--anchor", "Base"])
            .args([
                "--sizes",
                "2",
                "--seeds",
                "1",
                "--plan-only",
                "--seed",
                seed,
            ])
            .arg("--output")
            .arg(out))
    };
    for (seed, says) in [
        (two_127.to_string(), "out of range"),
        (format!("-{two_127}1"), "out of range"),
        ("12x".to_string(), "not an integer"),
        ("".to_string(), "not an integer"),
    ] {
        let out = tmp.path().join("refused");
        let (code, o, e) = plan(&seed, &out);
        assert!(
            code == 2 && !e.contains("panicked"),
            "{seed}: {code}\n{o}\n{e}"
        );
        assert!(e.contains("--seed") && e.contains(says), "{seed}: {e}");
        if says == "out of range" {
            assert!(e.contains("-2^127 to 2^127 - 1"), "{e}");
        }
        assert!(!out.exists());
    }
    // The ends of the range are taken and recorded exactly.
    for seed in [
        format!("-{two_127}"),
        "170141183460469231731687303715884105727".to_string(),
    ] {
        let out = tmp.path().join(format!("o{}", seed.len()));
        let (code, o, e) = plan(&seed, &out);
        assert_eq!(code, 0, "{seed}: {o}\n{e}");
        let text = std::fs::read_to_string(out.join("schedule.json")).unwrap();
        assert!(
            text.contains(&format!("\"schedule_seed\": {seed},")),
            "{seed}"
        );
    }
}
