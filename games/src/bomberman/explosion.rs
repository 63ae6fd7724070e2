//! Phases 4 and 5 of a turn: detonations and rays against the start-of-phase layout (walls stop,
//! boxes and bombs burn and stop, chains keep their owners), then bombs and boxes removed,
//! flame sources laid per (cell, owner), and players standing in any lethal flame eliminated.
#![allow(clippy::needless_range_loop)] // per-player loops index several parallel arrays

use super::events::{DeathCause, Event};
use super::game::Game;
use super::map::Tile;

impl Game {
    /// Phase 4: detonations and rays, all against the start-of-phase layout.
    pub(super) fn phase_explode(&mut self, ev: &mut Option<&mut Vec<Event>>) {
        let t = self.t;
        let s = self.side;
        let sc = &mut self.scratch;
        sc.detonating.clear();
        sc.queue.clear();
        for (i, b) in self.bombs.iter().enumerate() {
            let c = b.x as usize + b.y as usize * s;
            let go = b.explode_at <= t || self.flame_expiry[c] > t;
            sc.detonating.push(go);
            if go {
                sc.queue.push(i);
            }
        }
        if sc.queue.is_empty() {
            return;
        }
        let range = self.params.range as usize;
        let mut head = 0;
        while head < sc.queue.len() {
            let i = sc.queue[head];
            head += 1;
            let b = self.bombs[i];
            let bit = 1u16 << b.owner;
            let c0 = b.x as usize + b.y as usize * s;
            if let Some(ev) = ev.as_deref_mut() {
                let chained = b.explode_at > t;
                ev.push(Event::Explosion {
                    owner: b.owner,
                    x: b.x,
                    y: b.y,
                    chained,
                });
            }
            burn(&mut sc.burn, &mut sc.burned, c0, bit);
            for dir in 0..4 {
                let mut c = c0;
                for _ in 0..range {
                    c = match dir {
                        0 => c - s,
                        1 => c + s,
                        2 => c - 1,
                        _ => c + 1,
                    };
                    match self.tiles[c] {
                        Tile::Wall => break,
                        Tile::Box => {
                            burn(&mut sc.burn, &mut sc.burned, c, bit);
                            break;
                        }
                        Tile::Empty => {}
                    }
                    burn(&mut sc.burn, &mut sc.burned, c, bit);
                    if self.bomb_here[c] {
                        if let Some(j) = self
                            .bombs
                            .iter()
                            .position(|o| o.x as usize + o.y as usize * s == c)
                        {
                            if !sc.detonating[j] {
                                sc.detonating[j] = true;
                                sc.queue.push(j);
                            }
                        }
                        break;
                    }
                }
            }
        }
    }

    /// Phase 5: remove bombs and boxes, lay flames, eliminate players standing in fire.
    pub(super) fn phase_flames(&mut self, ev: &mut Option<&mut Vec<Event>>) {
        let (t, n, s) = (self.t, self.n, self.side);
        if !self.scratch.queue.is_empty() {
            let mut k = 0;
            let det = &self.scratch.detonating;
            let own = &mut self.own_bombs;
            let here = &mut self.bomb_here;
            self.bombs.retain(|b| {
                let gone = det[k];
                k += 1;
                if gone {
                    own[b.owner] -= 1;
                    here[b.x as usize + b.y as usize * s] = false;
                }
                !gone
            });
            self.scratch.queue.clear();
        }
        let expiry = t + self.params.flame_turns;
        for i in 0..self.scratch.burned.len() {
            let c = self.scratch.burned[i];
            let mask = std::mem::take(&mut self.scratch.burn[c]);
            if self.tiles[c] == Tile::Box {
                self.tiles[c] = Tile::Empty;
                for o in 0..n {
                    if mask & (1 << o) != 0 {
                        self.boxes_broken[o] += 1;
                    }
                }
                if let Some(ev) = ev.as_deref_mut() {
                    let by = (0..n).filter(|o| mask & (1 << o) != 0).collect();
                    let (x, y) = ((c % s) as u16, (c / s) as u16);
                    ev.push(Event::BoxBroken { x, y, by });
                }
            }
            if expiry <= t {
                continue;
            }
            if self.flame_expiry[c] == 0 {
                self.flame_cells.push(c);
            }
            self.flame_expiry[c] = self.flame_expiry[c].max(expiry);
            for o in 0..n {
                if mask & (1 << o) != 0 {
                    let e = &mut self.src_expiry[c * n + o];
                    *e = (*e).max(expiry);
                }
            }
        }
        self.scratch.burned.clear();
        if self.flame_cells.is_empty() {
            return;
        }
        for p in 0..n {
            let pl = self.players[p];
            if !pl.alive || self.flame_expiry[pl.cell] <= t {
                continue;
            }
            let mut killers = 0u16;
            for o in 0..n {
                if o != p && self.src_expiry[pl.cell * n + o] > t {
                    killers |= 1 << o;
                }
            }
            self.kill(p, DeathCause::Flame, killers, ev);
        }
    }
}

fn burn(mask: &mut [u16], burned: &mut Vec<usize>, c: usize, bit: u16) {
    if mask[c] == 0 {
        burned.push(c);
    }
    mask[c] |= bit;
}
