//! Phase 3 of a turn: simultaneous movement. Terrain and bombs block; equal targets stop
//! everyone involved; stops propagate to whoever heads for a stopped player's cell; the rest
//! (swaps, cycles, followers) move at once, with no priority by id.
#![allow(clippy::needless_range_loop)] // per-player loops index several parallel arrays

use super::action::{Input, Move};
use super::events::Event;
use super::game::Game;
use super::map::Tile;

impl Game {
    /// Phase 3: simultaneous movement.
    pub(super) fn phase_move(&mut self, inputs: &[Input], ev: &mut Option<&mut Vec<Event>>) {
        let n = self.n;
        let s = self.side;
        let sc = &mut self.scratch;
        for p in 0..n {
            let pl = self.players[p];
            sc.stay[p] = false;
            if !pl.alive {
                continue;
            }
            let mv = match inputs[p] {
                Input::Act(a) => a.mv,
                Input::Fault => Move::Stay,
            };
            let c = pl.cell;
            let to = match mv {
                Move::Up => c - s,
                Move::Down => c + s,
                Move::Left => c - 1,
                Move::Right => c + 1,
                Move::Stay => c,
            };
            let free = to == c || (self.tiles[to] == Tile::Empty && !self.bomb_here[to]);
            sc.target[p] = if free { to } else { c };
        }
        // Same target (own cell counts): all of them stay.
        for p in 0..n {
            if !self.players[p].alive {
                continue;
            }
            let tp = sc.target[p];
            for q in 0..n {
                if q != p && self.players[q].alive && sc.target[q] == tp {
                    sc.stay[p] = true;
                    break;
                }
            }
        }
        for p in 0..n {
            if sc.stay[p] {
                sc.target[p] = self.players[p].cell;
            }
        }
        // Whoever heads for the cell of a player who stays, stays too; until stable.
        loop {
            let mut changed = false;
            for p in 0..n {
                if !self.players[p].alive || sc.stay[p] || sc.target[p] == self.players[p].cell {
                    continue;
                }
                let tp = sc.target[p];
                let blocked = (0..n).any(|q| {
                    q != p
                        && self.players[q].alive
                        && self.players[q].cell == tp
                        && (sc.stay[q] || sc.target[q] == tp)
                });
                if blocked {
                    sc.stay[p] = true;
                    sc.target[p] = self.players[p].cell;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        for p in 0..n {
            if !self.players[p].alive {
                continue;
            }
            let from = self.players[p].cell;
            self.players[p].cell = sc.target[p];
            if let Some(ev) = ev.as_deref_mut() {
                let moved = matches!(inputs[p], Input::Act(a) if a.mv != Move::Stay);
                if moved && sc.target[p] == from {
                    ev.push(Event::Blocked { player: p });
                }
            }
        }
    }
}
