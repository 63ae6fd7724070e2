//! The tournament summary `汇总.md`: per size and player, averages of the score parts and the
//! first-place rates over valid games, then the Bradley–Terry table (with 95% intervals) or why
//! it is not available yet, then the game counts. Same tables, columns and number formats as
//! the reference report; the Chinese wording is ours. [`Tally`] keeps the sums incrementally so
//! a live report costs O(players × sizes), not a rescan of every result.
//! [`bootstrap_section`] renders the paired (map-unit) bootstrap intervals as a table of their
//! own below the reference's BT table, which stays as the reference writes it.

use crate::bootstrap::BootstrapFit;
use crate::bt::{BtError, BtFit};
pub use crate::report_html::Scoring;
use crate::report_html::SizeRow;
use crate::results::GameResult;
use std::collections::HashMap;
use std::fmt::Write;

/// Running sums for one (size, player) cell, accumulated in result order.
#[derive(Debug, Clone, Default)]
struct Cell {
    games: u64,
    survival: f64,
    kill: f64,
    points: f64,
    sole_first: u64,
    first: u64,
    faulty: u64,
}

/// Incremental per-size, per-player statistics plus the game counts of the closing line.
#[derive(Debug, Clone)]
pub struct Tally {
    roster: Vec<String>,
    sizes: Vec<usize>,
    /// `cells[size index][roster index]`.
    cells: Vec<Vec<Cell>>,
    index: HashMap<String, usize>,
    games: u64,
    invalid: u64,
    scoring: Scoring,
}

impl Tally {
    /// Empty statistics for a roster (slot order) and the tournament's sizes (report order).
    pub fn new<S: AsRef<str>>(roster: &[S], sizes: &[usize]) -> Self {
        let roster: Vec<String> = roster.iter().map(|s| s.as_ref().to_string()).collect();
        let mut index = HashMap::new();
        for (i, n) in roster.iter().enumerate() {
            index.entry(n.clone()).or_insert(i);
        }
        Tally {
            cells: vec![vec![Cell::default(); roster.len()]; sizes.len()],
            roster,
            sizes: sizes.to_vec(),
            index,
            games: 0,
            invalid: 0,
            scoring: Scoring::default(),
        }
    }

    /// The same statistics, worded for `scoring`.
    pub fn scored_as(mut self, scoring: Scoring) -> Self {
        self.scoring = scoring;
        self
    }

    /// How the table is worded.
    pub fn scoring(&self) -> Scoring {
        self.scoring
    }

    /// Adds one result (in schedule order).
    pub fn push(&mut self, game: &GameResult) {
        self.games += 1;
        if !game.valid_for_scoring {
            self.invalid += 1;
            return;
        }
        let Some(si) = self.sizes.iter().position(|&s| s == game.size) else {
            return;
        };
        let at = |v: &[f64], i: usize| v.get(i).copied().unwrap_or(0.0);
        // Each distinct roster name counts once per game, at its first seat.
        for (i, name) in game.names.iter().enumerate() {
            let Some(&p) = self.index.get(name.as_str()) else {
                continue;
            };
            if game.names[..i].contains(name) {
                continue;
            }
            let rank = game.ranks.get(i).copied();
            let ties = game.ranks.iter().filter(|&&r| Some(r) == rank).count();
            let c = &mut self.cells[si][p];
            c.games += 1;
            c.survival += at(&game.survival_points, i);
            c.kill += at(&game.kill_points, i);
            c.points += at(&game.points, i);
            c.sole_first += u64::from(rank == Some(1) && ties == 1);
            c.first += u64::from(rank == Some(1));
            c.faulty += u64::from(game.errors.get(i).copied().unwrap_or(0) > 0);
        }
    }

    /// Results pushed so far, and how many of them did not count.
    pub fn counts(&self) -> (u64, u64) {
        (self.games, self.invalid)
    }

    /// The per-size table's rows (size order, then roster order; a repeated roster name
    /// once; only cells with valid games): averages per game and first-place rates in percent.
    pub fn size_rows(&self) -> Vec<SizeRow> {
        let mut rows = Vec::new();
        for (si, &size) in self.sizes.iter().enumerate() {
            for (p, name) in self.roster.iter().enumerate() {
                if self.index.get(name) != Some(&p) {
                    continue; // a repeated roster name is listed once
                }
                let c = &self.cells[si][p];
                if c.games == 0 {
                    continue;
                }
                let n = c.games as f64;
                rows.push(SizeRow {
                    size,
                    name: name.clone(),
                    games: c.games,
                    survival: c.survival / n,
                    kill: c.kill / n,
                    points: c.points / n,
                    sole_first: c.sole_first as f64 / n * 100.0,
                    first: c.first as f64 / n * 100.0,
                    faulty: c.faulty,
                });
            }
        }
        rows
    }

    /// Renders `汇总.md`. `ratings` is `None` when the tournament has no anchor (no BT
    /// section), otherwise the fit or why there is none yet.
    pub fn render(&self, ratings: Option<&Result<BtFit, BtError>>) -> String {
        self.render_with(ratings, "")
    }

