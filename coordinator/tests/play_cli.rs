//! `farm play`, `farm inspect`, `farm verify` and `farm view` end to end: real misbehaving bot
//! processes are eliminated with the right fault while the others play on, hand-made boards,
//! gzipped and plain replays read alike, and every kind of bad input gets a clear error and
//! leaves nothing half-written.

mod common;

use common::{farm, repo, run};

fn read_json(p: &std::path::Path) -> serde_json::Value {
    common::replay_json(p)
}

#[test]
fn misbehaving_bots_are_eliminated_with_the_right_fault_and_nothing_survives() {
    let tmp = tempfile::tempdir().unwrap();
    let html = tmp.path().join("m.html");
    let mut cmd = farm();
    cmd.args(["play", "--seed", "5", "--replay"])
        .arg(&html)
        .args([
            "--bots",
            "Good=bots/test/answer.cpp",
            "Sleepy=bots/test/sleeper.cpp",
            "Crashy=bots/test/crasher.cpp",
            "Noisy=bots/test/garbage.cpp",
            "Eager=bots/test/early.cpp",
            "Quitter=bots/test/exiter.cpp",
        ]);
    let child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let replay = read_json(&tmp.path().join("m.json.gz"));
    let r = &replay["result"];
    let kinds: Vec<Vec<(String, u64)>> = r["faults"]
        .as_array()
        .unwrap()
        .iter()
        .map(|fs| {
            fs.as_array()
                .unwrap()
                .iter()
                .map(|f| {
                    (
                        f["kind"].as_str().unwrap().to_string(),
                        f["turn"].as_u64().unwrap(),
                    )
                })
                .collect()
        })
        .collect();
    assert_eq!(kinds[0], vec![], "the good bot has no fault");
    assert_eq!(kinds[1], vec![("timeout".to_string(), 1)]);
    assert_eq!(kinds[2], vec![("crash".to_string(), 1)]);
    assert_eq!(kinds[3], vec![("bad_output".to_string(), 1)]);
    assert_eq!(kinds[4], vec![("early_output".to_string(), 0)]);
    assert_eq!(kinds[5], vec![("exit".to_string(), 1)]);
    assert_eq!(r["errors"], serde_json::json!([0, 1, 1, 1, 1, 1]));
    assert_eq!(r["death_turns"][4], 0);
    assert_eq!(r["death_turns"][1], 1);
    assert_eq!(r["death_turns"][0], -1, "the good bot outlives them all");
    assert_eq!(r["ranks"][0], 1);
    assert_eq!(r["valid_for_scoring"], true, "misbehaving bots did start");
    assert!(stdout.contains("timeout on turn 1"), "{stdout}");
    // No process of that match is left (bots, their inits, daemons).
    let left = std::process::Command::new("pgrep")
        .args(["-f", &format!("matchfarm-scratch/{pid}-")])
        .output()
        .unwrap();
    assert!(
        left.stdout.is_empty(),
        "left over: {}",
        String::from_utf8_lossy(&left.stdout)
    );
    // The replay verifies and inspects.
    let (code, o, e) = run(farm().arg("verify").arg(tmp.path().join("m.json.gz")));
    assert_eq!(code, 0, "{o}{e}");
    let (code, o, e) = run(farm()
        .args(["inspect", "--turn", "1", "--context", "1"])
        .arg(tmp.path().join("m.json.gz")));
    assert_eq!(code, 0, "{e}");
    assert!(o.contains("timeout") && o.contains("turn 1"), "{o}");
    assert!(html.is_file(), "the viewer page beside the replay");
}

#[test]
fn hand_made_board_keeps_its_size_and_spawns() {
    let tmp = tempfile::tempdir().unwrap();
    let map = tmp.path().join("duel.txt");
    std::fs::write(
        &map,
        "#######\n#0...+#\n#.#.#.#\n#.....#\n#.#.#.#\n#+...1#\n#######\n",
    )
    .unwrap();
    let html = tmp.path().join("d.html");
    let (code, o, e) = run(farm()
        .args(["play", "--seed", "1", "--map"])
        .arg(&map)
        .arg("--replay")
        .arg(&html)
        .args([
            "--bots",
            "A=bots/bomberman/baseline.cpp",
            "B=bots/bomberman/random.cpp",
        ]));
    assert_eq!(code, 0, "{o}{e}");
    let replay = read_json(&tmp.path().join("d.json.gz"));
    assert_eq!(replay["map"]["rows"][1], "#....+#");
    assert_eq!(replay["map"]["spawns"], serde_json::json!([[1, 1], [5, 5]]));
    assert_eq!(replay["params"]["side"], 7);
    assert_eq!(
        replay["params"]["turn_limit"], 300,
        "limits come from the player count"
    );
    let (code, _, e) = run(farm().arg("verify").arg(tmp.path().join("d.json.gz")));
    assert_eq!(code, 0, "{e}");
}

