//! What a bot reads (the INIT line and the per-turn TURN...END block) and the engine's stable
//! state digest, a 64-bit FNV-1a over everything that the rules depend on.

use std::fmt::Write;

use super::game::Game;

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

struct Fnv(u64);

impl Fnv {
    fn byte(&mut self, b: u8) {
        self.0 = (self.0 ^ u64::from(b)).wrapping_mul(FNV_PRIME);
    }
    fn u64(&mut self, v: u64) {
        for b in v.to_le_bytes() {
            self.byte(b);
        }
    }
}

impl Game {
    /// The line a player reads once at start: `INIT side players my_id turn_limit fuse range
    /// capacity flame_turns first_shrink shrink_interval\n`.
    pub fn init_line(&self, player: usize) -> String {
        let p = &self.params;
        format!(
            "INIT {} {} {} {} {} {} {} {} {} {}\n",
            p.side,
            p.players,
            player,
            p.turn_limit,
            p.fuse,
            p.range,
            p.capacity,
            p.flame_turns,
            p.first_shrink,
            p.shrink_interval
        )
    }

    /// Appends the public state at the start of the current turn (`TURN t` ... `END`), the same
    /// text for every player. Only flames still lethal on this turn are shown.
    pub fn write_turn(&self, out: &mut String) {
        let (t, n, s) = (self.t, self.n, self.side);
        let _ = writeln!(out, "TURN {t}\nBOARD");
        for row in self.tiles.chunks(s) {
            out.extend(row.iter().map(|tile| tile.to_char()));
            out.push('\n');
        }
        for p in 0..n {
            let (x, y) = self.position(p);
            let _ = writeln!(out, "P {p} {x} {y} {}", u8::from(self.players[p].alive));
        }
        let _ = writeln!(out, "BOMBS {}", self.bombs.len());
        for b in &self.bombs {
            let _ = writeln!(out, "B {} {} {} {}", b.owner, b.x, b.y, b.explode_at);
        }
        let lit: Vec<usize> = (0..s * s).filter(|&c| self.flame_expiry[c] > t).collect();
        let _ = writeln!(out, "FLAMES {}", lit.len());
        for &c in &lit {
            let _ = writeln!(out, "F {} {} {}", c % s, c / s, self.flame_expiry[c] - 1);
        }
        let _ = writeln!(out, "STATUS {n}");
        for p in 0..n {
            let k = self.kills[p];
            let d = self.players[p].death_turn;
            let _ = writeln!(out, "S {p} {d} {} {}", k.numer(), k.denom());
        }
        let sources: Vec<(usize, usize)> = lit
            .iter()
            .flat_map(|&c| (0..n).map(move |o| (c, o)))
            .filter(|&(c, o)| self.src_expiry[c * n + o] > t)
            .collect();
        let _ = writeln!(out, "SOURCES {}", sources.len());
        for (c, o) in sources {
            let last = self.src_expiry[c * n + o] - 1;
            let _ = writeln!(out, "O {} {} {o} {last}", c % s, c / s);
        }
        out.push_str("END\n");
    }

    /// The TURN block as a new string.
    pub fn turn_text(&self) -> String {
        let mut s = String::with_capacity(self.side * (self.side + 1) + 64 * self.n + 64);
        self.write_turn(&mut s);
        s
    }

    /// A stable digest of the whole rules state (turn, board, players, bombs in order, flame
    /// sources, scores so far, counters): equal states give equal digests on every machine.
    pub fn digest(&self) -> u64 {
        let mut h = Fnv(FNV_OFFSET);
        h.u64(u64::from(self.t));
        h.byte(u8::from(self.over));
        for tile in &self.tiles {
            h.byte(*tile as u8);
        }
        for p in 0..self.n {
            let pl = &self.players[p];
            h.u64(pl.cell as u64);
            h.byte(u8::from(pl.alive));
            h.u64(pl.death_turn as i64 as u64);
            h.u64(*self.kills[p].numer() as u64);
            h.u64(*self.kills[p].denom() as u64);
            h.u64(u64::from(self.bombs_placed[p]));
            h.u64(u64::from(self.boxes_broken[p]));
        }
        h.u64(self.bombs.len() as u64);
        for b in &self.bombs {
            h.u64(b.owner as u64);
            h.u64(u64::from(b.x) | u64::from(b.y) << 16 | u64::from(b.explode_at) << 32);
        }
        for f in self.flame_sources() {
            h.u64(u64::from(f.x) | u64::from(f.y) << 16 | (f.owner as u64) << 32);
            h.u64(u64::from(f.last_lethal));
        }
        h.0
    }
}
