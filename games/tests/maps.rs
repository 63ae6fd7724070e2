//! Parameters per player count, generated maps (constraints, symmetry, spawns, determinism) and
//! hand-made map parsing with its error messages.

use games::bomberman::*;

#[test]
fn params_table_and_formulas_for_every_player_count() {
    // (players, side, turn_limit, first_shrink, shrink_interval), from the rules' table.
    let table = [
        (2, 13, 300, 150, 20),
        (3, 15, 340, 175, 20),
        (4, 17, 450, 250, 25),
        (5, 19, 475, 225, 25),
        (6, 21, 525, 250, 25),
        (7, 21, 550, 275, 25),
        (8, 23, 600, 300, 25),
        (9, 25, 650, 325, 25),
        (10, 25, 675, 350, 25),
    ];
    for (n, side, limit, first, interval) in table {
        let p = Params::for_players(n).unwrap();
        assert_eq!(
            (
                p.players,
                p.side,
                p.turn_limit,
                p.first_shrink,
                p.shrink_interval
            ),
            (n, side, limit, first, interval),
            "{n} players"
        );
        assert_eq!((p.fuse, p.range, p.capacity, p.flame_turns), (4, 3, 2, 2));
    }
    for bad in [0, 1, 11, 100] {
        let e = Params::for_players(bad).unwrap_err();
        assert_eq!(e, ParamsError::PlayerCount(bad));
        assert!(e.to_string().contains("2 to 10"), "{e}");
    }
}

#[test]
fn generated_maps_keep_every_promise_for_2_to_10_players() {
    for n in 2..=10 {
        let p = Params::for_players(n).unwrap();
        for seed in 0..60u64 {
            let m = generate_map(seed, n).unwrap();
            assert_eq!(m.side, p.side);
            assert_eq!(m.spawns.len(), n);
            if let Err(e) = check_constraints(&m) {
                panic!("seed {seed}, {n} players: {e}\n{}", m.to_text());
            }
        }
    }
}

#[test]
fn spawns_two_players_opposite_corners_four_players_clockwise_corners() {
    let m = generate_map(9, 2).unwrap();
    assert_eq!(m.spawns, vec![(1, 1), (11, 11)]);
    let m = generate_map(9, 4).unwrap();
    assert_eq!(m.spawns, vec![(1, 1), (15, 1), (15, 15), (1, 15)]);
}

#[test]
fn symmetry_180_for_two_and_90_for_four_players() {
    for seed in 0..30 {
        let m = generate_map(seed, 2).unwrap();
        let s = m.side - 1;
        for y in 0..m.side {
            for x in 0..m.side {
                assert_eq!(m.tile(x, y), m.tile(s - x, s - y));
            }
        }
        let m = generate_map(seed, 4).unwrap();
        let s = m.side - 1;
        for y in 0..m.side {
            for x in 0..m.side {
                assert_eq!(m.tile(x, y), m.tile(s - y, x), "seed {seed} ({x},{y})");
            }
        }
    }
}

#[test]
fn other_counts_spawn_evenly_on_the_odd_ring() {
    for n in [3, 5, 6, 7, 8, 9, 10] {
        let side = Params::for_players(n).unwrap().side;
        let ring = spawn_ring(side);
        assert_eq!(ring.len(), 4 * ((side - 1) / 2 - 1));
        assert_eq!(ring[0], (1, 1));
        assert!(ring.iter().all(|&(x, y)| x % 2 == 1 && y % 2 == 1));
        for w in ring.windows(2) {
            let d = w[0].0.abs_diff(w[1].0) + w[0].1.abs_diff(w[1].1);
            assert_eq!(d, 2, "ring neighbours are two cells apart (clockwise)");
        }
        let r = ring.len();
        let mut starts = std::collections::BTreeSet::new();
        for seed in 0..40 {
            let m = generate_map(seed, n).unwrap();
            let s = ring.iter().position(|&c| c == m.spawns[0]).unwrap();
            starts.insert(s);
            for (i, &sp) in m.spawns.iter().enumerate() {
                assert_eq!(
                    sp,
                    ring[(s + i * r / n) % r],
                    "{n} players, seed {seed}, player {i}"
                );
            }
        }
        assert!(starts.len() > 5, "the seed chooses the starting point");
    }
}

