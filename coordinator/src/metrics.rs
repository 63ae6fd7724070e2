//! The coordinator's Prometheus metrics (progress, throughput, ETA, queue, faults, ratings with
//! their Wald and bootstrap intervals) and
//! the `/metrics` HTTP endpoint (axum) shared by `farm run` and workers; it serves the
//! process's default registry, where the worker library's metrics live too.

use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::Instant;

use axum::http::{header, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use prometheus::{
    Encoder, Gauge, GaugeVec, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts, TextEncoder,
};
use serde_json::Value;
use shared::bootstrap::BootstrapFit;
use shared::bt::BtFit;
use shared::FaultKind;
use tokio::net::TcpListener;

/// Why the metrics endpoint could not start.
#[derive(Debug, thiserror::Error)]
pub enum MetricsError {
    #[error("--metrics-addr {addr:?}: {source}")]
    Bind {
        addr: String,
        source: std::io::Error,
    },
}

/// Every coordinator-side series (label sets bounded by the roster and the fault taxonomy).
pub struct Metrics {
    pub info: IntGaugeVec,
    pub scheduled: IntGauge,
    pub checkpointed: IntGauge,
    pub dispatched: IntCounter,
    pub completed: IntCounter,
    pub failed: IntCounter,
    pub retried: IntCounter,
    pub redelivered: IntCounter,
    pub dead_lettered: IntCounter,
    pub dead_letters_rejected: IntCounter,
    pub in_flight: IntGauge,
    pub pending: IntGauge,
    pub queue_depth: IntGauge,
    pub workers: IntGauge,
    pub results_per_second: Gauge,
    pub eta_seconds: Gauge,
    pub finished: IntGauge,
    pub faults: IntCounterVec,
    pub quarantined: IntGaugeVec,
    pub rating: GaugeVec,
    pub rating_low: GaugeVec,
    pub rating_high: GaugeVec,
    pub bootstrap_low: GaugeVec,
    pub bootstrap_high: GaugeVec,
    started: OnceLock<(Instant, u64)>,
}

pub(crate) fn reg<C: prometheus::core::Collector + Clone + 'static>(c: C) -> C {
    // A second registration of the same name can only happen if this module is misused; the
    // series still work, they are just not exported twice.
    if let Err(e) = prometheus::default_registry().register(Box::new(c.clone())) {
        tracing::warn!("metric registration: {e}");
    }
    c
}

fn counter(name: &str, help: &str) -> IntCounter {
    reg(IntCounter::new(name, help).expect("static metric definition"))
}

fn gauge(name: &str, help: &str) -> IntGauge {
    reg(IntGauge::new(name, help).expect("static metric definition"))
}

fn fgauge(name: &str, help: &str) -> Gauge {
    reg(Gauge::new(name, help).expect("static metric definition"))
}

fn bot_gauge(name: &str, help: &str) -> GaugeVec {
    reg(GaugeVec::new(Opts::new(name, help), &["bot"]).expect("static metric definition"))
}

