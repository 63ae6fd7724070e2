//! The ladder's Prometheus counters (submissions, challenges, matches), registered in the
//! process's default registry beside the coordinator's and the worker library's series.

use std::sync::OnceLock;

use prometheus::{IntCounter, IntCounterVec, Opts};

pub struct LadderMetrics {
    /// Submissions by outcome: published, smoke_failed, rejected.
    pub submissions: IntCounterVec,
    /// Challenges by scoring: scored, practice.
    pub challenges: IntCounterVec,
    /// Games played as farm jobs by kind: smoke, challenge.
    pub matches: IntCounterVec,
    pub reverts: IntCounter,
    pub rate_limited: IntCounterVec,
}

fn reg<C: prometheus::core::Collector + Clone + 'static>(c: C) -> C {
    if let Err(e) = prometheus::default_registry().register(Box::new(c.clone())) {
        tracing::warn!("metric registration: {e}");
    }
    c
}

fn vec(name: &str, help: &str, label: &str) -> IntCounterVec {
    reg(IntCounterVec::new(Opts::new(name, help), &[label]).expect("static metric definition"))
}

/// The process-wide ladder metrics.
pub fn global() -> &'static LadderMetrics {
    static M: OnceLock<LadderMetrics> = OnceLock::new();
    M.get_or_init(|| {
        let m = LadderMetrics {
            submissions: vec(
                "farm_ladder_submissions_total",
                "Code submissions by outcome (published, smoke_failed, rejected)",
                "outcome",
            ),
            challenges: vec(
                "farm_ladder_challenges_total",
                "Challenges played, by scoring (scored, practice)",
                "scoring",
            ),
            matches: vec(
                "farm_ladder_matches_total",
                "Ladder games played as farm jobs, by kind (smoke, challenge)",
                "kind",
            ),
            reverts: reg(IntCounter::new("farm_ladder_reverts_total", "Code reverts")
                .expect("static metric definition")),
            rate_limited: vec(
                "farm_ladder_rate_limited_total",
                "Requests answered 429, by limit (challenge, submit, auth)",
                "limit",
            ),
        };
        // Every series exists (at 0) from the start, so dashboards and rates see it.
        for o in ["published", "smoke_failed", "rejected"] {
            m.submissions.with_label_values(&[o]);
        }
        for s in ["scored", "practice"] {
            m.challenges.with_label_values(&[s]);
        }
        for k in ["smoke", "challenge"] {
            m.matches.with_label_values(&[k]);
        }
        for l in ["challenge", "submit", "auth"] {
            m.rate_limited.with_label_values(&[l]);
        }
        m
    })
}
