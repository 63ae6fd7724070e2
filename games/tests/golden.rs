//! Fixed figures (committed data) so that any change of map generation, rules or digests shows:
//! the same (seed, players) must give the same map, and the same inputs the same states, on
//! every machine and in every later version of this engine.

mod common;
use common::*;
use games::bomberman::*;
use num_rational::Ratio;

const MAP_SEED1_2P: &str = "\
#############
#0..+.++.+.+#
#.#+#.#.#+#.#
#.+.........#
#.#+#.#.#.#.#
#...+.......#
#.#.#.#.#.#.#
#.......+...#
#.#.#.#.#+#.#
#.........+.#
#.#+#.#.#+#.#
#+.+.++.+..1#
#############
";

const MAP_SEED7_5P: &str = "\
###################
#..0...+.++++..1..#
#.#.#.#.#+#.#+#.#.#
#++...+.+..+......#
#.#+#.#+#.#.#+#+#.#
#...++++..++.+.+.+#
#.#.#.#.#.#.#+#+#+#
#+.+...++......+..#
#.#+#.#.#.#+#+#.#+#
#....+++++.+......#
#+#.#.#.#+#.#.#.#.#
#..+...++...+....2#
#.#.#.#.#+#.#+#.#.#
#4...++...+....+..#
#.#.#.#+#+#.#+#.#+#
#.+.........++++..#
#.#.#.#+#.#.#+#.#.#
#+.......3...+++++#
###################
";

#[test]
fn generated_maps_are_fixed_by_seed_and_player_count() {
    assert_eq!(generate_map(1, 2).unwrap().to_text(), MAP_SEED1_2P);
    assert_eq!(generate_map(7, 5).unwrap().to_text(), MAP_SEED7_5P);
}

#[test]
fn a_scripted_match_gives_fixed_digests() {
    let (rp, g) = record(12, 4, 99, &[]);
    assert_eq!(format!("{:016x}", g.digest()), "a18a7dc6d0dfe22e");
    assert_eq!(g.turn(), 5);
    let one = Ratio::from_integer(1);
    assert_eq!(
        g.outcome().points,
        vec![one, one, Ratio::from_integer(3), one]
    );
    assert_eq!(
        rp.digest,
        "9cffda77069241ff2254f664c1008cbe7a605c61dd3d615e194922c49c692a3e"
    );
}
