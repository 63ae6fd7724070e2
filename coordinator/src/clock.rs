//! The match clock of a tournament (the per-turn answer limit and the optional time bank, as
//! `cmd::flags::ClockArgs` reads them): every job carries it, so each worker plays under the
//! coordinator's clock whatever its own environment says, and a non-default clock is part of
//! the run's identity (a resume must use the same). A clock may be stated for a reference speed
//! (`--scale-clock`): each worker then plays it scaled to its own measured speed.

use games::bomberman::clock::{ClockSpec, RULES_TURN_MS};
use shared::msg::BombermanClock;

/// Key of identity.json's `scoring_code` recording a non-default clock (absent with the rules'
/// 50 ms and no bank, so such runs' identity files are as they always were).
pub const CLOCK_KEY: &str = "clock";

/// A tournament's clock: its limits, and the reference speed they are stated for, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TournamentClock {
    pub spec: ClockSpec,
    /// Scale the limits to each worker's speed from this one (reference bot-turns per second).
    pub reference_speed: Option<u32>,
}

impl From<ClockSpec> for TournamentClock {
    fn from(spec: ClockSpec) -> Self {
        TournamentClock {
            spec,
            reference_speed: None,
        }
    }
}

/// The clock every bomberman job of a tournament carries.
pub fn job_clock(clock: &TournamentClock) -> Option<BombermanClock> {
    Some(BombermanClock {
        turn_ms: clock.spec.turn_ms,
        time_bank_ms: clock.spec.bank_ms,
        reference_speed: clock.reference_speed,
    })
}

/// The identity entry of a non-default clock (None for the rules' clock, unscaled).
pub fn identity_entry(clock: &TournamentClock) -> Option<(String, String)> {
    (*clock != TournamentClock::default()).then(|| {
        let c = &clock.spec;
        let mut v = format!("turn_ms={} time_bank_ms={}", c.turn_ms, c.bank_ms);
        if let Some(r) = clock.reference_speed {
            v.push_str(&format!(" reference_speed={r}"));
        }
        (CLOCK_KEY.to_string(), v)
    })
}

/// Say on stderr when the clock is not the rules' (an operator must know).
pub fn warn_if_not_rules(clock: &TournamentClock) {
    if let Some(r) = clock.reference_speed {
        tracing::warn!(
            "the clock is stated for a host of speed {r}: each worker plays it scaled to its own speed"
        );
    }
    let clock = &clock.spec;
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
