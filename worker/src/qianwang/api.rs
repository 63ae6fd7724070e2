//! The globals a bot sees besides its own code: the `Rules` object (backed by the Rust engine in
//! `games::qianwang`, one thinking point per `apply`), the seeded random function that replaces
//! `Math.random`, a `Date` frozen at a fixed instant, a silent `console`, and `module`/`exports`.

use std::cell::Cell;
use std::rc::Rc;
use std::time::Instant;

use games::qianwang::{self as qw, POINTS_PER_MOVE};
use rquickjs::function::Opt;
use rquickjs::{Ctx, Exception, Function, Object, Value};

use super::convert::{board_from_js, board_to_js, moves_to_js, points_to_js, side_from_js};

/// State shared between the host and the functions it gives one bot (single-threaded).
#[derive(Debug)]
pub(crate) struct Shared {
    /// Thinking points left this move.
    pub points: Cell<u32>,
    /// Set when `Rules.apply` was called with no points left (the bot loses even if it caught
    /// the exception).
    pub exhausted: Cell<bool>,
    /// When the running call must stop; `None` = no limit armed.
    pub deadline: Cell<Option<Instant>>,
    /// Set when the interrupt handler stopped the code for the deadline.
    pub interrupted: Cell<bool>,
    /// The state of the seeded generator behind `game.random` and `Math.random`.
    pub rng: Cell<u64>,
    /// Set by the runtime's allocator when it refused an allocation over the memory limit
    /// (`super::alloc`): the only proof of a real out-of-memory.
    pub refused: Rc<Cell<bool>>,
}

impl Shared {
    pub fn new() -> Shared {
        Shared {
            points: Cell::new(POINTS_PER_MOVE),
            exhausted: Cell::new(false),
            deadline: Cell::new(None),
            interrupted: Cell::new(false),
            rng: Cell::new(0),
            refused: Rc::new(Cell::new(false)),
        }
    }

    /// The next float in [0, 1) of the seeded generator (splitmix64, 53 bits).
    pub fn next_random(&self) -> f64 {
        let (next, out) = splitmix64(self.rng.get());
        self.rng.set(next);
        (out >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Whether the interrupt handler should stop the code now (records that it did).
    pub fn should_interrupt(&self) -> bool {
        match self.deadline.get() {
            Some(d) if Instant::now() >= d => {
                self.interrupted.set(true);
                true
            }
            _ => false,
        }
    }
}

/// One step of splitmix64: (new state, output).
pub(crate) fn splitmix64(state: u64) -> (u64, u64) {
    let s = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = s;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (s, z ^ (z >> 31))
}

/// The generator state for one side's turn of a match (turn 0 = while loading).
pub(crate) fn random_seed(seed: u64, side: qw::Side, turn: u32) -> u64 {
    let tag = ((side.index() as u64 + 1) << 32) | turn as u64;
    splitmix64(seed ^ splitmix64(tag).1).1
}

/// Set up before the bot's code runs: `Date` fixed at one instant (no clock leaks in), and a
/// silent `console`. Runs in the bot's own context.
const PRELUDE: &str = r#"
(function () {
  "use strict";
  const RealDate = Date;
  const FIXED = 1767225600000; // 2026-01-01T00:00:00Z: bots get no clock
  function FixedDate(...args) {
    if (!new.target) return new RealDate(FIXED).toString();
    return args.length === 0 ? new RealDate(FIXED) : new RealDate(...args);
  }
  FixedDate.prototype = RealDate.prototype;
  FixedDate.now = function now() { return FIXED; };
  FixedDate.UTC = RealDate.UTC;
  FixedDate.parse = RealDate.parse;
  Object.defineProperty(RealDate.prototype, "constructor", { value: FixedDate, writable: true, configurable: true });
  globalThis.Date = FixedDate;
  const quiet = function () {};
  globalThis.console = { log: quiet, info: quiet, warn: quiet, error: quiet, debug: quiet };
  delete globalThis.queueMicrotask; // promise jobs never run; nothing to schedule
  globalThis.module = { exports: {} };
  globalThis.exports = globalThis.module.exports;
})();
"#;

fn type_error(ctx: &Ctx<'_>, msg: &str) -> rquickjs::Error {
    Exception::throw_type(ctx, msg)
}

fn arg<'js>(ctx: &Ctx<'js>, v: Opt<Value<'js>>) -> Value<'js> {
    v.0.unwrap_or_else(|| Value::new_undefined(ctx.clone()))
}

/// Installs `Rules`, the seeded `Math.random`, `module`/`exports`, `Date` and `console` in the
/// bot's global object. Returns the random function (also passed as `game.random`).
pub(crate) fn install<'js>(ctx: &Ctx<'js>, shared: &Rc<Shared>) -> rquickjs::Result<Function<'js>> {
    ctx.eval::<(), _>(PRELUDE)?;
    let globals = ctx.globals();

