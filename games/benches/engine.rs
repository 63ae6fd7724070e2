//! Engine throughput: turns per second with scripted pseudo-random actions, for 2 players on
//! 13x13 and 10 players on 25x25, restarting from the initial position whenever a game ends
//! (two bot styles: frequent bombs, and rare bombs for longer games).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use games::bomberman::{generate_map, Action, Game, Input, Move, Params};

const TURNS_PER_ITER: u64 = 10_000;

/// A pre-drawn table of inputs: moves uniform, a bomb one time in `bomb_one_in`.
fn script(players: usize, len: usize, bomb_one_in: u64) -> Vec<Vec<Input>> {
    let mut r = 0x9E37_79B9_7F4A_7C15u64;
    (0..len)
        .map(|_| {
            (0..players)
                .map(|_| {
                    r ^= r << 13;
                    r ^= r >> 7;
                    r ^= r << 17;
                    let mv = Move::ALL[(r % 5) as usize];
                    Input::Act(Action {
                        mv,
                        bomb: (r >> 20).is_multiple_of(bomb_one_in),
                    })
                })
                .collect()
        })
        .collect()
}

fn run(c: &mut Criterion, players: usize, bomb_one_in: u64, label: &str) {
    let map = generate_map(42, players).unwrap();
    let start = Game::new(Params::for_players(players).unwrap(), &map).unwrap();
    let table = script(players, 4096, bomb_one_in);
    let mut game = start.clone();
    let mut k = 0usize;
    let mut group = c.benchmark_group("engine");
    group.throughput(Throughput::Elements(TURNS_PER_ITER));
    group.bench_function(label, |b| {
        b.iter(|| {
            for _ in 0..TURNS_PER_ITER {
                if game.is_over() {
                    game.reset_to(&start);
                }
                game.step(&table[k & 4095]);
                k = k.wrapping_add(1);
            }
            game.turn()
        })
    });
    group.finish();
    let mut g = start.clone();
    let (mut games_played, mut turns) = (0u64, 0u64);
    for i in 0..200_000usize {
        if g.is_over() {
            games_played += 1;
            g.reset_to(&start);
        }
        g.step(&table[i & 4095]);
        turns += 1;
    }
    println!(
        "{label}: {turns} turns in {games_played} games (mean game length {:.1})",
        turns as f64 / games_played.max(1) as f64
    );
}

fn benches(c: &mut Criterion) {
    // Bomb-happy bots: short games, many restarts.
    run(c, 2, 8, "2p_13x13");
    run(c, 10, 8, "10p_25x25");
    // Calmer bots: longer games with more walking between explosions.
    run(c, 2, 48, "2p_13x13_calm");
    run(c, 10, 48, "10p_25x25_calm");
}

criterion_group!(engine, benches);
criterion_main!(engine);
