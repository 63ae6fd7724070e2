//! The Bomberman state machine: one `step` runs the five phases of a turn (clean-up and shrink,
//! bomb placement, simultaneous movement, explosions, flames and eliminations) on flat per-cell
//! arrays with reusable scratch buffers, so the hot path allocates nothing.

#![allow(clippy::needless_range_loop)] // per-player loops index several parallel arrays

use num_rational::Ratio;
use thiserror::Error;

use super::action::{Action, Input};
use super::events::{BombFailure, DeathCause, Event};
use super::map::{Map, Tile};
use super::params::Params;

/// Most players a game can hold (owner sets are 16-bit masks).
pub const MAX_GAME_PLAYERS: usize = 16;

/// A bomb on the board.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bomb {
    pub owner: usize,
    pub x: u16,
    pub y: u16,
    pub explode_at: u32,
}

/// One (cell, owner) flame source and its last lethal turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlameSource {
    pub x: u16,
    pub y: u16,
    pub owner: usize,
    pub last_lethal: u32,
}

/// Why a game could not be set up from these params and this map.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum GameError {
    #[error("the map has {spawns} spawns but the params are for {players} players")]
    SpawnCount { spawns: usize, players: usize },
    #[error("the map is {map}x{map} but the params say side {params}")]
    SideMismatch { map: usize, params: usize },
    #[error("the map has {len} tiles, not side*side = {expected}")]
    TileCount { len: usize, expected: usize },
    #[error("player count {0} is outside 1..=16")]
    PlayerCount(usize),
    #[error("spawn of player {player} at ({x},{y}) is outside the board or not an empty cell")]
    BadSpawn { player: usize, x: u16, y: u16 },
    #[error("the map must be at least 3x3 with a closed outer wall")]
    OpenBorder,
}

/// Per-player state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Player {
    pub cell: usize,
    pub alive: bool,
    pub death_turn: i32,
}

/// Buffers reused by every step.
#[derive(Debug, Clone, Default)]
pub(super) struct Scratch {
    pub target: Vec<usize>,
    pub stay: Vec<bool>,
    pub wants_bomb: Vec<bool>,
    pub detonating: Vec<bool>,
    pub queue: Vec<usize>,
    /// Per cell: owners whose fire reached it this turn (bit mask).
    pub burn: Vec<u16>,
    pub burned: Vec<usize>,
}

/// A running match: the state at the start of turn `turn()`.
#[derive(Debug, Clone)]
pub struct Game {
    pub(super) params: Params,
    pub(super) side: usize,
    pub(super) n: usize,
    pub(super) t: u32,
    pub(super) over: bool,
    pub(super) tiles: Vec<Tile>,
    pub(super) bomb_here: Vec<bool>,
    /// In placement order.
    pub(super) bombs: Vec<Bomb>,
    pub(super) own_bombs: Vec<u32>,
    /// `cell * n + owner` -> first turn on which that source is no longer lethal (0 = none).
    pub(super) src_expiry: Vec<u32>,
    /// Per cell: the max of its sources' expiries (0 = no flame).
    pub(super) flame_expiry: Vec<u32>,
    /// Cells with at least one stored source, in no particular order.
    pub(super) flame_cells: Vec<usize>,
    pub(super) players: Vec<Player>,
    pub(super) alive: usize,
    pub(super) kills: Vec<Ratio<i64>>,
    pub(super) bombs_placed: Vec<u32>,
    pub(super) boxes_broken: Vec<u32>,
    pub(super) scratch: Scratch,
}

