//! Progress of a run for the operator: a bar with rate and ETA on a terminal, plain lines
//! (`n/total ranks=[..] errors=[..]`, as the reference prints) when output is not a terminal.
//! A run with a stop rule adds the rule's state (an SPRT's LLR and bounds, the weakest pair of
//! an --until-settled ranking) to the bar's message and to each plain line.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use super::checkpoint::Row;

pub struct Progress {
    bar: Option<ProgressBar>,
    total: u64,
    started: Instant,
    start_count: u64,
    count: u64,
    /// The stop rule's state, shown beside the count.
    status: Option<String>,
}

impl Progress {
    pub fn new(total: u64, already: u64) -> Progress {
        let plain = std::env::var_os("CI").is_some() || !std::io::stderr().is_terminal();
        let bar = (!plain).then(|| {
            let b = ProgressBar::new(total);
            b.set_position(already);
            b.set_style(
                ProgressStyle::with_template(
                    "{elapsed_precise} [{bar:40}] {pos}/{len} matches  {per_sec}  ETA {eta}  {msg}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            b.enable_steady_tick(Duration::from_millis(250));
            b
        });
        Progress {
            bar,
            total,
            started: Instant::now(),
            start_count: already,
            count: already,
            status: None,
        }
    }

    /// One more match checkpointed.
    pub fn done(&mut self, row: &Row) {
        self.count += 1;
        match &self.bar {
            Some(b) => {
                b.set_position(self.count);
                if let Some(f) = &row.failed {
                    b.println(format!("match {} failed: {f}", row.number));
                }
            }
            None => {
                let rate = (self.count - self.start_count) as f64
                    / self.started.elapsed().as_secs_f64().max(1e-9);
                let left = self.total.saturating_sub(self.count) as f64 / rate.max(1e-9);
                match (&row.result, &row.failed) {
                    (Some(r), _) => println!(
                        "{}/{} ranks={} errors={}  ({:.2} matches/s, ETA {:.0}s){}",
                        row.number,
                        self.total,
                        r["ranks"],
                        r["errors"],
                        rate,
                        left,
                        self.status
                            .as_deref()
                            .map(|s| format!("  {s}"))
                            .unwrap_or_default()
                    ),
                    (None, f) => println!(
                        "{}/{} FAILED: {}",
                        row.number,
                        self.total,
                        f.as_deref().unwrap_or("?")
                    ),
                }
            }
        }
    }

    /// The stop rule's state now (shown from the next line on; on the bar, at once).
    pub fn set_status(&mut self, status: String) {
        if let Some(b) = &self.bar {
            b.set_message(status.clone());
        }
        self.status = Some(status);
    }

    /// A line for the operator above the bar (or on its own line without a bar).
    pub fn println(&self, line: &str) {
        match &self.bar {
            Some(b) => b.println(line),
            None => eprintln!("{line}"),
        }
    }

    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
