//! The index page's JavaScript engine (`viewer_sim.js`) against this one: plays many games with
//! scripted random players (2 to 10 players, many seeds, wild bombers to pacifists who run into
//! the shrinking arena, protocol faults), stores each as the index does (`pack_for_index`, which
//! must pick the compact form and give back the data in Rust) and runs
//! tests/browser/sim.test.mjs under node, which re-plays every one and compares it frame by
//! frame, member by member, with `viewer_data`.
//!
//! Needs node ≥ 20 (no browser). Without it the test is skipped with a printed reason, unless
//! FARM_REQUIRE_BROWSER=1, where it fails instead.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use games::bomberman::replay::{
    verify, viewer_data, MapSource, MatchMeta, Recorder, Replay, TurnInput,
};
use games::bomberman::viewer::{index_form, pack_for_index, unpack_index_data};
use games::bomberman::{generate_map, parse_map, Action, Game, Map, Move, Params};
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

/// xorshift64*, for the scripted players.
struct Script(u64);

impl Script {
    fn pick(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) % n
    }
}

const MOVES: [Move; 5] = [Move::Up, Move::Down, Move::Left, Move::Right, Move::Stay];
const FAULTS: [FaultKind; 4] = [
    FaultKind::Timeout,
    FaultKind::Crash,
    FaultKind::BadOutput,
    FaultKind::Exit,
];

/// How the scripted players of a game play.
#[derive(Clone, Copy, Debug)]
struct Style {
    /// A bomb about once in this many turns (0: never)...
    bomb_one_in: u64,
    /// ...from this many turns before the first shrink on (None: from the start).
    bombs_before_shrink: Option<u32>,
    /// Staying put once in this many turns.
    stay_one_in: u64,
    /// About one protocol fault in this many player-turns (0: none).
    fault_one_in: u64,
}

/// A whole game of `n` scripted players. Returns the verified replay.
fn play(n: usize, seed: u64, style: Style) -> Replay {
    let Style {
        bomb_one_in,
        bombs_before_shrink,
        stay_one_in,
        fault_one_in,
    } = style;
    let params = Params::for_players(n).expect("2..=10 players");
    let map = generate_map(seed, n).expect("a map");
    let meta = meta(seed, n, MapSource::Generated);
    let mut s = Script(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (n as u64) << 40 | 1);
    record(meta, params, &map, |game| {
        let t = game.turn();
        (0..n)
            .map(|_| {
                let mv = if s.pick(stay_one_in) == 0 {
                    Move::Stay
                } else {
                    MOVES[s.pick(5) as usize]
                };
                let armed = bombs_before_shrink.is_none_or(|b| t + b >= params.first_shrink);
                let bomb = bomb_one_in > 0 && s.pick(bomb_one_in) == 0 && armed;
                let fault = fault_one_in > 0 && s.pick(fault_one_in) == 0;
                (mv, bomb, fault, s.pick(4) as usize)
            })
            .enumerate()
            .map(|(p, (mv, bomb, fault, kind))| {
                if !game.is_alive(p) {
                    TurnInput::NotAsked
                } else if fault {
                    TurnInput::Fault(Fault {
                        kind: FAULTS[kind],
                        turn: t,
                        detail: format!("fault of bot{p} on turn {t}: \"</script>\u{2028}"),
                    })
                } else {
                    TurnInput::Act(Action { mv, bomb })
                }
            })
            .collect()
    })
}

/// Plays a game to its end with the inputs `inputs_for` gives each turn, records it, and returns
/// the verified replay.
fn record(
    meta: MatchMeta,
    params: Params,
    map: &Map,
    mut inputs_for: impl FnMut(&Game) -> Vec<TurnInput>,
) -> Replay {
    let n = params.players;
    let mut game = Game::new(params, map).expect("a game");
    let mut rec = Recorder::new(meta, params, map);
    while !game.is_over() {
        let t = game.turn();
        let inputs = inputs_for(&game);
        let engine: Vec<_> = inputs.iter().map(TurnInput::to_input).collect();
        game.step(&engine);
        rec.record(t, &inputs, game.digest());
    }
    let replay = rec.finish(&game, vec![String::new(); n], None);
    verify(&replay.to_json()).expect("the recorded replay verifies")
}

