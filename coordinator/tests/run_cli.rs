//! `farm run` end to end with real bots: the reference's checks and refusals, the files it
//! writes, resume after SIGKILL equal to an uninterrupted run, torn logs, and the output lock.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{farm, results_without_timing, run};

const BOTS: [&str; 3] = [
    "Base=bots/bomberman/baseline.cpp",
    "Greedy=bots/bomberman/greedy.cpp",
    "Random=bots/bomberman/random.cpp",
];

fn run_args(out: &Path) -> Vec<String> {
    let mut a: Vec<String> = vec!["run".into(), "--bots".into()];
    a.extend(BOTS.iter().map(|s| s.to_string()));
    a.extend(
        [
            "--anchor",
            "Base",
            "--sizes",
            "2",
            "3",
            "--seeds",
            "1",
            "--seed",
            "11",
            "--workers",
            "2",
            "--report-every",
            "4",
            "--output",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    a.push(out.display().to_string());
    a
}

fn log_lines(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("results.jsonl"))
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

#[test]
fn full_run_writes_reference_files_and_resume_after_sigkill_matches_it() {
    let tmp = tempfile::tempdir().unwrap();
    let clean = tmp.path().join("clean");
    let (code, out, err) = run(farm().args(run_args(&clean)));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    assert!(
        out.contains("3 entrants; sizes=[2, 3]; 12 games; no fillers."),
        "{out}"
    );
    assert!(out.contains("Bradley-Terry ratings"), "{out}");
    for f in [
        "identity.json",
        "schedule.json",
        "results.json",
        "bt.json",
        "performance.json",
        "汇总.md",
    ] {
        assert!(clean.join(f).is_file(), "{f} missing");
    }
    // Replays gzipped, one viewer page for the folder, no per-match pages.
    for n in 1..=12 {
        assert!(clean.join(format!("replays/{n:05}.json.gz")).is_file());
        assert!(!clean.join(format!("replays/{n:05}.json")).exists());
        assert!(!clean.join(format!("replays/{n:05}.html")).exists());
    }
    // The page, its list (one line per match, each openable) and each match's data file.
    assert!(clean.join("replays/index.html").is_file());
    let list = std::fs::read_to_string(clean.join("replays/index.js")).unwrap();
    assert_eq!(list.lines().count(), 12, "{list}");
    assert_eq!(list.matches("\"replay\":").count(), 12, "{list}");
    for n in 1..=12u64 {
        let data = std::fs::read(clean.join(format!("replays/{n:05}.js"))).unwrap();
        let (number, gz) = games::bomberman::viewer::parse_match_script(&data).unwrap();
        assert_eq!(number, n);
        assert!(gz.starts_with(&[0x1f, 0x8b]), "match {n}: gzip");
    }
    // Every row of the log is the replay's result with the per-bot timing summed up; results.json
    // (the reference's form) is the replay's result without the farm's timing.
    let rows: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(clean.join("results.json")).unwrap())
            .unwrap();
    let log = std::fs::read_to_string(clean.join("results.jsonl")).unwrap();
    let logged: Vec<&str> = log.lines().collect();
    assert_eq!(rows.as_array().unwrap().len(), logged.len());
    for (row, line) in rows.as_array().unwrap().iter().zip(&logged) {
        let n = row["match"].as_u64().unwrap();
        let logged: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(
            logged["match"].as_u64(),
            Some(n),
            "results.json follows the log"
        );
        let replay = common::replay_json(&clean.join(format!("replays/{n:05}.json.gz")));
        common::assert_timing_summary_of(&logged["result"], &replay);
        assert!(row["result"].get("timing").is_none(), "match {n}: {row}");
        let mut b = replay["result"].clone();
        b.as_object_mut().unwrap().remove("timing");
        assert_eq!(
            row["result"], b,
            "match {n}: results.json holds the replay's result"
        );
        b.as_object_mut()
            .unwrap()
            .insert("timing".into(), logged["result"]["timing"].clone());
        assert_eq!(
            logged["result"], b,
            "match {n}: the log's row is that and the summary"
        );
    }
    // `farm verify` on the folder checks every replay.
    let (code, vout, verr) = run(farm().arg("verify").arg(&clean));
    assert_eq!(code, 0, "{vout}\n{verr}");
    assert!(vout.contains("12 of 12 replays in"), "{vout}");
    let results = results_without_timing(&clean);
    assert_eq!(results.as_array().unwrap().len(), 12);
    assert_eq!(results[0]["match"], 1);
    assert_eq!(results[0]["size"], 2);
    let bt: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(clean.join("bt.json")).unwrap()).unwrap();
    assert_eq!(bt["anchor"], "Base");
    assert_eq!(bt["ratings"]["Base"], 0.0);
    let report = std::fs::read_to_string(clean.join("汇总.md")).unwrap();
    assert!(report.contains("|2|Base|"), "{report}");

    // Kill the coordinator at a few points, resume each time, and compare.
    let killed = tmp.path().join("killed");
    let mut kills = 0;
    for want in [2usize, 6] {
        let mut args = run_args(&killed);
        if killed.exists() {
            args.push("--resume".into());
        }
        let mut child = farm()
            .args(&args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let until = Instant::now() + Duration::from_secs(120);
        while log_lines(&killed) < want && Instant::now() < until {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap(); // SIGKILL
            kills += 1;
        }
        child.wait().unwrap();
    }
    assert!(kills >= 1, "the coordinator was never killed mid-run");
    // The viewer index as the killed run left it: a line appended per result as it arrived,
    // each openable match's data file beside it.
    assert!(killed.join("replays/index.html").is_file());
    let live = std::fs::read_to_string(killed.join("replays/index.js")).unwrap();
    let lines: Vec<&str> = live.split_inclusive('\n').collect();
    assert!(lines.len() >= log_lines(&killed), "{live}");
    for line in lines {
        let entry: serde_json::Value = serde_json::from_str(
            line.strip_prefix("matchfarmMatch(")
                .and_then(|l| l.strip_suffix(");\n"))
                .unwrap_or_else(|| panic!("not a whole list line: {line:?}")),
        )
        .unwrap();
        let n = entry["n"].as_u64().unwrap();
        assert_eq!(entry["replay"], format!("{n:05}.json.gz"), "{line}");
        assert!(killed.join(format!("replays/{n:05}.js")).is_file(), "{n}");
    }
    let mut args = run_args(&killed);
    args.push("--resume".into());
    let (code, out, err) = run(farm().args(&args));
    assert_eq!(code, 0, "resume failed\nstdout:\n{out}\nstderr:\n{err}");
    assert_eq!(
        results_without_timing(&killed),
        results,
        "resumed run differs from the clean run"
    );
    let bt2: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(killed.join("bt.json")).unwrap()).unwrap();
    assert_eq!(bt2["ratings"], bt["ratings"]);

    // The resume re-checked the gzipped replays of the killed runs and added its own.
    for n in 1..=12 {
        assert!(killed.join(format!("replays/{n:05}.json.gz")).is_file());
    }
    // Its end rewrote the viewer's list from the log: as the clean run's, byte for byte.
    assert_eq!(
        std::fs::read_to_string(killed.join("replays/index.js")).unwrap(),
        std::fs::read_to_string(clean.join("replays/index.js")).unwrap()
    );

    // Resuming a finished run is fine and changes nothing.
    let (code, _, err) = run(farm().args(&args));
    assert_eq!(code, 0, "{err}");
    assert_eq!(results_without_timing(&killed), results);
}

