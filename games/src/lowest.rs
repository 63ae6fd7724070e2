//! Lowest unique, the farm's three-seat test game: the seed fixes 5 to 9 rounds; each round
//! every seat (in seat order) reads one line `ROUND r OF n SEAT s SCORES a b c LAST x y z` and
//! answers a whole number 1 to 5; the lowest number chosen by exactly one seat scores 1 (no
//! unique number: nobody scores). Ranks follow the totals (equal totals tie). A seat that faults
//! (no answer, bad line, out of range, crash) is out: its later answers are absent and it ranks
//! last, tied with any other faulty seat. It proves the game boundary takes more than two seats
//! (see docs/adding-a-game.md); pure: rules, text, record and verification only.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The rules version a worker must run exactly.
pub const VERSION: &str = "lowest-1";

/// Seats in a game of lowest unique.
pub const SEATS: usize = 3;

/// The highest number a seat may answer (the lowest is 1).
pub const MAX: u32 = 5;

/// The number of rounds of a game: 5 to 9, fixed by the seed (splitmix64, as `nim::start`).
pub fn rounds(seed: u64) -> u32 {
    let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    5 + ((z ^ (z >> 31)) % 5) as u32
}

/// The line seat `seat` reads in round `round` (0-based; shown 1-based): the totals so far and
/// the previous round's answers in seat order (0: absent, and all 0 before the first round).
pub fn turn_text(
    round: u32,
    rounds: u32,
    seat: usize,
    scores: &[u32],
    last: &[Option<u32>],
) -> String {
    let mut s = format!("ROUND {} OF {rounds} SEAT {seat} SCORES", round + 1);
    for v in scores {
        s.push_str(&format!(" {v}"));
    }
    s.push_str(" LAST");
    for i in 0..scores.len() {
        s.push_str(&format!(" {}", last.get(i).copied().flatten().unwrap_or(0)));
    }
    s.push('\n');
    s
}

/// Why an answer is not a number the rules take.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AnswerError {
    #[error("answer {0:?} is not one whole number")]
    Malformed(String),
    #[error("answer {0} is not between 1 and {MAX}")]
    OutOfRange(u32),
}

/// Read an answer line.
pub fn parse_answer(line: &str) -> Result<u32, AnswerError> {
    let n: u32 = line
        .trim()
        .parse()
        .map_err(|_| AnswerError::Malformed(line.chars().take(80).collect()))?;
    if !(1..=MAX).contains(&n) {
        return Err(AnswerError::OutOfRange(n));
    }
    Ok(n)
}

/// The seat that scores a round: the one whose number nobody else chose, the lowest such.
pub fn round_winner(answers: &[Option<u32>]) -> Option<usize> {
    let count = |n: u32| answers.iter().filter(|a| **a == Some(n)).count();
    (1..=MAX)
        .find(|&n| count(n) == 1)
        .and_then(|n| answers.iter().position(|a| *a == Some(n)))
}

/// Ranks (1 = best, equal ranks tie): by total, every faulty seat below every other, faulty
/// seats tied among themselves (a seat missing from `faulty` is not faulty).
pub fn ranks(scores: &[u32], faulty: &[bool]) -> Vec<u32> {
    let key = |i: usize| match faulty.get(i) {
        Some(true) => (false, 0),
        _ => (true, scores[i]),
    };
    (0..scores.len())
        .map(|i| 1 + (0..scores.len()).filter(|&j| key(j) > key(i)).count() as u32)
        .collect()
}

/// One seat: the bot's name and the sha256 (hex) of its program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Player {
    pub name: String,
    pub code_sha256: String,
}

/// A seat's fault: the round it happened in (0-based), its kind (`timeout`, `crash`,
/// `bad_output`, `start_failure`, `compile_failure`) and what happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatFault {
    pub seat: usize,
    pub round: u32,
    pub kind: String,
    pub detail: String,
}

/// A whole game: what a worker sends back and the coordinator re-plays.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LowestRecord {
    pub version: String,
    pub seed: u64,
    pub players: Vec<Player>,
    /// The seed's [`rounds`].
    pub rounds: u32,
    /// Per round, each seat's answer (None: the seat has faulted).
    pub answers: Vec<Vec<Option<u32>>>,
    /// At most one per seat, in the order they happened (round, then seat).
    pub faults: Vec<SeatFault>,
    pub scores: Vec<u32>,
    pub ranks: Vec<u32>,
}

