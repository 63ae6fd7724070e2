//! Running a prepared tournament: publish jobs through the transport with a bounded window,
//! accept each report once (verified replay, right seats, right tournament), checkpoint in
//! schedule order, refit ratings live, refresh the report, and write the final files. The viewer
//! index (super::viewer_index) gets each match's data file as its replay is saved and its line
//! as its result arrives.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};

use shared::msg::{Job, ProgramRef, SeatSpec};
use worker::job::LocalArtifacts;

use super::checkpoint::{Log, Row, LOG_NAME};
use super::outputs::{Live, StopNote, Timings};
use super::played_by;
use super::prepare::Plan;
use super::progress::Progress;
use super::stop::{StopRule, Stopped, STOPPED_NAME};
use crate::botprep::HostSettings;
use crate::cluster::Cluster;
use crate::dispatch::{Arrival, Dispatcher};
use crate::transport::embedded::Embedded;
use crate::transport::Transport;

/// How often an infrastructure failure of one match is retried before it is reported failed.
const RETRIES: u32 = 2;

/// How the engine runs a plan: where the referee package is, how bots run on this host (for
/// embedded workers), the cluster to use (if any) and the match clock every job carries (a
/// resume plays failed matches again, `redo_failed` or not, unless a stop rule runs). Filled by `farm run` and `farm sprt` from their
/// flags; the engine never sees clap arguments.
#[derive(Debug, Clone)]
pub struct Engine {
    pub workspace: PathBuf,
    pub redo_failed: bool,
    /// With a resume: take back the results that workers quarantined since gave, and play
    /// those matches again.
    pub redo_suspect: bool,
    /// Cluster mode when set (embedded local workers otherwise).
    pub cluster: Option<Cluster>,
    pub host: HostSettings,
    /// The match clock every job carries.
    pub clock: crate::clock::TournamentClock,
    /// `--min-speed`: reports from slower workers are refused and played elsewhere.
    pub min_speed: Option<f64>,
}

/// How a run ended.
pub struct Finished {
    pub code: ExitCode,
    /// Set when a stop rule ended the run before the end of the schedule.
    pub stopped: Option<Stopped>,
}

/// Run a plan on embedded local workers.
pub async fn embedded(
    plan: Plan,
    engine: &Engine,
    stop: Option<&mut dyn StopRule>,
) -> Result<Finished> {
    let prep = crate::botprep::BotPrep::new(&engine.host)?;
    // Prove this host can run a bot before any match is played (a host problem would
    // otherwise show up as every match failing).
    let report = prep.self_test()?;
    tracing::info!(%report, "self-test passed");
    let terms = broker::Terms {
        min_speed: engine.min_speed,
        ..broker::Terms::default()
    };
    if let Some(why) = terms.refuses(Some(report.speed)) {
        anyhow::bail!(
            "this host cannot play the run: {why} (lower --min-speed, or run on a faster or \
             less loaded host)"
        );
    }
    let mut artifacts = LocalArtifacts::new();
    let mut programs = Vec::with_capacity(plan.entries.len());
    for (e, h) in plan.entries.iter().zip(&plan.bot_hashes) {
        artifacts.insert(h.clone(), e.program.clone());
        programs.push(ProgramRef::for_file(h, &e.program));
    }
    worker::metrics::global().slots.set(plan.workers as i64);
    crate::metrics::global().workers.set(plan.workers as i64);
    let runner = Arc::new(prep.into_runner(format!("embedded@{}", broker::hostname())));
    let transport = Embedded::start(plan.workers, plan.workers * 2, runner, Arc::new(artifacts));
    tracing::info!(transport = %transport.describe(), "dispatching");
    drive(plan, engine, transport, programs, stop).await
}

