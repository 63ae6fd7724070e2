//! Nim, the farm's smallest game: a few heaps drawn from the seed, two seats taking turns, each
//! answer one line `HEAP COUNT` (take COUNT ≥ 1 from heap HEAP, 0-based); whoever takes the last
//! object wins, and a seat that faults (no answer, bad line, illegal move) loses at once. It is
//! the template of the game boundary: rules, the text each seat sees, the record and its
//! verification, in one module (see docs/adding-a-game.md).

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The rules version a worker must run exactly.
pub const VERSION: &str = "nim-1";

/// Seats in a game of Nim.
pub const SEATS: usize = 2;

/// The heaps a game starts from: 3 to 5 heaps of 1 to 7, fixed by the seed.
pub fn start(seed: u64) -> Vec<u32> {
    let mut x = seed;
    let mut next = move || {
        // splitmix64: a well-mixed stream from any seed.
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let count = 3 + (next() % 3) as usize;
    (0..count).map(|_| 1 + (next() % 7) as u32).collect()
}

/// The line a seat reads before it answers: `HEAPS h1 h2 …`.
pub fn turn_text(heaps: &[u32]) -> String {
    let mut s = String::from("HEAPS");
    for h in heaps {
        s.push(' ');
        s.push_str(&h.to_string());
    }
    s.push('\n');
    s
}

/// One move: take `take` objects from heap `heap`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Move {
    pub heap: usize,
    pub take: u32,
}

/// Why an answer is not a legal move.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MoveError {
    #[error("answer {0:?} is not `HEAP COUNT` (two whole numbers)")]
    Malformed(String),
    #[error("there is no heap {heap} (there are {heaps})")]
    NoHeap { heap: usize, heaps: usize },
    #[error("cannot take {take} from heap {heap}, which holds {holds}")]
    TooMany { heap: usize, take: u32, holds: u32 },
    #[error("a move takes at least one")]
    Zero,
}

/// Read an answer line.
pub fn parse_move(line: &str) -> Result<Move, MoveError> {
    let mut it = line.split_whitespace();
    let (Some(h), Some(t), None) = (it.next(), it.next(), it.next()) else {
        return Err(MoveError::Malformed(line.chars().take(80).collect()));
    };
    match (h.parse(), t.parse()) {
        (Ok(heap), Ok(take)) => Ok(Move { heap, take }),
        _ => Err(MoveError::Malformed(line.chars().take(80).collect())),
    }
}

/// Apply a move to the heaps, or say why it is illegal (the heaps are unchanged then).
pub fn apply(heaps: &mut [u32], m: Move) -> Result<(), MoveError> {
    let heaps_len = heaps.len();
    let h = heaps.get_mut(m.heap).ok_or(MoveError::NoHeap {
        heap: m.heap,
        heaps: heaps_len,
    })?;
    if m.take == 0 {
        return Err(MoveError::Zero);
    }
    if m.take > *h {
        return Err(MoveError::TooMany {
            heap: m.heap,
            take: m.take,
            holds: *h,
        });
    }
    *h -= m.take;
    Ok(())
}

/// One seat: the bot's name and the sha256 (hex) of its program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Player {
    pub name: String,
    pub code_sha256: String,
}

/// The fault that ended a game: which seat, its kind (`timeout`, `crash`, `bad_output`,
/// `start_failure`, `compile_failure`) and what happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatFault {
    pub seat: usize,
    pub kind: String,
    pub detail: String,
}

/// A whole game: what a worker sends back and the coordinator re-plays.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NimRecord {
    pub version: String,
    pub seed: u64,
    pub players: Vec<Player>,
    /// The heaps at the start (must equal [`start`] of the seed).
    pub heaps: Vec<u32>,
    /// The legal moves, seat 0 first, alternating.
    pub moves: Vec<Move>,
    pub fault: Option<SeatFault>,
    pub winner: usize,
}

