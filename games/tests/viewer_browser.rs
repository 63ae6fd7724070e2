//! The HTML viewer in a real browser: plays real games with the engine and the replay recorder
//! (scripted, deterministic players), verifies the replays, renders their viewer pages and runs
//! tests/browser/viewer.test.mjs on each in headless Chromium (playwright-core under node).
//!
//! Needs /usr/bin/chromium (or $CHROMIUM), node and tests/browser/node_modules (see
//! tools/install-browser.sh). Without them the test is skipped with a printed reason, unless
//! FARM_REQUIRE_BROWSER=1, where it fails instead.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use games::bomberman::replay::{verify, viewer_data, MapSource, MatchMeta, Recorder, TurnInput};
use games::bomberman::viewer::render_html;
use games::bomberman::{generate_map, Action, Game, Move, Params};
use serde_json::{json, Value};
use shared::{Fault, FaultKind};

#[path = "../../tests/browser/prerequisite.rs"]
mod browser_prerequisite;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("games/ has a parent")
        .to_path_buf()
}

/// A tiny deterministic generator for the scripted players (xorshift64*).
struct Script(u64);

impl Script {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn pick(&mut self, n: u64) -> u64 {
        (self.next() >> 33) % n
    }
}

const MOVES: [Move; 5] = [Move::Up, Move::Down, Move::Left, Move::Right, Move::Stay];

/// How a scripted game is played.
#[derive(Clone, Copy)]
enum Style {
    /// Random moves, a bomb now and then.
    Wild,
    /// Random moves, never a bomb: the game runs into the shrinking arena.
    Pacifist,
}