/// The meta of a test game of `n` players named bot0… with made-up program hashes.
fn meta(seed: u64, n: usize, map_source: MapSource) -> MatchMeta {
    MatchMeta {
        seed,
        names: (0..n).map(|p| format!("bot{p}")).collect(),
        hashes: (0..n)
            .map(|p| (format!("bot_{p}"), format!("{:064x}", p + 1)))
            .collect::<BTreeMap<_, _>>(),
        map_source,
    }
}

/// A game on a hand-made map where the players play `script` (turn by turn, one compact action
/// per player, e.g. "S1 S1 S0") and then stay. Returns the verified replay.
fn play_script(map_text: &str, script: &[&str]) -> Replay {
    let map = parse_map(map_text).expect("a map");
    let params = Params::for_map(&map).expect("params");
    let n = params.players;
    let meta = meta(1, n, MapSource::File);
    record(meta, params, &map, |game| {
        let t = game.turn();
        let words: Vec<&str> = script
            .get(t as usize)
            .map_or(vec!["S0"; n], |w| w.split(' ').collect());
        (0..n)
            .map(|p| match game.is_alive(p) {
                true => TurnInput::Act(Action::from_compact(words[p]).expect("an action")),
                false => TurnInput::NotAsked,
            })
            .collect()
    })
}

/// Games random players hardly play: two players' bombs going off together on a third (a
/// kill shared by two), a queue of four stopped by a wall, a swap; then the survivors stay
/// until the shrinking wall takes them.
fn scripted_games() -> Vec<(String, Replay)> {
    let open = "#########\n#.......#\n#.......#\n#0..2..1#\n#.......#\n#.......#\n\
                #.......#\n#.......#\n#########\n";
    let shared = ["S1 S1 S0", "D0 D0 S0", "R0 L0 S0"];
    // Four in a row walk right into a wall: the stop of the first reaches the last only after
    // the second pass; then two swap places.
    let row = "#########\n#0123#..#\n#.......#\n#.......#\n#.......#\n#.......#\n\
               #.......#\n#.......#\n#########\n";
    let queue = ["R0 R0 R0 R0", "R0 L0 S0 S0"];
    vec![
        ("shared kill".to_string(), play_script(open, &shared)),
        ("a queue at a wall".to_string(), play_script(row, &queue)),
    ]
}

/// What the games cover, summed over their frames' events.
#[derive(Default, Debug)]
struct Coverage {
    shrinks: usize,
    flame_deaths: usize,
    shrink_deaths: usize,
    fault_deaths: usize,
    chained: usize,
    blocked: usize,
    removed: usize,
    shared_kills: usize,
}

impl Coverage {
    fn add(&mut self, data: &Value) {
        for f in data["frames"].as_array().into_iter().flatten() {
            for e in f["events"].as_array().into_iter().flatten() {
                let ty = e["type"].as_str().unwrap_or("");
                match (ty, e["cause"].as_str()) {
                    ("shrink", _) => self.shrinks += 1,
                    ("death", Some("flame")) => self.flame_deaths += 1,
                    ("death", Some("shrink")) => self.shrink_deaths += 1,
                    ("death", Some("fault")) => self.fault_deaths += 1,
                    ("explosion", _) if e["chained"] == true => self.chained += 1,
                    ("blocked", _) => self.blocked += 1,
                    ("bomb_removed", _) => self.removed += 1,
                    _ => {}
                }
                if ty == "death" && e["killers"].as_array().is_some_and(|k| k.len() > 1) {
                    self.shared_kills += 1;
                }
            }
        }
    }
}

/// The random games the tests play: 2 to 10 players, four seeds each, in every style (wild
/// bombers, careful ones, pacifists who meet the shrinking wall, bots that fault now and then,
/// and ones that start bombing just before the first shrink).
fn random_games() -> Vec<(String, Replay)> {
    let style = |bomb_one_in, bombs_before_shrink, stay_one_in, fault_one_in| Style {
        bomb_one_in,
        bombs_before_shrink,
        stay_one_in,
        fault_one_in,
    };
    let styles = [
        style(5, None, 4, 0),
        style(30, None, 2, 0),
        style(0, None, 3, 0),
        style(12, None, 3, 400),
        style(3, Some(6), 2, 0),
    ];
    let mut games = Vec::new();
    for n in 2..=10 {
        for seed in 0..4u64 {
            for (i, &style) in styles.iter().enumerate() {
                let seed = seed * 7 + i as u64 + 100 * n as u64;
                let name = format!("{n} players, seed {seed}, style {i}");
                games.push((name, play(n, seed, style)));
            }
        }
    }
    games
}