impl Game {
    /// A game at turn 0 on `map` (spawn i is player i's start).
    pub fn new(params: Params, map: &Map) -> Result<Game, GameError> {
        let n = params.players;
        if !(1..=MAX_GAME_PLAYERS).contains(&n) {
            return Err(GameError::PlayerCount(n));
        }
        if map.spawns.len() != n {
            return Err(GameError::SpawnCount {
                spawns: map.spawns.len(),
                players: n,
            });
        }
        let side = map.side;
        if side != params.side {
            return Err(GameError::SideMismatch {
                map: side,
                params: params.side,
            });
        }
        if map.tiles.len() != side * side {
            return Err(GameError::TileCount {
                len: map.tiles.len(),
                expected: side * side,
            });
        }
        let closed = side >= 3
            && (0..side).all(|i| {
                [(i, 0), (i, side - 1), (0, i), (side - 1, i)]
                    .iter()
                    .all(|&(x, y)| map.tiles[y * side + x] == Tile::Wall)
            });
        if !closed {
            return Err(GameError::OpenBorder);
        }
        let mut players = Vec::with_capacity(n);
        for (p, &(x, y)) in map.spawns.iter().enumerate() {
            let (ux, uy) = (x as usize, y as usize);
            if ux >= side || uy >= side || map.tiles[uy * side + ux] != Tile::Empty {
                return Err(GameError::BadSpawn { player: p, x, y });
            }
            players.push(Player {
                cell: uy * side + ux,
                alive: true,
                death_turn: -1,
            });
        }
        let cells = side * side;
        let scratch = Scratch {
            target: vec![0; n],
            stay: vec![false; n],
            wants_bomb: vec![false; n],
            detonating: Vec::with_capacity(4 * n),
            queue: Vec::with_capacity(4 * n),
            burn: vec![0; cells],
            burned: Vec::with_capacity(cells),
        };
        Ok(Game {
            params,
            side,
            n,
            t: 0,
            over: false,
            tiles: map.tiles.clone(),
            bomb_here: vec![false; cells],
            bombs: Vec::with_capacity(4 * n),
            own_bombs: vec![0; n],
            src_expiry: vec![0; cells * n],
            flame_expiry: vec![0; cells],
            flame_cells: Vec::with_capacity(cells),
            players,
            alive: n,
            kills: vec![Ratio::from_integer(0); n],
            bombs_placed: vec![0; n],
            boxes_broken: vec![0; n],
            scratch,
        })
    }

    /// Makes this game a copy of `other`, reusing this game's buffers (no allocation when the
    /// sizes match): restarting a benchmark or a search from a saved position.
    pub fn reset_to(&mut self, other: &Game) {
        self.params = other.params;
        self.side = other.side;
        self.n = other.n;
        self.t = other.t;
        self.over = other.over;
        self.tiles.clone_from(&other.tiles);
        self.bomb_here.clone_from(&other.bomb_here);
        self.bombs.clone_from(&other.bombs);
        self.own_bombs.clone_from(&other.own_bombs);
        self.src_expiry.clone_from(&other.src_expiry);
        self.flame_expiry.clone_from(&other.flame_expiry);
        self.flame_cells.clone_from(&other.flame_cells);
        self.players.clone_from(&other.players);
        self.alive = other.alive;
        self.kills.clone_from(&other.kills);
        self.bombs_placed.clone_from(&other.bombs_placed);
        self.boxes_broken.clone_from(&other.boxes_broken);
        // Scratch buffers hold nothing between turns; only their sizes matter.
        if self.scratch.burn.len() != other.scratch.burn.len()
            || self.scratch.target.len() != other.scratch.target.len()
        {
            self.scratch = other.scratch.clone();
        }
    }

