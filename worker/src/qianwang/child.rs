//! The child side: the process (`farm __js-bot`, sandboxed by the worker) that hosts the bots of
//! one match in their QuickJS runtimes. It reads [`Request`]s on stdin, keeps its own copy of
//! the game from the plies it is sent, and answers each with one [`Reply`] on stdout. It never
//! keeps time beyond the bots' own interrupt deadlines: the worker kills it when a call runs
//! past its limit (a QuickJS built-in that never checks for interrupts cannot be stopped any
//! other way).

use std::io::{BufReader, BufWriter};

use games::qianwang::{Game, Ply, Side};

use super::bot::JsBot;
use super::in_match_thread;
use super::wire::{self, Reply, Request};

/// Runs the child's loop on stdin/stdout until the worker closes stdin; the process exit code.
pub fn serve_child() -> i32 {
    in_match_thread(|| {
        let mut input = BufReader::new(std::io::stdin().lock());
        let mut output = BufWriter::new(std::io::stdout().lock());
        match serve(&mut input, &mut output) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("farm __js-bot: {e}");
                1
            }
        }
    })
}

fn serve(
    input: &mut impl std::io::Read,
    output: &mut impl std::io::Write,
) -> Result<(), wire::FrameError> {
    wire::write_blocking(output, &Reply::Ready)?;
    let mut game = Game::new();
    let mut bots: [Option<JsBot>; 2] = [None, None];
    while let Some(req) = wire::read_blocking::<Request>(input)? {
        let reply = match req {
            Request::Load {
                side,
                code,
                seed,
                limits,
            } => match JsBot::load(&code, side, seed, &limits) {
                Ok(bot) => {
                    bots[side.index()] = Some(bot);
                    Reply::Loaded
                }
                Err(e) => Reply::LoadFailed(e),
            },
            Request::Turn { side, plies } => turn(&mut game, &mut bots, side, &plies),
        };
        wire::write_blocking(output, &reply)?;
    }
    Ok(())
}

/// Catches the game up with `plies`, then asks `side`'s bot for its move.
fn turn(game: &mut Game, bots: &mut [Option<JsBot>; 2], side: Side, plies: &[Ply]) -> Reply {
    for ply in plies {
        if let Err(e) = game.play_with_points(ply.mv, ply.points_used) {
            return Reply::Host(format!("the worker sent a ply the game refuses: {e}"));
        }
    }
    if game.is_over() || game.to_move() != side {
        return Reply::Host(format!(
            "the worker asked {side} to move, but the game says {}",
            if game.is_over() {
                "it is over".to_string()
            } else {
                format!("{} is to move", game.to_move())
            }
        ));
    }
    let legal = game.legal_moves();
    let Some(bot) = bots[side.index()].as_mut().filter(|_| !legal.is_empty()) else {
        return Reply::Host(format!("{side} has no loaded bot or no legal move"));
    };
    match bot.turn(game, &legal) {
        Ok((mv, points)) => Reply::Moved { mv, points },
        Err(f) => Reply::Fault {
            fault: f.fault.into(),
            detail: f.detail,
        },
    }
}
