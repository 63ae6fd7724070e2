//! Pure ladder math from the guide: tiers from RP (5 majors × III/II/I, 100 RP per minor tier),
//! the RP change of a challenge across tiers with its clamps, and how two games make a challenge.
//!
//! RP change (`rp_delta`), with d = opponent major − my major (majors 0 青铜 … 4 王者):
//! win `25 + 8d` clamped to [3, 50]; draw `10 + 4d` clamped to [0, 20]; loss `−15 + 8d` clamped to
//! [−50, −3]. So beating a stronger player earns more, losing to one costs less, beating a weaker
//! one earns less, and losing to one costs more. [`apply_rp`] never goes below 0.
//!
//! A challenge is two games (each colour once); [`combine`] adds the game points (win 1, draw ½,
//! loss 0): more than 1 of 2 is a challenge win, exactly 1 a draw, less a loss.

use super::board::Side;
use super::game::Outcome;
use serde::{Deserialize, Serialize};

/// RP in each minor tier.
pub const RP_PER_MINOR: u32 = 100;

/// The five major tiers, lowest first. JSON: the English name in lowercase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Major {
    Bronze,
    Silver,
    Gold,
    Diamond,
    King,
}

impl Major {
    pub const ALL: [Major; 5] = [
        Major::Bronze,
        Major::Silver,
        Major::Gold,
        Major::Diamond,
        Major::King,
    ];

    /// 0 (青铜 Bronze) ..= 4 (王者 King).
    pub fn index(self) -> u8 {
        self as u8
    }

    /// The major with this index; `None` above 4.
    pub fn from_index(i: u8) -> Option<Major> {
        Major::ALL.get(i as usize).copied()
    }

    /// 青铜 / 白银 / 黄金 / 钻石 / 王者.
    pub fn name_zh(self) -> &'static str {
        ["青铜", "白银", "黄金", "钻石", "王者"][self as usize]
    }

    /// Bronze / Silver / Gold / Diamond / King.
    pub fn name_en(self) -> &'static str {
        ["Bronze", "Silver", "Gold", "Diamond", "King"][self as usize]
    }
}

/// Minor tier inside a major, lowest first: III, then II, then I. JSON: `"III"`, `"II"`, `"I"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Minor {
    III,
    II,
    I,
}

impl Minor {
    pub fn as_str(self) -> &'static str {
        match self {
            Minor::III => "III",
            Minor::II => "II",
            Minor::I => "I",
        }
    }
}

/// A tier such as 黄金II (Gold II).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Tier {
    pub major: Major,
    pub minor: Minor,
}

impl Tier {
    /// 0 (青铜III) ..= 14 (王者I).
    pub fn index(self) -> u32 {
        self.major as u32 * 3 + self.minor as u32
    }

    /// The lowest RP in this tier.
    pub fn floor_rp(self) -> u32 {
        self.index() * RP_PER_MINOR
    }

    /// e.g. `黄金II`.
    pub fn name_zh(self) -> String {
        format!("{}{}", self.major.name_zh(), self.minor.as_str())
    }

    /// e.g. `Gold II`.
    pub fn name_en(self) -> String {
        format!("{} {}", self.major.name_en(), self.minor.as_str())
    }
}

/// The tier of `rp`: 青铜III from 0, one minor tier per 100 RP; 1400 and above is 王者I.
pub fn tier_of(rp: u32) -> Tier {
    let i = (rp / RP_PER_MINOR).min(14);
    let major = Major::ALL[(i / 3) as usize];
    let minor = [Minor::III, Minor::II, Minor::I][(i % 3) as usize];
    Tier { major, minor }
}

/// The result of a game or of a challenge, from one player's point of view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PlayerResult {
    Win,
    Draw,
    Loss,
}

impl PlayerResult {
    /// Game points doubled: win 2, draw 1, loss 0.
    pub fn half_points(self) -> u32 {
        match self {
            PlayerResult::Win => 2,
            PlayerResult::Draw => 1,
            PlayerResult::Loss => 0,
        }
    }

    /// The result for `side` of a finished game.
    pub fn of(outcome: &Outcome, side: Side) -> PlayerResult {
        match outcome.winner {
            None => PlayerResult::Draw,
            Some(w) if w == side => PlayerResult::Win,
            Some(_) => PlayerResult::Loss,
        }
    }

    /// The same game seen from the other player.
    pub fn flip(self) -> PlayerResult {
        match self {
            PlayerResult::Win => PlayerResult::Loss,
            PlayerResult::Draw => PlayerResult::Draw,
            PlayerResult::Loss => PlayerResult::Win,
        }
    }
}

/// The challenge result from two games' results (same player's view): sum of game points (win 1,
/// draw ½): > 1 win, = 1 draw, < 1 loss. E.g. win+loss and draw+draw are draws, win+draw a win.
pub fn combine(first: PlayerResult, second: PlayerResult) -> PlayerResult {
    match (first.half_points() + second.half_points()).cmp(&2) {
        std::cmp::Ordering::Greater => PlayerResult::Win,
        std::cmp::Ordering::Equal => PlayerResult::Draw,
        std::cmp::Ordering::Less => PlayerResult::Loss,
    }
}

/// The RP change for a challenge `result` of a player in major `mine` against one in `opponent`.
pub fn rp_delta(mine: Major, opponent: Major, result: PlayerResult) -> i32 {
    let d = opponent.index() as i32 - mine.index() as i32;
    match result {
        PlayerResult::Win => (25 + 8 * d).clamp(3, 50),
        PlayerResult::Draw => (10 + 4 * d).clamp(0, 20),
        PlayerResult::Loss => (-15 + 8 * d).clamp(-50, -3),
    }
}

/// Both players' RP after one challenge: nominal deltas from [`rp_delta`] with each player's major
/// tier taken from its RP *before* the challenge, and the new RP (never below 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settlement {
    pub a_delta: i32,
    pub b_delta: i32,
    pub a_rp: u32,
    pub b_rp: u32,
}

/// Settles a challenge between `a` (with `a_rp`) and `b` (with `b_rp`) whose result for `a` is
/// `result_a` (see [`combine`]); `b`'s result is the opposite.
pub fn settle(a_rp: u32, b_rp: u32, result_a: PlayerResult) -> Settlement {
    let (a_major, b_major) = (tier_of(a_rp).major, tier_of(b_rp).major);
    let a_delta = rp_delta(a_major, b_major, result_a);
    let b_delta = rp_delta(b_major, a_major, result_a.flip());
    Settlement {
        a_delta,
        b_delta,
        a_rp: apply_rp(a_rp, a_delta),
        b_rp: apply_rp(b_rp, b_delta),
    }
}

/// `rp + delta`, never below 0 (and saturating at `u32::MAX`).
pub fn apply_rp(rp: u32, delta: i32) -> u32 {
    if delta >= 0 {
        rp.saturating_add(delta as u32)
    } else {
        rp.saturating_sub(delta.unsigned_abs())
    }
}
