//! The summary after all games: each player's total score over every game (what proboj contests
//! rank by), and Bradley–Terry ratings (shared::bt) from per-game ranks, with the first player
//! of the config as the anchor; rendered as markdown for `<game_root>/summary.md`.

use std::collections::BTreeMap;

use shared::bt::{self, BtFit};
use shared::results::GameResult;

use super::config::Config;
use super::scores;
use super::table::{Ending, GameOutcome};

/// Totals and ratings over a set of games.
#[derive(Debug, Clone)]
pub struct Summary {
    /// (player, total score, games with scores) in config order.
    pub totals: Vec<(String, f64, u32)>,
    /// The BT fit, or why there is none.
    pub bt: Result<BtFit, NoRatings>,
    /// (gamefolder, how it ended) for every game that did not end with END and scores.
    pub problems: Vec<(String, String)>,
    pub games: usize,
}

/// Why a summary has no Bradley–Terry ratings.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoRatings {
    #[error("no game between two or more different players has scores")]
    NoScoredGames,
    #[error("{0}")]
    Fit(#[from] bt::BtError),
}

/// Map a name the server reported to a player of the game (`P_3` -> `P` when processes_per_player > 1).
fn base_name<'a>(reported: &str, players: &'a [String]) -> Option<&'a String> {
    if let Some(p) = players.iter().find(|p| *p == reported) {
        return Some(p);
    }
    let (stem, idx) = reported.rsplit_once('_')?;
    if idx.is_empty() || !idx.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    players.iter().find(|p| *p == stem)
}

/// Each player's score in one game (summing its processes), in the game's player order.
fn game_scores(o: &GameOutcome) -> Option<Vec<(String, f64)>> {
    let scores = o.scores.as_ref()?;
    let mut per: BTreeMap<&String, f64> = BTreeMap::new();
    for (name, s) in scores {
        if let Some(b) = base_name(name, &o.players) {
            *per.entry(b).or_default() += s;
        }
    }
    Some(
        o.players
            .iter()
            .map(|p| (p.clone(), per.get(p).copied().unwrap_or(0.0)))
            .collect(),
    )
}

impl Summary {
    pub fn compute(config: &Config, outcomes: &[GameOutcome]) -> Summary {
        let mut totals: Vec<(String, f64, u32)> = config
            .players
            .iter()
            .map(|p| (p.name.clone(), 0.0, 0))
            .collect();
        let mut results = Vec::new();
        let mut problems = Vec::new();
        let mut sizes = Vec::new();
        for o in outcomes {
            match &o.ending {
                Ending::End => {}
                Ending::ServerExited => {
                    problems.push((o.gamefolder.clone(), "server exited without END".into()))
                }
                Ending::Interrupted => problems.push((o.gamefolder.clone(), "interrupted".into())),
                Ending::Failed(why) => problems.push((o.gamefolder.clone(), why.clone())),
            }
            let Some(scores) = game_scores(o) else {
                if o.ending == Ending::End {
                    problems.push((o.gamefolder.clone(), "no SCORES".into()));
                }
                continue;
            };
            for (name, s) in &scores {
                if let Some(t) = totals.iter_mut().find(|t| &t.0 == name) {
                    t.1 += s;
                    t.2 += 1;
                }
            }
            let distinct: std::collections::HashSet<_> = o.players.iter().collect();
            if distinct.len() != o.players.len() || o.players.len() < 2 {
                continue; // a player against itself (or alone) says nothing about strength
            }
            let ranks: Vec<i64> = scores
                .iter()
                .map(|(_, s)| 1 + scores.iter().filter(|(_, t)| t > s).count() as i64)
                .collect();
            if !sizes.contains(&scores.len()) {
                sizes.push(scores.len());
            }
            results.push(GameResult {
                size: scores.len(),
                valid_for_scoring: true,
                names: scores.iter().map(|(n, _)| n.clone()).collect(),
                ranks,
                survival_points: Vec::new(),
                kill_points: Vec::new(),
                points: Vec::new(),
                errors: Vec::new(),
            });
        }
        let roster: Vec<&str> = config.players.iter().map(|p| p.name.as_str()).collect();
        let bt = if results.is_empty() {
            Err(NoRatings::NoScoredGames)
        } else {
            bt::fit(&results, &roster, &sizes, roster[0]).map_err(NoRatings::from)
        };
        Summary {
            totals,
            bt,
            problems,
            games: outcomes.len(),
        }
    }

    /// The report as markdown.
    pub fn markdown(&self) -> String {
        let mut s = String::from("# proboj summary\n\n");
        s.push_str(&format!("{} games.\n\n", self.games));
        s.push_str("## Total score (sum over all games)\n\n| # | player | total | games |\n|---|---|---:|---:|\n");
        let mut sorted = self.totals.clone();
        sorted.sort_by(|a, b| b.1.total_cmp(&a.1));
        for (i, (n, t, g)) in sorted.iter().enumerate() {
            s.push_str(&format!(
                "| {} | {n} | {} | {g} |\n",
                i + 1,
                scores::display(*t)
            ));
        }
        s.push_str("\n## Bradley–Terry ratings (from per-game ranks)\n\n");
        match &self.bt {
            Ok(fit) => {
                s.push_str(&format!(
                    "Anchor (0): {}. Scale: {}.\n\n| player | rating | 95% interval |\n|---|---:|---|\n",
                    fit.anchor,
                    bt::SCALE
                ));
                for (n, r) in fit.ranked() {
                    let ci = fit
                        .interval(n)
                        .map(|[a, b]| format!("{a:.1} .. {b:.1}"))
                        .unwrap_or_default();
                    s.push_str(&format!("| {n} | {r:.1} | {ci} |\n"));
                }
            }
            Err(why) => s.push_str(&format!("No ratings: {why}\n")),
        }
        if !self.problems.is_empty() {
            s.push_str("\n## Games with problems\n\n");
            for (g, why) in &self.problems {
                s.push_str(&format!("- {g}: {why}\n"));
            }
        }
        s
    }
}
