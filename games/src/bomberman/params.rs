//! Per-player-count parameters of a Bomberman match: board side, turn limit, shrink schedule and
//! the bomb constants, from the fixed table (2 and 4 players) or the general formulas.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Smallest and largest supported player counts.
pub const MIN_PLAYERS: usize = 2;
pub const MAX_PLAYERS: usize = 10;

/// Everything about a match that does not depend on the map or the bots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    pub players: usize,
    pub side: usize,
    pub turn_limit: u32,
    pub first_shrink: u32,
    pub shrink_interval: u32,
    pub fuse: u32,
    pub range: u32,
    pub capacity: u32,
    pub flame_turns: u32,
}

/// A player count (or derived quantity) outside what the rules support.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ParamsError {
    #[error("unsupported player count {0}: Bomberman needs 2 to 10 players")]
    PlayerCount(usize),
    #[error("map generation for seed {seed} with {players} players failed every constraint check")]
    MapGeneration { seed: u64, players: usize },
}

/// Smallest k with k*k >= v (integer ceil of the square root).
fn ceil_sqrt(v: usize) -> usize {
    let mut k = 0;
    while k * k < v {
        k += 1;
    }
    k
}

impl Params {
    /// The parameters of an `n`-player match.
    pub fn for_players(n: usize) -> Result<Params, ParamsError> {
        if !(MIN_PLAYERS..=MAX_PLAYERS).contains(&n) {
            return Err(ParamsError::PlayerCount(n));
        }
        let (side, turn_limit, first_shrink, shrink_interval) = match n {
            2 => (13, 300, 150, 20),
            4 => (17, 450, 250, 25),
            _ => {
                let side = 2 * ceil_sqrt(14 * n) + 1;
                let first = 150 + 25 * (n as u32 - 2);
                let interval = if n == 3 { 20 } else { 25 };
                let limit = first + interval * (side as u32 / 2) + 25;
                (side, limit, first, interval)
            }
        };
        Ok(Params {
            players: n,
            side,
            turn_limit,
            first_shrink,
            shrink_interval,
            fuse: 4,
            range: 3,
            capacity: 2,
            flame_turns: 2,
        })
    }

    /// The parameters for a hand-made map: those of its player count, with the map's own side.
    pub fn for_map(map: &super::Map) -> Result<Params, ParamsError> {
        let mut p = Params::for_players(map.spawns.len())?;
        p.side = map.side;
        Ok(p)
    }

    /// The shrink layer that becomes wall on turn `t`, if `t` is a shrink turn (first is layer 1).
    pub fn shrink_layer(&self, t: u32) -> Option<u32> {
        if self.shrink_interval == 0 || t < self.first_shrink {
            return None;
        }
        let d = t - self.first_shrink;
        #[allow(clippy::manual_is_multiple_of)] // keeps the workspace MSRV (1.85)
        let on_layer = d % self.shrink_interval == 0;
        on_layer.then(|| 1 + d / self.shrink_interval)
    }
}
