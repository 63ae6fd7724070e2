//! The run's materialised views: 汇总.md (refreshed every --report-every results), and at the end
//! results.json, bt.json and performance.json (the game's viewer index is the engine's to write,
//! `crate::run::game::Game::write_viewer_index`), all rebuilt from the checkpointed rows; plus the
//! ratings table printed to the operator. Ratings come from shared::bt, tables from shared::report.
//! Bots let play without compiling (--allow-compile-failures) are named at the top of each view;
//! the list comes from the folder's compile_failures.json (read once, at the first write), so a
//! rebuilt report (`farm report`) says the same as the live one. [`Live::verdict`] says when a
//! run whose every match has a result must still not exit 0: none of its games counts.
//! Beside the Wald intervals, every view carries the paired (map-unit) bootstrap interval of
//! each rating (shared::bootstrap): maps are the schedule's (size, seed) of each match, read
//! from identity.json, and the resampling is seeded by the schedule seed, so `farm report`
//! rebuilds the same intervals as the run wrote. The bootstrap costs up to seconds at the
//! formal schedule's size, so a live 汇总.md refresh recomputes it at most every
//! [`BOOTSTRAP_REFRESH`] or 50 times its last cost, whichever is longer (at most 2% of the
//! loop's time), and says how many results it was computed on; the final write and
//! `farm report` always compute it on every result.
//! A run stopped before its schedule ended ([`Live::set_stop`]) says so at the top of 汇总.md
//! and in a `stopped` object of bt.json; a run that was not stopped writes neither.
//! Every 汇总.md write also rewrites report.html, the same numbers as a page ([`page`]).

use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;
use serde_json::Value;

use shared::bootstrap::{self, BootstrapFit};
use shared::bt::Incremental;
use shared::report::{bootstrap_section, Tally};
use shared::results::GameResult;

use super::checkpoint::Row;
use crate::fsio::{write_atomic, write_view};

/// Time spent where, as performance.json reports it.
#[derive(Debug, Default, Serialize)]
pub struct Timings {
    pub workers: usize,
    pub wall_seconds: f64,
    #[serde(rename = "match_worker_seconds")]
    pub match_seconds: f64,
    pub checkpoint_seconds: f64,
    pub report_seconds: f64,
}

/// Running state of the views: O(players x sizes) statistics and pair counts, plus the scored
/// games themselves for the bootstrap (which resamples whole maps).
pub struct Live {
    names: Vec<String>,
    sizes: Vec<usize>,
    anchor: String,
    tally: Tally,
    bt: Incremental,
    failed: Vec<(u64, String)>,
    /// Bots that did not compile and played anyway; `None` until read from the folder.
    not_compiled: Option<Vec<String>>,
    /// Set when the run stopped before its schedule ended.
    stop: Option<StopNote>,
    /// Workers the run quarantined (read from quarantine.json at every write).
    quarantined: Vec<shared::quarantine::Evidence>,
    /// The scored games and their map-unit bootstrap.
    resampling: Resampling,
    /// report.html's per-match parts and arrival times.
    page: page::PageState,
}

impl Live {
    /// The same views, the per-size table worded for the game's `scoring`.
    pub fn scored_as(mut self, scoring: shared::report::Scoring) -> Live {
        self.tally = self.tally.scored_as(scoring);
        self
    }

    pub fn new(names: Vec<String>, sizes: Vec<i64>, anchor: String) -> Live {
        let sizes: Vec<usize> = sizes.iter().map(|&s| s as usize).collect();
        Live {
            tally: Tally::new(&names, &sizes),
            bt: Incremental::new(&names, &sizes, &anchor),
            resampling: Resampling::new(&names, &sizes, &anchor),
            page: page::PageState::new(&names),
            names,
            sizes,
            anchor,
            failed: Vec::new(),
            not_compiled: None,
            stop: None,
            quarantined: Vec::new(),
        }
    }