    let s = shared.clone();
    let random = Function::new(ctx.clone(), move || s.next_random())?.with_name("random")?;
    let math: Object = globals.get("Math")?;
    math.set("random", random.clone())?;

    let rules = Object::new(ctx.clone())?;

    let legal = Function::new(
        ctx.clone(),
        |ctx: Ctx<'js>, board: Opt<Value<'js>>, side: Opt<Value<'js>>| {
            let board = board_from_js(&arg(&ctx, board), "Rules.legalMoves: board")
                .map_err(|e| type_error(&ctx, &e.0))?;
            let side = side_from_js(&arg(&ctx, side), "Rules.legalMoves: side")
                .map_err(|e| type_error(&ctx, &e.0))?;
            moves_to_js(&ctx, &qw::legal_moves(&board, side))
        },
    )?
    .with_name("legalMoves")?;
    rules.set("legalMoves", legal)?;

    let s = shared.clone();
    let apply = Function::new(
        ctx.clone(),
        move |ctx: Ctx<'js>, board: Opt<Value<'js>>, side: Opt<Value<'js>>, mv: Opt<Value<'js>>| {
            let board = board_from_js(&arg(&ctx, board), "Rules.apply: board")
                .map_err(|e| type_error(&ctx, &e.0))?;
            let side = side_from_js(&arg(&ctx, side), "Rules.apply: side")
                .map_err(|e| type_error(&ctx, &e.0))?;
            let mv = super::convert::move_from_js(&arg(&ctx, mv), "Rules.apply: move")
                .map_err(|e| type_error(&ctx, &e.0))?;
            let left = s.points.get();
            if left == 0 {
                s.exhausted.set(true);
                return Err(Exception::throw_range(
                    &ctx,
                    &format!(
                        "Rules.apply: no thinking points left ({POINTS_PER_MOVE} per move are used up); \
                         this loses the game (runtime/points_exhausted)"
                    ),
                ));
            }
            s.points.set(left - 1);
            let applied = qw::apply(&board, side, &mv).map_err(|e| {
                Exception::throw_range(&ctx, &format!("Rules.apply: illegal move: {e}"))
            })?;
            let out = Object::new(ctx.clone())?;
            out.set("board", board_to_js(&ctx, &applied.board)?)?;
            out.set("captured", points_to_js(&ctx, &applied.captured)?)?;
            Ok::<_, rquickjs::Error>(out)
        },
    )?
    .with_name("apply")?;
    rules.set("apply", apply)?;

    let judge = Function::new(
        ctx.clone(),
        |ctx: Ctx<'js>, board: Opt<Value<'js>>, ncm: Opt<Value<'js>>| {
            let board = board_from_js(&arg(&ctx, board), "Rules.judge: board")
                .map_err(|e| type_error(&ctx, &e.0))?;
            let ncm_v = arg(&ctx, ncm);
            let ncm = if ncm_v.is_undefined() {
                0
            } else {
                match ncm_v.as_number() {
                    Some(n) if n >= 0.0 && n.fract() == 0.0 && n <= u32::MAX as f64 => n as u32,
                    _ => {
                        return Err(type_error(
                            &ctx,
                            &format!(
                            "Rules.judge: noCaptureMoves must be a non-negative integer, got {}",
                            super::convert::describe(&ncm_v)
                        ),
                        ))
                    }
                }
            };
            match qw::judge(&board, ncm) {
                None => Ok(Value::new_null(ctx.clone())),
                Some(v) => {
                    let o = Object::new(ctx.clone())?;
                    match v.winner {
                        Some(w) => o.set("winner", w.as_str())?,
                        None => o.set("winner", Value::new_null(ctx.clone()))?,
                    }
                    o.set("reason", v.reason.as_str())?;
                    Ok(o.into_value())
                }
            }
        },
    )?
    .with_name("judge")?;
    rules.set("judge", judge)?;

    let clone = Function::new(ctx.clone(), |ctx: Ctx<'js>, board: Opt<Value<'js>>| {
        let board = board_from_js(&arg(&ctx, board), "Rules.clone: board")
            .map_err(|e| type_error(&ctx, &e.0))?;
        board_to_js(&ctx, &board)
    })?
    .with_name("clone")?;
    rules.set("clone", clone)?;

    let other = Function::new(ctx.clone(), |ctx: Ctx<'js>, side: Opt<Value<'js>>| {
        let side = side_from_js(&arg(&ctx, side), "Rules.other: side")
            .map_err(|e| type_error(&ctx, &e.0))?;
        Ok::<_, rquickjs::Error>(side.other().as_str())
    })?
    .with_name("other")?;
    rules.set("other", other)?;

    let s = shared.clone();
    let remaining = Function::new(ctx.clone(), move || s.points.get())?.with_name("remaining")?;
    rules.set("remaining", remaining)?;

    globals.set("Rules", rules)?;
    Ok(random)
}