#[test]
fn bad_input_gets_clear_errors_and_leaves_nothing_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let html = tmp.path().join("x.html");
    let broken = tmp.path().join("broken.cpp");
    std::fs::write(&broken, "int main() { return undefined_thing; }\n").unwrap();
    let bad_map = tmp.path().join("bad.txt");
    std::fs::write(&bad_map, "#####\n#0..#\n#.x.#\n#..1#\n#####\n").unwrap();
    let open_map = tmp.path().join("open.txt");
    std::fs::write(&open_map, "#####\n#0..#\n#...#\n#..1.\n#####\n").unwrap();
    let broken_s = format!("B={}", broken.display());
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec![
                "A=bots/test/answer.cpp".into(),
                "A=bots/test/answer.cpp".into(),
            ],
            "given twice",
        ),
        (
            vec![
                "A|x=bots/test/answer.cpp".into(),
                "B=bots/test/answer.cpp".into(),
            ],
            "'|'",
        ),
        (
            vec!["A=bots/test/answer.cpp".into(), "B=missing.cpp".into()],
            "not found: missing.cpp",
        ),
        (vec!["A=bots/test/answer.cpp".into()], "between 2 and 10"),
        (
            vec!["A=bots/test/answer.cpp".into(), broken_s.clone()],
            "undefined_thing",
        ),
    ];
    for (bots, want) in cases {
        let (code, _, e) = run(farm()
            .args(["play", "--replay"])
            .arg(&html)
            .arg("--bots")
            .args(&bots));
        assert_ne!(code, 0, "{bots:?} accepted");
        assert!(e.contains(want), "{bots:?}: {e}");
        assert!(
            !html.exists()
                && !tmp.path().join("x.json").exists()
                && !tmp.path().join("x.json.gz").exists(),
            "half-written output"
        );
    }
    for (map, want) in [(&bad_map, "line 3"), (&open_map, "line 4")] {
        let (code, _, e) = run(farm()
            .args(["play", "--map"])
            .arg(map)
            .arg("--replay")
            .arg(&html)
            .args(["--bots", "A=bots/test/answer.cpp", "B=bots/test/answer.cpp"]));
        assert_ne!(code, 0);
        assert!(e.contains(want), "{map:?}: {e}");
    }
    // Replays: truncated, edited, another version.
    let good = tmp.path().join("g.html");
    let (code, _, e) = run(farm()
        .args(["play", "--seed", "2", "--replay"])
        .arg(&good)
        .args([
            "--bots",
            "A=bots/bomberman/baseline.cpp",
            "B=bots/bomberman/greedy.cpp",
        ]));
    assert_eq!(code, 0, "{e}");
    let text = common::replay_text(&tmp.path().join("g.json.gz"));
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let trunc = tmp.path().join("t.json");
    std::fs::write(&trunc, &text[..text.len() / 2]).unwrap();
    v["result"]["points"][0] = serde_json::json!(99.0);
    let edited = tmp.path().join("e.json");
    std::fs::write(&edited, v.to_string()).unwrap();
    let mut w: serde_json::Value = serde_json::from_str(&text).unwrap();
    w["version"] = serde_json::json!("bomberman/0.4");
    let other = tmp.path().join("o.json");
    std::fs::write(&other, w.to_string()).unwrap();
    for (p, want) in [(&trunc, "truncated"), (&edited, "points"), (&other, "0.4")] {
        let (code, _, e) = run(farm().arg("verify").arg(p));
        assert_eq!(code, 1, "{p:?} accepted");
        assert!(e.contains("REJECTED") && e.contains(want), "{p:?}: {e}");
    }
    // The same replays gzipped: verified (or rejected) the same way; a cut gzip file is named.
    let packed = |name: &str, text: &[u8]| {
        use std::io::Write;
        let p = tmp.path().join(name);
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(text).unwrap();
        std::fs::write(&p, enc.finish().unwrap()).unwrap();
        p
    };
    let plain = tmp.path().join("g.json");
    std::fs::write(&plain, &text).unwrap();
    for p in [&plain, &packed("gz.json.gz", text.as_bytes())] {
        let (code, o, e) = run(farm().arg("verify").arg(p));
        assert_eq!(code, 0, "{p:?}: {o}{e}");
    }
    let edited_gz = packed("e.json.gz", v.to_string().as_bytes());
    let (code, _, e) = run(farm().arg("verify").arg(&edited_gz));
    assert_eq!(code, 1);
    assert!(e.contains("REJECTED") && e.contains("points"), "{e}");
    let gz = std::fs::read(tmp.path().join("g.json.gz")).unwrap();
    let cut = tmp.path().join("cut.json.gz");
    std::fs::write(&cut, &gz[..gz.len() / 2]).unwrap();
    let (code, _, e) = run(farm().arg("verify").arg(&cut));
    assert_eq!(code, 2);
    assert!(e.contains("damaged gzip"), "{e}");
    let _ = repo();
}

