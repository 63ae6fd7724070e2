//! The live state of `farm sprt` on `/metrics`: the LLR, its bounds, the pairs counted and the
//! Elo estimate, registered in the coordinator's registry beside the run's other series.

use std::sync::OnceLock;

use prometheus::{Gauge, IntGauge};

use shared::sprt::{EloEstimate, SprtStatus};

use crate::metrics::reg;

/// The SPRT gauges (one test per process).
pub struct SprtMetrics {
    pub llr: Gauge,
    pub lower: Gauge,
    pub upper: Gauge,
    pub pairs: IntGauge,
    pub elo: Gauge,
    pub elo_low: Gauge,
    pub elo_high: Gauge,
}

fn gauge(name: &str, help: &str) -> Gauge {
    reg(Gauge::new(name, help).expect("static metric definition"))
}

/// The process-wide SPRT gauges (registered on first use).
pub fn global() -> &'static SprtMetrics {
    static M: OnceLock<SprtMetrics> = OnceLock::new();
    M.get_or_init(|| SprtMetrics {
        llr: gauge(
            "farm_sprt_llr",
            "Log-likelihood ratio of the pentanomial GSPRT after the last counted pair",
        ),
        lower: gauge(
            "farm_sprt_lower_bound",
            "SPRT lower bound ln(beta/(1-alpha)): H0 is accepted below it",
        ),
        upper: gauge(
            "farm_sprt_upper_bound",
            "SPRT upper bound ln((1-beta)/alpha): H1 is accepted above it",
        ),
        pairs: reg(
            IntGauge::new("farm_sprt_pairs", "Game pairs counted by the SPRT so far")
                .expect("static metric definition"),
        ),
        elo: gauge(
            "farm_sprt_elo",
            "Elo estimate of the tested bot against the base (logistic, per game)",
        ),
        elo_low: gauge(
            "farm_sprt_elo_ci_low",
            "Lower end of the Elo estimate's 95% interval",
        ),
        elo_high: gauge(
            "farm_sprt_elo_ci_high",
            "Upper end of the Elo estimate's 95% interval",
        ),
    })
}

impl SprtMetrics {
    /// The state after a pair.
    pub fn set(&self, status: &SprtStatus, pairs: u64, elo: &EloEstimate) {
        self.llr.set(status.llr);
        self.lower.set(status.lower);
        self.upper.set(status.upper);
        self.pairs.set(pairs as i64);
        self.elo.set(elo.elo);
        self.elo_low.set(elo.ci95[0]);
        self.elo_high.set(elo.ci95[1]);
    }
}
