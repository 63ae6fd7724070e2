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
                        bomb: (r >> 40) % 4 == 0,
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
