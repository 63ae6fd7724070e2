//! The match clock flags of `farm run` and `farm play`: the per-turn answer limit and the
//! optional time bank. They are read here, by clap, and nowhere else: a tournament puts them in
//! every job (so each worker plays under the coordinator's clock, whatever its own environment
//! says), and a non-default clock is part of the run's identity (a resume must use the same).

use clap::Args;
use games::bomberman::clock::{ClockSpec, RULES_TURN_MS};
use shared::msg::{BombermanJob, GameJob};

/// Key of identity.json's `scoring_code` recording a non-default clock (absent with the rules'
/// 50 ms and no bank, so such runs' identity files are as they always were).
pub const CLOCK_KEY: &str = "clock";

#[derive(Args, Debug, Clone, PartialEq, Eq)]
pub struct ClockArgs {
    /// Answer limit of every turn after turn 0, in milliseconds (turn 0 keeps at least the
    /// rules' 2000). The rules say 50: set more only for calibration or test suites on loaded
    /// machines, never for a real tournament.
    #[arg(
        long,
        env = "FARM_TURN_MS",
        default_value_t = RULES_TURN_MS,
        value_name = "MS",
        value_parser = clap::value_parser!(u64).range(1..=3_600_000)
    )]
    pub turn_ms: u64,
    /// Time bank: each bot gets N ms per match to draw on when a turn exceeds its limit (as
    /// Kaggle's overage time and chess clocks); a bot whose bank cannot cover a turn times out
    /// as it would without one. Recorded in every replay, and re-checked by `farm verify`.
    /// 0: no bank.
    #[arg(
        long,
        default_value_t = 0,
        value_name = "N",
        value_parser = clap::value_parser!(u64).range(0..=86_400_000)
    )]
    pub time_bank_ms: u64,
}

impl Default for ClockArgs {
    fn default() -> Self {
        ClockArgs {
            turn_ms: RULES_TURN_MS,
            time_bank_ms: 0,
        }
    }
}

impl ClockArgs {
    /// The clock as the referee takes it.
    pub fn spec(&self) -> ClockSpec {
        ClockSpec {
            turn_ms: self.turn_ms,
            bank_ms: self.time_bank_ms,
        }
    }

    /// True for the rules' clock (50 ms, no bank).
    pub fn is_default(&self) -> bool {
        *self == ClockArgs::default()
    }

    /// The game of every job of a tournament: bomberman under this clock.
    pub fn job_game(&self) -> GameJob {
        GameJob::Bomberman(Some(BombermanJob {
            turn_ms: self.turn_ms,
            time_bank_ms: self.time_bank_ms,
        }))
    }

    /// The identity entry of a non-default clock (None for the rules' clock).
    pub fn identity_entry(&self) -> Option<(String, String)> {
        (!self.is_default()).then(|| {
            (
                CLOCK_KEY.to_string(),
                format!(
                    "turn_ms={} time_bank_ms={}",
                    self.turn_ms, self.time_bank_ms
                ),
            )
        })
    }

    /// Say on stderr when the clock is not the rules' (an operator must know).
    pub fn warn_if_not_rules(&self) {
        if self.turn_ms != RULES_TURN_MS {
            tracing::warn!(
                "per-turn deadline is {} ms, not the rules' {RULES_TURN_MS} ms",
                self.turn_ms
            );
        }
        if self.time_bank_ms > 0 {
            tracing::info!("time bank of {} ms per bot per match", self.time_bank_ms);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        clock: ClockArgs,
    }

    #[test]
    fn defaults_are_the_rules_and_leave_no_identity_entry() {
        let c = Cli::try_parse_from(["x"]).unwrap().clock;
        // FARM_TURN_MS may be set by whoever runs the tests: judge by what clap read.
        if std::env::var_os("FARM_TURN_MS").is_none() {
            assert!(c.is_default());
            assert_eq!(c.identity_entry(), None);
            assert_eq!(c.spec(), ClockSpec::default());
        }
        let c = Cli::try_parse_from(["x", "--turn-ms", "1000", "--time-bank-ms", "5000"])
            .unwrap()
            .clock;
        assert_eq!(
            c.identity_entry(),
            Some((CLOCK_KEY.into(), "turn_ms=1000 time_bank_ms=5000".into()))
        );
        assert_eq!(
            c.job_game(),
            GameJob::Bomberman(Some(BombermanJob {
                turn_ms: 1000,
                time_bank_ms: 5000
            }))
        );
        assert!(Cli::try_parse_from(["x", "--turn-ms", "0"]).is_err());
    }
}