/// Why a record does not re-play to itself.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum VerifyError {
    #[error("record of rules {found:?}; this build checks {VERSION:?}")]
    Version { found: String },
    #[error("a game of lowest unique has {SEATS} seats; the record has {0}")]
    Seats(usize),
    #[error("the record states {stated} rounds and plays {played}; seed {seed} gives {rules}")]
    Rounds {
        seed: u64,
        stated: u32,
        played: usize,
        rules: u32,
    },
    #[error("round {round} has {found} answers, not one per seat")]
    Answers { round: usize, found: usize },
    #[error("round {round}, seat {seat}: {source}")]
    Answer {
        round: usize,
        seat: usize,
        #[source]
        source: AnswerError,
    },
    #[error(
        "fault {index} (seat {seat}, round {round}) is not a seat's first fault in order of play"
    )]
    FaultOrder {
        index: usize,
        seat: usize,
        round: u32,
    },
    #[error("round {round}, seat {seat}: {found}")]
    Absence {
        round: usize,
        seat: usize,
        found: &'static str,
    },
    #[error("the record gives scores {recorded:?}; the answers give {rules:?}")]
    Scores { recorded: Vec<u32>, rules: Vec<u32> },
    #[error("the record gives ranks {recorded:?}; the scores and faults give {rules:?}")]
    Ranks { recorded: Vec<u32>, rules: Vec<u32> },
}

/// Re-play the record: the seed's number of rounds, one answer per seat per round, each in
/// range, a seat's answers absent from its fault on (and only then), and the scores and ranks
/// the rules give.
pub fn verify(r: &LowestRecord) -> Result<(), VerifyError> {
    if r.version != VERSION {
        return Err(VerifyError::Version {
            found: r.version.clone(),
        });
    }
    if r.players.len() != SEATS {
        return Err(VerifyError::Seats(r.players.len()));
    }
    let rules = rounds(r.seed);
    if r.rounds != rules || r.answers.len() != rules as usize {
        return Err(VerifyError::Rounds {
            seed: r.seed,
            stated: r.rounds,
            played: r.answers.len(),
            rules,
        });
    }
    // The round each seat faulted in, checking order and uniqueness.
    let mut out: [Option<u32>; SEATS] = [None; SEATS];
    for (index, f) in r.faults.iter().enumerate() {
        let in_order = index == 0 || {
            let p = &r.faults[index - 1];
            (p.round, p.seat) < (f.round, f.seat)
        };
        if f.seat >= SEATS || f.round >= rules || out[f.seat].is_some() || !in_order {
            return Err(VerifyError::FaultOrder {
                index,
                seat: f.seat,
                round: f.round,
            });
        }
        out[f.seat] = Some(f.round);
    }
    let mut scores = vec![0; SEATS];
    for (round, answers) in r.answers.iter().enumerate() {
        if answers.len() != SEATS {
            return Err(VerifyError::Answers {
                round,
                found: answers.len(),
            });
        }
        for (seat, a) in answers.iter().enumerate() {
            let gone = out[seat].is_some_and(|f| f as usize <= round);
            match (a, gone) {
                (Some(n), false) if !(1..=MAX).contains(n) => {
                    return Err(VerifyError::Answer {
                        round,
                        seat,
                        source: AnswerError::OutOfRange(*n),
                    })
                }
                (Some(_), false) | (None, true) => {}
                (Some(_), true) => return Err(absence(round, seat, AFTER_FAULT)),
                (None, false) => return Err(absence(round, seat, NO_FAULT)),
            }
        }
        if let Some(w) = round_winner(answers) {
            scores[w] += 1;
        }
    }
    if r.scores != scores {
        return Err(VerifyError::Scores {
            recorded: r.scores.clone(),
            rules: scores,
        });
    }
    let faulty: Vec<bool> = out.iter().map(Option::is_some).collect();
    let rules = ranks(&scores, &faulty);
    if r.ranks != rules {
        return Err(VerifyError::Ranks {
            recorded: r.ranks.clone(),
            rules,
        });
    }
    Ok(())
}