    /// [`Tally::render`] with `extra` (e.g. a [`bootstrap_section`]) after the BT table,
    /// above the closing counts.
    pub fn render_with(&self, ratings: Option<&Result<BtFit, BtError>>, extra: &str) -> String {
        let mut out = String::new();
        out.push_str("# 对局统计汇总\n\n");
        match self.scoring {
            Scoring::SurvivalKill => self.size_table(&mut out),
            Scoring::WinDrawLoss => self.win_table(&mut out),
        }
        if let Some(ratings) = ratings {
            out.push_str("\n## Bradley–Terry 实力值\n\n");
            out.push_str("各人数的总权重相同；基准选手记为 0，尺度固定，不随最高分重新缩放。");
            out.push_str(
                "区间为 95% 置信区间（Wald 法：加权对数似然的 Hessian 逆，基准固定）。\n\n",
            );
            match ratings {
                Ok(fit) => {
                    out.push_str("|选手|BT 实力值|95% 下限|95% 上限|\n|---|---:|---:|---:|\n");
                    for (name, value) in fit.ranked() {
                        let [lo, hi] = fit.interval(name).unwrap_or([f64::NAN, f64::NAN]);
                        let _ = writeln!(out, "|{name}|{value:.2}|{lo:.2}|{hi:.2}|");
                    }
                }
                Err(e) => {
                    let _ = writeln!(out, "暂时无法给出实力值：{e}");
                }
            }
        }
        out.push_str(extra);
        let _ = writeln!(
            out,
            "\n已完成 {} 局，其中 {} 局因启动失败不计分。",
            self.games, self.invalid
        );
        out.push_str("单看名次不足以排除作弊；请保留故障详情、源代码和运行记录。\n");
        out
    }
}

impl Tally {
    /// The reference report's per-size table (Bomberman's score parts).
    fn size_table(&self, out: &mut String) {
        out.push_str("每局得分 = 生存分 + 0.5 × 击杀份额；“第一”按每局合计得分的名次判定。\n\n");
        out.push_str("|人数|选手|有效局数|平均生存分|平均击杀分|平均合计分|单独第一比例|第一比例（含并列）|出故障局数|\n");
        out.push_str("|---:|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for r in self.size_rows() {
            let _ = writeln!(
                out,
                "|{}|{}|{}|{:.3}|{:.3}|{:.3}|{:.1}%|{:.1}%|{}|",
                r.size,
                r.name,
                r.games,
                r.survival,
                r.kill,
                r.points,
                r.sole_first,
                r.first,
                r.faulty
            );
        }
    }

    /// The per-player table of a game won, drawn or lost (胜 1、和 0.5、负 0).
    fn win_table(&self, out: &mut String) {
        out.push_str("每局得分：胜 1 分，和 0.5 分，负 0 分；胜率为单独第一的比例。\n\n");
        out.push_str("|人数|选手|有效局数|平均得分|胜率|胜或和比例|出故障局数|\n");
        out.push_str("|---:|---|---:|---:|---:|---:|---:|\n");
        for r in self.size_rows() {
            let _ = writeln!(
                out,
                "|{}|{}|{}|{:.3}|{:.1}%|{:.1}%|{}|",
                r.size, r.name, r.games, r.points, r.sole_first, r.first, r.faulty
            );
        }
    }
}

/// The bootstrap table of `汇总.md`: per player (best first by the full-data fit) the paired
/// bootstrap's 95% interval, its width and the Wald interval's width, or why there is none.
/// `stale` = `Some((used, done))` when the intervals were computed on the first `used` of the
/// `done` results so far (a live report recomputes them only every few seconds).
pub fn bootstrap_section<E: std::fmt::Display>(
    result: &Result<BootstrapFit, E>,
    stale: Option<(u64, u64)>,
) -> String {
    let mut out = String::from("\n## 配对自助法区间（按地图重抽样）\n\n");
    out.push_str(
        "同一张地图（人数与地图种子相同）上的各局共享这张地图的特点，彼此并不独立；\
         此处以地图为单位有放回地重抽样，每次按上表同样的方法重新拟合，\
         取 2.5% 与 97.5% 分位数。上表的 Wald 区间把每次比较都当作独立的。",
    );
    match result {
        Ok(b) => {
            let _ = write!(
                out,
                "{} 个地图单元，重抽样 {} 次（种子 {}），其中 {} 次可拟合。",
                b.units, b.resamples, b.seed, b.fitted
            );
            if let Some((used, done)) = stale {
                let _ = write!(
                    out,
                    "本表按前 {used} 局计算（已完成 {done} 局；运行中每隔几秒重算一次，最终报告按全部结果）。"
                );
            }
            out.push_str(
                "\n\n|选手|自助法 95% 下限|自助法 95% 上限|自助法区间宽度|Wald 区间宽度|\n",
            );
            out.push_str("|---|---:|---:|---:|---:|\n");
            for (name, _) in b.fit.ranked() {
                let [lo, hi] = b.interval(name).unwrap_or([f64::NAN, f64::NAN]);
                let [wlo, whi] = b.fit.interval(name).unwrap_or([f64::NAN, f64::NAN]);
                let _ = writeln!(
                    out,
                    "|{name}|{lo:.2}|{hi:.2}|{:.2}|{:.2}|",
                    hi - lo,
                    whi - wlo
                );
            }
        }
        Err(e) => {
            let _ = write!(out, "\n\n暂时无法给出自助法区间：{e}\n");
        }
    }
    out
}

/// Renders `汇总.md` for all results at once (see [`Tally::render`]).
pub fn render<S: AsRef<str>>(
    games: &[GameResult],
    roster: &[S],
    sizes: &[usize],
    ratings: Option<&Result<BtFit, BtError>>,
) -> String {
    let mut t = Tally::new(roster, sizes);
    for g in games {
        t.push(g);
    }
    t.render(ratings)
}
