//! Running a prepared tournament: publish jobs through the transport with a bounded window,
//! accept each report once (verified replay, right seats, right tournament), checkpoint in
//! schedule order, refit ratings live, refresh the report, and write the final files. The viewer
//! index (super::viewer_index) gets each match's data file as its replay is saved and its line
//! as its result arrives.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};

use shared::msg::{Job, ProgramRef, SeatSpec};
use worker::job::LocalArtifacts;

use super::checkpoint::{Log, Row, LOG_NAME};
use super::engine::{Engine, Finished};
use super::flow::{Flow, Idle};
use super::game::Unit;
use super::outputs::Live;
use super::prepare::Plan;
use super::shell::Shell;
use super::stop::StopRule;
use crate::dispatch::{Arrival, Dispatcher};
use crate::sink::Sink;
use crate::transport::embedded::Embedded;
use crate::transport::Transport;

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
    if plan.game.seats_carry_programs() {
        for (e, h) in plan.entries.iter().zip(&plan.bot_hashes) {
            artifacts.insert(h.clone(), e.program.clone());
            programs.push(ProgramRef::for_file(h, &e.program));
        }
    }
    for (sha, path) in &plan.package_files {
        artifacts.insert(sha.clone(), path.clone());
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
/// those of the run cut after that row. The decisions are [`Flow`]'s; the engine loop
/// ([`crate::sink::pump`]) does what it says with the transport, and [`Shell`] with the log,
/// the views and the metrics.
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
    let (flow, log) = resume(&plan, engine, &mut live, &mut stop)?;
    let mut flights = Dispatcher::new(transport, &plan.tournament, plan.workers * 2);
    let plan = &plan;
    let mut shell = Shell::start(plan, engine, &mut flights, log, live, &flow).await?;
    if let Some(s) = stop.as_ref().and_then(|r| r.status()) {
        shell.progress.set_status(s);
    }
    let mut run = RunSink {
        plan,
        engine,
        programs,
        shell,
        flow,
        stop,
    };
    crate::sink::pump(&mut flights, &mut run).await?;
    let RunSink {
        shell, flow, stop, ..
    } = run;
    super::finish::finish(plan, shell, flights, flow, started, stop.is_some()).await
}

/// A tournament as the engine loop's sink: matches published in the flow's order, each batch
/// of reports taken through the shell (verified, logged, checkpointed in schedule order, shown
/// to the stop rule).
struct RunSink<'p, 'r> {
    plan: &'p Plan,
    engine: &'p Engine,
    programs: Vec<ProgramRef>,
    shell: Shell<'p>,
    flow: Flow,
    stop: Option<&'r mut dyn StopRule>,
}

impl<T: Transport> Sink<T> for RunSink<'_, '_> {
    async fn publish(&mut self, flights: &mut Dispatcher<T>) -> Result<()> {
        if let Some(line) = self.flow.announcement(flights.in_flight()) {
            tracing::info!("{line}");
            self.shell.progress.println(&line);
        }
        while flights.has_room() {
            let Some(n) = self.flow.next_match() else {
                break;
            };
            flights
                .publish(job(self.plan, self.engine, &self.programs, n)?)
                .await?;
            self.shell.metrics.dispatched.inc();
        }
        self.shell
            .metrics
            .window(flights.in_flight(), self.flow.waiting());
        if flights.in_flight() > 0 {
            self.shell.released(flights).await;
        }
        Ok(())
    }

    async fn take(&mut self, batch: Vec<Arrival>, flights: &mut Dispatcher<T>) -> Result<()> {
        self.shell
            .batch(batch, flights, &mut self.flow, &mut self.stop)
            .await
    }

    fn stranded(&mut self, flights: &mut Dispatcher<T>) -> Result<()> {
        match self.flow.idle(flights.in_flight()) {
            Idle::CancelAndEnd => {
                self.flow.cancel(flights.cancel());
                Ok(())
            }
            Idle::Stranded(why) => anyhow::bail!(why),
        }
    }
}

/// The state a run starts from: the resumed rows rated and shown to the stop rule, the matches
/// to play (failed or suspect ones again first, then the rest up to the limit) and the log
/// opened after the saved rows, with the retractions of `--redo-suspect` written.
fn resume(
    plan: &Plan,
    engine: &Engine,
    live: &mut Live,
    stop: &mut Option<&mut dyn StopRule>,
) -> Result<(Flow, Log)> {
    let out = &plan.output;
    let scheduled = plan.schedule.len() as u64;
    let limit = stop
        .as_ref()
        .and_then(|r| r.limit())
        .map_or(scheduled, |l| l.min(scheduled));
    let mut flow = Flow::new(scheduled, limit);
    // A failed match is the host's fault (a full disk, a dying worker), never final: a resume
    // plays it again. Not under a stop rule, which reads the results in schedule order.
    let redo = stop.is_none();
    let suspect = match engine.redo_suspect {
        true => super::quarantine::suspects(out, &plan.done),
        false => Default::default(),
    };
    let mut failed_before: Vec<u64> = Vec::new();
    for row in &plan.done {
        if (row.result.is_none() && redo) || suspect.contains_key(&row.number) {
            failed_before.push(row.number);
            continue;
        }
        live.add(row);
        flow.observe(row, stop.as_deref_mut());
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
    flow.queue(failed_before.iter().copied());
    let mut log = Log::open(&out.join(LOG_NAME), plan.done.len() as u64, &plan.ahead)?;
    for (n, worker) in &suspect {
        let size = plan.size_of(*n)?;
        let why = format!("its result came from worker {worker}, quarantined since");
        log.retract(*n, size, &why)?;
    }
    log.sync()?;
    let durable_ahead: std::collections::HashSet<u64> = log.waiting_numbers().into_iter().collect();
    flow.queue(((plan.done.len() as u64 + 1)..=limit).filter(|n| !durable_ahead.contains(n)));
    for n in &failed_before {
        log.allow_redo(*n);
    }
    Ok((flow, log))
}

/// The job of match `n`: its seats from the schedule and roster, the game's part (bomberman:
/// the clock travels in the job).
fn job(plan: &Plan, engine: &Engine, programs: &[ProgramRef], n: u64) -> Result<Job> {
    let e = &plan.schedule[(n - 1) as usize];
    let names: Vec<String> = e
        .slots
        .iter()
        .map(|&s| plan.entries[s].name.clone())
        .collect();
    let unit = Unit {
        number: n,
        entry: e,
        seats: &names,
        package_digest: &plan.manifest_digest,
    };
    let seats = match plan.game.seats_carry_programs() {
        true => e
            .slots
            .iter()
            .map(|&s| SeatSpec {
                name: plan.entries[s].name.clone(),
                program: programs[s].clone(),
            })
            .collect(),
        false => Vec::new(),
    };
    let game = plan.game.job(&engine.clock, &plan.kit, unit)?;
    Ok(games::job::job(&plan.tournament, n, seats, game))
}

/// The viewer index of the results so far (a resume's), before any match is played: from then
/// on each result adds its line.
fn start_index(out: &std::path::Path, plan: &Plan) {
    let mut rows: Vec<Row> = plan.done.iter().chain(&plan.ahead).cloned().collect();
    rows.sort_by_key(|r| r.number);
    plan.game.start_viewer_index(out, &rows);
}
