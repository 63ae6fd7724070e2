//! Worker-side Prometheus metrics: job duration (per game and player count), per-turn latency
//! (per game and player count, for games whose result records turn timing), bot faults by kind and bot, compile cache hits/misses
//! and compile time, sandbox mode, slots busy/total, the start-up self-test. Registered in the
//! process's default registry; whoever runs the worker (`farm run` embedded, or a cluster
//! worker) serves it on `/metrics`.

use std::sync::OnceLock;

use prometheus::{
    Gauge, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts,
};
use shared::{Fault, FaultKind};

/// Sandbox modes, each a series of `farm_worker_sandbox_mode` (1 for the one in use).
pub const SANDBOX_MODES: [&str; 4] = ["auto", "off", "unprivileged", "full"];

/// Every worker-side series.
pub struct WorkerMetrics {
    pub match_seconds: HistogramVec,
    pub turn_seconds: HistogramVec,
    pub matches: IntCounterVec,
    pub faults: IntCounterVec,
    pub compile_hits: IntCounter,
    pub compile_misses: IntCounter,
    /// Cached executables found not to be the file that was compiled (removed, compiled again).
    pub compile_cache_corrupt: IntCounter,
    pub compile_seconds: HistogramVec,
    pub sandbox_mode: IntGaugeVec,
    pub slots: IntGauge,
    pub slots_busy: IntGauge,
    /// 1 when the last self-test passed, 0 before any and after a failed one.
    pub self_test_ok: IntGauge,
    /// Wall time of the last self-test.
    pub self_test_seconds: Gauge,
    /// The speed signature of the last passed self-test (reference bot-turns per second).
    pub speed: Gauge,
}

fn reg<C: prometheus::core::Collector + Clone + 'static>(c: C) -> C {
    if let Err(e) = prometheus::default_registry().register(Box::new(c.clone())) {
        tracing::warn!("metric registration: {e}");
    }
    c
}

/// The process-wide worker metrics (registered on first use).
pub fn global() -> &'static WorkerMetrics {
    static M: OnceLock<WorkerMetrics> = OnceLock::new();
    M.get_or_init(|| {
        let hist = |name: &str, help: &str, labels: &[&str], buckets: Vec<f64>| {
            reg(
                HistogramVec::new(HistogramOpts::new(name, help).buckets(buckets), labels)
                    .expect("static metric definition"),
            )
        };
        let m = WorkerMetrics {
            match_seconds: hist(
                "farm_worker_match_seconds",
                "Wall time of one job on a worker (compile, play, verify)",
                &["game", "players"],
                vec![
                    0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
                ],
            ),
            turn_seconds: hist(
                "farm_worker_turn_seconds",
                "Wall time of one bot-turn (sending the state to the complete answer)",
                &["game", "players"],
                vec![
                    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
                ],
            ),
            matches: reg(IntCounterVec::new(
                Opts::new(
                    "farm_worker_matches_total",
                    "Jobs finished on this worker, by outcome (ok, failed)",
                ),
                &["outcome"],
            )
            .expect("static metric definition")),
            faults: reg(IntCounterVec::new(
                Opts::new(
                    "farm_worker_faults_total",
                    "Bot faults in matches this worker played, by kind and bot",
                ),
                &["kind", "bot"],
            )
            .expect("static metric definition")),
            compile_hits: reg(IntCounter::new(
                "farm_worker_compile_cache_hits_total",
                "Sources whose executable was already in the compile cache",
            )
            .expect("static metric definition")),
            compile_misses: reg(IntCounter::new(
                "farm_worker_compile_cache_misses_total",
                "Sources this worker had to compile",
            )
            .expect("static metric definition")),
            compile_cache_corrupt: reg(IntCounter::new(
                "farm_worker_compile_cache_corrupt_total",
                "Cached executables that no longer matched their sha256 (removed and compiled \
                 again: a disk or cache fault of this host, never the bot's)",
            )
            .expect("static metric definition")),
            compile_seconds: hist(
                "farm_worker_compile_seconds",
                "Wall time of one compile (sandboxed g++), by outcome (ok, failed)",
                &["outcome"],
                vec![0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 40.0, 80.0, 160.0],
            ),
            sandbox_mode: reg(IntGaugeVec::new(
                Opts::new(
                    "farm_worker_sandbox_mode",
                    "1 for the sandbox mode bots run under",
                ),
                &["mode"],
            )
            .expect("static metric definition")),
            slots: reg(
                IntGauge::new("farm_worker_slots", "Concurrent matches this worker runs")
                    .expect("static metric definition"),
            ),
            slots_busy: reg(
                IntGauge::new("farm_worker_slots_busy", "Matches running now")
                    .expect("static metric definition"),
            ),
            self_test_ok: reg(IntGauge::new(
                "farm_worker_self_test_ok",
                "1 when the worker's self-test (compile and run a bot through the real sandbox) passed",
            )
            .expect("static metric definition")),
            self_test_seconds: reg(Gauge::new(
                "farm_worker_self_test_seconds",
                "Wall time of the worker's last self-test",
            )
            .expect("static metric definition")),
            speed: reg(Gauge::new(
                "farm_worker_speed",
                "Speed signature from the self-test: reference bot-turns per second through the \
                 real sandbox (higher is faster; 0 before a passed self-test)",
            )
            .expect("static metric definition")),
        };
        for o in ["ok", "failed"] {
            m.matches.with_label_values(&[o]);
            m.compile_seconds.with_label_values(&[o]);
        }
        for mode in SANDBOX_MODES {
            m.sandbox_mode.with_label_values(&[mode]);
        }
        m
    })
}

