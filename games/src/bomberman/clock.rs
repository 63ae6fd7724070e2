//! The match clock: each turn's answer limit (the rules' 2000 ms for turn 0 and 50 ms after,
//! or a longer per-turn limit a tournament asks for) and the optional time bank, a per-bot
//! per-match reserve a turn draws on when its measured time exceeds the limit (Kaggle's
//! overage, a chess clock's increment-free reserve). A bot times out only when the bank cannot
//! cover the excess. Pure accounting in microseconds: the worker charges each turn through
//! [`Bank::charge`], and replay verification replays the same charges ([`check`]) against the
//! faults the replay claims.

use serde::{Deserialize, Serialize};

/// The rules' limit for turn 0 (INIT and the first TURN), milliseconds.
pub const RULES_FIRST_MS: u64 = 2000;
/// The rules' limit for every later turn, milliseconds.
pub const RULES_TURN_MS: u64 = 50;

/// The clock of a match: per-turn limits and the bank each bot starts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClockSpec {
    /// Limit of every turn after turn 0, milliseconds.
    pub turn_ms: u64,
    /// Each bot's time bank for the whole match, milliseconds (0: no bank).
    pub bank_ms: u64,
}

impl Default for ClockSpec {
    fn default() -> Self {
        ClockSpec {
            turn_ms: RULES_TURN_MS,
            bank_ms: 0,
        }
    }
}

impl ClockSpec {
    /// Limit of turn 0: the rules' start-up allowance, never shorter than a later turn's.
    pub fn first_ms(&self) -> u64 {
        RULES_FIRST_MS.max(self.turn_ms)
    }

    /// The answer limit of turn `turn`, microseconds.
    pub fn limit_us(&self, turn: u32) -> u64 {
        let ms = if turn == 0 {
            self.first_ms()
        } else {
            self.turn_ms
        };
        ms.saturating_mul(1000)
    }
}

/// What charging one turn did to a bot's bank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Charge {
    /// The turn took no more than its limit: the bank is untouched.
    Within,
    /// The turn exceeded its limit and the bank covered the excess.
    Drew { drawn_us: u64 },
    /// The turn used its limit and all the bank: the bot timed out.
    Exhausted,
}

/// One bot's time bank during a match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bank {
    left_us: u64,
}

impl Bank {
    /// A full bank for one bot of a match under `spec`.
    pub fn new(spec: &ClockSpec) -> Bank {
        Bank {
            left_us: spec.bank_ms.saturating_mul(1000),
        }
    }

    /// Microseconds left.
    pub fn left_us(&self) -> u64 {
        self.left_us
    }

    /// The longest a turn with limit `limit_us` may take before the bot times out.
    pub fn allowance_us(&self, limit_us: u64) -> u64 {
        limit_us.saturating_add(self.left_us)
    }

    /// Charge a turn that took `used_us` against its limit `limit_us`: a bot times out exactly
    /// when `used_us` reaches the allowance (limit plus what is left); the bank is then empty.
    pub fn charge(&mut self, limit_us: u64, used_us: u64) -> Charge {
        if used_us >= self.allowance_us(limit_us) {
            self.left_us = 0;
            return Charge::Exhausted;
        }
        match used_us.checked_sub(limit_us) {
            Some(over) if over > 0 => {
                self.left_us -= over;
                Charge::Drew { drawn_us: over }
            }
            _ => Charge::Within,
        }
    }
}

/// One bot-turn of the clock as a replay records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClockTurn {
    /// The turn.
    pub t: u32,
    /// Time charged to the bot for it, microseconds (the CPU-fair measure the deadline uses).
    pub used_us: u64,
    /// Its bank after the turn, microseconds.
    pub bank_us: u64,
}

/// The clock record of a replay (present only when the match had a time bank).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClockRecord {
    /// Limit of every turn after turn 0, milliseconds (turn 0: [`ClockSpec::first_ms`]).
    pub turn_ms: u64,
    /// Each bot's time bank at the start of the match, milliseconds.
    pub bank_ms: u64,
    /// Per player, every turn it was asked, in turn order.
    pub turns: Vec<Vec<ClockTurn>>,
}

impl ClockRecord {
    /// An empty record for `players` bots.
    pub fn new(spec: ClockSpec, players: usize) -> ClockRecord {
        ClockRecord {
            turn_ms: spec.turn_ms,
            bank_ms: spec.bank_ms,
            turns: vec![Vec::new(); players],
        }
    }

