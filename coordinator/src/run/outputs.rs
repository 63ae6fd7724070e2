//! The run's materialised views: 汇总.md (refreshed every --report-every results), and at the end
//! results.json, bt.json and performance.json, all rebuilt from the checkpointed rows; plus the
//! ratings table printed to the operator. Ratings come from shared::bt, tables from shared::report.
//! Bots let play without compiling (--allow-compile-failures) are named at the top of each view;
//! the list comes from the folder's compile_failures.json (read once, at the first write), so a
//! rebuilt report (`farm report`) says the same as the live one. [`Live::verdict`] says when a
//! run whose every match has a result must still not exit 0: none of its games counts.
//! A run stopped before its schedule ended ([`Live::set_stop`]) says so at the top of 汇总.md
//! and in a `stopped` object of bt.json; a run that was not stopped writes neither.

use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;
use serde_json::Value;

use shared::bt::Incremental;
use shared::report::Tally;
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

/// Why a run stopped before its schedule ended, and how much of it was played.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct StopNote {
    /// Why, in words a user reads (e.g. "every adjacent pair separated at 95%").
    pub reason: String,
    /// Matches with a result (or failed for good) when the run stopped.
    pub matches_played: u64,
    /// Matches in the full schedule.
    pub matches_scheduled: u64,
    /// Matches that were in flight at the stop and were cancelled (not played).
    pub cancelled: u64,
}

impl StopNote {
    /// The line at the top of 汇总.md.
    pub fn markdown(&self) -> String {
        format!(
            "> **Stopped early: {}; {} of {} scheduled matches played ({} in flight cancelled).**\n\n",
            self.reason.replace('\n', " "),
            self.matches_played,
            self.matches_scheduled,
            self.cancelled
        )
    }
}

/// Running state of the views: O(players x sizes) statistics and pair counts, never the rows.
pub struct Live {
    names: Vec<String>,
    anchor: String,
    tally: Tally,
    bt: Incremental,
    failed: Vec<(u64, String)>,
    /// Bots that did not compile and played anyway; `None` until read from the folder.
    not_compiled: Option<Vec<String>>,
    /// Set when the run stopped before its schedule ended.
    stop: Option<StopNote>,
}

impl Live {
    pub fn new(names: Vec<String>, sizes: Vec<i64>, anchor: String) -> Live {
        let sizes: Vec<usize> = sizes.iter().map(|&s| s as usize).collect();
        Live {
            tally: Tally::new(&names, &sizes),
            bt: Incremental::new(&names, &sizes, &anchor),
            names,
            anchor,
            failed: Vec::new(),
            not_compiled: None,
            stop: None,
        }
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
        match &row.result {
            Some(result) => {
                let value =
                    serde_json::json!({"match": row.number, "size": row.size, "result": result});
                match GameResult::from_results_row(&value, row.number as usize) {
                    Ok(g) => {
                        self.tally.push(&g);
                        self.bt.push(&g);
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

    /// bt.json: the reference's cold-start fit (same iterations as bt.py) plus intervals.
    /// With bots that did not compile, a `did_not_compile` list of their names is added.
    pub fn bt_json(&mut self) -> Value {
        let mut v = match self.bt.fit_exact() {
            Ok(fit) => serde_json::to_value(&fit).unwrap_or(Value::Null),
            Err(e) => serde_json::json!({"unavailable": e.to_string()}),
        };
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
        let mut text = self.tally.render(Some(&fit));
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
        let text = self.report_text();
        write_view(&dir.join("汇总.md"), text.as_bytes())
    }

    /// Everything at the end of a run.
    pub fn write_final(&mut self, dir: &Path, timings: &Timings) -> Result<()> {
        self.write_report(dir)?;
        write_results_json(dir)?;
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
                let mut out = format!(
                    "Bradley-Terry ratings ({} valid games; anchor {} = 0; 95% interval):\n",
                    valid.0 - valid.1,
                    self.anchor
                );
                for (name, r) in fit.ranked() {
                    let ci = fit
                        .interval(name)
                        .map(|[lo, hi]| format!("[{lo:8.1}, {hi:8.1}]"))
                        .unwrap_or_default();
                    out.push_str(&format!("  {name:<20} {r:9.1}  {ci}\n"));
                }
                out
            }
            Err(e) => format!("ratings not available for {} bots: {e}\n", self.names.len()),
        };
        notice + &table
    }
}

/// results.json as the reference writes it (a list of {match, size, result}), from the log.
pub fn write_results_json(dir: &Path) -> Result<()> {
    let rec = super::checkpoint::recover(&dir.join(super::checkpoint::LOG_NAME))?;
    let rows: Vec<Value> = rec
        .rows
        .into_iter()
        .filter_map(|r| {
            r.result
                .map(|res| serde_json::json!({"match": r.number, "size": r.size, "result": res}))
        })
        .collect();
    let text = serde_json::to_string_pretty(&rows).context("encoding results.json")? + "\n";
    write_atomic(&dir.join("results.json"), text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(number: u64, first: &str, second: &str) -> Row {
        Row {
            number,
            size: 2,
            result: Some(serde_json::json!({
                "valid_for_scoring": true,
                "names": [first, second],
                "ranks": [1, 2],
                "survival_points": [1.0, 0.0],
                "kill_points": [0.5, 0.0],
                "points": [1.5, 0.0],
                "errors": [0, 0],
            })),
            failed: None,
        }
    }

    fn live() -> Live {
        let mut live = Live::new(vec!["a".into(), "b".into()], vec![2], "a".into());
        live.not_compiled = Some(Vec::new());
        for (n, (x, y)) in [("a", "b"), ("b", "a"), ("a", "b"), ("a", "b")]
            .into_iter()
            .enumerate()
        {
            live.add(&row(n as u64 + 1, x, y));
        }
        live
    }

    #[test]
    fn stop_note_in_report_and_bt_json_only_when_set() {
        let mut plain = live();
        let (text, bt) = (plain.report_text(), plain.bt_json());
        assert!(!text.contains("Stopped early"), "{text}");
        assert!(bt.get("stopped").is_none(), "{bt}");

        let mut stopped = live();
        let note = StopNote {
            reason: "every adjacent pair separated at 95%".into(),
            matches_played: 4,
            matches_scheduled: 12,
            cancelled: 2,
        };
        stopped.set_stop(note.clone());
        let text = stopped.report_text();
        let line = "> **Stopped early: every adjacent pair separated at 95%; 4 of 12 scheduled \
                    matches played (2 in flight cancelled).**\n\n";
        assert!(
            text.starts_with(&format!("# 对局统计汇总\n\n{line}")),
            "{text}"
        );
        // Everything else is the unstopped report.
        assert_eq!(text.replacen(line, "", 1), plain.report_text());
        let bt2 = stopped.bt_json();
        assert_eq!(
            bt2["stopped"],
            serde_json::json!({"reason": "every adjacent pair separated at 95%",
                "matches_played": 4, "matches_scheduled": 12, "cancelled": 2})
        );
        let mut without = bt2.clone();
        if let Some(o) = without.as_object_mut() {
            o.remove("stopped");
        }
        assert_eq!(without, bt);
        let back: StopNote = serde_json::from_value(bt2["stopped"].clone()).unwrap();
        assert_eq!(back, note);
    }
}