/// Set `farm_worker_sandbox_mode` for the mode `cfg` puts in force on this host (call at
/// process start, before any job: otherwise every mode reads 0 until the first job).
pub fn init_sandbox_mode(cfg: &sandbox::SandboxConfig) {
    global().set_sandbox_mode(cfg.effective_mode().as_str());
}

impl WorkerMetrics {
    /// The sandbox mode in use (one series at 1, the others at 0).
    pub fn set_sandbox_mode(&self, mode: &str) {
        for m in SANDBOX_MODES {
            self.sandbox_mode
                .with_label_values(&[m])
                .set(i64::from(m == mode));
        }
    }

    /// A slot is busy until the guard is dropped.
    pub fn busy(&self) -> BusyGuard<'_> {
        self.slots_busy.inc();
        BusyGuard(&self.slots_busy)
    }

    /// One job of `game` (its `GameJob::name`) with `players` players done: its duration and
    /// outcome.
    pub fn job_done(&self, game: &str, players: usize, seconds: f64, ok: bool) {
        self.match_seconds
            .with_label_values(&[game, &players.to_string()])
            .observe(seconds);
        self.matches
            .with_label_values(&[if ok { "ok" } else { "failed" }])
            .inc();
    }

    /// What a played match of `game` with `players` seats says about its bots: faults by kind
    /// and bot (`names` and `faults` by seat), and the wall time of each bot-turn in µs, as the
    /// game's own job module reads them from the timing its replay recorded.
    pub fn bots(
        &self,
        game: &str,
        players: usize,
        names: &[String],
        faults: &[Vec<Fault>],
        turn_wall_us: impl IntoIterator<Item = u64>,
    ) {
        for (name, faults) in names.iter().zip(faults) {
            for kind in FaultKind::ALL {
                self.faults.with_label_values(&[kind.as_str(), name]);
            }
            for f in faults {
                self.faults
                    .with_label_values(&[f.kind.as_str(), name])
                    .inc();
            }
        }
        let turns = self
            .turn_seconds
            .with_label_values(&[game, &players.to_string()]);
        for us in turn_wall_us {
            turns.observe(us as f64 / 1e6);
        }
    }

    /// A compile finished (a cache miss).
    pub fn compiled(&self, seconds: f64, ok: bool) {
        self.compile_misses.inc();
        self.compile_seconds
            .with_label_values(&[if ok { "ok" } else { "failed" }])
            .observe(seconds);
    }
}

/// Marks one slot busy while alive.
pub struct BusyGuard<'a>(&'a IntGauge);

impl Drop for BusyGuard<'_> {
    fn drop(&mut self) {
        self.0.dec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sandbox_mode_is_one_hot_and_busy_guard_restores() {
        let m = global();
        m.set_sandbox_mode("unprivileged");
        let values: Vec<i64> = SANDBOX_MODES
            .iter()
            .map(|s| m.sandbox_mode.with_label_values(&[s]).get())
            .collect();
        assert_eq!(values, vec![0, 0, 1, 0]);
        let before = m.slots_busy.get();
        {
            let _g = m.busy();
            assert_eq!(m.slots_busy.get(), before + 1);
        }
        assert_eq!(m.slots_busy.get(), before);
        init_sandbox_mode(&sandbox::SandboxConfig::plain());
        assert_eq!(m.sandbox_mode.with_label_values(&["off"]).get(), 1);
        assert_eq!(m.sandbox_mode.with_label_values(&["unprivileged"]).get(), 0);
    }
}