    pub fn params(&self) -> &Params {
        &self.params
    }
    /// The current turn (the next one to be played).
    pub fn turn(&self) -> u32 {
        self.t
    }
    pub fn is_over(&self) -> bool {
        self.over
    }
    pub fn is_alive(&self, p: usize) -> bool {
        self.players[p].alive
    }
    pub fn alive_count(&self) -> usize {
        self.alive
    }
    pub fn side(&self) -> usize {
        self.side
    }
    pub fn tile(&self, x: usize, y: usize) -> Tile {
        self.tiles[y * self.side + x]
    }
    /// Player `p`'s cell (for a dead player, where they died).
    pub fn position(&self, p: usize) -> (u16, u16) {
        let c = self.players[p].cell;
        ((c % self.side) as u16, (c / self.side) as u16)
    }
    /// -1 while alive.
    pub fn death_turn(&self, p: usize) -> i32 {
        self.players[p].death_turn
    }
    pub fn kill_share(&self, p: usize) -> Ratio<i64> {
        self.kills[p]
    }
    /// Bombs on the board, in placement order.
    pub fn bombs(&self) -> &[Bomb] {
        &self.bombs
    }
    /// Current board rows (`#`, `+`, `.`).
    pub fn board_rows(&self) -> Vec<String> {
        self.tiles
            .chunks(self.side)
            .map(|r| r.iter().map(|t| t.to_char()).collect())
            .collect()
    }
    /// Every stored flame source (row-major, then owner), lethal on turns up to `last_lethal`.
    pub fn flame_sources(&self) -> Vec<FlameSource> {
        let mut out = Vec::new();
        for c in 0..self.tiles.len() {
            if self.flame_expiry[c] == 0 {
                continue;
            }
            for o in 0..self.n {
                let e = self.src_expiry[c * self.n + o];
                if e > 0 {
                    let (x, y) = ((c % self.side) as u16, (c / self.side) as u16);
                    out.push(FlameSource {
                        x,
                        y,
                        owner: o,
                        last_lethal: e - 1,
                    });
                }
            }
        }
        out
    }

    /// Plays one full turn. `inputs[p]` is ignored for dead players. Does nothing once over.
    /// Panics if `inputs.len()` differs from the player count.
    pub fn step(&mut self, inputs: &[Input]) {
        self.run_turn(inputs, None);
    }

    /// Like [`Game::step`], appending what happened to `events`.
    pub fn step_with_events(&mut self, inputs: &[Input], events: &mut Vec<Event>) {
        self.run_turn(inputs, Some(events));
    }

    fn run_turn(&mut self, inputs: &[Input], mut ev: Option<&mut Vec<Event>>) {
        assert_eq!(inputs.len(), self.n, "one input per player");
        if self.over {
            return;
        }
        self.phase_cleanup(inputs, &mut ev);
        self.phase_place(inputs, &mut ev);
        self.phase_move(inputs, &mut ev);
        self.phase_explode(&mut ev);
        self.phase_flames(&mut ev);
        self.t += 1;
        if self.alive <= 1 || self.t >= self.params.turn_limit {
            self.over = true;
        }
    }

    pub(super) fn kill(
        &mut self,
        p: usize,
        cause: DeathCause,
        killers: u16,
        ev: &mut Option<&mut Vec<Event>>,
    ) {
        let pl = &mut self.players[p];
        pl.alive = false;
        pl.death_turn = self.t as i32;
        self.alive -= 1;
        let k = killers.count_ones() as i64;
        let share = if k > 0 {
            Ratio::new(1, k)
        } else {
            Ratio::from_integer(0)
        };
        if k > 0 {
            for o in 0..self.n {
                if killers & (1 << o) != 0 {
                    self.kills[o] += share;
                }
            }
        }
        if let Some(ev) = ev {
            let killers = (0..self.n).filter(|o| killers & (1 << o) != 0).collect();
            ev.push(Event::Death {
                player: p,
                cause,
                killers,
                share,
            });
        }
    }

    fn clear_flames_at(&mut self, c: usize) {
        let n = self.n;
        self.src_expiry[c * n..(c + 1) * n].fill(0);
        self.flame_expiry[c] = 0;
        if let Some(i) = self.flame_cells.iter().position(|&f| f == c) {
            self.flame_cells.swap_remove(i);
        }
    }

    /// Phase 1: expired flames, protocol faults, shrink.
    fn phase_cleanup(&mut self, inputs: &[Input], ev: &mut Option<&mut Vec<Event>>) {
        let (t, n) = (self.t, self.n);
        let mut i = 0;
        while i < self.flame_cells.len() {
            let c = self.flame_cells[i];
            if self.flame_expiry[c] <= t {
                self.src_expiry[c * n..(c + 1) * n].fill(0);
                self.flame_expiry[c] = 0;
                self.flame_cells.swap_remove(i);
                continue;
            }
            for e in &mut self.src_expiry[c * n..(c + 1) * n] {
                if *e <= t {
                    *e = 0;
                }
            }
            i += 1;
        }
        for p in 0..n {
            if self.players[p].alive && matches!(inputs[p], Input::Fault) {
                self.kill(p, DeathCause::Fault, 0, ev);
            }
        }
        if let Some(layer) = self.params.shrink_layer(t) {
            self.shrink(layer as usize, ev);
        }
    }

