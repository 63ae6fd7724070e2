//! Rate limits: a token bucket per (limit, caller) — caller being a bot key or a client IP — so
//! challenge, submit and the auth-ish endpoints answer 429 with Retry-After when overused.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// `N/SECONDS`: at most N requests in any SECONDS-long window on average (burst N).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    pub count: u32,
    pub per: Duration,
}

/// Why a `--rate-*` value is not a rate.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RateError {
    #[error("rate {0:?}: expected COUNT/SECONDS, e.g. 10/60")]
    Shape(String),
    #[error("rate {rate:?}: {count:?} is not a count")]
    Count { rate: String, count: String },
    #[error("rate {rate:?}: {seconds:?} is not a number of seconds")]
    Seconds { rate: String, seconds: String },
    #[error("rate {0:?}: count and seconds must be positive")]
    NotPositive(String),
}

impl std::str::FromStr for Rate {
    type Err = RateError;
    fn from_str(s: &str) -> Result<Rate, RateError> {
        let (n, secs) = s
            .split_once('/')
            .ok_or_else(|| RateError::Shape(s.to_string()))?;
        let count: u32 = n.trim().parse().map_err(|_| RateError::Count {
            rate: s.to_string(),
            count: n.to_string(),
        })?;
        let per: f64 = secs.trim().parse().map_err(|_| RateError::Seconds {
            rate: s.to_string(),
            seconds: secs.to_string(),
        })?;
        if count == 0 || !(per > 0.0 && per.is_finite()) {
            return Err(RateError::NotPositive(s.to_string()));
        }
        Ok(Rate {
            count,
            per: Duration::from_secs_f64(per),
        })
    }
}

struct Bucket {
    tokens: f64,
    at: Instant,
}

/// Token buckets keyed by caller.
pub struct Limiter {
    rate: Rate,
    buckets: Mutex<HashMap<String, Bucket>>,
}

impl Limiter {
    pub fn new(rate: Rate) -> Limiter {
        Limiter {
            rate,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes one token for `who`: Ok, or Err(seconds until one is available, at least 1).
    pub fn check(&self, who: &str) -> Result<(), u64> {
        let now = Instant::now();
        let cap = self.rate.count as f64;
        let per_token = self.rate.per.as_secs_f64() / cap;
        let mut map = match self.buckets.lock() {
            Ok(m) => m,
            Err(p) => p.into_inner(),
        };
        if map.len() > 100_000 {
            // Forget full buckets so the map stays bounded.
            map.retain(|_, b| (now - b.at).as_secs_f64() < self.rate.per.as_secs_f64());
        }
        let b = map.entry(who.to_string()).or_insert(Bucket {
            tokens: cap,
            at: now,
        });
        b.tokens = (b.tokens + (now - b.at).as_secs_f64() / per_token).min(cap);
        b.at = now;
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            Ok(())
        } else {
            Err(((1.0 - b.tokens) * per_token).ceil().max(1.0) as u64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse_and_bad_ones_say_why() {
        let r: Rate = " 10 / 60 ".trim().parse().unwrap();
        assert_eq!(
            r,
            Rate {
                count: 10,
                per: Duration::from_secs(60)
            }
        );
        assert_eq!(
            "3/0.5".parse::<Rate>().unwrap().per,
            Duration::from_millis(500)
        );
        let err = |s: &str| s.parse::<Rate>().unwrap_err().to_string();
        assert_eq!(err("10"), "rate \"10\": expected COUNT/SECONDS, e.g. 10/60");
        assert_eq!(err("x/60"), "rate \"x/60\": \"x\" is not a count");
        assert_eq!(err("1/y"), "rate \"1/y\": \"y\" is not a number of seconds");
        for bad in ["0/60", "1/0", "1/-3", "1/inf"] {
            assert_eq!(
                err(bad),
                format!("rate {bad:?}: count and seconds must be positive")
            );
        }
    }

    #[test]
    fn buckets_refill_and_say_when() {
        let l = Limiter::new(Rate {
            count: 2,
            per: Duration::from_secs(60),
        });
        assert_eq!(l.check("a"), Ok(()));
        assert_eq!(l.check("a"), Ok(()));
        let wait = l.check("a").unwrap_err();
        assert!((29..=30).contains(&wait), "{wait}");
        // Callers have buckets of their own.
        assert_eq!(l.check("b"), Ok(()));
    }
}