/// A folder written before replays were gzipped and rows summed up their timing: plain
/// `NNNNN.json` replays and rows with the whole result. `--resume` and `farm report` read it.
#[test]
fn resume_and_report_read_a_folder_in_the_old_format() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("old");
    let (code, o, e) = run(farm().args(run_args(&out)));
    assert_eq!(code, 0, "{o}\n{e}");
    let results = results_without_timing(&out);
    // Rewrite it as the old format: plain replays, whole results in the log.
    let mut log = String::new();
    for n in 1..=12u64 {
        let gz = out.join(format!("replays/{n:05}.json.gz"));
        let text = common::replay_text(&gz);
        std::fs::write(out.join(format!("replays/{n:05}.json")), &text).unwrap();
        std::fs::remove_file(&gz).unwrap();
        let replay: serde_json::Value = serde_json::from_str(&text).unwrap();
        let size = replay["players"].clone();
        log.push_str(
            &serde_json::json!({"match": n, "size": size, "result": replay["result"]}).to_string(),
        );
        log.push('\n');
    }
    std::fs::write(out.join("results.jsonl"), log).unwrap();
    std::fs::remove_file(out.join("replays/index.html")).unwrap();

    let mut args = run_args(&out);
    args.push("--resume".into());
    let (code, o, e) = run(farm().args(&args));
    assert_eq!(code, 0, "resume over the old format\n{o}\n{e}");
    assert_eq!(results_without_timing(&out), results);
    let (code, o, e) = run(farm().arg("report").arg(&out));
    assert_eq!(code, 0, "{o}\n{e}");
    assert!(o.contains("12 of 12 matches openable"), "{o}");
    let index = std::fs::read_to_string(out.join("replays/index.js")).unwrap();
    assert!(
        index.contains("\"replay\":\"00012.json\""),
        "the index names the plain replays"
    );
    let (code, o, e) = run(farm().arg("verify").arg(out.join("replays")));
    assert_eq!(code, 0, "{o}\n{e}");

    // A doctored replay is named by the resume.
    let p = out.join("replays/00003.json");
    let text = std::fs::read_to_string(&p).unwrap();
    std::fs::write(&p, text.replacen("\"turns\":[{", "\"turns\":[{\"x\":1,", 1)).unwrap();
    let (code, _, e) = run(farm().args(&args));
    assert_ne!(code, 0);
    assert!(e.contains("saved match 3"), "{e}");
}