/// Why a record does not re-play to itself.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum VerifyError {
    #[error("record of rules {found:?}; this build checks {VERSION:?}")]
    Version { found: String },
    #[error("a game of Nim has {SEATS} seats; the record has {0}")]
    Seats(usize),
    #[error("the record starts from heaps {recorded:?}; seed {seed} gives {rules:?}")]
    Heaps {
        seed: u64,
        recorded: Vec<u32>,
        rules: Vec<u32>,
    },
    #[error("move {index}: {source}")]
    Move {
        index: usize,
        #[source]
        source: MoveError,
    },
    #[error("moves continue after the last object was taken (move {0})")]
    AfterEnd(usize),
    #[error("the game ends without a winner: heaps {0:?} are left and no seat faulted")]
    Unfinished(Vec<u32>),
    #[error("seat {found} is recorded as faulting, but it was seat {expected}'s turn")]
    FaultSeat { expected: usize, found: usize },
    #[error("a fault is recorded after the last object was taken")]
    FaultAfterEnd,
    #[error("the record names seat {recorded} the winner; the moves give seat {rules}")]
    Winner { recorded: usize, rules: usize },
}

/// Play the record through the rules: the start heaps are the seed's, every move is legal, the
/// game ended as recorded (last object taken, or the seat to move faulted) and the winner is
/// the one the rules give.
pub fn verify(r: &NimRecord) -> Result<(), VerifyError> {
    if r.version != VERSION {
        return Err(VerifyError::Version {
            found: r.version.clone(),
        });
    }
    if r.players.len() != SEATS {
        return Err(VerifyError::Seats(r.players.len()));
    }
    let rules = start(r.seed);
    if r.heaps != rules {
        return Err(VerifyError::Heaps {
            seed: r.seed,
            recorded: r.heaps.clone(),
            rules,
        });
    }
    let mut heaps = r.heaps.clone();
    for (index, m) in r.moves.iter().enumerate() {
        if heaps.iter().all(|&h| h == 0) {
            return Err(VerifyError::AfterEnd(index));
        }
        apply(&mut heaps, *m).map_err(|source| VerifyError::Move { index, source })?;
    }
    let to_move = r.moves.len() % SEATS;
    let finished = heaps.iter().all(|&h| h == 0);
    let winner = match (&r.fault, finished) {
        (Some(_), true) => return Err(VerifyError::FaultAfterEnd),
        (Some(f), false) if f.seat != to_move => {
            return Err(VerifyError::FaultSeat {
                expected: to_move,
                found: f.seat,
            })
        }
        (Some(f), false) => 1 - f.seat,
        // The seat that made the last move took the last object.
        (None, true) => 1 - to_move,
        (None, false) => return Err(VerifyError::Unfinished(heaps)),
    };
    if r.winner != winner {
        return Err(VerifyError::Winner {
            recorded: r.winner,
            rules: winner,
        });
    }
    Ok(())
}

/// Points per seat: 1 for the winner, 0 for the loser.
pub fn points(r: &NimRecord) -> [f64; SEATS] {
    let mut p = [0.0; SEATS];
    p[r.winner.min(SEATS - 1)] = 1.0;
    p
}

/// What a report of this game is accepted as, and how ([`crate::accept::seated`]).
pub type Record = NimRecord;
pub use crate::accept::seated as accept;

/// Held to its job like every seat game's record (`accept::seated`).
impl crate::seated::SeatedRecord for NimRecord {
    fn decode(text: &str) -> Result<Self, crate::seated::Refusal> {
        serde_json::from_str(text).map_err(Into::into)
    }

    fn verify(&self) -> Result<(), crate::seated::Refusal> {
        verify(self).map_err(Into::into)
    }

    fn seed(&self) -> u64 {
        self.seed
    }