    /// The bootstrap on every result so far (computed now unless it already is), e.g. to
    /// decide whether a ranking is settled. Needs the folder (for the maps) once.
    pub fn bootstrap(&mut self, dir: &Path) -> Result<BootstrapFit, NoBootstrap> {
        self.resampling.now(dir)
    }

    /// Record that the run stopped before its schedule ended: every view written afterwards
    /// (汇总.md, bt.json) says why and how much was played.
    pub fn set_stop(&mut self, note: StopNote) {
        self.stop = Some(note);
    }

    /// Read (once) which bots were let play without compiling, from `dir`.
    fn load_not_compiled(&mut self, dir: &Path) -> Result<()> {
        if self.not_compiled.is_some() {
            return Ok(());
        }
        let path = dir.join(super::prepare::COMPILE_FAILURES_NAME);
        let names = match std::fs::read_to_string(&path) {
            Ok(text) => {
                let list: Vec<Value> = serde_json::from_str(&text)
                    .with_context(|| format!("{} is malformed", path.display()))?;
                list.iter()
                    .filter_map(|v| v["name"].as_str().map(str::to_string))
                    .collect()
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        self.not_compiled = Some(names);
        Ok(())
    }

    /// The bots that did not compile and played anyway (empty until the first write).
    fn not_compiled(&self) -> &[String] {
        self.not_compiled.as_deref().unwrap_or_default()
    }

    /// Why the run must exit non-zero even though every match has a result: not one of its
    /// games counts for scoring (in each a bot failed to compile or start), so it has no
    /// ratings to show. `None` when some game counts, or when there are no results at all
    /// (matches that failed are reported on their own).
    pub fn verdict(&self) -> Option<String> {
        let (games, invalid) = self.tally.counts();
        if games == 0 || invalid < games {
            return None;
        }
        let mut why = format!(
            "none of the {games} games counts for scoring: in every one a bot failed to compile \
             or start, so there are no ratings"
        );
        if !self.not_compiled().is_empty() {
            why.push_str(&format!(
                " (did not compile, played with --allow-compile-failures: {})",
                self.not_compiled().join(", ")
            ));
        }
        Some(why)
    }

    /// Take one checkpointed row into account.
    pub fn add(&mut self, row: &Row) {
        self.page.arrived(row.number);
        match &row.result {
            Some(result) => {
                let value =
                    serde_json::json!({"match": row.number, "size": row.size, "result": result});
                match GameResult::from_results_row(&value, row.number as usize) {
                    Ok(g) => {
                        self.tally.push(&g);
                        self.bt.push(&g);
                        self.page.scored(row, &g);
                        self.resampling.add(row.number, &g);
                    }
                    Err(e) => tracing::error!("row {} not usable for ratings: {e}", row.number),
                }
            }
            None => self.failed.push((
                row.number,
                row.failed.clone().unwrap_or_else(|| "unknown".to_string()),
            )),
        }
    }

    /// The current ratings (warm-started refit: cheap), for the metrics gauges.
    pub fn fit(&mut self) -> Result<shared::bt::BtFit, shared::bt::BtError> {
        self.bt.fit()
    }

    /// Matches that failed for good (infrastructure).
    pub fn failed(&self) -> usize {
        self.failed.len()
    }

    /// bt.json: the reference's cold-start fit (same iterations as bt.py) plus intervals,
    /// then (when there is a fit) a `bootstrap` object with the bootstrap intervals (computed
    /// now on every result; the maps come from the folder read by an earlier write).
    /// With bots that did not compile, a `did_not_compile` list of their names is added.
    pub fn bt_json(&mut self) -> Value {
        let mut v = match self.bt.fit_exact() {
            Ok(fit) => serde_json::to_value(&fit).unwrap_or(Value::Null),
            Err(e) => serde_json::json!({"unavailable": e.to_string()}),
        };
        if let Some(obj) = v.as_object_mut().filter(|o| o.contains_key("ratings")) {
            self.resampling.refresh(true);
            let doc = match self.resampling.boot.as_ref().map(|b| &b.result) {
                Some(Ok(b)) => bootstrap_json(b),
                Some(Err(e)) => serde_json::json!({"unavailable": e.to_string()}),
                None => serde_json::json!({"unavailable": "not computed"}),
            };
            obj.insert("bootstrap".to_string(), doc);
        }
        if let (Some(obj), false) = (v.as_object_mut(), self.not_compiled().is_empty()) {
            obj.insert(
                "did_not_compile".to_string(),
                serde_json::json!(self.not_compiled()),
            );
        }
        if let (Some(obj), Some(stop)) = (v.as_object_mut(), &self.stop) {
            obj.insert(
                "stopped".to_string(),
                serde_json::to_value(stop).unwrap_or(Value::Null),
            );
        }
        v
    }

    fn report_text(&mut self) -> String {
        let fit = self.bt.fit();
        let section = match (&fit, &self.resampling.boot) {
            (Ok(_), Some(b)) => {
                let done = self.resampling.games.len() as u64;
                bootstrap_section(&b.result, (b.games < done).then_some((b.games, done)))
            }
            _ => String::new(),
        };
        let mut text = self.tally.render_with(Some(&fit), &section);
        let mut notices = String::new();
        if !self.not_compiled().is_empty() {
            notices.push_str(&format!(
                "> **注意：本次以 --allow-compile-failures 运行。** 以下选手的源代码未能编译：{}。\
                 它们在自己参加的每一局第 0 回合即被淘汰（compile_failure），这些对局不计分；\
                 编译器输出见 compile_failures.json。\n\n",
                self.not_compiled().join("、")
            ));
        }
        if let Some(stop) = &self.stop {
            notices.push_str(&stop.markdown());
        }
        // Right below the title line, above every table.
        let at = text.find("\n\n").map(|i| i + 2).unwrap_or(0);
        text.insert_str(at, &notices);
        if !self.quarantined.is_empty() {
            text.push_str(
                "\n## 被隔离的工作机（故障率显著高于其余工作机）\n\n|工作机|依据|\n|---|---|\n",
            );
            for e in &self.quarantined {
                text.push_str(&format!(
                    "|{}|{}|\n",
                    e.worker.replace(['|', '\n'], " "),
                    e.to_string().replace(['|', '\n'], " ")
                ));
            }
        }
        if !self.failed.is_empty() {
            text.push_str("\n## 未完成的对局（基础设施故障，不计分）\n\n|对局|原因|\n|---:|---|\n");
            for (n, why) in &self.failed {
                text.push_str(&format!("|{n}|{}|\n", why.replace(['|', '\n'], " ")));
            }
        }
        text
    }

    /// Refresh 汇总.md (warm-started refit: cheap).
    pub fn write_report(&mut self, dir: &Path) -> Result<()> {
        self.load_not_compiled(dir)?;
        self.quarantined = super::quarantine::read(dir);
        self.resampling.load_maps(dir);
        self.resampling.refresh(false);
        let text = self.report_text();
        write_view(&dir.join("汇总.md"), text.as_bytes())?;
        self.write_page(dir)
    }

    /// Everything at the end of a run of `schedule_len` matches.
    pub fn write_final(&mut self, dir: &Path, timings: &Timings, schedule_len: u64) -> Result<()> {
        self.resampling.load_maps(dir);
        self.resampling.refresh(true);
        self.write_report(dir)?;
        write_results_json(dir, schedule_len)?;
        let bt = self.bt_json();
        write_atomic(
            &dir.join("bt.json"),
            (serde_json::to_string_pretty(&bt)? + "\n").as_bytes(),
        )?;
        write_atomic(
            &dir.join("performance.json"),
            (serde_json::to_string_pretty(timings)? + "\n").as_bytes(),
        )?;
        Ok(())
    }

    /// The ratings as a table for the terminal.
    pub fn ratings_table(&mut self) -> String {
        let valid = self.tally.counts();
        let notice = match self.not_compiled() {
            [] => String::new(),
            names => format!(
                "note: --allow-compile-failures: {} did not compile; eliminated at turn 0 in each of \
                 their matches, which do not count for scoring\n",
                names.join(", ")
            ),
        };
        let table = match self.bt.fit_exact() {
            Ok(fit) => {
                // The bootstrap column only when it covers every result.
                let boot = self.resampling.fresh();
                let mut out = format!(
                    "Bradley-Terry ratings ({} valid games; anchor {} = 0; 95% interval: Wald{}):\n",
                    valid.0 - valid.1,
                    self.anchor,
                    if boot.is_some() { ", then paired map bootstrap" } else { "" }
                );
                let span = |[lo, hi]: [f64; 2]| format!("[{lo:8.1}, {hi:8.1}]");
                for (name, r) in fit.ranked() {
                    let ci = fit.interval(name).map(span).unwrap_or_default();
                    let bs = boot
                        .and_then(|b| b.interval(name))
                        .map(|i| format!("  {}", span(i)))
                        .unwrap_or_default();
                    out.push_str(&format!("  {name:<20} {r:9.1}  {ci}{bs}\n"));
                }
                out
            }
            Err(e) => format!("ratings not available for {} bots: {e}\n", self.names.len()),
        };
        notice + &table
    }
}

/// bt.json's `bootstrap` object.
fn bootstrap_json(b: &BootstrapFit) -> Value {
    let ci: serde_json::Map<String, Value> = b
        .intervals
        .iter()
        .map(|(name, i)| (name.clone(), serde_json::json!(i)))
        .collect();
    serde_json::json!({
        "ci95": ci,
        "method": bootstrap::METHOD,
        "unit": BOOTSTRAP_UNIT,
        "units": b.units,
        "resamples": b.resamples,
        "fitted": b.fitted,
        "seed": b.seed,
    })
}

/// results.json as the reference writes it (a list of {match, size, result}, each result as the
/// referee reported it), from the log of a schedule of `schedule_len` matches. The farm's per-bot
/// timing summary ([`TIMING`]) is left out: the reference has none, and the results log keeps it
/// (results.json would otherwise be a second, indented copy of the log: 45% of its bytes).
pub fn write_results_json(dir: &Path, schedule_len: u64) -> Result<()> {
    let rec = super::checkpoint::recover(&dir.join(super::checkpoint::LOG_NAME), schedule_len)?;
    write_results_rows(dir, rec.rows)
}

/// The member of a result that holds the farm's per-bot timing summary (results.jsonl only).
pub const TIMING: &str = "timing";

/// results.json of the log's `rows` (those with a result, [`TIMING`] left out), streamed into
/// the file: the same bytes as pretty-printing the whole list, without holding its text or a
/// second copy of the rows (a full-size run's is tens of MB).
pub fn write_results_rows(dir: &Path, rows: Vec<Row>) -> Result<()> {
    struct Listed(std::cell::RefCell<Vec<Row>>);
    impl Serialize for Listed {
        fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
            let rows = std::mem::take(&mut *self.0.borrow_mut());
            s.collect_seq(rows.into_iter().filter_map(|r| {
                let mut res = r.result?;
                if let Some(o) = res.as_object_mut() {
                    o.shift_remove(TIMING);
                }
                Some(serde_json::json!({"match": r.number, "size": r.size, "result": res}))
            }))
        }
    }
    let listed = Listed(std::cell::RefCell::new(rows));
    crate::fsio::write_atomic_by(&dir.join("results.json"), |w| {
        serde_json::to_writer_pretty(&mut *w, &listed)?;
        w.write_all(b"\n")
    })
    .context("writing results.json")
}

mod note;
pub mod page;
mod resampling;

pub use note::StopNote;
use resampling::Resampling;
pub use resampling::{NoBootstrap, BOOTSTRAP_REFRESH, BOOTSTRAP_RESAMPLES, BOOTSTRAP_UNIT};
#[cfg(test)]
mod tests;
