//! The stop rule of `farm sprt`: after each whole pair (schedule rows 2k−1 and 2k, one map in
//! both seat orders) it scores the pair for the tested bot, adds it to the pentanomial through
//! [`shared::settle::SprtRun`] (the same pure stop logic the simulations test), logs one line,
//! updates the gauges, and stops at a bound or at the pair cap. Then [`SprtRule::summary`]
//! gives sprt.json.

use serde_json::{json, Value};

use shared::settle::{game_score, SprtEnd, SprtRun};
use shared::sprt::{elo_estimate, GameScore, Sprt, Verdict};

use crate::run::checkpoint::Row;
use crate::run::stop::{game_of, StopRule, Stopped};

/// File of the test's outcome in the output folder.
pub const SPRT_NAME: &str = "sprt.json";

/// The SPRT over the pairs of a `farm sprt` schedule.
pub struct SprtRule {
    run: SprtRun,
    new: String,
    base: String,
    /// The first game of the pair being played (`Some(None)`: it does not count).
    first: Option<Option<GameScore>>,
    /// Echo each pair's line on stderr (tracing gets it either way).
    pub echo: bool,
}

/// A pair's score for the log: "1.5".
fn points(half: u32) -> String {
    match half {
        0 => "0".into(),
        1 => "0.5".into(),
        2 => "1".into(),
        3 => "1.5".into(),
        _ => "2".into(),
    }
}

fn letter(s: Option<GameScore>) -> &'static str {
    match s {
        Some(GameScore::Win) => "W",
        Some(GameScore::Draw) => "D",
        Some(GameScore::Loss) => "L",
        None => "-",
    }
}

impl SprtRule {
    pub fn new(test: Sprt, max_pairs: u64, new: String, base: String) -> SprtRule {
        let rule = SprtRule {
            run: SprtRun::new(test, max_pairs),
            new,
            base,
            first: None,
            echo: true,
        };
        rule.publish();
        rule
    }

    /// The sequential test's state.
    pub fn run(&self) -> &SprtRun {
        &self.run
    }

    fn publish(&self) {
        let status = self.run.status();
        super::metrics::global().set(
            &status,
            self.run.counts.pairs(),
            &elo_estimate(&self.run.counts),
        );
    }

