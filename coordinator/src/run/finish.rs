//! The end of a run: the transport shut down, the cut (if a stop rule or the limit ended the
//! run early) written to stopped.json and the views, the final files (results.json, bt.json,
//! performance.json, the game's viewer index), the ratings table printed, and the exit code:
//! 3 when matches failed for good (the host's fault, never scored), 4 when nothing counted.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;

use super::engine::Finished;
use super::flow::Flow;
use super::outputs::StopNote;
use super::prepare::Plan;
use super::shell::Shell;
use super::stop::{Stopped, STOPPED_NAME};
use crate::dispatch::Dispatcher;
use crate::transport::Transport;

/// Close the run `shell` played for `plan` over `flights`, as `flow` ended it (`with_rule`: a
/// stop rule ran, so failed matches stay failed on a resume).
pub async fn finish<T: Transport>(
    plan: &Plan,
    shell: Shell<'_>,
    flights: Dispatcher<T>,
    flow: Flow,
    started: Instant,
    with_rule: bool,
) -> Result<Finished> {
    let Shell {
        log,
        mut live,
        progress,
        mut timings,
        ..
    } = shell;
    flights.shutdown().await?;
    progress.finish();
    let written = log.written();
    let ahead = log.waiting_numbers();
    drop(log);
    let failures = flow.failures();
    let scheduled = plan.schedule.len() as u64;
    let stopped = flow.finish(written, &ahead);
    let out = &plan.output;
    if let Some(s) = &stopped {
        // The live views (汇总.md, bt.json) say it, and stopped.json keeps the cut.
        live.set_stop(StopNote::of(s));
        crate::fsio::write_atomic(
            &out.join(STOPPED_NAME),
            (serde_json::to_string_pretty(s)? + "\n").as_bytes(),
        )?;
    }
    timings.wall_seconds = started.elapsed().as_secs_f64();
    timings.workers = plan.workers;
    let again = match with_rule {
        false => "fix the host (e.g. free disk space) and --resume: it plays them again",
        true => "a run with a stop rule keeps them failed (it reads the results in schedule order): start a new run to play them",
    };
    let finals = live
        .write_final(out, &timings, scheduled)
        .and_then(|()| plan.game.write_viewer_index(out, scheduled).map(drop));
    if let Err(e) = finals {
        if live.failed() > 0 {
            // A full disk fails the replays and then the views: say what to do about both.
            return Err(e.context(format!(
                "{} matches failed (infrastructure, not scored), and the final views could not be written; {again}",
                live.failed()
            )));
        }
        return Err(e);
    }
    print!("{}", live.ratings_table());
    if let Some(s) = &stopped {
        println!("{}", stopped_line(s));
    }
    println!("output: {}", out.display());
    let code = if failures > 0 || live.failed() > 0 {
        eprintln!(
            "{} matches failed (infrastructure, not scored); see failed matches in {}; {again}",
            live.failed(),
            out.join("汇总.md").display()
        );
        ExitCode::from(3)
    } else if let Some(why) = live.verdict() {
        eprintln!("{why}");
        ExitCode::from(4)
    } else {
        ExitCode::SUCCESS
    };
    Ok(Finished { code, stopped })
}

/// The line that says how an early stop cut the run.
fn stopped_line(s: &Stopped) -> String {
    format!(
        "stopped early: {}; {} of {} matches saved; {} cancelled in flight{}",
        s.reason,
        s.matches_played,
        s.matches_scheduled,
        s.cancelled,
        if s.kept_ahead > 0 {
            format!(
                "; {} results that arrived ahead of the cut kept in {} (not counted)",
                s.kept_ahead,
                super::checkpoint::AHEAD_NAME
            )
        } else {
            String::new()
        }
    )
}