    /// The clock the match was played under.
    pub fn spec(&self) -> ClockSpec {
        ClockSpec {
            turn_ms: self.turn_ms,
            bank_ms: self.bank_ms,
        }
    }
}

/// How a player's turn ended, as the replay's turn records say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answered {
    /// It answered (an action is recorded).
    Action,
    /// It timed out (a `timeout` fault is recorded).
    Timeout,
    /// Another fault ended it (a crash, bad output...): the clock decides nothing.
    OtherFault,
    /// Nothing recorded for it (dead, or never asked).
    Nothing,
}

/// Microseconds shown as milliseconds with three decimals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ms(pub u64);

impl std::fmt::Display for Ms {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{:03}", self.0 / 1000, self.0 % 1000)
    }
}

/// How a player's recorded clock contradicts its turns (what [`check`] finds).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClockError {
    #[error("player {player}'s clock lists turn {t} after turn {previous}")]
    OutOfOrder {
        player: usize,
        t: u32,
        previous: u32,
    },
    #[error("turn {t}: player {player}'s clock has an entry but the turn records neither an action nor a fault for it")]
    NothingRecorded { player: usize, t: u32 },
    #[error("turn {t}: player {player} is recorded as timing out, but it used {used} ms of a {limit} ms limit with {bank} ms left in its time bank, which covered it")]
    CoveredTimeout {
        player: usize,
        t: u32,
        used: Ms,
        limit: Ms,
        bank: Ms,
    },
    #[error("turn {t}: player {player} used {used} ms of a {limit} ms limit with only {bank} ms left in its time bank, so it should have timed out, but an answer is recorded")]
    UncoveredAnswer {
        player: usize,
        t: u32,
        used: Ms,
        limit: Ms,
        bank: Ms,
    },
    #[error("turn {t}: player {player}'s time bank is recorded as {recorded_us} us after the turn, but charging {used_us} us against the {limit_us} us limit leaves {left_us} us")]
    Balance {
        player: usize,
        t: u32,
        recorded_us: u64,
        used_us: u64,
        limit_us: u64,
        left_us: u64,
    },
}

/// Re-run the bank of one player over its recorded turns and check them against how each turn
/// ended (`ended(t)`). Errors name the turn and say what is inconsistent.
pub fn check(
    spec: &ClockSpec,
    player: usize,
    turns: &[ClockTurn],
    ended: impl Fn(u32) -> Answered,
) -> Result<(), ClockError> {
    let mut bank = Bank::new(spec);
    let mut last: Option<u32> = None;
    for ct in turns {
        let t = ct.t;
        if let Some(previous) = last.filter(|&l| t <= l) {
            return Err(ClockError::OutOfOrder {
                player,
                t,
                previous,
            });
        }
        last = Some(t);
        let limit = spec.limit_us(t);
        let before = bank.left_us();
        let charge = bank.charge(limit, ct.used_us);
        match (ended(t), charge) {
            (Answered::Nothing, _) => return Err(ClockError::NothingRecorded { player, t }),
            (Answered::Timeout, Charge::Within | Charge::Drew { .. }) => {
                return Err(ClockError::CoveredTimeout {
                    player,
                    t,
                    used: Ms(ct.used_us),
                    limit: Ms(limit),
                    bank: Ms(before),
                })
            }
            (Answered::Action, Charge::Exhausted) => {
                return Err(ClockError::UncoveredAnswer {
                    player,
                    t,
                    used: Ms(ct.used_us),
                    limit: Ms(limit),
                    bank: Ms(before),
                })
            }
            _ => {}
        }
        if bank.left_us() != ct.bank_us {
            return Err(ClockError::Balance {
                player,
                t,
                recorded_us: ct.bank_us,
                used_us: ct.used_us,
                limit_us: limit,
                left_us: bank.left_us(),
            });
        }
    }
    Ok(())
}