#[test]
fn box_density_is_about_042() {
    let (mut boxes, mut candidates) = (0usize, 0usize);
    for seed in 0..200 {
        let m = generate_map(seed, 3).unwrap();
        for y in 0..m.side {
            for x in 0..m.side {
                let near = m
                    .spawns
                    .iter()
                    .any(|&(sx, sy)| x.abs_diff(sx as usize) + y.abs_diff(sy as usize) <= 2);
                if m.tile(x, y) != Tile::Wall && !near {
                    candidates += 1;
                    boxes += usize::from(m.tile(x, y) == Tile::Box);
                }
            }
        }
    }
    let rate = boxes as f64 / candidates as f64;
    assert!((0.40..0.44).contains(&rate), "box rate {rate}");
}

#[test]
fn generation_is_deterministic_and_depends_on_seed_and_player_count() {
    for n in 2..=10 {
        assert_eq!(generate_map(77, n).unwrap(), generate_map(77, n).unwrap());
        assert_ne!(generate_map(77, n).unwrap(), generate_map(78, n).unwrap());
    }
    // Fixed figures, so a change of generator cannot pass unnoticed.
    let m = generate_map(1, 2).unwrap();
    let text = m.to_text();
    assert_eq!(text.lines().count(), 13);
    assert!(text.starts_with("#############\n#0."));
    let m2 = generate_map(1, 2).unwrap();
    assert_eq!(text, m2.to_text());
}

#[test]
fn to_text_and_parse_map_are_inverse() {
    for n in 2..=10 {
        let m = generate_map(5, n).unwrap();
        let back = parse_map(&m.to_text()).unwrap();
        assert_eq!(back, m, "{n} players");
    }
    let crlf = "#####\r\n#0.1#\r\n#.+.#\r\n#...#\r\n#####\r\n";
    let m = parse_map(crlf).unwrap();
    assert_eq!(m.spawns, vec![(1, 1), (3, 1)]);
    assert_eq!(m.tile(2, 2), Tile::Box);
}

fn err(text: &str) -> String {
    parse_map(text).unwrap_err().to_string()
}

#[test]
fn parse_errors_name_the_line_and_the_reason() {
    assert_eq!(err(""), "the map is empty");
    assert_eq!(
        err("#####\n#0.1#\n#...#\n#####\n"),
        "line 1 has 5 characters but the map has 4 lines; a map must be square"
    );
    assert_eq!(
        err("#####\n#0.1#\n#..#\n#...#\n#####\n"),
        "line 3 has 4 characters but the map has 5 lines; a map must be square"
    );
    assert_eq!(
        err("#####\n#0.1#\n#.x.#\n#...#\n#####\n"),
        "line 3, column 3: character 'x' is not one of '#', '+', '.' or a spawn digit"
    );
    assert_eq!(
        err("#####\n#0.1#\n....#\n#...#\n#####\n"),
        "line 3, column 1: the outer wall is open ('.' where '#' is required)"
    );
    assert_eq!(
        err("##.##\n#0.1#\n#...#\n#...#\n#####\n"),
        "line 1, column 3: the outer wall is open ('.' where '#' is required)"
    );
    assert_eq!(
        err("#####\n#0.1#\n#.1.#\n#...#\n#####\n"),
        "line 3, column 3: spawn digit 1 appears again (first on line 2)"
    );
    assert_eq!(
        err("#####\n#0.2#\n#...#\n#...#\n#####\n"),
        "spawn digit 1 is missing: with 2 spawn digits they must be 0..1"
    );
    assert_eq!(
        err("#####\n#0..#\n#...#\n#...#\n#####\n"),
        "only 1 spawn digit(s) found: a map needs at least 2 players"
    );
    assert_eq!(
        err("###\n#0#\n###\n"),
        "the map is 3x3: a map needs at least 5x5 cells"
    );
}

#[test]
fn game_new_checks_the_map_against_the_params() {
    let m = parse_map("#####\n#0.1#\n#...#\n#...#\n#####\n").unwrap();
    let p = Params::for_players(2).unwrap();
    let e = Game::new(p, &m).unwrap_err();
    assert_eq!(e.to_string(), "the map is 5x5 but the params say side 13");
    let p3 = Params {
        side: 5,
        ..Params::for_players(3).unwrap()
    };
    let e = Game::new(p3, &m).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the map has 2 spawns but the params are for 3 players"
    );
    assert!(Game::new(Params::for_map(&m).unwrap(), &m).is_ok());
}
