//! report.html beside 汇总.md: the shell around the pure page of shared::report_html. It keeps
//! the per-match parts as rows arrive ([`PageState`]), stamps each match's arrival time and
//! appends it to arrivals.jsonl (the progress curve needs times, which the results log does not
//! hold; a rebuild reads them back), reads the stop rule's parameters from identity.json (the
//! SPRT's state is replayed from the rows, so a live page and a rebuilt one agree), and writes
//! the page with every 汇总.md. The page lists every match, so a live refresh rewrites it at
//! most every [`PAGE_REFRESH`] or 50 times its last cost, whichever is longer (at most 2% of
//! the loop's time); the last write of a run (every match done, or the run stopped) and a
//! rebuild always write it. A rebuild (`farm report`, [`Live::rebuilding`]) stamps and appends
//! nothing, so it writes the page the run last wrote.

use std::io::Write as _;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use serde_json::Value;

use shared::report_html::{
    self, BootInfo, Page, PageBuilder, RatingRow, Ratings, RuleState, StopInfo,
};
use shared::results::GameResult;
use shared::settle::{game_score, SprtEnd, SprtRun};
use shared::sprt::{elo_estimate, Sprt, Verdict};

use super::Live;
use crate::fsio::write_view;
use crate::run::checkpoint::Row;
use crate::run::played_by;

/// The page's file name in the output folder.
pub const PAGE_NAME: &str = "report.html";
/// Arrival time of each match: one `{"match": N, "us": unix microseconds}` line per arrival
/// (integers: a float would not read back bit for bit, and a rebuilt page must be identical).
pub const ARRIVALS_NAME: &str = "arrivals.jsonl";

/// A live refresh rewrites the page at most this often.
pub const PAGE_REFRESH: Duration = Duration::from_secs(2);

/// Unix seconds of a microsecond stamp (the same on a live page and a rebuilt one).
fn seconds(us: u64) -> f64 {
    us as f64 / 1e6
}

/// The stop rule recorded in identity.json's scoring_code.
enum RuleParams {
    Sprt {
        test: Sprt,
        max_pairs: u64,
        new: String,
        base: String,
    },
    Settle {
        confidence: f64,
        max_matches: Option<u64>,
    },
}

/// What the page keeps between writes.
pub struct PageState {
    builder: PageBuilder,
    rebuild: bool,
    /// arrivals.jsonl has been read (at the first write).
    loaded: bool,
    /// Arrivals stamped since the last write: not yet in arrivals.jsonl.
    unsaved: Vec<(u64, u64)>,
    /// `None` until read from identity.json.
    rule: Option<Option<RuleParams>>,
    scheduled: u64,
    /// When the page was last written, and what that cost.
    last: Option<(Instant, Duration)>,
    /// Bytes of played-by.jsonl already read into the workers table.
    played_read: u64,
}

impl PageState {
    pub fn new(roster: &[String]) -> PageState {
        PageState {
            builder: PageBuilder::new(roster),
            rebuild: false,
            loaded: false,
            unsaved: Vec::new(),
            rule: None,
            scheduled: 0,
            last: None,
            played_read: 0,
        }
    }

