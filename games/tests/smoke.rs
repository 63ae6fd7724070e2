mod common;
use common::*;
use games::bomberman::*;

#[test]
fn random_games_finish() {
    for n in 2..=10 {
        let map = generate_map(n as u64, n).unwrap();
        let mut g = Game::new(Params::for_players(n).unwrap(), &map).unwrap();
        let mut r = 12345u64;
        while !g.is_over() {
            let ins: Vec<Input> = (0..n)
                .map(|_| {
                    r = r
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let mv = Move::ALL[((r >> 33) % 5) as usize];
                    Input::Act(Action {
                        mv,
                        bomb: (r >> 40) & 3 == 0,
                    })
                })
                .collect();
            g.step(&ins);
        }
        let o = g.outcome();
        println!(
            "{n}: turns {} deaths {:?} points {:?}",
            o.turns, o.death_turns, o.points
        );
    }
    let g = board("#####\n#0.1#\n#####\n#####\n#####\n");
    print!("{}", g.turn_text());
    let _ = wait;
}

#[test]
fn replay_round_trip() {
    use games::bomberman::replay::*;
    use std::collections::BTreeMap;
    let n = 3;
    let map = generate_map(5, n).unwrap();
    let params = Params::for_players(n).unwrap();
    let mut g = Game::new(params, &map).unwrap();
    let meta = MatchMeta {
        seed: 5,
        names: vec!["a".into(), "b".into(), "c".into()],
        hashes: (0..n)
            .map(|i| (format!("bot_{i}"), "ab".repeat(32)))
            .collect::<BTreeMap<_, _>>(),
        map_source: MapSource::Generated,
    };
    let mut rec = Recorder::new(meta, params, &map);
    let mut r = 1u64;
    while !g.is_over() {
        let ins: Vec<TurnInput> = (0..n)
            .map(|p| {
                if !g.is_alive(p) {
                    return TurnInput::NotAsked;
                }
                r = r
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let mv = Move::ALL[((r >> 33) % 5) as usize];
                TurnInput::Act(Action {
                    mv,
                    bomb: (r >> 40) & 3 == 0,
                })
            })
            .collect();
        let inputs: Vec<Input> = ins.iter().map(|i| i.to_input()).collect();
        g.step(&inputs);
        rec.record(g.turn() - 1, &ins, g.digest());
    }
    let rp = rec.finish(&g, vec![String::new(); n], None);
    let json = rp.to_json();
    println!("{}", &json[..600.min(json.len())]);
    let back = verify(&json).unwrap();
    assert_eq!(back, rp);
    println!("{}", inspect(&rp, 3, 1).unwrap());
    let v = viewer_data(&rp);
    println!("{}", &v.to_string()[..1500]);
}
