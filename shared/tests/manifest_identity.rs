//! MANIFEST helpers and the identity/schedule file shapes, byte for byte against what the
//! reference writes (fixtures from tools/reference/gen_identity.py and the bundled workspace).

use shared::manifest::{self, ManifestError};
use shared::schedule::{make_schedule, Execution, Identity, ScheduleFile};

#[test]
fn sha256_hex_known_vector() {
    assert_eq!(
        manifest::sha256_hex(b"abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}

#[test]
fn bundled_manifest_parses_in_order_and_rebuilds_in_the_same_order() {
    let text = include_str!("fixtures/bomberman-MANIFEST.json");
    let m = manifest::parse(text).unwrap();
    assert_eq!(m.len(), 11);
    assert_eq!(m.iter().next().unwrap().0, "baseline.cpp");
    let files: Vec<(&str, &[u8])> = m.iter().rev().map(|(p, _)| (p, p.as_bytes())).collect();
    let built = manifest::build(files).unwrap();
    let order: Vec<&str> = built.iter().map(|(p, _)| p).collect();
    let want: Vec<&str> = m.iter().map(|(p, _)| p).collect();
    assert_eq!(order, want);
    assert_eq!(
        built.get("README.md"),
        Some(manifest::sha256_hex(b"README.md").as_str())
    );
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&manifest::to_json(&m)).unwrap(),
        serde_json::from_str::<serde_json::Value>(text).unwrap()
    );
}

#[test]
fn escaping_and_odd_paths_are_refused_by_name() {
    for bad in [
        "",
        "/etc/passwd",
        "../x",
        "a/../../x",
        "engine/./a.py",
        "a//b",
        "a/",
        "C:/x",
        "a\\b",
        "a\nb",
    ] {
        match manifest::check_path(bad) {
            Err(ManifestError::Path { path, .. }) => assert_eq!(path, bad),
            other => panic!("{bad:?} accepted: {other:?}"),
        }
    }
    for good in [
        "a",
        "engine/arena.py",
        "viewer/index.html",
        "豆包/bot.cpp",
        ".hidden",
    ] {
        manifest::check_path(good).unwrap();
    }
    let e = manifest::parse(r#"{"../outside": "00"}"#).unwrap_err();
    assert!(e.to_string().contains("../outside"), "{e}");
    let e = manifest::parse(&format!(r#"{{"a.py": "{}"}}"#, "g".repeat(64))).unwrap_err();
    assert!(matches!(e, ManifestError::Digest { .. }), "{e}");
    let e = manifest::parse(r#"{"a.py": "#).unwrap_err();
    assert!(matches!(e, ManifestError::Parse(_)), "{e}");
    let e = manifest::build([("a", &b""[..]), ("a", &b"x"[..])]).unwrap_err();
    assert_eq!(e, ManifestError::Duplicate("a".into()));
}

#[test]
fn modified_file_is_named() {
    let digest = manifest::sha256_hex(b"original");
    manifest::verify_file("engine/engine.py", &digest, b"original").unwrap();
    let e = manifest::verify_file("engine/engine.py", &digest, b"changed").unwrap_err();
    assert!(e.to_string().contains("engine/engine.py"), "{e}");
}

#[test]
fn identity_and_schedule_files_match_the_reference_bytes() {
    let want_identity = include_str!("fixtures/identity.json");
    let want_schedule = include_str!("fixtures/schedule-file.json");
    let parsed: Identity = serde_json::from_str(want_identity).unwrap();
    assert_eq!(
        serde_json::to_string_pretty(&parsed).unwrap(),
        want_identity
    );
    assert_eq!(
        serde_json::to_string_pretty(&parsed.schedule).unwrap(),
        want_schedule
    );

    // Rebuilt from scratch with our expansion: the same bytes.
    let roster: Vec<(String, String)> = [
        ("豆包 Seed 2.1", "/bots/doubao.exe"),
        ("Base", "/w/baseline.exe"),
        ("Opus 5.5", "/bots/opus.exe"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    let seed: i128 = 8059238412960493467;
    let entries = make_schedule(3, &[2, 3], 1, seed).unwrap();
    let rebuilt = Identity {
        version: "bomberman-test-1".into(),
        anchor: "Base".into(),
        sizes: vec![2, 3],
        execution: Execution { workers: 2 },
        scoring_code: [("evaluate.py", "0"), ("bt.py", "1")]
            .iter()
            .map(|(k, c)| (k.to_string(), c.repeat(64)))
            .collect(),
        engine_manifest: [("baseline.cpp", "a"), ("engine/arena.py", "b")]
            .iter()
            .map(|(k, c)| (k.to_string(), c.repeat(64)))
            .collect(),
        bot_hashes: roster
            .iter()
            .enumerate()
            .map(|(i, (n, _))| (n.clone(), i.to_string().repeat(64)))
            .collect(),
        schedule: ScheduleFile::from_entries(seed, &entries, &roster),
    };
    assert_eq!(rebuilt, parsed);
    assert_eq!(rebuilt.difference(&parsed), None);

    let mut other = parsed.clone();
    other.execution.workers = 3;
    assert!(rebuilt.difference(&other).unwrap().contains("workers"));
    let mut other = parsed.clone();
    other.bot_hashes.insert("Base".into(), "f".repeat(64));
    assert!(rebuilt
        .difference(&other)
        .unwrap()
        .contains("\"Base\" changed"));
    let mut other = parsed;
    other.schedule.entries[4].seed += 1;
    assert!(rebuilt
        .difference(&other)
        .unwrap()
        .contains("schedule match 5"));
}
