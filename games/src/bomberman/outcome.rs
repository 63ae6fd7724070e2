//! Exact scores of a (finished or running) game: survival points from death times, kill points
//! from kill shares, ranks by exact total, plus the display-only counters.

use num_rational::Ratio;

use super::game::Game;

/// Exact scores and counters, index = player id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Turns played (the final turn number).
    pub turns: u32,
    /// -1 for players alive at the end.
    pub death_turns: Vec<i32>,
    pub survival: Vec<Ratio<i64>>,
    pub kill_shares: Vec<Ratio<i64>>,
    /// kill_share / 2.
    pub kill_points: Vec<Ratio<i64>>,
    pub points: Vec<Ratio<i64>>,
    /// 1 + number of players with strictly more points.
    pub ranks: Vec<u32>,
    pub bombs_placed: Vec<u32>,
    pub boxes_broken: Vec<u32>,
}

/// Survival points from death turns (-1 = alive at the end, outlives every dead player):
/// `n - r - (k-1)/2` with r = 1 + players who lasted strictly longer, k = players tied.
pub fn survival_points(death_turns: &[i32]) -> Vec<Ratio<i64>> {
    let n = death_turns.len() as i64;
    let key = |d: i32| if d < 0 { i64::MAX } else { i64::from(d) };
    death_turns
        .iter()
        .map(|&d| {
            let r = 1 + death_turns.iter().filter(|&&o| key(o) > key(d)).count() as i64;
            let k = death_turns.iter().filter(|&&o| key(o) == key(d)).count() as i64;
            Ratio::from_integer(n - r) - Ratio::new(k - 1, 2)
        })
        .collect()
}

/// Ranks by exact points: 1 + number of players with strictly higher points.
pub fn ranks(points: &[Ratio<i64>]) -> Vec<u32> {
    points
        .iter()
        .map(|p| 1 + points.iter().filter(|&o| o > p).count() as u32)
        .collect()
}

impl Game {
    /// The exact scores as of now (players still alive count as survivors).
    pub fn outcome(&self) -> Outcome {
        let death_turns: Vec<i32> = self.players.iter().map(|p| p.death_turn).collect();
        let survival = survival_points(&death_turns);
        let kill_points: Vec<Ratio<i64>> = self.kills.iter().map(|k| k / 2).collect();
        let points: Vec<Ratio<i64>> = survival
            .iter()
            .zip(&kill_points)
            .map(|(s, k)| s + k)
            .collect();
        Outcome {
            turns: self.t,
            ranks: ranks(&points),
            death_turns,
            survival,
            kill_shares: self.kills.clone(),
            kill_points,
            points,
            bombs_placed: self.bombs_placed.clone(),
            boxes_broken: self.boxes_broken.clone(),
        }
    }
}