const AFTER_FAULT: &str = "an answer is recorded after the seat's fault";
const NO_FAULT: &str = "no answer is recorded, but the seat has not faulted";

fn absence(round: usize, seat: usize, found: &'static str) -> VerifyError {
    VerifyError::Absence { round, seat, found }
}

/// Match points per seat: the seats ranked first share 1 (a sole winner 1, two tied 0.5).
pub fn points(r: &LowestRecord) -> Vec<f64> {
    let firsts = r.ranks.iter().filter(|&&k| k == 1).count().max(1) as f64;
    r.ranks
        .iter()
        .map(|&k| if k == 1 { 1.0 / firsts } else { 0.0 })
        .collect()
}

/// What a report of this game is accepted as, and how ([`crate::accept::seated`]).
pub type Record = LowestRecord;
pub use crate::accept::seated as accept;

/// Held to its job like every seat game's record (`accept::seated`).
impl crate::seated::SeatedRecord for LowestRecord {
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

    /// A record of `answers` (one row per round of seed 1's game) with faults, scored by the rules.
    fn record(answers: Vec<[Option<u32>; 3]>, faults: Vec<SeatFault>) -> LowestRecord {
        let answers: Vec<Vec<Option<u32>>> = answers.into_iter().map(|a| a.to_vec()).collect();
        let mut scores = vec![0; SEATS];
        for a in &answers {
            if let Some(w) = round_winner(a) {
                scores[w] += 1;
            }
        }
        let faulty: Vec<bool> = (0..SEATS)
            .map(|s| faults.iter().any(|f| f.seat == s))
            .collect();
        LowestRecord {
            version: VERSION.into(),
            seed: 1,
            players: ["a", "b", "c"]
                .iter()
                .map(|n| Player {
                    name: n.to_string(),
                    code_sha256: format!("{n}{n}"),
                })
                .collect(),
            rounds: rounds(1),
            ranks: ranks(&scores, &faulty),
            scores,
            answers,
            faults,
        }
    }

    fn fault(seat: usize, round: u32) -> SeatFault {
        SeatFault {
            seat,
            round,
            kind: "bad_output".into(),
            detail: "answer 6 is not between 1 and 5".into(),
        }
    }

    #[test]
    fn the_seed_fixes_the_rounds_and_the_text_says_the_state() {
        for seed in 0..200 {
            assert!((5..=9).contains(&rounds(seed)));
        }
        assert!((0..50).any(|s| rounds(s) != rounds(0)));
        let text = turn_text(1, 7, 2, &[1, 0, 0], &[Some(1), Some(1), None]);
        assert_eq!(text, "ROUND 2 OF 7 SEAT 2 SCORES 1 0 0 LAST 1 1 0\n");
        assert_eq!(parse_answer(" 3\r"), Ok(3));
        assert_eq!(parse_answer("6"), Err(AnswerError::OutOfRange(6)));
        assert_eq!(parse_answer("0"), Err(AnswerError::OutOfRange(0)));
        assert!(matches!(
            parse_answer("1 2"),
            Err(AnswerError::Malformed(_))
        ));
    }

    #[test]
    fn the_lowest_unique_number_scores_and_ties_rank_alike() {
        assert_eq!(round_winner(&[Some(1), Some(1), Some(2)]), Some(2));
        assert_eq!(round_winner(&[Some(3), Some(2), Some(4)]), Some(1));
        assert_eq!(round_winner(&[Some(2), Some(2), Some(2)]), None);
        assert_eq!(round_winner(&[None, Some(5), Some(5)]), None);
        assert_eq!(round_winner(&[None, None, Some(5)]), Some(2));
        assert_eq!(ranks(&[2, 2, 1], &[false; 3]), vec![1, 1, 3]);
        assert_eq!(ranks(&[0, 3, 3], &[false; 3]), vec![3, 1, 1]);
        // A faulty seat ranks last whatever it scored; two faulty seats tie last.
        assert_eq!(ranks(&[4, 0, 1], &[true, false, false]), vec![3, 2, 1]);
        assert_eq!(ranks(&[4, 0, 1], &[true, false, true]), vec![2, 1, 2]);
        let r = record(
            vec![[Some(1), Some(1), Some(2)]; rounds(1) as usize],
            Vec::new(),
        );
        verify(&r).unwrap();
        assert_eq!(r.ranks, vec![2, 2, 1]);
        assert_eq!(points(&r), vec![0.0, 0.0, 1.0]);
        let tie = record(
            vec![[Some(3), Some(3), Some(3)]; rounds(1) as usize],
            Vec::new(),
        );
        assert_eq!(
            (tie.ranks.clone(), points(&tie)),
            (vec![1; 3], vec![1.0 / 3.0; 3])
        );
    }

