//! Deterministic map generation from (seed, players), and the constraint check every generated
//! map must pass: walls pattern, clear spawn areas, open exits, connectivity, symmetry.

use super::map::{Map, Tile};
use super::params::{Params, ParamsError};
use super::rng::Rng;

/// Box probability 0.42 as an integer threshold on a uniform u32.
const BOX_THRESHOLD: u32 = 1_803_886_264;
/// Generation attempts before giving up (never reached with the fixed wall pattern).
const ATTEMPTS: u32 = 256;

/// The map of an `players`-player match with this seed; the same on every machine.
pub fn generate_map(seed: u64, players: usize) -> Result<Map, ParamsError> {
    let params = Params::for_players(players)?;
    let mut rng = Rng::new(seed, players as u64);
    for _ in 0..ATTEMPTS {
        let map = attempt(&mut rng, &params);
        if check_constraints(&map).is_ok() {
            return Ok(map);
        }
    }
    Err(ParamsError::MapGeneration { seed, players })
}

/// The cells of the odd ring just inside the wall, clockwise from (1, 1).
pub fn spawn_ring(side: usize) -> Vec<(u16, u16)> {
    let hi = side - 2;
    let mut ring = Vec::new();
    ring.extend((1..=hi).step_by(2).map(|x| (x, 1)));
    ring.extend((3..=hi).step_by(2).map(|y| (hi, y)));
    ring.extend((1..=hi - 2).rev().step_by(2).map(|x| (x, hi)));
    ring.extend((3..=hi - 2).rev().step_by(2).map(|y| (1, y)));
    ring.into_iter()
        .map(|(x, y)| (x as u16, y as u16))
        .collect()
}

fn attempt(rng: &mut Rng, params: &Params) -> Map {
    let side = params.side;
    let n = params.players;
    let hi = (side - 2) as u16;
    let spawns: Vec<(u16, u16)> = match n {
        2 => vec![(1, 1), (hi, hi)],
        4 => vec![(1, 1), (hi, 1), (hi, hi), (1, hi)],
        _ => {
            let ring = spawn_ring(side);
            let r = ring.len();
            let start = rng.below(r as u32) as usize;
            (0..n).map(|i| ring[(start + i * r / n) % r]).collect()
        }
    };
    let mut tiles = vec![Tile::Empty; side * side];
    for y in 0..side {
        for x in 0..side {
            let border = x == 0 || y == 0 || x + 1 == side || y + 1 == side;
            if border || (x % 2 == 0 && y % 2 == 0) {
                tiles[y * side + x] = Tile::Wall;
            }
        }
    }
    let near_spawn = |x: usize, y: usize| {
        spawns
            .iter()
            .any(|&(sx, sy)| x.abs_diff(sx as usize) + y.abs_diff(sy as usize) <= 2)
    };
    for y in 0..side {
        for x in 0..side {
            if tiles[y * side + x] == Tile::Wall || near_spawn(x, y) {
                continue;
            }
            let orbit = orbit(side, n, x, y);
            let rep = orbit
                .iter()
                .map(|&(ox, oy)| oy * side + ox)
                .min()
                .unwrap_or(0);
            if rep != y * side + x {
                continue;
            }
            if rng.next_u32() < BOX_THRESHOLD {
                for (ox, oy) in orbit {
                    tiles[oy * side + ox] = Tile::Box;
                }
            }
        }
    }
    Map {
        side,
        tiles,
        spawns,
    }
}

/// The cells that must share a tile with (x, y): its images under the map's symmetry.
fn orbit(side: usize, players: usize, x: usize, y: usize) -> Vec<(usize, usize)> {
    let m = side - 1;
    match players {
        2 => vec![(x, y), (m - x, m - y)],
        4 => vec![(x, y), (m - y, x), (m - x, m - y), (y, m - x)],
        _ => vec![(x, y)],
    }
}