    /// A row was checkpointed now (a result or a failure).
    pub fn arrived(&mut self, number: u64) {
        if self.rebuild {
            return;
        }
        let us = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as u64);
        self.builder.arrived(number, seconds(us));
        self.unsaved.push((number, us));
    }

    /// A scored row.
    pub fn scored(&mut self, row: &Row, game: &GameResult) {
        let kinds: Vec<Vec<String>> = row
            .result
            .as_ref()
            .and_then(|r| r.get("faults"))
            .and_then(Value::as_array)
            .map(|seats| {
                seats
                    .iter()
                    .map(|seat| {
                        seat.as_array()
                            .map(|fs| {
                                fs.iter()
                                    .map(|f| f["kind"].as_str().unwrap_or("unknown").to_string())
                                    .collect()
                            })
                            .unwrap_or_default()
                    })
                    .collect()
            })
            .unwrap_or_default();
        self.builder.add(row.number, game, &kinds);
    }

    /// Read the recorded arrivals (once); the file's time of a match wins over a stamp made
    /// when a resumed run replayed it. Then append this process's new stamps.
    fn sync_arrivals(&mut self, dir: &Path) -> Result<()> {
        let path = dir.join(ARRIVALS_NAME);
        if !self.loaded {
            self.loaded = true;
            match std::fs::read_to_string(&path) {
                Ok(text) => {
                    let mut known = std::collections::HashSet::new();
                    for line in text.lines() {
                        // A torn last line (crash mid-append) is skipped.
                        let Ok(v) = serde_json::from_str::<Value>(line) else {
                            continue;
                        };
                        if let (Some(n), Some(us)) = (v["match"].as_u64(), v["us"].as_u64()) {
                            self.builder.arrived(n, seconds(us));
                            known.insert(n);
                        }
                    }
                    self.unsaved.retain(|(n, _)| !known.contains(n));
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
            }
        }
        if self.rebuild || self.unsaved.is_empty() {
            return Ok(());
        }
        let mut text = String::with_capacity(self.unsaved.len() * 32);
        for (n, us) in self.unsaved.drain(..) {
            text.push_str(&serde_json::json!({"match": n, "us": us}).to_string());
            text.push('\n');
        }
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .with_context(|| format!("opening {}", path.display()))?;
        f.write_all(text.as_bytes())
            .with_context(|| format!("appending to {}", path.display()))
    }

    /// Read the played-by lines appended since the last call into the workers table (whole
    /// lines only: a line being written is read next time). A view: a read error is logged.
    fn sync_played(&mut self, dir: &Path) {
        use std::io::{Read, Seek, SeekFrom};
        let path = dir.join(played_by::FILE_NAME);
        let mut new = Vec::new();
        let read = std::fs::File::open(&path).and_then(|mut f| {
            f.seek(SeekFrom::Start(self.played_read))?;
            f.read_to_end(&mut new)
        });
        match read {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
            Err(e) => {
                tracing::warn!(error = %e, "could not read {}", path.display());
                return;
            }
        }
        let whole = new.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        for line in new[..whole].split(|&b| b == b'\n') {
            // A torn line (a crash mid-append) is skipped.
            if let Ok(p) = serde_json::from_slice::<played_by::Played>(line) {
                let ok = p.failed.is_none();
                self.builder
                    .played(p.number, &p.worker, p.speed, p.seconds, ok);
            }
        }
        self.played_read += whole as u64;
    }

    /// Read (once) the stop rule and the schedule's length from identity.json.
    fn load_identity(&mut self, dir: &Path) {
        if self.rule.is_some() {
            return;
        }
        let id: Option<shared::schedule::Identity> =
            std::fs::read_to_string(dir.join("identity.json"))
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok());
        let Some(id) = id else {
            self.rule = Some(None);
            return;
        };
        self.scheduled = id.schedule.entries.len() as u64;
        let param = |key: &str| -> Option<Value> {
            id.scoring_code
                .get(key)
                .and_then(|v| serde_json::from_str(v).ok())
        };
        let rule = if let Some(p) = param(crate::run::stop::SPRT_IDENTITY) {
            let f = |k: &str| p[k].as_f64().unwrap_or(f64::NAN);
            Sprt::new(f("elo0"), f("elo1"), f("alpha"), f("beta"))
                .ok()
                .map(|test| RuleParams::Sprt {
                    test,
                    max_pairs: p["max_pairs"].as_u64().unwrap_or(u64::MAX),
                    new: p["new"].as_str().unwrap_or_default().to_string(),
                    base: p["base"].as_str().unwrap_or_default().to_string(),
                })
        } else {
            param(crate::run::stop::UNTIL_SETTLED).map(|p| RuleParams::Settle {
                confidence: p["confidence"].as_f64().unwrap_or(f64::NAN),
                max_matches: p["max_matches"].as_u64(),
            })
        };
        self.rule = Some(rule);
    }
}

impl Live {
    /// This Live rebuilds a folder's views (`farm report`): arrivals are read, never stamped.
    pub fn rebuilding(&mut self) {
        self.page.rebuild = true;
    }

    /// What the last page write cost (model, render and write), in seconds.
    pub fn page_seconds(&self) -> f64 {
        self.page.last.map_or(0.0, |(_, took)| took.as_secs_f64())
    }

