//! The coordinator's Prometheus metrics (progress, throughput, ETA, queue, faults, ratings) and
//! a minimal HTTP/1.1 server for `/metrics` shared by `farm run` and workers; it serves the
//! process's default registry, where the worker library's metrics live too.

use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use prometheus::{
    Encoder, Gauge, GaugeVec, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts, TextEncoder,
};
use serde_json::Value;
use shared::bt::BtFit;
use shared::FaultKind;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

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
    pub in_flight: IntGauge,
    pub pending: IntGauge,
    pub queue_depth: IntGauge,
    pub workers: IntGauge,
    pub results_per_second: Gauge,
    pub eta_seconds: Gauge,
    pub finished: IntGauge,
    pub faults: IntCounterVec,
    pub rating: GaugeVec,
    pub rating_low: GaugeVec,
    pub rating_high: GaugeVec,
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
            "Jobs that ended in the dead-letter queue (cluster)",
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
        loop {
            match listener.accept().await {
                Ok((stream, _)) => {
                    tokio::spawn(async move {
                        let _ = tokio::time::timeout(Duration::from_secs(10), answer(stream)).await;
                    });
                }
                Err(e) => {
                    tracing::warn!("metrics endpoint accept: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    });
    Ok(MetricsServer { addr: local, task })
}

/// One request, one response, then close.
async fn answer(mut stream: TcpStream) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < 16 * 1024 {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let head = String::from_utf8_lossy(&buf);
    let mut words = head.lines().next().unwrap_or("").split_whitespace();
    let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    let (status, kind, body) = match (method, path) {
        ("GET" | "HEAD", "/metrics") => (
            "200 OK",
            "text/plain; version=0.0.4; charset=utf-8",
            render(),
        ),
        ("GET" | "HEAD", "/healthz") => ("200 OK", "text/plain", "ok\n".to_string()),
        ("GET" | "HEAD", _) => ("404 Not Found", "text/plain", "try /metrics\n".to_string()),
        _ => (
            "405 Method Not Allowed",
            "text/plain",
            "GET only\n".to_string(),
        ),
    };
    let mut out = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    if method != "HEAD" {
        out.extend_from_slice(body.as_bytes());
    }
    stream.write_all(&out).await?;
    stream.shutdown().await
}
