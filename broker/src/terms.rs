//! The terms on which workers serve a tournament, as its coordinator announces them in Redis
//! beside the tournament (`farm:terms`, a hash of tournament → JSON): its share of a worker's
//! time against the other tournaments of the same priority (fishtest's throughput), its
//! priority (a worker serves a higher one first, whatever the shares: the ladder's challenges
//! ahead of a long tournament), and the slowest host it accepts (`--min-speed`).
//!
//! Terms only steer which jobs a worker takes; none changes a result. They are not signed: a
//! worker that ignores `min_speed` is still refused by the coordinator, which checks the speed
//! in every signed report.

use serde::{Deserialize, Serialize};

/// How workers serve one tournament.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Terms {
    /// This tournament's share of a worker's time against the others of the same priority
    /// (positive; 3 against 1 gets three quarters).
    pub share: f64,
    /// Served before every tournament of a lower priority that has jobs ready.
    pub priority: i32,
    /// Workers slower than this (reference bot-turns per second, their self-test's speed
    /// signature) take none of its jobs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_speed: Option<f64>,
}

impl Default for Terms {
    fn default() -> Terms {
        Terms {
            share: 1.0,
            priority: 0,
            min_speed: None,
        }
    }
}

impl Terms {
    /// The terms as announced, or the defaults when they are missing or unreadable (a
    /// tournament announced by an older coordinator, or a hand-edited value). A share that is
    /// not a positive finite number reads as 1.
    pub fn parse(json: Option<&str>) -> Terms {
        let mut t: Terms = json
            .and_then(|j| serde_json::from_str(j).ok())
            .unwrap_or_default();
        if !(t.share.is_finite() && t.share > 0.0) {
            t.share = 1.0;
        }
        t
    }

    /// Why a worker of speed `speed` (None: it measured none) may not serve under these
    /// terms; None when it may.
    pub fn refuses(&self, speed: Option<f64>) -> Option<String> {
        let min = self.min_speed?;
        match speed {
            Some(s) if s >= min => None,
            Some(s) => Some(format!(
                "its speed signature {s:.1} reference turns/s is below the tournament's --min-speed {min:.1}"
            )),
            None => Some(format!(
                "it reports no speed signature and the tournament asks for --min-speed {min:.1}"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_or_bad_terms_read_as_the_defaults() {
        assert_eq!(Terms::parse(None), Terms::default());
        assert_eq!(Terms::parse(Some("not json")), Terms::default());
        let t = Terms::parse(Some(r#"{"share":-2,"priority":5}"#));
        assert_eq!((t.share, t.priority), (1.0, 5));
        let t = Terms {
            share: 3.0,
            priority: 1,
            min_speed: Some(100.0),
        };
        let json = serde_json::to_string(&t).unwrap();
        assert_eq!(Terms::parse(Some(&json)), t);
    }

    #[test]
    fn min_speed_refuses_slower_hosts_and_hosts_without_a_speed() {
        let t = Terms {
            min_speed: Some(100.0),
            ..Terms::default()
        };
        assert_eq!(t.refuses(Some(100.0)), None);
        assert!(t.refuses(Some(99.9)).unwrap().contains("below"));
        assert!(t.refuses(None).unwrap().contains("no speed"));
        assert_eq!(Terms::default().refuses(None), None);
    }
}