    /// The SPRT replayed over the whole pairs checkpointed so far, in schedule order.
    fn sprt_state(&self, test: Sprt, max_pairs: u64, new: &str, base: &str) -> RuleState {
        let failed: std::collections::HashSet<u64> = self.failed.iter().map(|f| f.0).collect();
        let done = |n: u64| self.resampling.games.contains_key(&n) || failed.contains(&n);
        let score = |n: u64| {
            let g = self.resampling.games.get(&n)?;
            game_score(&self.resampling.game_result(g), new)
        };
        let mut run = SprtRun::new(test, max_pairs);
        let mut k = 1;
        while run.end.is_none() && done(2 * k - 1) && done(2 * k) {
            run.add_pair(score(2 * k - 1), score(2 * k));
            k += 1;
        }
        let status = run.status();
        let elo = elo_estimate(&run.counts);
        RuleState::Sprt {
            new: new.to_string(),
            base: base.to_string(),
            elo0: test.elo0,
            elo1: test.elo1,
            alpha: test.alpha,
            beta: test.beta,
            max_pairs,
            pairs: run.pairs(),
            void_pairs: run.void_pairs,
            pentanomial: run.counts.counts,
            llr: status.llr,
            lower: status.lower,
            upper: status.upper,
            elo: elo.elo,
            elo_ci95: elo.ci95,
            verdict: match run.end {
                Some(SprtEnd::Bound(Verdict::AcceptH1)) => "H1 accepted",
                Some(SprtEnd::Bound(Verdict::AcceptH0)) => "H0 accepted",
                Some(SprtEnd::MaxPairs) => "inconclusive",
                _ => "running",
            }
            .to_string(),
        }
    }

    /// The page's model now (the bootstrap as last computed).
    fn page_model(&mut self, dir: &Path) -> Page {
        let (games, invalid) = self.tally.counts();
        let mut ratings = Ratings::default();
        match self.bt.fit_exact() {
            Ok(fit) => {
                let boot = self.resampling.boot.as_ref();
                let bfit = boot.and_then(|b| b.result.as_ref().ok());
                ratings.rows = fit
                    .ranked()
                    .into_iter()
                    .map(|(name, rating)| RatingRow {
                        name: name.to_string(),
                        rating,
                        wald: fit.interval(name).unwrap_or([f64::NAN, f64::NAN]),
                        bootstrap: bfit.and_then(|b| b.interval(name)),
                    })
                    .collect();
                match boot {
                    Some(b) => match &b.result {
                        Ok(f) => {
                            ratings.bootstrap = Some(BootInfo {
                                units: f.units,
                                resamples: f.resamples,
                                fitted: f.fitted,
                                seed: f.seed,
                                games_used: b.games,
                            })
                        }
                        Err(e) => ratings.bootstrap_unavailable = Some(e.to_string()),
                    },
                    None => ratings.bootstrap_unavailable = Some("not computed yet".to_string()),
                }
            }
            Err(e) => ratings.unavailable = Some(e.to_string()),
        }
        let rule = match self.page.rule.as_ref().and_then(Option::as_ref) {
            Some(RuleParams::Sprt {
                test,
                max_pairs,
                new,
                base,
            }) => Some(self.sprt_state(*test, *max_pairs, new, base)),
            Some(RuleParams::Settle {
                confidence,
                max_matches,
            }) => Some(RuleState::UntilSettled {
                confidence: *confidence,
                max_matches: *max_matches,
                adjacent: ratings
                    .rows
                    .windows(2)
                    .map(|w| {
                        let apart = match (w[0].bootstrap, w[1].bootstrap) {
                            (Some(hi), Some(lo)) => hi[0] > lo[1],
                            _ => false,
                        };
                        (w[0].name.clone(), w[1].name.clone(), apart)
                    })
                    .collect(),
            }),
            None => None,
        };
        let mut page = Page {
            title: dir.file_name().map_or_else(
                || dir.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            ),
            anchor: self.anchor.clone(),
            roster: self.names.clone(),
            sizes: self.sizes.clone(),
            matches_scheduled: self.page.scheduled,
            matches_done: games + self.failed.len() as u64,
            games,
            games_invalid: invalid,
            scoring: self.tally.scoring(),
            ratings,
            per_size: self.tally.size_rows(),
            failed: self.failed.clone(),
            stop: self.stop.as_ref().map(|s| StopInfo {
                reason: s.reason.clone(),
                matches_played: s.matches_played,
                matches_scheduled: s.matches_scheduled,
                cancelled: s.cancelled,
            }),
            rule,
            not_compiled: self.not_compiled().to_vec(),
            quarantined: self.quarantined.clone(),
            ..Page::default()
        };
        self.page.builder.fill(&mut page);
        page
    }