/// Every turn `player` answered or timed out must have a clock entry (the bank is re-checked
/// only over recorded turns): the first turn in `needed` with no entry, if any.
pub fn first_missing(turns: &[ClockTurn], needed: impl IntoIterator<Item = u32>) -> Option<u32> {
    needed
        .into_iter()
        .find(|t| turns.binary_search_by_key(t, |c| c.t).is_err())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: ClockSpec = ClockSpec {
        turn_ms: 100,
        bank_ms: 500,
    };

    #[test]
    fn limits_follow_the_rules_and_the_turn_limit() {
        let rules = ClockSpec::default();
        assert_eq!((rules.limit_us(0), rules.limit_us(1)), (2_000_000, 50_000));
        let long = ClockSpec {
            turn_ms: 3000,
            bank_ms: 0,
        };
        assert_eq!((long.limit_us(0), long.limit_us(7)), (3_000_000, 3_000_000));
    }

    #[test]
    fn a_bank_covers_excess_until_it_runs_out() {
        let mut b = Bank::new(&SPEC);
        assert_eq!(b.allowance_us(100_000), 600_000);
        assert_eq!(b.charge(100_000, 99_999), Charge::Within);
        assert_eq!(b.charge(100_000, 100_000), Charge::Within);
        assert_eq!(
            b.charge(100_000, 300_000),
            Charge::Drew { drawn_us: 200_000 }
        );
        assert_eq!(b.left_us(), 300_000);
        assert_eq!(
            b.charge(100_000, 399_999),
            Charge::Drew { drawn_us: 299_999 }
        );
        assert_eq!(b.left_us(), 1);
        // Exactly the allowance is a timeout, as the worker's deadline is.
        assert_eq!(b.charge(100_000, 100_001), Charge::Exhausted);
        assert_eq!(b.left_us(), 0);
    }

    #[test]
    fn without_a_bank_the_limit_is_the_deadline() {
        let mut b = Bank::new(&ClockSpec::default());
        assert_eq!(b.charge(50_000, 49_999), Charge::Within);
        assert_eq!(b.charge(50_000, 50_000), Charge::Exhausted);
    }

    fn record(uses: &[(u32, u64)]) -> Vec<ClockTurn> {
        let mut b = Bank::new(&SPEC);
        uses.iter()
            .map(|&(t, used_us)| {
                b.charge(SPEC.limit_us(t), used_us);
                ClockTurn {
                    t,
                    used_us,
                    bank_us: b.left_us(),
                }
            })
            .collect()
    }

    #[test]
    fn check_accepts_an_honest_record_and_names_each_lie() {
        let turns = record(&[(0, 10_000), (1, 300_000), (2, 350_000)]);
        assert_eq!(turns[2].bank_us, 50_000);
        check(&SPEC, 1, &turns, |_| Answered::Action).unwrap();
        // A timeout claimed while the bank covered the turn.
        let e = check(&SPEC, 1, &turns, |t| {
            if t == 1 {
                Answered::Timeout
            } else {
                Answered::Action
            }
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("turn 1") && e.contains("covered it"), "{e}");
        // An answer recorded on a turn that exhausted the bank.
        let over = record(&[(0, 10_000), (1, 300_000), (2, 400_000)]);
        let e = check(&SPEC, 1, &over, |_| Answered::Action)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("turn 2") && e.contains("should have timed out"),
            "{e}"
        );
        check(&SPEC, 1, &over, |t| {
            if t == 2 {
                Answered::Timeout
            } else {
                Answered::Action
            }
        })
        .unwrap();
        // A doctored bank balance.
        let mut doctored = turns.clone();
        doctored[1].bank_us += 1;
        let e = check(&SPEC, 1, &doctored, |_| Answered::Action)
            .unwrap_err()
            .to_string();
        assert!(e.contains("time bank is recorded as"), "{e}");
        // Out of order, and an entry for a turn with nothing recorded.
        let e = check(&SPEC, 0, &[turns[1], turns[0]], |_| Answered::Action)
            .unwrap_err()
            .to_string();
        assert!(e.contains("after turn"), "{e}");
        let e = check(&SPEC, 0, &turns, |_| Answered::Nothing)
            .unwrap_err()
            .to_string();
        assert!(e.contains("neither an action nor a fault"), "{e}");
        // Another fault decides nothing about the clock.
        check(&SPEC, 0, &over, |_| Answered::OtherFault).unwrap();
    }

    #[test]
    fn missing_entries_are_found() {
        let turns = record(&[(0, 1), (1, 1), (3, 1)]);
        assert_eq!(first_missing(&turns, [0, 1, 3]), None);
        assert_eq!(first_missing(&turns, 0..4), Some(2));
    }

    #[test]
    fn the_record_is_plain_json() {
        let mut r = ClockRecord::new(SPEC, 2);
        r.turns[1].push(ClockTurn {
            t: 0,
            used_us: 5,
            bank_us: 500_000,
        });
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["turn_ms"], 100);
        assert_eq!(v["bank_ms"], 500);
        assert_eq!(v["turns"][1][0]["used_us"], 5);
        let back: ClockRecord = serde_json::from_value(v).unwrap();
        assert_eq!(back, r);
    }
}