#[test]
fn view_writes_one_self_contained_page_and_refuses_a_bad_replay() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, o, e) = run(farm()
        .args(["play", "--seed", "3", "--replay"])
        .arg(tmp.path().join("p.html"))
        .args([
            "--bots",
            "A=bots/bomberman/baseline.cpp",
            "B=bots/bomberman/random.cpp",
        ]));
    assert_eq!(code, 0, "{o}{e}");
    let replay = tmp.path().join("p.json.gz");
    let played = std::fs::read_to_string(tmp.path().join("p.html")).unwrap();
    // Default: beside the replay.
    let (code, o, e) = run(farm().arg("view").arg(&replay));
    assert_eq!(code, 0, "{o}{e}");
    assert!(o.contains("p.html"), "{o}");
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("p.html")).unwrap(),
        played,
        "farm play writes the page farm view writes"
    );
    let out = tmp.path().join("share/one.html");
    let (code, o, e) = run(farm().arg("view").arg(&replay).arg("--out").arg(&out));
    assert_eq!(code, 0, "{o}{e}");
    let page = std::fs::read_to_string(&out).unwrap();
    assert!(page.contains("id=\"replay-data\"") && !page.contains("__MATCHFARM_REPLAY_DATA__"));
    assert!(!page.contains("src=\"http"), "no network");
    // A doctored replay gets no page.
    let mut v = common::replay_json(&replay);
    v["result"]["ranks"][0] = serde_json::json!(7);
    let bad = tmp.path().join("bad.json");
    std::fs::write(&bad, v.to_string()).unwrap();
    let (code, _, e) = run(farm().arg("view").arg(&bad));
    assert_eq!(code, 2);
    assert!(e.contains("ranks"), "{e}");
    assert!(!tmp.path().join("bad.html").exists());
}

/// Bot folders go to `/dev/shm` by default with the full sandbox on a host whose `/dev/shm` is an
/// exec tmpfs (every start and teardown makes and removes files there), else to `$TMPDIR`; the
/// start-up log names the folder in force.
#[test]
fn bot_folders_default_to_dev_shm_with_the_full_sandbox() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, o, e) = run(farm()
        .env_remove("FARM_SCRATCH_DIR")
        .env("TMPDIR", tmp.path())
        .env("FARM_LOG", "info")
        .args(["play", "--seed", "3", "--replay"])
        .arg(tmp.path().join("m.json.gz"))
        .args(["--bots", "A=bots/test/answer.cpp", "B=bots/test/answer.cpp"]));
    assert_eq!(code, 0, "{o}{e}");
    let full = e.contains("sandbox mode full");
    if std::env::var_os("FARM_REQUIRE_SANDBOX").is_some() {
        assert!(
            full,
            "FARM_REQUIRE_SANDBOX is set but the full sandbox is not in force:\n{e}"
        );
    }
    let named = e
        .split("folder in ")
        .nth(1)
        .and_then(|rest| rest.split(';').next())
        .unwrap_or_else(|| panic!("no folder named in the start-up log:\n{e}"));
    let facts = sandbox::scratch_root::shm_facts();
    let (expected, why) = sandbox::scratch_root::choose(full, facts, tmp.path());
    let in_tmpdir = tmp.path().join("matchfarm-scratch");
    assert_eq!(
        std::path::Path::new(named),
        expected,
        "{facts:?}, {why:?}: {e}"
    );
    if why.is_none() {
        assert_eq!(named, "/dev/shm/matchfarm-scratch", "{e}");
        assert!(!in_tmpdir.exists(), "bot folders were made in $TMPDIR");
    } else {
        assert_eq!(std::path::Path::new(named), in_tmpdir, "{facts:?}: {e}");
    }
}