    /// Rewrite report.html (and append the new arrivals) in `dir`.
    pub(super) fn write_page(&mut self, dir: &Path) -> Result<()> {
        self.page.sync_arrivals(dir)?;
        self.page.load_identity(dir);
        let done = self.tally.counts().0 + self.failed.len() as u64;
        let last_write = self.page.rebuild
            || self.stop.is_some()
            || (self.page.scheduled > 0 && done >= self.page.scheduled);
        if let (Some((at, took)), false) = (self.page.last, last_write) {
            if at.elapsed() < PAGE_REFRESH.max(took * 50) {
                return Ok(());
            }
        }
        let at = Instant::now();
        self.page.sync_played(dir);
        let page = self.page_model(dir);
        write_view(&dir.join(PAGE_NAME), report_html::render(&page).as_bytes())?;
        self.page.last = Some((at, at.elapsed()));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(number: u64, first: &str, second: &str, fault: bool) -> Row {
        let faults = if fault {
            serde_json::json!([[{"kind": "timeout", "turn": 3, "detail": "late"}], []])
        } else {
            serde_json::json!([[], []])
        };
        Row {
            number,
            size: 2,
            result: Some(serde_json::json!({
                "valid_for_scoring": true, "names": [first, second], "ranks": [1, 2],
                "points": [1.5, 0.0], "errors": [u32::from(fault), 0], "faults": faults,
            })),
            failed: None,
        }
    }

    fn data(dir: &Path) -> (String, Value) {
        let html = std::fs::read_to_string(dir.join(PAGE_NAME)).unwrap();
        let open = "<script type=\"application/json\" id=\"report-data\">";
        let at = html.find(open).unwrap() + open.len();
        let end = at + html[at..].find("</script>").unwrap();
        let v = serde_json::from_str(&html[at..end]).unwrap();
        (html, v)
    }

    #[test]
    fn the_page_is_written_with_the_report_as_rows_arrive_and_rebuilt_identically() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let names = vec!["a".to_string(), "b<&>".to_string()];
        let mut live = Live::new(names.clone(), vec![2], "a".into());
        let rows: Vec<Row> = (1..=6)
            .map(|n| {
                let (x, y) = if n % 3 == 0 {
                    ("b<&>", "a")
                } else {
                    ("a", "b<&>")
                };
                row(n, x, y, n == 2)
            })
            .collect();
        for r in &rows[..2] {
            live.add(r);
        }
        live.write_report(dir).unwrap();
        let (_, first) = data(dir);
        assert_eq!(first["games"], 2, "written with the first 汇总.md");
        assert_eq!(first["faults"][0]["bot"], "a");
        assert_eq!(first["faults"][0]["kind"], "timeout");
        assert_eq!(first["faults"][0]["matches"], serde_json::json!([2]));
        // A live refresh soon after leaves the page alone (at most every PAGE_REFRESH or 50x
        // its cost; here the last write is made to look expensive, so no clock is read)...
        live.page.last = Some((Instant::now(), Duration::from_secs(3600)));
        for r in &rows[2..5] {
            live.add(r);
        }
        live.write_report(dir).unwrap();
        assert_eq!(data(dir).1["games"], 2);
        // ...but a stopped run's last write always writes it.
        live.add(&rows[5]);
        live.set_stop(super::super::StopNote {
            reason: "test".into(),
            matches_played: 6,
            matches_scheduled: 9,
            cancelled: 0,
        });
        live.write_report(dir).unwrap();
        let (html, last) = data(dir);
        assert_eq!(last["games"], 6);
        assert_eq!(last["numbers"], serde_json::json!([1, 2, 3, 4, 5, 6]));
        assert_eq!(
            last["head_to_head"]["ahead"],
            serde_json::json!([[0, 4], [2, 0]])
        );
        let arrivals = std::fs::read_to_string(dir.join(ARRIVALS_NAME)).unwrap();
        assert_eq!(arrivals.lines().count(), 6, "{arrivals}");
        assert_eq!(last["timeline"].as_array().unwrap().len(), 6);
        // A rebuild from the same rows and arrivals writes the same page, appending nothing.
        std::fs::remove_file(dir.join(PAGE_NAME)).unwrap();
        let mut again = Live::new(names, vec![2], "a".into());
        again.rebuilding();
        for r in &rows {
            again.add(r);
        }
        again.set_stop(live.stop.clone().unwrap());
        again.write_report(dir).unwrap();
        assert_eq!(data(dir).0, html);
        assert_eq!(
            std::fs::read_to_string(dir.join(ARRIVALS_NAME)).unwrap(),
            arrivals
        );
    }
}
