//! Running every game of a games.json: one after another, or `concurrency` at a time, each game
//! in its own thread; a stop flag (set on Ctrl-C) ends running games cleanly and starts no more.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use super::config::{Config, Game};
use super::game::run_game;
use super::table::{GameOutcome, RunOptions};

/// Uids of the sandbox's pool reserved per concurrently running game.
const SLOTS_PER_GAME: usize = 64;

/// Run `games` with at most `concurrency` at once; outcomes in games.json order (games not
/// started because of a stop request are left out). `on_done` sees each outcome as it ends.
pub fn run_all(
    config: &Config,
    games: &[Game],
    opts: &RunOptions,
    concurrency: usize,
    stop: &AtomicBool,
    on_done: &(dyn Fn(&GameOutcome) + Sync),
) -> Vec<GameOutcome> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<GameOutcome>>> = Mutex::new(vec![None; games.len()]);
    let workers = concurrency.clamp(1, games.len().max(1));
    std::thread::scope(|s| {
        for w in 0..workers {
            let (next, results) = (&next, &results);
            s.spawn(move || loop {
                if stop.load(Ordering::SeqCst) {
                    return;
                }
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(game) = games.get(i) else {
                    return;
                };
                let outcome = run_game(config, game, opts, stop, w * SLOTS_PER_GAME);
                on_done(&outcome);
                results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(outcome);
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .flatten()
        .collect()
}
