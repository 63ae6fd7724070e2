//! A ladder game the host fails is the farm's, never a bot's. Here a contender's code file rots
//! on the server's disk (its bytes no longer hash to its name), so every worker refuses the
//! job: the engine loop plays each of the challenge's two games again twice (the server's log
//! says so, attempt by attempt), then the challenge is answered 503 `farm_unavailable` with
//! neither bot's RP changed and no match stored. Once the file is whole again, the same
//! challenge is played and scored.

mod ladder_support;

use ladder_support::{bot, Backend, Ladder, Opts};

/// The stored file of `code` in the ladder's code folder.
fn code_file(l: &Ladder, code: &str) -> std::path::PathBuf {
    let dir = l.data.path().join("code");
    std::fs::read_dir(&dir)
        .expect("the code folder")
        .map(|e| e.expect("a code folder entry").path())
        .find(|p| std::fs::read_to_string(p).ok().as_deref() == Some(code))
        .unwrap_or_else(|| panic!("no file in {} holds the submitted code", dir.display()))
}

fn rp(l: &Ladder, key: &str) -> serde_json::Value {
    l.get("/api/agent/bot/info", Some(key)).json["rp"].clone()
}

#[test]
fn a_game_the_host_fails_is_played_again_then_answered_as_the_farms() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("serve.log");
    let l = Ladder::start(
        Backend::Sqlite,
        Opts {
            log: Some(log.clone()),
            ..Opts::default()
        },
    );
    let (_, a) = l.player("osc-a", true);
    let (b_id, b) = l.player("osc-b", true);
    l.publish(&a, &bot("osc.js"));
    let b_code = format!("{}\n// b\n", bot("osc.js"));
    l.publish(&b, &b_code);
    let file = code_file(&l, &b_code);
    let before = (rp(&l, &a), rp(&l, &b));
    let matches_before = l.get("/api/agent/bot/matches", Some(&a)).text;

    std::fs::write(&file, format!("{b_code}// rotted\n")).unwrap();
    let r = l.challenge(&a, b_id);
    assert_eq!(r.status, 503, "{}", r.text);
    assert_eq!(r.json["error"], "farm_unavailable", "{}", r.text);
    let text = std::fs::read_to_string(&log).unwrap();
    // A challenge is two games (one per colour): each is tried three times.
    let mut attempts: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for line in text
        .lines()
        .filter(|l| l.contains("ladder game failed, retrying"))
    {
        assert!(line.contains("hashes to"), "the cause is logged: {line}");
        let field = |name: &str| {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix(name))
                .unwrap_or_else(|| panic!("no {name} in {line}"))
                .to_string()
        };
        attempts
            .entry(field("number="))
            .or_default()
            .push(field("attempt="));
    }
    assert_eq!(attempts.len(), 2, "both games retried:\n{text}");
    for (game, tries) in &attempts {
        assert_eq!(tries, &["1", "2"], "game {game}:\n{text}");
    }
    assert_eq!((rp(&l, &a), rp(&l, &b)), before, "nothing scored");
    assert_eq!(
        l.get("/api/agent/bot/matches", Some(&a)).text,
        matches_before,
        "no match stored"
    );

    std::fs::write(&file, &b_code).unwrap();
    let r = l.challenge(&a, b_id);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.json["result"], "draw", "{}", r.text);
    assert_eq!(r.json["scored"], true, "{}", r.text);
}
