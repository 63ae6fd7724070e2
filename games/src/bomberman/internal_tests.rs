//! Rules clauses that ordinary play cannot reach (a living player is never on a lethal flame, and
//! one owner's bombs never explode together on both sides of a box), tested by building the state
//! directly.

use super::game::{Bomb, Game};
use super::{parse_map, Action, Event, Input, Params};

const NINE: &str = "\
#########
#0......#
#.......#
#.......#
#.......#
#.......#
#.......#
#......1#
#########
";

fn game(text: &str) -> Game {
    let m = parse_map(text).unwrap();
    Game::new(Params::for_map(&m).unwrap(), &m).unwrap()
}

fn put_bomb(g: &mut Game, owner: usize, x: u16, y: u16, explode_at: u32) {
    let c = y as usize * g.side + x as usize;
    g.bombs.push(Bomb {
        owner,
        x,
        y,
        explode_at,
    });
    g.bomb_here[c] = true;
    g.own_bombs[owner] += 1;
}

fn put_flame(g: &mut Game, owner: usize, x: u16, y: u16, last_lethal: u32) {
    let c = y as usize * g.side + x as usize;
    g.src_expiry[c * g.n + owner] = last_lethal + 1;
    if g.flame_expiry[c] == 0 {
        g.flame_cells.push(c);
    }
    g.flame_expiry[c] = g.flame_expiry[c].max(last_lethal + 1);
}

const STAY2: [Input; 2] = [Input::Act(Action::STAY), Input::Act(Action::STAY)];

#[test]
fn a_bomb_on_a_still_valid_flame_detonates() {
    let mut g = game(NINE);
    put_flame(&mut g, 1, 4, 4, 0);
    put_bomb(&mut g, 0, 4, 4, 10);
    let mut ev = Vec::new();
    g.step_with_events(&STAY2, &mut ev);
    assert!(ev.contains(&Event::Explosion {
        owner: 0,
        x: 4,
        y: 4,
        chained: true
    }));
    assert!(g.bombs.is_empty());
    assert!(g
        .flame_sources()
        .iter()
        .any(|f| (f.x, f.y, f.owner) == (4, 1, 0)));
}

#[test]
fn an_expired_flame_sets_nothing_off() {
    let mut g = game(NINE);
    g.step(&STAY2);
    put_flame(&mut g, 1, 4, 4, 0); // last lethal turn 0, now turn 1
    put_bomb(&mut g, 0, 4, 4, 10);
    g.step(&STAY2);
    assert_eq!(g.bombs.len(), 1);
    assert!(
        g.flame_sources().is_empty(),
        "the expired source was cleaned up"
    );
}

#[test]
fn one_owner_hitting_a_box_twice_in_a_turn_breaks_it_once() {
    let text = NINE.replace(
        "#.......#\n#.......#\n#......1#",
        "#...+...#\n#.......#\n#......1#",
    );
    let mut g = game(&text);
    assert_eq!(g.tiles[5 * 9 + 4], super::Tile::Box);
    put_bomb(&mut g, 0, 2, 5, 0);
    put_bomb(&mut g, 0, 6, 5, 0);
    g.step(&STAY2);
    assert_eq!(g.tiles[5 * 9 + 4], super::Tile::Empty);
    assert_eq!(g.boxes_broken, vec![1, 0]);
}