#[test]
fn the_pages_engine_replays_random_games_as_rust_does() {
    if !browser_prerequisite::node_ready("viewer sim test") {
        return;
    }
    let mut cases = Vec::new();
    let mut cover = Coverage::default();
    for (name, replay) in random_games() {
        let data = viewer_data(&replay);
        assert!(data.get("error").is_none(), "{name}");
        cover.add(&data);
        let packed = pack_for_index(data.clone());
        assert!(
            packed.get("sim").is_some(),
            "{name}: stored in the compact form"
        );
        assert_eq!(unpack_index_data(packed.clone()), data, "{name}");
        cases.push(json!({"name": name, "packed": packed, "expected": data}));
    }
    for (name, replay) in scripted_games() {
        let data = viewer_data(&replay);
        cover.add(&data);
        let packed = pack_for_index(data.clone());
        assert!(
            packed.get("sim").is_some(),
            "{name}: stored in the compact form"
        );
        cases.push(json!({"name": name, "packed": packed, "expected": data}));
    }
    let games = cases.len();
    let path = std::env::temp_dir().join(format!("viewer-sim-{}.json", std::process::id()));
    std::fs::write(&path, Value::Array(cases).to_string()).expect("cases written");
    let out = Command::new("node")
        .arg("sim.test.mjs")
        .arg(&path)
        .current_dir(repo_root().join("tests/browser"))
        .output()
        .expect("node runs");
    let _ = std::fs::remove_file(&path);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("# fail 0"),
        "sim.test.mjs failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    eprintln!("{games} games: {cover:?}");
    let c = &cover;
    for (what, count) in [
        ("shrinks", c.shrinks),
        ("deaths by flame", c.flame_deaths),
        ("deaths by the shrinking wall", c.shrink_deaths),
        ("deaths by fault", c.fault_deaths),
        ("chained explosions", c.chained),
        ("blocked moves", c.blocked),
        ("bombs removed by the shrink", c.removed),
        ("shared kills", c.shared_kills),
    ] {
        assert!(count > 0, "the games have no {what}: {cover:?}");
    }
}

/// A match's data file is built straight from its replay (`index_form`, no frame built), and
/// is exactly the document the full round trip gives (`pack_for_index` of the viewer data,
/// which keeps the compact form only when re-playing it gives the viewer data back): for every
/// game above, and for replays the compact form cannot hold, where both pack the frames.
#[test]
fn the_data_file_is_built_from_the_replay_as_the_full_round_trip_builds_it() {
    let mut games = random_games();
    games.extend(scripted_games());
    let played = games.len();
    let base = games[0].1.clone();
    let mut odd = Vec::new();
    let mut other_rules = base.clone();
    other_rules.version = "bomberman-0".into();
    odd.push(("another rules version", other_rules));
    let mut silent = base.clone();
    silent.turns[3].actions[0] = None;
    odd.push(("a living player silent", silent));
    let mut spelled = base.clone();
    spelled.turns[2].actions[1] = Some("X1".into());
    odd.push(("an action that does not parse", spelled));
    let mut both = base.clone();
    let turn = both.turns[4].t;
    both.turns[4]
        .faults
        .push(games::bomberman::replay::TurnFault {
            player: 0,
            kind: FaultKind::Timeout,
            turn,
            detail: "late".into(),
        });
    odd.push(("an action and a fault", both));
    let without_timing = |mut data: Value| {
        if let Some(r) = data.get_mut("result").and_then(Value::as_object_mut) {
            r.shift_remove("timing");
        }
        data
    };
    let mut compact = 0;
    let all = games
        .iter()
        .map(|(name, r)| (name.as_str(), r))
        .chain(odd.iter().map(|(name, r)| (*name, r)));
    for (name, replay) in all {
        let full = pack_for_index(without_timing(viewer_data(replay)));
        assert_eq!(index_form(replay), full, "{name}");
        compact += usize::from(full.get("sim").is_some());
    }
    assert_eq!(compact, played, "every played game compact, no odd replay");
}