/// The process-wide coordinator metrics (registered on first use).
pub fn global() -> &'static Metrics {
    static M: OnceLock<Metrics> = OnceLock::new();
    M.get_or_init(|| Metrics {
        info: reg(IntGaugeVec::new(
            Opts::new(
                "farm_run_info",
                "1 for the running tournament (labels: tournament, transport)",
            ),
            &["tournament", "transport"],
        )
        .expect("static metric definition")),
        scheduled: gauge(
            "farm_matches_scheduled",
            "Matches in the tournament's schedule",
        ),
        checkpointed: gauge(
            "farm_matches_checkpointed",
            "Matches with a checkpointed row (result or failure), resumed ones included",
        ),
        dispatched: counter(
            "farm_matches_dispatched_total",
            "Jobs published to workers (retries included)",
        ),
        completed: counter(
            "farm_matches_completed_total",
            "Matches accepted with a verified result by this process",
        ),
        failed: counter(
            "farm_matches_failed_total",
            "Matches reported failed for good (infrastructure, not scored)",
        ),
        retried: counter(
            "farm_matches_retried_total",
            "Jobs published again after an infrastructure failure",
        ),
        redelivered: counter(
            "farm_jobs_redelivered_total",
            "Jobs the broker delivered again (cluster)",
        ),
        dead_lettered: counter(
            "farm_jobs_dead_lettered_total",
            "Messages that arrived on the dead-letter queue, accepted or not (cluster)",
        ),
        dead_letters_rejected: counter(
            "farm_dead_letters_rejected_total",
            "Dead letters that changed nothing: unsigned, another tournament, not the latest publication of a pending match, a copy, or a job without the broker's delivery-limit headers (cluster)",
        ),
        in_flight: gauge(
            "farm_matches_in_flight",
            "Jobs published and not yet answered",
        ),
        pending: gauge("farm_matches_pending", "Matches not yet published"),
        queue_depth: gauge(
            "farm_queue_depth",
            "Jobs published and not yet taken by a local worker (embedded runs; on a cluster see rabbitmq_queue_messages_ready)",
        ),
        workers: gauge(
            "farm_workers",
            "Worker slots (embedded) or live workers (cluster) serving the run",
        ),
        results_per_second: fgauge(
            "farm_results_per_second",
            "Results checkpointed per second since this process started the run",
        ),
        eta_seconds: fgauge(
            "farm_eta_seconds",
            "Estimated seconds until every match has a checkpointed row",
        ),
        finished: gauge(
            "farm_run_finished",
            "1 once every match has a checkpointed row",
        ),
        faults: reg(IntCounterVec::new(
            Opts::new(
                "farm_faults_total",
                "Bot faults in accepted results, by kind and bot",
            ),
            &["kind", "bot"],
        )
        .expect("static metric definition")),
        quarantined: reg(IntGaugeVec::new(
            Opts::new(
                "farm_worker_quarantined",
                "1 for a worker quarantined by this run (its fault record stands out from the fleet's; evidence in quarantine.json and 汇总.md), 0 once released",
            ),
            &["worker"],
        )
        .expect("static metric definition")),
        rating: bot_gauge(
            "farm_bot_rating",
            "Bradley-Terry rating (anchor = 0), refreshed as ratings refit",
        ),
        rating_low: bot_gauge(
            "farm_bot_rating_ci_low",
            "Lower end of the rating's 95% interval",
        ),
        rating_high: bot_gauge(
            "farm_bot_rating_ci_high",
            "Upper end of the rating's 95% interval",
        ),
        bootstrap_low: bot_gauge(
            "farm_rating_bootstrap_lower",
            "Lower end of the rating's 95% paired bootstrap interval (maps resampled), refreshed at report writes",
        ),
        bootstrap_high: bot_gauge(
            "farm_rating_bootstrap_upper",
            "Upper end of the rating's 95% paired bootstrap interval (maps resampled), refreshed at report writes",
        ),
        started: OnceLock::new(),
    })
}

impl Metrics {
    /// A run starts: schedule size, rows already checkpointed, the roster (fault series are
    /// zero-initialised for every bot and kind so dashboards show them before the first fault).
    pub fn start(&self, tournament: &str, transport: &str, total: u64, done: u64, bots: &[String]) {
        self.info.with_label_values(&[tournament, transport]).set(1);
        self.scheduled.set(total as i64);
        self.checkpointed.set(done as i64);
        self.finished.set(i64::from(done >= total));
        for bot in bots {
            for kind in FaultKind::ALL {
                self.faults.with_label_values(&[kind.as_str(), bot]);
            }
        }
        let _ = self.started.set((Instant::now(), done));
    }

    /// One row checkpointed in order: counts, faults (from the result's `names` and `faults`),
    /// throughput and ETA.
    pub fn checkpointed(&self, result: Option<&Value>) {
        match result {
            Some(r) => {
                self.completed.inc();
                let names = r.get("names").and_then(Value::as_array);
                let faults = r.get("faults").and_then(Value::as_array);
                if let (Some(names), Some(faults)) = (names, faults) {
                    for (name, list) in names.iter().zip(faults) {
                        let bot = name.as_str().unwrap_or("?");
                        for f in list.as_array().into_iter().flatten() {
                            if let Some(kind) = f.get("kind").and_then(Value::as_str) {
                                self.faults.with_label_values(&[kind, bot]).inc();
                            }
                        }
                    }
                }
            }
            None => self.failed.inc(),
        }
        let done = self.checkpointed.get() + 1;
        self.checkpointed.set(done);
        let total = self.scheduled.get();
        if let Some((t0, base)) = self.started.get() {
            let secs = t0.elapsed().as_secs_f64();
            let here = (done as u64).saturating_sub(*base) as f64;
            if secs > 0.0 && here > 0.0 {
                let rate = here / secs;
                self.results_per_second.set(rate);
                self.eta_seconds.set((total - done).max(0) as f64 / rate);
            }
        }
        if done >= total {
            self.finished.set(1);
            self.eta_seconds.set(0.0);
        }
    }

