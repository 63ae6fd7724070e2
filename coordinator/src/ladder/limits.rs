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

impl std::str::FromStr for Rate {
    type Err = String;
    fn from_str(s: &str) -> Result<Rate, String> {
        let (n, secs) = s
            .split_once('/')
            .ok_or_else(|| format!("rate {s:?}: expected COUNT/SECONDS, e.g. 10/60"))?;
        let count: u32 = n
            .trim()
            .parse()
            .map_err(|_| format!("rate {s:?}: {n:?} is not a count"))?;
        let secs: f64 = secs
            .trim()
            .parse()
            .map_err(|_| format!("rate {s:?}: {secs:?} is not a number of seconds"))?;
        if count == 0 || !(secs > 0.0 && secs.is_finite()) {
            return Err(format!("rate {s:?}: count and seconds must be positive"));
        }
        Ok(Rate {
            count,
            per: Duration::from_secs_f64(secs),
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