/// A promise of the rules that a map breaks (what [`check_constraints`] finds).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MapFault {
    #[error("cell ({x},{y}) breaks the wall pattern")]
    WallPattern { x: usize, y: usize },
    #[error("spawn {spawn} at ({x},{y}) is shared")]
    SharedSpawn { spawn: usize, x: usize, y: usize },
    #[error("box at ({x},{y}) within distance 2 of spawn {spawn}")]
    BoxNearSpawn { spawn: usize, x: usize, y: usize },
    #[error("spawn {spawn} at ({x},{y}) is not an empty cell")]
    SpawnNotEmpty { spawn: usize, x: usize, y: usize },
    #[error("spawn {spawn} at ({x},{y}) has only {open} open exit(s)")]
    FewExits {
        spawn: usize,
        x: usize,
        y: usize,
        open: usize,
    },
    #[error("only {connected} of {open} open cells are connected")]
    Disconnected { connected: usize, open: usize },
    #[error("cells ({x},{y}) and ({ox},{oy}) break the symmetry")]
    Asymmetric {
        x: usize,
        y: usize,
        ox: usize,
        oy: usize,
    },
}

/// Checks what the rules promise of a generated map; `Err` says which promise is broken.
pub fn check_constraints(map: &Map) -> Result<(), MapFault> {
    let side = map.side;
    let n = map.spawns.len();
    let at = |x: usize, y: usize| map.tiles[y * side + x];
    for y in 0..side {
        for x in 0..side {
            let border = x == 0 || y == 0 || x + 1 == side || y + 1 == side;
            let must_wall = border || (x % 2 == 0 && y % 2 == 0);
            if must_wall != (at(x, y) == Tile::Wall) {
                return Err(MapFault::WallPattern { x, y });
            }
        }
    }
    for (i, &(sx, sy)) in map.spawns.iter().enumerate() {
        let (sx, sy) = (sx as usize, sy as usize);
        if map.spawns[..i].contains(&map.spawns[i]) {
            return Err(MapFault::SharedSpawn {
                spawn: i,
                x: sx,
                y: sy,
            });
        }
        for y in 0..side {
            for x in 0..side {
                if at(x, y) == Tile::Box && x.abs_diff(sx) + y.abs_diff(sy) <= 2 {
                    return Err(MapFault::BoxNearSpawn { spawn: i, x, y });
                }
            }
        }
        if at(sx, sy) != Tile::Empty {
            return Err(MapFault::SpawnNotEmpty {
                spawn: i,
                x: sx,
                y: sy,
            });
        }
        let open = [(0, 1), (2, 1), (1, 0), (1, 2)]
            .iter()
            .filter(|&&(dx, dy)| at(sx + dx - 1, sy + dy - 1) == Tile::Empty)
            .count();
        if open < 2 {
            return Err(MapFault::FewExits {
                spawn: i,
                x: sx,
                y: sy,
                open,
            });
        }
    }
    // Connectivity of all non-wall cells, boxes cleared.
    let cells: Vec<usize> = (0..side * side)
        .filter(|&c| map.tiles[c] != Tile::Wall)
        .collect();
    if let Some(&start) = cells.first() {
        let mut seen = vec![false; side * side];
        let mut stack = vec![start];
        seen[start] = true;
        let mut count = 0;
        while let Some(c) = stack.pop() {
            count += 1;
            for d in [c - 1, c + 1, c - side, c + side] {
                if !seen[d] && map.tiles[d] != Tile::Wall {
                    seen[d] = true;
                    stack.push(d);
                }
            }
        }
        if count != cells.len() {
            return Err(MapFault::Disconnected {
                connected: count,
                open: cells.len(),
            });
        }
    }
    if n == 2 || n == 4 {
        for y in 0..side {
            for x in 0..side {
                for (ox, oy) in orbit(side, n, x, y) {
                    if at(ox, oy) != at(x, y) {
                        return Err(MapFault::Asymmetric { x, y, ox, oy });
                    }
                }
            }
        }
    }
    Ok(())
}