    /// "H1 accepted", "H0 accepted" or "inconclusive".
    pub fn verdict_text(&self) -> &'static str {
        match self.run.end {
            Some(SprtEnd::Bound(Verdict::AcceptH1)) => "H1 accepted",
            Some(SprtEnd::Bound(Verdict::AcceptH0)) => "H0 accepted",
            _ => "inconclusive",
        }
    }

    /// True when the test ended at a bound.
    pub fn decided(&self) -> bool {
        matches!(self.run.end, Some(SprtEnd::Bound(_)))
    }

    /// sprt.json: verdict, counts, LLR, bounds, Elo with its 95% interval, pairs played and
    /// cancelled, parameters.
    pub fn summary(&self, stopped: Option<&Stopped>, seed: i128, pairs_scheduled: u64) -> Value {
        let status = self.run.status();
        let elo = elo_estimate(&self.run.counts);
        let cancelled_pairs = stopped
            .map(|s| {
                let mut pairs: Vec<u64> = s.cut_numbers.iter().map(|n| (n - 1) / 2).collect();
                pairs.sort_unstable();
                pairs.dedup();
                pairs.len() as u64
            })
            .unwrap_or(0);
        let t = &self.run.test;
        json!({
            "verdict": self.verdict_text(),
            "ended": match self.run.end {
                Some(SprtEnd::Bound(_)) => "bound",
                Some(SprtEnd::MaxPairs) => "max_pairs",
                None => "schedule incomplete",
            },
            "new": self.new,
            "base": self.base,
            "pentanomial": {
                "labels": ["LL", "LD", "DD+WL", "WD", "WW"],
                "counts": self.run.counts.counts,
            },
            "llr": status.llr,
            "lower_bound": status.lower,
            "upper_bound": status.upper,
            "elo": elo.elo,
            "elo_ci95": elo.ci95,
            "elo_plus_minus": elo.plus_minus,
            "score": elo.score,
            "los": elo.los,
            "pairs_played": self.run.pairs(),
            "pairs_counted": self.run.counts.pairs(),
            "pairs_void": self.run.void_pairs,
            "pairs_cancelled": cancelled_pairs,
            "pairs_scheduled": pairs_scheduled,
            "matches_cancelled": stopped.map_or(0, |s| s.cancelled),
            "results_kept_ahead": stopped.map_or(0, |s| s.kept_ahead),
            "parameters": {
                "elo0": t.elo0,
                "elo1": t.elo1,
                "alpha": t.alpha,
                "beta": t.beta,
                "max_pairs": self.run.max_pairs,
                "seed": seed.to_string(),
            },
        })
    }

    /// The summary as text for stdout.
    pub fn summary_text(summary: &Value) -> String {
        let f = |k: &str| summary[k].as_f64().unwrap_or(f64::NAN);
        let ci = &summary["elo_ci95"];
        format!(
            "SPRT {} vs {}: {}\n  pairs played {} (counted {}, void {}), cancelled {}\n  pentanomial [LL, LD, DD+WL, WD, WW] = {}\n  LLR {:.3} (bounds [{:.3}, {:.3}]; elo0 {}, elo1 {}, alpha {}, beta {})\n  Elo {:.1} ± {:.1} (95% [{:.1}, {:.1}]), LOS {:.3}\n",
            summary["new"].as_str().unwrap_or("?"),
            summary["base"].as_str().unwrap_or("?"),
            summary["verdict"].as_str().unwrap_or("?"),
            summary["pairs_played"],
            summary["pairs_counted"],
            summary["pairs_void"],
            summary["pairs_cancelled"],
            summary["pentanomial"]["counts"],
            f("llr"),
            f("lower_bound"),
            f("upper_bound"),
            summary["parameters"]["elo0"],
            summary["parameters"]["elo1"],
            summary["parameters"]["alpha"],
            summary["parameters"]["beta"],
            f("elo"),
            f("elo_plus_minus"),
            ci[0].as_f64().unwrap_or(f64::NAN),
            ci[1].as_f64().unwrap_or(f64::NAN),
            f("los"),
        )
    }
}

impl StopRule for SprtRule {
    fn observe(&mut self, row: &Row) -> Option<String> {
        if self.run.end.is_some() {
            return None;
        }
        let score = game_of(row).and_then(|g| game_score(&g, &self.new));
        if row.number % 2 == 1 {
            self.first = Some(score);
            return None;
        }
        let first = self.first.take().flatten();
        let pair = row.number / 2;
        let end = self.run.add_pair(first, score);
        let status = self.run.status();
        let elo = elo_estimate(&self.run.counts);
        let pair_points = match (first, score) {
            (Some(a), Some(b)) => points(a.half_points() + b.half_points()),
            _ => "void".to_string(),
        };
        let c = self.run.counts.counts;
        let line = format!(
            "sprt pair {pair}: {pair_points} ({}{}) | LL {} LD {} DD+WL {} WD {} WW {} | LLR {:.3} in [{:.3}, {:.3}] | Elo {:.1} ± {:.1}",
            letter(first),
            letter(score),
            c[0],
            c[1],
            c[2],
            c[3],
            c[4],
            status.llr,
            status.lower,
            status.upper,
            elo.elo,
            elo.plus_minus
        );
        tracing::info!(pair, llr = status.llr, "{line}");
        if self.echo {
            eprintln!("{line}");
        }
        self.publish();
        match end {
            Some(SprtEnd::Bound(_)) => Some(format!(
                "SPRT {} after pair {pair} (LLR {:.3}, bounds [{:.3}, {:.3}])",
                self.verdict_text(),
                status.llr,
                status.lower,
                status.upper
            )),
            Some(SprtEnd::MaxPairs) => Some(format!(
                "--max-pairs {} reached, inconclusive (LLR {:.3} in [{:.3}, {:.3}])",
                self.run.max_pairs, status.llr, status.lower, status.upper
            )),
            None => None,
        }
    }

    fn status(&self) -> Option<String> {
        let s = self.run.status();
        Some(format!(
            "SPRT pairs {} LLR {:.2} in [{:.2}, {:.2}]",
            self.run.pairs(),
            s.llr,
            s.lower,
            s.upper
        ))
    }
}
