//! `farm report OUTPUT`: rebuild a run's 汇总.md, report.html, results.json, bt.json and viewer
//! index (replays/index.html and its list; a replay is read only when its viewer data file is
//! missing or older than it, see run::viewer_index) from its results log, for a finished run or one still
//! going (the log is only read; a torn tail is left alone). An early stop is read back from
//! stopped.json, the arrival times from arrivals.jsonl, so the views say what the run's last
//! write said. Rows of any age read alike: the scoring reads only evaluate.py's fields, not the
//! per-bot timing (summed up in newer rows).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;

use shared::schedule::Identity;

use crate::run::checkpoint::{self, Row};
use crate::run::outputs::{write_results_rows, Live, StopNote};
use crate::run::stop::{Stopped, STOPPED_NAME};

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The output folder of a `farm run`.
    pub output: PathBuf,
}

pub fn run(args: ReportArgs) -> Result<ExitCode> {
    let id_path = args.output.join("identity.json");
    let text = std::fs::read_to_string(&id_path)
        .with_context(|| format!("reading {} (is this a farm run folder?)", id_path.display()))?;
    let identity: Identity = serde_json::from_str(&text)
        .with_context(|| format!("{} is malformed", id_path.display()))?;
    let game = crate::run::game::Game::of_version(&identity.version)
        .with_context(|| format!("{}", id_path.display()))?;
    let names: Vec<String> = identity
        .bot_hashes
        .iter()
        .map(|(k, _)| k.to_string())
        .collect();
    let started = std::time::Instant::now();
    let schedule_len = identity.schedule.entries.len() as u64;
    let rows = read_rows(&args.output, schedule_len)?;
    let in_log = rows.len();
    let mut live =
        Live::new(names, identity.sizes.clone(), identity.anchor.clone()).scored_as(game.scoring());
    live.rebuilding();
    for r in &rows {
        live.add(r);
    }
    let stopped_path = args.output.join(STOPPED_NAME);
    match std::fs::read_to_string(&stopped_path) {
        Ok(text) => {
            let s: Stopped = serde_json::from_str(&text)
                .with_context(|| format!("{} is malformed", stopped_path.display()))?;
            live.set_stop(StopNote::of(&s));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("reading {}", stopped_path.display())),
    }
    let read = started.elapsed();
    live.write_report(&args.output)?;
    let views = started.elapsed();
    // The rows as read, never the log recovered: a report beside a running coordinator must
    // not cut what looks like a torn tail (the line it is writing).
    write_results_rows(&args.output, rows)?;
    let results = started.elapsed();
    let index = game.write_viewer_index(&args.output, schedule_len)?;
    let viewer = started.elapsed();
    crate::fsio::write_atomic(
        &args.output.join("bt.json"),
        (serde_json::to_string_pretty(&live.bt_json())? + "\n").as_bytes(),
    )?;
    print!("{}", live.ratings_table());
    println!(
        "{} of {} matches in the log; wrote 汇总.md, report.html, results.json, bt.json in {}",
        in_log,
        identity.schedule.entries.len(),
        args.output.display()
    );
    if let Some(line) = index {
        println!("{line}");
    }
    println!(
        "took {:.2} s: log read {:.2} s, 汇总.md + report.html {:.2} s (of which the page {:.3} s), results.json {:.2} s, viewer index {:.2} s, bt.json {:.2} s",
        started.elapsed().as_secs_f64(),
        read.as_secs_f64(),
        (views - read).as_secs_f64(),
        live.page_seconds(),
        (results - views).as_secs_f64(),
        (viewer - results).as_secs_f64(),
        (started.elapsed() - viewer).as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

/// Read the log without repairing it (a running coordinator may be mid-write): its whole rows,
/// every number within the schedule's `schedule_len` matches.
fn read_rows(dir: &std::path::Path, schedule_len: u64) -> Result<Vec<Row>> {
    let path = dir.join(checkpoint::LOG_NAME);
    let bytes = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
    let parsed = checkpoint::parse(&bytes, schedule_len)
        .map_err(|e| anyhow::anyhow!("{} {e}", path.display()))?;
    Ok(parsed.rows)
}