#[test]
fn refusals_name_what_is_wrong() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["--anchor", "Nobody", "--sizes", "2"],
            "--anchor must name a bot",
        ),
        (
            vec!["--anchor", "Base", "--sizes", "2", "2"],
            "each match size must be unique",
        ),
        (
            vec!["--anchor", "Base", "--sizes", "4"],
            "between 2 and min(10, entrant count)",
        ),
        (
            vec!["--anchor", "Base", "--sizes", "2", "--seeds", "0"],
            "seed count must be positive",
        ),
        (
            vec!["--anchor", "Base", "--sizes", "2", "--workers", "0"],
            "must be positive",
        ),
        (
            vec!["--anchor", "Base", "--sizes", "2", "--report-every", "0"],
            "must be positive",
        ),
        (
            vec!["--anchor", "Base", "--sizes", "2", "--resume"],
            "nothing to resume",
        ),
    ];
    for (extra, want) in cases {
        let mut args: Vec<String> = vec!["run".into(), "--bots".into()];
        args.extend(BOTS.iter().map(|s| s.to_string()));
        args.extend(extra.iter().map(|s| s.to_string()));
        args.extend(["--output".to_string(), out.display().to_string()]);
        let (code, _, err) = run(farm().args(&args));
        assert_ne!(code, 0, "{extra:?} accepted");
        assert!(err.contains(want), "{extra:?}: {err}");
        assert!(!out.exists(), "{extra:?} left an output folder behind");
    }
    // Duplicate names, pipes, missing programs.
    for (bots, want) in [
        (
            vec!["A=bots/bomberman/random.cpp", "A=bots/bomberman/greedy.cpp"],
            "given twice",
        ),
        (
            vec![
                "A|B=bots/bomberman/random.cpp",
                "C=bots/bomberman/greedy.cpp",
            ],
            "'|'",
        ),
        (
            vec!["A=nope.cpp", "C=bots/bomberman/greedy.cpp"],
            "not found",
        ),
    ] {
        let mut args: Vec<String> = vec!["run".into(), "--bots".into()];
        args.extend(bots.iter().map(|s| s.to_string()));
        args.extend(
            ["--anchor", "C", "--sizes", "2", "--output"]
                .iter()
                .map(|s| s.to_string()),
        );
        args.push(out.display().to_string());
        let (code, _, err) = run(farm().args(&args));
        assert_ne!(code, 0);
        assert!(err.contains(want), "{bots:?}: {err}");
    }
}

