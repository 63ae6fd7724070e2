//! What happened inside one turn, collected only on request (for the viewer and `inspect`):
//! placements and refusals, blocked moves, explosions, broken boxes, shrinks and deaths.

use num_rational::Ratio;
use serde_json::{json, Value};

/// Why a bomb request placed nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BombFailure {
    /// The player already has `capacity` bombs on the board.
    Capacity,
    /// A bomb already lies on the player's cell.
    Occupied,
    /// Another eligible player asked for a bomb on the same cell.
    Conflict,
}

impl BombFailure {
    pub fn as_str(self) -> &'static str {
        match self {
            BombFailure::Capacity => "capacity",
            BombFailure::Occupied => "occupied",
            BombFailure::Conflict => "conflict",
        }
    }
}

/// How a player died.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeathCause {
    Flame,
    Shrink,
    Fault,
}

impl DeathCause {
    pub fn as_str(self) -> &'static str {
        match self {
            DeathCause::Flame => "flame",
            DeathCause::Shrink => "shrink",
            DeathCause::Fault => "fault",
        }
    }
}

/// One thing that happened during a turn, in phase order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    BombPlaced {
        player: usize,
        x: u16,
        y: u16,
    },
    BombFailed {
        player: usize,
        x: u16,
        y: u16,
        reason: BombFailure,
    },
    /// A move (not S) that ended on the starting cell: terrain, a bomb or other players.
    Blocked {
        player: usize,
    },
    Explosion {
        owner: usize,
        x: u16,
        y: u16,
        chained: bool,
    },
    BoxBroken {
        x: u16,
        y: u16,
        by: Vec<usize>,
    },
    Shrink {
        layer: u32,
    },
    /// A bomb removed without exploding because its cell became wall.
    BombRemoved {
        owner: usize,
        x: u16,
        y: u16,
    },
    Death {
        player: usize,
        cause: DeathCause,
        killers: Vec<usize>,
        share: Ratio<i64>,
    },
}

impl Event {
    /// The viewer's JSON form of the event.
    pub fn to_json(&self) -> Value {
        match self {
            Event::BombPlaced { player, x, y } => {
                json!({"type": "bomb", "player": player, "x": x, "y": y})
            }
            Event::BombFailed {
                player,
                x,
                y,
                reason,
            } => json!({"type": "bomb_failed",
                "player": player, "x": x, "y": y, "reason": reason.as_str()}),
            Event::Blocked { player } => json!({"type": "blocked", "player": player}),
            Event::Explosion {
                owner,
                x,
                y,
                chained,
            } => {
                json!({"type": "explosion", "owner": owner, "x": x, "y": y, "chained": chained})
            }
            Event::BoxBroken { x, y, by } => json!({"type": "box", "x": x, "y": y, "by": by}),
            Event::Shrink { layer } => json!({"type": "shrink", "layer": layer}),
            Event::BombRemoved { owner, x, y } => {
                json!({"type": "bomb_removed", "owner": owner, "x": x, "y": y})
            }
            Event::Death {
                player,
                cause,
                killers,
                share,
            } => json!({"type": "death",
                "player": player, "cause": cause.as_str(), "killers": killers,
                "share": format!("{}/{}", share.numer(), share.denom())}),
        }
    }
}