    fn seats(&self) -> Vec<(&str, &str)> {
        self.players
            .iter()
            .map(|p| (p.name.as_str(), p.code_sha256.as_str()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(seed: u64, moves: Vec<Move>, fault: Option<SeatFault>, winner: usize) -> NimRecord {
        NimRecord {
            version: VERSION.into(),
            seed,
            players: vec![
                Player {
                    name: "a".into(),
                    code_sha256: "00".into(),
                },
                Player {
                    name: "b".into(),
                    code_sha256: "11".into(),
                },
            ],
            heaps: start(seed),
            moves,
            fault,
            winner,
        }
    }

    /// Seat 0 empties heap by heap; the seat that takes the last object wins.
    fn emptying(seed: u64) -> Vec<Move> {
        start(seed)
            .iter()
            .enumerate()
            .map(|(heap, &take)| Move { heap, take })
            .collect()
    }

    #[test]
    fn the_seed_fixes_the_heaps() {
        for seed in 0..200 {
            let h = start(seed);
            assert_eq!(h, start(seed));
            assert!((3..=5).contains(&h.len()), "{h:?}");
            assert!(h.iter().all(|&x| (1..=7).contains(&x)), "{h:?}");
        }
        assert_ne!(start(1), start(2));
        assert_eq!(turn_text(&[3, 0, 7]), "HEAPS 3 0 7\n");
    }

    #[test]
    fn answers_and_moves() {
        assert_eq!(parse_move(" 1 2 "), Ok(Move { heap: 1, take: 2 }));
        assert!(matches!(parse_move("1"), Err(MoveError::Malformed(_))));
        assert!(matches!(parse_move("1 2 3"), Err(MoveError::Malformed(_))));
        assert!(matches!(parse_move("x 2"), Err(MoveError::Malformed(_))));
        let mut h = vec![2, 1];
        assert_eq!(
            apply(&mut h, Move { heap: 2, take: 1 }),
            Err(MoveError::NoHeap { heap: 2, heaps: 2 })
        );
        assert_eq!(
            apply(&mut h, Move { heap: 0, take: 0 }),
            Err(MoveError::Zero)
        );
        assert!(matches!(
            apply(&mut h, Move { heap: 1, take: 2 }),
            Err(MoveError::TooMany { .. })
        ));
        assert_eq!(h, vec![2, 1]);
        apply(&mut h, Move { heap: 0, take: 2 }).unwrap();
        assert_eq!(h, vec![0, 1]);
    }

    #[test]
    fn finished_and_faulted_games_verify_and_tampering_is_named() {
        let seed = 7;
        let moves = emptying(seed);
        let winner = (moves.len() + 1) % 2;
        let r = record(seed, moves.clone(), None, winner);
        verify(&r).unwrap();
        assert_eq!(points(&r)[winner], 1.0);
        // The other seat named the winner.
        assert!(matches!(
            verify(&record(seed, moves.clone(), None, 1 - winner)),
            Err(VerifyError::Winner { .. })
        ));
        // Other heaps than the seed's.
        let mut bad = record(seed, moves.clone(), None, winner);
        bad.heaps[0] += 1;
        assert!(matches!(verify(&bad), Err(VerifyError::Heaps { .. })));
        // A game cut short without a fault.
        let short = record(seed, moves[..1].to_vec(), None, 0);
        assert!(matches!(verify(&short), Err(VerifyError::Unfinished(_))));
        // Seat 1 faults on its first turn: seat 0 wins.
        let fault = SeatFault {
            seat: 1,
            kind: "timeout".into(),
            detail: "no answer".into(),
        };
        verify(&record(seed, moves[..1].to_vec(), Some(fault.clone()), 0)).unwrap();
        // ...but not when it was seat 0's turn.
        assert!(matches!(
            verify(&record(seed, Vec::new(), Some(fault), 0)),
            Err(VerifyError::FaultSeat { .. })
        ));
        let mut v = record(seed, moves, None, winner);
        v.version = "nim-0".into();
        assert!(matches!(verify(&v), Err(VerifyError::Version { .. })));
    }
}