#[test]
fn plan_only_then_changes_refuse_resume_and_output_must_be_new() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("plan");
    let mut args = run_args(&out);
    args.push("--plan-only".into());
    let (code, stdout, err) = run(farm().args(&args));
    assert_eq!(code, 0, "{err}");
    assert!(stdout.contains("12 games"));
    assert!(out.join("schedule.json").is_file() && out.join("identity.json").is_file());
    assert!(!out.join("results.jsonl").exists());

    // Same command again without --resume: refused.
    let (code, _, err) = run(farm().args(&args));
    assert_ne!(code, 0);
    assert!(err.contains("exists; use --resume"), "{err}");

    // A changed bot (different program for the same name) refuses the resume, naming it.
    let tmpbot = tmp.path().join("random2.cpp");
    let src = std::fs::read_to_string(common::repo().join("bots/bomberman/random.cpp")).unwrap();
    std::fs::write(&tmpbot, format!("{src}\n// changed\n")).unwrap();
    let mut a2: Vec<String> = vec!["run".into(), "--bots".into()];
    a2.push(BOTS[0].into());
    a2.push(BOTS[1].into());
    a2.push(format!("Random={}", tmpbot.display()));
    a2.extend(
        [
            "--anchor",
            "Base",
            "--sizes",
            "2",
            "3",
            "--seeds",
            "1",
            "--seed",
            "11",
            "--workers",
            "2",
            "--report-every",
            "4",
            "--resume",
            "--output",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    a2.push(out.display().to_string());
    let (code, _, err) = run(farm().args(&a2));
    assert_ne!(code, 0);
    assert!(
        err.contains("resume rejected") && err.contains("Random"),
        "{err}"
    );

    // Another seed: the schedule differs.
    let mut a3 = run_args(&out);
    let i = a3.iter().position(|s| s == "11").unwrap();
    a3[i] = "12".into();
    a3.push("--resume".into());
    let (code, _, err) = run(farm().args(&a3));
    assert_ne!(code, 0);
    assert!(
        err.contains("resume rejected") && err.contains("schedule"),
        "{err}"
    );
}

#[test]
fn modified_workspace_is_refused_by_file_name() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    for f in ["RULES.md", "VERSION", "MANIFEST.json"] {
        std::fs::copy(
            common::repo().join("workspace/bomberman").join(f),
            ws.join(f),
        )
        .unwrap();
    }
    std::fs::write(ws.join("RULES.md"), "edited").unwrap();
    let out = tmp.path().join("o");
    let mut args = run_args(&out);
    args.extend(["--workspace".to_string(), ws.display().to_string()]);
    let (code, _, err) = run(farm().args(&args));
    assert_ne!(code, 0);
    assert!(err.contains("referee package modified: RULES.md"), "{err}");
}

#[test]
fn torn_log_is_recovered_and_second_coordinator_is_locked_out() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    let (code, _, err) = run(farm().args(run_args(&out)));
    assert_eq!(code, 0, "{err}");
    let clean = results_without_timing(&out);
    // Simulate a crash mid-write: drop the last 3 records, add half a record.
    let log = out.join("results.jsonl");
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let kept = lines[..lines.len() - 3].join("\n") + "\n" + &lines[lines.len() - 3][..20];
    std::fs::write(&log, kept).unwrap();
    let mut args = run_args(&out);
    args.push("--resume".into());
    let (code, _, err) = run(farm().args(&args));
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("torn record"), "{err}");
    assert_eq!(results_without_timing(&out), clean);

    // A record damaged in the middle is refused, not papered over.
    let text = std::fs::read_to_string(&log).unwrap();
    std::fs::write(&log, text.replacen("\"match\":2", "\"match\":\"x\"", 1)).unwrap();
    let (code, _, err) = run(farm().args(&args));
    assert_ne!(code, 0);
    assert!(err.contains("line 2"), "{err}");
    std::fs::write(&log, text).unwrap();

    // Hold the lock like a running coordinator would; a second one must refuse.
    let lock = std::fs::File::options()
        .write(true)
        .open(out.join(".lock"))
        .unwrap();
    // SAFETY: flock on an fd we own.
    let rc = unsafe {
        libc::flock(
            std::os::fd::AsRawFd::as_raw_fd(&lock),
            libc::LOCK_EX | libc::LOCK_NB,
        )
    };
    assert_eq!(rc, 0);
    let (code, _, err) = run(farm().args(&args));
    assert_ne!(code, 0);
    assert!(err.contains("another coordinator"), "{err}");
}