/// Plays a whole game (or `max_turns` of it) and returns the verified replay's viewer data and
/// the expectations for the browser test: names and ranks from the engine's result, and for every
/// frame its turn and positions.
fn play(
    players: usize,
    seed: u64,
    names: &[&str],
    style: Style,
    fault: Option<(usize, u32)>,
    max_turns: u32,
) -> (Value, Value) {
    let params = Params::for_players(players).unwrap();
    let map = generate_map(seed, players).unwrap();
    let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    let hashes: BTreeMap<String, String> = (0..players)
        .map(|p| (format!("bot_{p}"), format!("{:064x}", p + 1)))
        .collect();
    let meta = MatchMeta {
        seed,
        names: names.clone(),
        hashes,
        map_source: MapSource::Generated,
    };
    let mut game = Game::new(params, &map).unwrap();
    let mut rec = Recorder::new(meta, params, &map);
    let mut script = Script(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    while !game.is_over() && game.turn() < max_turns {
        let t = game.turn();
        let turn_inputs: Vec<TurnInput> = (0..players)
            .map(|p| {
                let mv = MOVES[script.pick(5) as usize];
                let bomb = matches!(style, Style::Wild) && script.pick(6) == 0;
                if !game.is_alive(p) {
                    TurnInput::NotAsked
                } else if fault == Some((p, t)) {
                    TurnInput::Fault(Fault {
                        kind: FaultKind::Timeout,
                        turn: t,
                        detail: "no answer within 50 ms".into(),
                    })
                } else {
                    TurnInput::Act(Action { mv, bomb })
                }
            })
            .collect();
        let inputs: Vec<_> = turn_inputs.iter().map(TurnInput::to_input).collect();
        game.step(&inputs);
        rec.record(t, &turn_inputs, game.digest());
    }
    let replay = rec.finish(&game, vec![String::new(); players], None);
    // verify() accepts finished games only; the zero-turn page is built from the raw replay.
    let replay = if game.is_over() {
        verify(&replay.to_json()).expect("the recorded replay verifies")
    } else {
        replay
    };
    let data = viewer_data(&replay);
    assert!(data.get("error").is_none(), "viewer data error: {data}");
    let frames = data["frames"].as_array().unwrap();
    assert_eq!(frames.len(), replay.turns.len(), "one frame per turn");
    let expected = json!({
        "names": replay.result.names,
        "ranks": replay.result.ranks,
        "frames": frames.iter().map(|f| json!({"t": f["t"], "players": f["players"]})).collect::<Vec<_>>(),
    });
    (data, expected)
}

/// Writes the page and the expectations to a scratch directory and runs the node test on them.
fn run_in_browser(root: &Path, label: &str, data: &Value, expected: &Value) {
    let dir = std::env::temp_dir().join(format!("viewer-browser-{}-{label}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let html = dir.join("viewer.html");
    let exp = dir.join("expected.json");
    std::fs::write(&html, render_html(data)).unwrap();
    std::fs::write(&exp, expected.to_string()).unwrap();
    let frames = data["frames"].as_array().map_or(0, Vec::len);
    eprintln!(
        "{label}: {frames} frames, page {} bytes",
        render_html(data).len()
    );
    let mut cmd = Command::new("node");
    // VIEWER_SCREENSHOTS=<dir>: keep each game's page and PNGs of it in <dir>/<label>/.
    if let Ok(shots) = std::env::var("VIEWER_SCREENSHOTS") {
        let sub = Path::new(&shots).join(label);
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join("viewer.html"), render_html(data)).unwrap();
        cmd.env("VIEWER_SCREENSHOTS", sub);
    }
    let out = cmd
        .arg("viewer.test.mjs")
        .arg(&html)
        .arg(&exp)
        .current_dir(root.join("tests/browser"))
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "browser test of the {label} game failed ({}):\n{stdout}\n{stderr}\n(page kept at {})",
        out.status,
        html.display()
    );
    assert!(stdout.contains("# fail 0"), "{label}: {stdout}");
    std::fs::remove_dir_all(&dir).ok();
}

/// The repository root if the browser test can run; None (after saying why) if it is skipped.
fn browser_ready() -> Option<PathBuf> {
    let root = repo_root();
    browser_prerequisite::browser_ready(&root, "viewer browser test").then_some(root)
}

#[test]
fn viewer_works_in_headless_chromium_on_the_committed_sample() {
    let Some(root) = browser_ready() else { return };
    let path = root.join("tests/browser/sample-data.json");
    let data: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    run_in_browser(&root, "sample", &data, &data);

    // What viewer_data gives for a replay it cannot re-simulate: meta, error and result only.
    let broken = serde_json::json!({"meta": data["meta"], "error": "turn 3: 1 actions for 2 players",
        "result": data["result"]});
    run_in_browser(&root, "sample-error", &broken, &broken);
}

#[test]
fn viewer_works_in_headless_chromium_on_real_replays() {
    let Some(root) = browser_ready() else { return };

    // Two players with hostile names, bombs flying until someone dies.
    let hostile = [
        "</script><script>alert(1)</script>",
        "O'Neil \"the\nbomber\" \u{2028}ż",
    ];
    let (data, expected) = play(2, 7, &hostile, Style::Wild, None, u32::MAX);
    run_in_browser(&root, "2p-wild", &data, &expected);

    // Ten players on 25x25 with a timeout fault.
    let ten: Vec<String> = (0..10).map(|i| format!("bot-{i}")).collect();
    let ten: Vec<&str> = ten.iter().map(String::as_str).collect();
    let (data, expected) = play(10, 11, &ten, Style::Wild, Some((9, 2)), u32::MAX);
    run_in_browser(&root, "10p-wild", &data, &expected);

    // Four players who never bomb: the arena shrinks on them (hundreds of frames).
    let (data, expected) = play(4, 3, &["a", "b", "c", "d"], Style::Pacifist, None, u32::MAX);
    let shrinks = data["frames"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["events"].as_array().unwrap())
        .filter(|e| e["type"] == "shrink")
        .count();
    assert!(shrinks > 0, "the pacifist game reaches the shrink");
    run_in_browser(&root, "4p-shrink", &data, &expected);

    // Ten pacifists on 25x25: hundreds of frames of the largest board, into the shrink.
    let (data, expected) = play(10, 4, &ten, Style::Pacifist, None, u32::MAX);
    run_in_browser(&root, "10p-shrink", &data, &expected);

    // A game with no turns at all.
    let (data, expected) = play(3, 5, &["x", "y", "z"], Style::Wild, None, 0);
    assert_eq!(data["frames"], json!([]));
    run_in_browser(&root, "empty", &data, &expected);
}