    #[test]
    fn a_faulty_seat_answers_no_more_and_ranks_last() {
        let n = rounds(1) as usize;
        let mut rows = vec![[Some(1), Some(2), Some(3)]; n];
        for row in rows.iter_mut().skip(1) {
            row[0] = None;
        }
        let r = record(rows.clone(), vec![fault(0, 1)]);
        verify(&r).unwrap();
        assert_eq!(r.scores[0], 1);
        assert_eq!(r.ranks, vec![3, 1, 2]);
        // An answer recorded after the fault, or missing before it.
        let mut late = r.clone();
        late.answers[2][0] = Some(1);
        assert!(matches!(
            verify(&late),
            Err(VerifyError::Absence {
                found: AFTER_FAULT,
                ..
            })
        ));
        let mut early = r.clone();
        early.answers[0][0] = None;
        assert!(matches!(
            verify(&early),
            Err(VerifyError::Absence {
                found: NO_FAULT,
                ..
            })
        ));
        // No fault recorded for an absent seat; a second fault of a seat; faults out of order.
        let mut silent = r.clone();
        silent.faults.clear();
        assert!(matches!(verify(&silent), Err(VerifyError::Absence { .. })));
        let mut twice = r.clone();
        twice.faults.push(fault(0, 3));
        assert!(matches!(
            verify(&twice),
            Err(VerifyError::FaultOrder { .. })
        ));
        for row in rows.iter_mut() {
            row[2] = None;
        }
        let both = record(rows, vec![fault(2, 0), fault(0, 1)]);
        verify(&both).unwrap();
        assert_eq!(both.ranks, vec![2, 1, 2]);
        let mut swapped = both.clone();
        swapped.faults.swap(0, 1);
        assert!(matches!(
            verify(&swapped),
            Err(VerifyError::FaultOrder { .. })
        ));
    }

    #[test]
    fn tampering_is_named() {
        let n = rounds(1) as usize;
        let r = record(vec![[Some(2), Some(1), Some(1)]; n], Vec::new());
        verify(&r).unwrap();
        let mut v = r.clone();
        v.version = "lowest-0".into();
        assert!(matches!(verify(&v), Err(VerifyError::Version { .. })));
        let mut v = r.clone();
        v.seed = (2..).find(|&s| rounds(s) != rounds(1)).unwrap();
        assert!(matches!(verify(&v), Err(VerifyError::Rounds { .. })));
        let mut v = r.clone();
        v.answers.pop();
        assert!(matches!(verify(&v), Err(VerifyError::Rounds { .. })));
        let mut v = r.clone();
        v.answers[0][1] = Some(6);
        assert!(matches!(verify(&v), Err(VerifyError::Answer { .. })));
        let mut v = r.clone();
        v.answers[0].pop();
        assert!(matches!(verify(&v), Err(VerifyError::Answers { .. })));
        let mut v = r.clone();
        v.scores = vec![n as u32 - 1, 0, 0];
        assert!(matches!(verify(&v), Err(VerifyError::Scores { .. })));
        let mut v = r.clone();
        v.ranks = vec![1, 1, 1];
        assert!(matches!(verify(&v), Err(VerifyError::Ranks { .. })));
        let mut v = r.clone();
        v.players.pop();
        assert!(matches!(verify(&v), Err(VerifyError::Seats(2))));
        // The record names its version first (how `farm verify` tells a game's replay).
        let text = serde_json::to_string(&r).unwrap();
        assert!(text.starts_with("{\"version\":\"lowest-1\""), "{text}");
    }
}