    /// Window state after a dispatch round: in flight, not yet published, and waiting in the
    /// queue (in flight minus this process's busy worker slots, when workers are local).
    pub fn window(&self, in_flight: usize, pending: usize) {
        self.in_flight.set(in_flight as i64);
        self.pending.set(pending as i64);
        let w = worker::metrics::global();
        if w.slots.get() > 0 {
            self.queue_depth
                .set((in_flight as i64 - w.slots_busy.get()).max(0));
        }
    }

    /// Ratings refit: one gauge triple per bot.
    pub fn ratings(&self, fit: &BtFit) {
        for (name, r) in &fit.ratings {
            self.rating.with_label_values(&[name]).set(*r);
            if let Some([lo, hi]) = fit.interval(name) {
                self.rating_low.with_label_values(&[name]).set(lo);
                self.rating_high.with_label_values(&[name]).set(hi);
            }
        }
    }

    /// Bootstrap intervals recomputed: one gauge pair per bot.
    pub fn bootstrap(&self, b: &BootstrapFit) {
        for (name, [lo, hi]) in &b.intervals {
            self.bootstrap_low.with_label_values(&[name]).set(*lo);
            self.bootstrap_high.with_label_values(&[name]).set(*hi);
        }
    }
}

/// The text exposition of everything in the default registry.
pub fn render() -> String {
    let mut buf = Vec::new();
    if let Err(e) = TextEncoder::new().encode(&prometheus::gather(), &mut buf) {
        tracing::error!("encoding metrics: {e}");
    }
    String::from_utf8_lossy(&buf).into_owned()
}

/// A running `/metrics` endpoint; stops when dropped.
pub struct MetricsServer {
    pub addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        // Dropping the server future closes the listener and tells every open connection to
        // finish its request and close (axum's connection tasks watch for that).
        self.task.abort();
    }
}

/// Bind `addr` (port 0 picks a free one) and serve `/metrics` (and `/healthz`) until dropped.
/// Registers the coordinator's and the worker library's metrics first so every series exists
/// from the first scrape. Prints the bound address on stderr (`metrics: http://ADDR/metrics`).
pub async fn serve(addr: &str) -> Result<MetricsServer, MetricsError> {
    let _ = global();
    let _ = worker::metrics::global();
    let bind_err = |source| MetricsError::Bind {
        addr: addr.to_string(),
        source,
    };
    let listener = TcpListener::bind(addr).await.map_err(bind_err)?;
    let local = listener.local_addr().map_err(bind_err)?;
    eprintln!("metrics: http://{local}/metrics");
    let task = tokio::spawn(async move {
        // axum's loop retries failed accepts itself; serving ends only when the task is dropped.
        if let Err(e) = axum::serve(listener, router()).await {
            tracing::warn!("metrics endpoint stopped: {e}");
        }
    });
    Ok(MetricsServer { addr: local, task })
}

/// The routes: `/metrics` (text exposition) and `/healthz`; other paths are 404, other
/// methods 405. `get` answers HEAD too, without a body.
fn router() -> Router {
    Router::new()
        .route("/metrics", get(metrics_page))
        .route("/healthz", get(|| async { text("ok\n") }))
        .method_not_allowed_fallback(|| async { not_allowed() })
        .fallback(|method: Method| async move {
            if method == Method::GET || method == Method::HEAD {
                (StatusCode::NOT_FOUND, text("try /metrics\n")).into_response()
            } else {
                not_allowed()
            }
        })
}

async fn metrics_page() -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        render(),
    )
        .into_response()
}

fn text(body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, "text/plain")], body).into_response()
}

fn not_allowed() -> Response {
    (StatusCode::METHOD_NOT_ALLOWED, text("GET only\n")).into_response()
}