/// The transport-independent loop. With a stop rule, every row checkpointed in schedule order
/// (resumed rows first) is shown to it; when it says stop, nothing more is published, the jobs
/// still in flight are cancelled (their reports acknowledged and dropped), and the outputs are
/// those of the run cut after that row.
pub async fn drive<T: Transport>(
    plan: Plan,
    engine: &Engine,
    transport: T,
    programs: Vec<ProgramRef>,
    mut stop: Option<&mut dyn StopRule>,
) -> Result<Finished> {
    let started = Instant::now();
    let out = plan.output.clone();
    std::fs::create_dir_all(out.join("replays"))
        .with_context(|| format!("creating {}", out.join("replays").display()))?;
    if stop.is_some() && (engine.redo_failed || engine.redo_suspect) {
        anyhow::bail!(
            "--redo-failed and --redo-suspect cannot be combined with a rule that stops the run early (--until-settled, farm sprt): the rule reads the results in schedule order; start a new run instead"
        );
    }
    start_index(&out, &plan);
    let names: Vec<String> = plan.entries.iter().map(|e| e.name.clone()).collect();
    let mut live = Live::new(names.clone(), plan.sizes.clone(), plan.anchor.clone())
        .scored_as(plan.game.scoring());
    let scheduled = plan.schedule.len() as u64;
    let limit = stop
        .as_ref()
        .and_then(|r| r.limit())
        .map_or(scheduled, |l| l.min(scheduled));
    let mut cut: Option<(u64, String)> = None;
    let mut pending: VecDeque<u64> = VecDeque::new();
    // A failed match is the host's fault (a full disk, a dying worker), never final: a resume
    // plays it again. Not under a stop rule, which reads the results in schedule order.
    let redo = stop.is_none();
    let mut failed_before: Vec<u64> = Vec::new();
    let suspect = match engine.redo_suspect {
        true => super::quarantine::suspects(&out, &plan.done),
        false => Default::default(),
    };
    for row in &plan.done {
        if (row.result.is_none() && redo) || suspect.contains_key(&row.number) {
            failed_before.push(row.number);
            continue;
        }
        live.add(row);
        if cut.is_none() {
            if let Some(rule) = stop.as_mut() {
                if let Some(why) = rule.observe(row) {
                    cut = Some((row.number, why));
                }
            }
        }
    }
    if !failed_before.is_empty() {
        eprintln!(
            "note: playing again {} matches that failed last time (host faults): {:?}",
            failed_before.len(),
            failed_before
        );
    }
    if !suspect.is_empty() {
        eprintln!(
            "note: playing again {} matches whose results came from workers quarantined since (--redo-suspect): {:?}",
            suspect.len(),
            suspect.keys().collect::<Vec<_>>()
        );
    }
    pending.extend(failed_before.iter().copied());
    let mut log = Log::open(&out.join(LOG_NAME), plan.done.len() as u64, &plan.ahead)?;
    for (n, worker) in &suspect {
        let size = plan.schedule[(n - 1) as usize].size as u32;
        let why = format!("its result came from worker {worker}, quarantined since");
        log.retract(*n, size, &why)?;
    }
    log.sync()?;
    let durable_ahead: std::collections::HashSet<u64> = log.waiting_numbers().into_iter().collect();
    pending.extend(((plan.done.len() as u64 + 1)..=limit).filter(|n| !durable_ahead.contains(n)));
    for n in &failed_before {
        log.allow_redo(*n);
    }
    if cut.is_some() {
        pending.clear();
    }
    let make_job = |n: u64| -> Job {
        let e = &plan.schedule[(n - 1) as usize];
        Job {
            tournament: plan.tournament.clone(),
            number: n,
            referee_version: plan.game.version().to_string(),
            manifest_digest: plan.manifest_digest.clone(),
            size: e.size as u32,
            seed: e.seed,
            seats: e
                .slots
                .iter()
                .map(|&s| SeatSpec {
                    name: names[s].clone(),
                    program: programs[s].clone(),
                })
                .collect(),
            game: plan.game.job(&engine.clock), // bomberman: the clock travels in the job
        }
    };
    let describe = transport.describe();
    let mut flights = Dispatcher::new(transport, &plan.tournament, plan.workers * 2);
    let mut guard = super::quarantine::Guard::open(&out);
    // Only the speed matters here: share and priority steer the workers, not the results.
    let terms = broker::Terms {
        min_speed: engine.min_speed,
        ..broker::Terms::default()
    };
    for e in guard.quarantined() {
        flights.quarantine(&e.worker, &e.to_string()).await?;
    }
    let mut progress = Progress::new(limit, plan.done.len() as u64);
    if let Some(s) = stop.as_ref().and_then(|r| r.status()) {
        progress.set_status(s);
    }
    let mut timings = Timings::default();
    let mut since_report = 0u64;
    let mut failures = 0u64;
    let mut cancelled: Vec<u64> = Vec::new();
    let mut announced = false;
    let metrics = crate::metrics::global();
    metrics.start(
        &plan.tournament,
        &describe,
        limit,
        plan.done.len() as u64,
        &names,
    );
    loop {
        if let (Some((after, why)), false) = (&cut, announced) {
            announced = true;
            pending.clear();
            let line = format!(
                "stopping after match {after} of {scheduled}: {why}; {} jobs in flight are cancelled (acknowledged, not logged)",
                flights.in_flight()
            );
            tracing::info!("{line}");
            progress.println(&line);
        }
        while cut.is_none() && flights.has_room() {
            let Some(n) = pending.pop_front() else { break };
            flights.publish(make_job(n)).await?;
            metrics.dispatched.inc();
        }
        metrics.window(flights.in_flight(), pending.len());
        if flights.in_flight() == 0 {
            break;
        }
        for worker in flights.released().await {
            guard.release(&worker);
        }
        let Some(batch) = flights.next_batch().await? else {
            if cut.is_some() {
                cancelled.extend(flights.cancel());
                break;
            }
            anyhow::bail!(
                "every worker has stopped with {} matches in flight",
                flights.in_flight()
            );
        };
        let mut acks = Vec::with_capacity(batch.len());
        let mut completed = Vec::new();
        for arrival in batch {
            acks.push(arrival.tag);
            let n = arrival.job.number;
            if log.has(n) {
                tracing::debug!(number = n, "dropped a duplicate report");
                continue;
            }
            if cut.is_some() {
                // The run has stopped: a job still in flight is cancelled, whatever it says.
                cancelled.push(n);
                tracing::debug!(number = n, "cancelled: the run stopped before it");
                continue;
            }
            timings.match_seconds += arrival.report.seconds;
            let worker = arrival.report.worker.as_str();
            let refused = match guard.refuses(worker) {
                true => Some(format!("refused: worker {worker} is quarantined")),
                false => terms
                    .refuses(arrival.report.speed)
                    .map(|why| format!("refused: worker {worker} cannot play this run: {why}")),
            };
            if let Some(why) = refused {
                tracing::info!(number = n, "{why}; the match is played elsewhere");
                played_by::append(&out, &played_by::Played::of(&arrival.report, Some(why)));
                flights.requeue(&arrival).await?;
                metrics.dispatched.inc();
                continue;
            }
            let accepted = accept(&plan, &arrival, &out);
            let why = accepted.as_ref().err().map(|e| format!("{e:#}"));
            played_by::append(&out, &played_by::Played::of(&arrival.report, why));
            let result = accepted.as_ref().ok().and_then(|r| r.result.as_ref());
            if let Some(e) = guard.took(worker, result) {
                progress.println(&format!("quarantined worker {}: {e}", e.worker));
                flights.quarantine(&e.worker, &e.to_string()).await?;
            }
            let row = match accepted {
                Ok(row) => row,
                Err(why) => {
                    let tries = arrival.tries;
                    if tries < RETRIES {
                        tracing::warn!(
                            number = n,
                            attempt = tries + 1,
                            "match failed, retrying: {why:#}"
                        );
                        flights.retry(&arrival).await?;
                        metrics.dispatched.inc();
                        metrics.retried.inc();
                        continue;
                    }
                    failures += 1;
                    tracing::error!(number = n, "match failed for good: {why:#}");
                    Row {
                        number: n,
                        size: plan.schedule[(n - 1) as usize].size as u32,
                        result: None,
                        failed: Some(format!("{why:#}")),
                    }
                }
            };
            if row.result.is_some() {
                completed.push(n);
            }
            plan.game.index_row(&out, &row);
            let tick = Instant::now();
            log.offer(row)?;
            // One row at a time: a stop rule may cut between two rows.
            while cut.is_none() {
                let Some(r) = log.pop_ready()? else { break };
                live.add(&r);
                metrics.checkpointed(r.result.as_ref());
                since_report += 1;
                if let Some(rule) = stop.as_mut() {
                    if let Some(why) = rule.observe(&r) {
                        cut = Some((r.number, why));
                    }
                    if let Some(s) = rule.status() {
                        progress.set_status(s);
                    }
                }
                progress.done(&r);
            }
            timings.checkpoint_seconds += tick.elapsed().as_secs_f64();
        }
        let tick = Instant::now();
        log.sync()?;
        timings.checkpoint_seconds += tick.elapsed().as_secs_f64();
        flights.completed(&completed).await?;
        flights.ack(acks).await?;
        if since_report >= plan.report_every || log.written() == limit || cut.is_some() {
            let tick = Instant::now();
            live.write_report(&out)?;
            if let Ok(fit) = live.fit() {
                metrics.ratings(&fit);
            }
            timings.report_seconds += tick.elapsed().as_secs_f64();
            since_report = 0;
        }
    }
    flights.shutdown().await?;
    progress.finish();
    let written = log.written();
    let ahead = log.waiting_numbers();
    drop(log);
    // A run cut by --max-matches ends at its limit without the rule having to say so.
    if cut.is_none() && limit < scheduled && written == limit {
        cut = Some((
            limit,
            format!("the last whole unit within the limit ends at match {limit}"),
        ));
    }
    // A rule that ends the run at its last match has not cut anything.
    let stopped = cut
        .filter(|(after, _)| *after < scheduled)
        .map(|(after, reason)| Stopped {
            reason,
            after,
            matches_played: written,
            matches_scheduled: scheduled,
            cancelled: cancelled.len() as u64,
            kept_ahead: ahead.len() as u64,
            cut_numbers: {
                let mut v: Vec<u64> = cancelled.iter().chain(&ahead).copied().collect();
                v.sort_unstable();
                v
            },
        });
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
    let again = match redo {
        true => "fix the host (e.g. free disk space) and --resume: it plays them again",
        false => "a run with a stop rule keeps them failed (it reads the results in schedule order): start a new run to play them",
    };
    let finals = live
        .write_final(&out, &timings, scheduled)
        .and_then(|()| plan.game.write_viewer_index(&out, scheduled).map(drop));
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
        println!(
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
        );
    }
    println!("output: {}", out.display());
    drop(plan.lock);
    if failures > 0 || live.failed() > 0 {
        eprintln!(
            "{} matches failed (infrastructure, not scored); see failed matches in {}; {again}",
            live.failed(),
            out.join("汇总.md").display()
        );
        return Ok(Finished {
            code: ExitCode::from(3),
            stopped,
        });
    }
    if let Some(why) = live.verdict() {
        eprintln!("{why}");
        return Ok(Finished {
            code: ExitCode::from(4),
            stopped,
        });
    }
    Ok(Finished {
        code: ExitCode::SUCCESS,
        stopped,
    })
}

/// The viewer index of the results so far (a resume's), before any match is played: from then
/// on each result adds its line.
fn start_index(out: &std::path::Path, plan: &Plan) {
    let mut rows: Vec<Row> = plan.done.iter().chain(&plan.ahead).cloned().collect();
    rows.sort_by_key(|r| r.number);
    plan.game.start_viewer_index(out, &rows);
}

/// Accept a report through the game's side of the boundary ([`crate::run::game::Game::accept`]:
/// the record verified for the job's seats, seed, programs and clock, its replay saved).
fn accept(plan: &Plan, arrival: &Arrival, out: &std::path::Path) -> Result<Row> {
    let n = arrival.job.number;
    let entry = plan
        .schedule
        .get((n - 1) as usize)
        .with_context(|| format!("a report for match {n}, which is not in the schedule"))?;
    let result = plan.game.accept(arrival, entry, &plan.bot_hashes, out)?;
    Ok(Row {
        number: n,
        size: entry.size as u32,
        result: Some(result),
        failed: None,
    })
}