    fn shrink(&mut self, layer: usize, ev: &mut Option<&mut Vec<Event>>) {
        if let Some(ev) = ev {
            ev.push(Event::Shrink {
                layer: layer as u32,
            });
        }
        let s = self.side;
        for c in 0..s * s {
            let (x, y) = (c % s, c / s);
            let depth = x.min(y).min(s - 1 - x).min(s - 1 - y);
            if depth > layer || self.tiles[c] == Tile::Wall {
                continue;
            }
            self.tiles[c] = Tile::Wall;
            if self.bomb_here[c] {
                self.bomb_here[c] = false;
                if let Some(i) = self
                    .bombs
                    .iter()
                    .position(|b| b.x as usize + b.y as usize * s == c)
                {
                    let b = self.bombs.remove(i);
                    self.own_bombs[b.owner] -= 1;
                    if let Some(ev) = ev {
                        ev.push(Event::BombRemoved {
                            owner: b.owner,
                            x: b.x,
                            y: b.y,
                        });
                    }
                }
            }
            if self.flame_expiry[c] != 0 {
                self.clear_flames_at(c);
            }
            for p in 0..self.n {
                if self.players[p].alive && self.players[p].cell == c {
                    self.kill(p, DeathCause::Shrink, 0, ev);
                }
            }
        }
    }

    /// Phase 2: bomb placement at the pre-move cells.
    fn phase_place(&mut self, inputs: &[Input], ev: &mut Option<&mut Vec<Event>>) {
        let n = self.n;
        let cap = self.params.capacity;
        let mut any = false;
        for p in 0..n {
            let pl = self.players[p];
            let asked = pl.alive && matches!(inputs[p], Input::Act(Action { bomb: true, .. }));
            let mut ok = false;
            if asked {
                let reason = if self.bomb_here[pl.cell] {
                    Some(BombFailure::Occupied)
                } else if self.own_bombs[p] >= cap {
                    Some(BombFailure::Capacity)
                } else {
                    None
                };
                ok = reason.is_none();
                if let (Some(ev), Some(reason)) = (ev.as_deref_mut(), reason) {
                    let (x, y) = self.position(p);
                    ev.push(Event::BombFailed {
                        player: p,
                        x,
                        y,
                        reason,
                    });
                }
            }
            self.scratch.wants_bomb[p] = ok;
            any |= ok;
        }
        if !any {
            return;
        }
        for p in 0..n {
            if !self.scratch.wants_bomb[p] {
                continue;
            }
            let c = self.players[p].cell;
            let conflict =
                (0..n).any(|q| q != p && self.scratch.wants_bomb[q] && self.players[q].cell == c);
            let (x, y) = self.position(p);
            if conflict {
                if let Some(ev) = ev.as_deref_mut() {
                    ev.push(Event::BombFailed {
                        player: p,
                        x,
                        y,
                        reason: BombFailure::Conflict,
                    });
                }
                continue;
            }
            let explode_at = self.t + self.params.fuse;
            self.bombs.push(Bomb {
                owner: p,
                x,
                y,
                explode_at,
            });
            self.own_bombs[p] += 1;
            self.bombs_placed[p] += 1;
            if let Some(ev) = ev.as_deref_mut() {
                ev.push(Event::BombPlaced { player: p, x, y });
            }
        }
        // Mark the cells only now, so that a conflict pair both see the cell as free above.
        for i in 0..self.bombs.len() {
            let b = self.bombs[i];
            self.bomb_here[b.x as usize + b.y as usize * self.side] = true;
        }
    }
}
