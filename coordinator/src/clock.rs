//! The match clock of a tournament (the per-turn answer limit and the optional time bank, as
//! `cmd::flags::ClockArgs` reads them): every job carries it, so each worker plays under the
//! coordinator's clock whatever its own environment says, and a non-default clock is part of
//! the run's identity (a resume must use the same).

use games::bomberman::clock::{ClockSpec, RULES_TURN_MS};
use shared::msg::{BombermanJob, GameJob};

/// Key of identity.json's `scoring_code` recording a non-default clock (absent with the rules'
/// 50 ms and no bank, so such runs' identity files are as they always were).
pub const CLOCK_KEY: &str = "clock";

/// The game of every job of a tournament: bomberman under this clock.
pub fn job_game(clock: &ClockSpec) -> GameJob {
    GameJob::Bomberman(Some(BombermanJob {
        turn_ms: clock.turn_ms,
        time_bank_ms: clock.bank_ms,
    }))
}

/// The identity entry of a non-default clock (None for the rules' clock).
pub fn identity_entry(clock: &ClockSpec) -> Option<(String, String)> {
    (*clock != ClockSpec::default()).then(|| {
        (
            CLOCK_KEY.to_string(),
            format!("turn_ms={} time_bank_ms={}", clock.turn_ms, clock.bank_ms),
        )
    })
}

/// Say on stderr when the clock is not the rules' (an operator must know).
pub fn warn_if_not_rules(clock: &ClockSpec) {
    if clock.turn_ms != RULES_TURN_MS {
        tracing::warn!(
            "per-turn deadline is {} ms, not the rules' {RULES_TURN_MS} ms",
            clock.turn_ms
        );
    }
    if clock.bank_ms > 0 {
        tracing::info!("time bank of {} ms per bot per match", clock.bank_ms);
    }
}
