//! A clock stated for a reference host and scaled to the host that plays, as fishtest does: a
//! time-controlled bot plays weaker on a slower machine, so a tournament may state its clock at
//! a reference speed (the workers' self-test signature, reference bot-turns per second) and
//! each worker plays under that clock times `reference / its own speed`. The scaling (the
//! stated clock, the reference and the host's measured speed) travels in the replay, so
//! verification re-derives the limits the match was played under from it. Pure arithmetic.

use serde::{Deserialize, Serialize};

use super::clock::ClockSpec;

/// Longest scaled limit, milliseconds (a day): a host measured absurdly slow gets a long clock,
/// never an overflow.
pub const MAX_SCALED_MS: u64 = 86_400_000;

/// How a match's clock was scaled: recorded in the replay (absent when the clock was not).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scaling {
    /// The tournament's clock as stated, for a host of the reference speed.
    pub stated: ClockSpec,
    /// The reference speed the clock is stated for (reference bot-turns per second).
    pub reference_speed: u32,
    /// The speed signature of the host that played (its self-test's).
    pub speed: f64,
}

/// Why a scaling cannot be applied.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScalingError {
    #[error("a scaled clock needs a positive reference speed")]
    NoReference,
    #[error("a scaled clock needs the host's measured speed, a positive number (got {0})")]
    BadSpeed(f64),
}

impl Scaling {
    /// `stated` scaled from `reference_speed` to a host of `speed`.
    pub fn new(stated: ClockSpec, reference_speed: u32, speed: f64) -> Result<Self, ScalingError> {
        let s = Scaling {
            stated,
            reference_speed,
            speed,
        };
        s.factor()?;
        Ok(s)
    }

    /// How much longer (or shorter) every limit is on this host: reference / speed.
    pub fn factor(&self) -> Result<f64, ScalingError> {
        if self.reference_speed == 0 {
            return Err(ScalingError::NoReference);
        }
        if !(self.speed.is_finite() && self.speed > 0.0) {
            return Err(ScalingError::BadSpeed(self.speed));
        }
        Ok(f64::from(self.reference_speed) / self.speed)
    }

    /// The clock this host plays under: each limit times [`Scaling::factor`], rounded up to a
    /// whole millisecond (at least 1 for a turn; no bank stays no bank), at most
    /// [`MAX_SCALED_MS`]. Turn 0 keeps the rules' start-up allowance ([`ClockSpec::first_ms`]).
    pub fn played(&self) -> Result<ClockSpec, ScalingError> {
        let f = self.factor()?;
        let scale = |ms: u64| ((ms as f64) * f).ceil().min(MAX_SCALED_MS as f64) as u64;
        Ok(ClockSpec {
            turn_ms: scale(self.stated.turn_ms).max(1),
            bank_ms: scale(self.stated.bank_ms),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATED: ClockSpec = ClockSpec {
        turn_ms: 50,
        bank_ms: 1000,
    };

    #[test]
    fn a_slower_host_gets_a_longer_clock_and_a_faster_one_a_shorter() {
        let half = Scaling::new(STATED, 240, 120.0).unwrap();
        assert_eq!(half.factor().unwrap(), 2.0);
        assert_eq!(
            half.played().unwrap(),
            ClockSpec {
                turn_ms: 100,
                bank_ms: 2000
            }
        );
        let fast = Scaling::new(STATED, 240, 480.0).unwrap();
        assert_eq!(
            fast.played().unwrap(),
            ClockSpec {
                turn_ms: 25,
                bank_ms: 500
            }
        );
        // Rounded up to whole milliseconds; the reference host plays the stated clock.
        let odd = Scaling::new(STATED, 240, 241.0).unwrap();
        assert_eq!(odd.played().unwrap().turn_ms, 50);
        assert_eq!(
            Scaling::new(STATED, 240, 240.0).unwrap().played().unwrap(),
            STATED
        );
    }

    #[test]
    fn no_bank_stays_none_and_extremes_are_bounded() {
        let stated = ClockSpec::default();
        let s = Scaling::new(stated, 1, 1e9).unwrap();
        assert_eq!(
            s.played().unwrap(),
            ClockSpec {
                turn_ms: 1,
                bank_ms: 0
            }
        );
        let slow = Scaling::new(stated, u32::MAX, 1e-300).unwrap();
        assert_eq!(slow.played().unwrap().turn_ms, MAX_SCALED_MS);
    }

    #[test]
    fn a_scaling_without_a_usable_speed_is_refused() {
        assert_eq!(
            Scaling::new(STATED, 0, 200.0),
            Err(ScalingError::NoReference)
        );
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(Scaling::new(STATED, 240, bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn it_reads_back_from_its_json() {
        let s = Scaling::new(STATED, 240, 236.5).unwrap();
        let v = serde_json::to_value(s).unwrap();
        assert_eq!(v["reference_speed"], 240);
        assert_eq!(v["stated"]["turn_ms"], 50);
        let back: Scaling = serde_json::from_value(v).unwrap();
        assert_eq!(back, s);
    }
}
