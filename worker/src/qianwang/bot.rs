//! One JavaScript bot in its own QuickJS runtime: loaded once per match (its globals persist
//! between its turns), called once per turn with the guide's arguments, under a memory limit and
//! a wall-clock interrupt; every way the code can fail becomes a [`Forfeit`] with a detail.

use std::rc::Rc;
use std::time::{Duration, Instant};

use games::qianwang::{Forfeit, Game, Move, RuntimeKind, Side, POINTS_PER_MOVE};
use rquickjs::context::intrinsic::{
    Date, Eval, Json, MapSet, Promise, Proxy, RegExp, RegExpCompiler, TypedArrays,
};
use rquickjs::context::EvalOptions;
use rquickjs::{Context, Ctx, Function, Object, Persistent, Runtime, Value};

use super::alloc::LimitedAllocator;
use super::api::{self, random_seed, Shared};
use super::convert::{self, truncate};
use super::{Limits, LoadError};

/// The smallest memory limit applied (a smaller or zero `Limits::memory_bytes` means this).
const MIN_MEMORY_BYTES: usize = 1024 * 1024;
/// The most JS stack a bot may use (below the match thread's own stack).
const JS_STACK_BYTES: usize = 1024 * 1024;
/// How long describing a thrown value (which may run the bot's getters) may take.
const DESCRIBE_GRACE: Duration = Duration::from_millis(100);
/// The file name bot code is evaluated under (it appears in stack traces).
pub(crate) const FILE_NAME: &str = "bot.js";

/// How a turn went wrong: the fault and a human-readable detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TurnFault {
    pub fault: Forfeit,
    pub detail: String,
}

/// A loaded bot. Field order matters: the saved functions must go before the context and runtime.
pub(crate) struct JsBot {
    on_turn: Persistent<Function<'static>>,
    random: Persistent<Function<'static>>,
    ctx: Context,
    _rt: Runtime,
    shared: Rc<Shared>,
    side: Side,
    seed: u64,
    move_limit: Duration,
}

/// The engine could not be created (before any bot code ran): the host's problem.
fn engine(e: rquickjs::Error) -> LoadError {
    LoadError::EngineStart(e.to_string())
}

impl JsBot {
    /// Creates the runtime, installs the API and runs `code`, which must export `onTurn`.
    pub fn load(code: &str, side: Side, seed: u64, limits: &Limits) -> Result<JsBot, LoadError> {
        if let Some(offset) = code.find('\0') {
            return Err(LoadError::NulByte { offset });
        }
        let shared = Rc::new(Shared::new());
        // The allocator keeps the memory limit, so a real out-of-memory is known as one.
        let heap = LimitedAllocator::new(
            limits.memory_bytes.max(MIN_MEMORY_BYTES),
            shared.refused.clone(),
        );
        let rt = Runtime::new_with_alloc(heap).map_err(engine)?;
        rt.set_max_stack_size(JS_STACK_BYTES);
        let s = shared.clone();
        rt.set_interrupt_handler(Some(Box::new(move || s.should_interrupt())));
        let ctx = Context::custom::<(
            Date,
            Eval,
            RegExpCompiler,
            RegExp,
            Json,
            MapSet,
            TypedArrays,
            Promise,
            Proxy,
        )>(&rt)
        .map_err(engine)?;
        shared.rng.set(random_seed(seed, side, 0));
        shared
            .deadline
            .set(Some(Instant::now() + Duration::from_millis(limits.load_ms)));
        let loaded = ctx.with(|ctx| -> Result<_, LoadError> {
            let random =
                api::install(&ctx, &shared).map_err(|e| load_error(&ctx, &shared, limits, e))?;
            let mut opts = EvalOptions::default();
            opts.global = true;
            opts.strict = false;
            opts.filename = Some(FILE_NAME.to_string());
            ctx.eval_with_options::<Value, _>(code, opts)
                .map_err(|e| load_error(&ctx, &shared, limits, e))?;
            let on_turn = find_on_turn(&ctx).map_err(|e| match e {
                Ok(found) => LoadError::NoOnTurn { found },
                Err(e) => load_error(&ctx, &shared, limits, e),
            })?;
            Ok((
                Persistent::save(&ctx, on_turn),
                Persistent::save(&ctx, random),
            ))
        });
        shared.deadline.set(None);
        let (on_turn, random) = loaded?;
        Ok(JsBot {
            on_turn,
            random,
            ctx,
            _rt: rt,
            shared,
            side,
            seed,
            move_limit: Duration::from_millis(limits.move_ms),
        })
    }

    /// Calls `onTurn(me, opponent, game)` for the side to move of `game` (which must be this
    /// bot's side and have legal moves). Returns the move as the bot wrote it (not yet checked
    /// for legality) and the thinking points used.
    pub fn turn(&mut self, game: &Game, legal: &[Move]) -> Result<(Move, u32), TurnFault> {
        let sh = &self.shared;
        sh.points.set(POINTS_PER_MOVE);
        sh.exhausted.set(false);
        sh.interrupted.set(false);
        sh.refused.set(false);
        sh.rng
            .set(random_seed(self.seed, self.side, game.turn_number()));
        sh.deadline.set(Some(Instant::now() + self.move_limit));
        let limit_ms = self.move_limit.as_millis();
        let result = self.ctx.with(|ctx| -> Result<Move, TurnFault> {
            let on_turn = self
                .on_turn
                .clone()
                .restore(&ctx)
                .map_err(|e| error_fault(format!("the bot's onTurn is gone: {e}")))?;
            let random = self
                .random
                .clone()
                .restore(&ctx)
                .map_err(|e| error_fault(format!("game.random is gone: {e}")))?;
            let args = arguments(&ctx, game, legal, self.side, random)
                .map_err(|e| turn_fault(&ctx, sh, limit_ms, e))?;
            let value: Value = on_turn
                .call(args)
                .map_err(|e| turn_fault(&ctx, sh, limit_ms, e))?;
            let parsed = convert::move_from_js(&value, "onTurn's return value");
            // A getter on the returned object may have thrown, looped or spent points.
            if sh.exhausted.get()
                || sh.interrupted.get()
                || (parsed.is_err() && ctx.has_exception())
            {
                return Err(turn_fault(&ctx, sh, limit_ms, rquickjs::Error::Exception));
            }
            parsed.map_err(|e| TurnFault {
                fault: Forfeit::Illegal,
                detail: format!("malformed move: {}", e.0),
            })
        });
        sh.deadline.set(None);
        let used = POINTS_PER_MOVE - sh.points.get();
        result.map(|m| (m, used))
    }
}

fn error_fault(detail: String) -> TurnFault {
    TurnFault {
        fault: Forfeit::Error,
        detail,
    }
}

/// `me`, `opponent`, `game` for the side to move.
fn arguments<'js>(
    ctx: &Ctx<'js>,
    game: &Game,
    legal: &[Move],
    side: Side,
    random: Function<'js>,
) -> rquickjs::Result<(Object<'js>, Object<'js>, Object<'js>)> {
    let board = game.board();
    let player = |s: Side| -> rquickjs::Result<Object<'js>> {
        let o = Object::new(ctx.clone())?;
        o.set("side", s.as_str())?;
        o.set("pieces", convert::points_to_js(ctx, &board.pieces(s))?)?;
        o.set("capturedCount", game.captured_by(s))?;
        Ok(o)
    };
    let me = player(side)?;
    let opponent = player(side.other())?;
    let g = Object::new(ctx.clone())?;
    g.set("board", convert::board_to_js(ctx, board)?)?;
    g.set("turnNumber", game.turn_number())?;
    g.set("noCaptureMoves", game.no_capture_moves())?;
    g.set("legalMoves", convert::moves_to_js(ctx, legal)?)?;
    let history = rquickjs::Array::new(ctx.clone())?;
    for (i, ply) in game.history().iter().enumerate() {
        history.set(i, convert::ply_to_js(ctx, ply)?)?;
    }
    g.set("history", history)?;
    g.set("random", random)?;
    Ok((me, opponent, g))
}

/// `module.exports` if it is a function, else `module.exports.onTurn`. `Err(Ok(found))` says
/// what was there instead; `Err(Err(e))` is an exception while looking. Read by evaluating
/// `module` in the global scope, so a top-level `let module = ...` of the bot is the one used.
fn find_on_turn<'js>(ctx: &Ctx<'js>) -> Result<Function<'js>, Result<String, rquickjs::Error>> {
    let module: Value = ctx
        .eval("typeof module === 'undefined' ? undefined : module")
        .map_err(Err)?;
    let exports: Value = match module.as_object() {
        Some(m) => m.get("exports").map_err(Err)?,
        None => {
            return Err(Ok(format!(
                "`module` is {}, not an object with exports",
                convert::describe(&module)
            )))
        }
    };
    if let Some(f) = exports.as_function() {
        return Ok(f.clone());
    }
    if let Some(obj) = exports.as_object() {
        let f: Value = obj.get("onTurn").map_err(Err)?;
        if let Some(f) = f.as_function() {
            return Ok(f.clone());
        }
        if !f.is_undefined() {
            return Err(Ok(format!(
                "module.exports.onTurn is {}, not a function",
                convert::describe(&f)
            )));
        }
    }
    let declared: bool = ctx.eval("typeof onTurn === 'function'").map_err(Err)?;
    let hint = if declared {
        " (a function onTurn is declared but not exported)"
    } else {
        ""
    };
    Err(Ok(format!(
        "module.exports is {} with no onTurn function{hint}",
        convert::describe(&exports)
    )))
}

/// What a failed call means: points exhausted and timeout first (the bot may have caught the
/// exception), then out of memory, then the thrown value.
fn turn_fault(ctx: &Ctx<'_>, sh: &Shared, limit_ms: u128, e: rquickjs::Error) -> TurnFault {
    if sh.exhausted.get() {
        return TurnFault {
            fault: Forfeit::Runtime(RuntimeKind::PointsExhausted),
            detail: format!(
                "Rules.apply was called with no thinking points left ({POINTS_PER_MOVE} per move)"
            ),
        };
    }
    if sh.interrupted.get() {
        return TurnFault {
            fault: Forfeit::Runtime(RuntimeKind::Timeout),
            detail: format!("onTurn did not return within the {limit_ms} ms move limit"),
        };
    }
    match thrown(ctx, sh, e) {
        Thrown::Memory(d) => TurnFault {
            fault: Forfeit::Runtime(RuntimeKind::Memory),
            detail: d,
        },
        Thrown::Value(d) => TurnFault {
            fault: Forfeit::Error,
            detail: format!("onTurn threw {d}"),
        },
    }
}

/// A failed load as a [`LoadError`].
fn load_error(ctx: &Ctx<'_>, sh: &Shared, limits: &Limits, e: rquickjs::Error) -> LoadError {
    if sh.interrupted.get() {
        return LoadError::Timeout { ms: limits.load_ms };
    }
    if sh.exhausted.get() {
        return LoadError::Threw {
            message: format!(
                "Rules.apply was called more than {POINTS_PER_MOVE} times while loading"
            ),
        };
    }
    if let rquickjs::Error::Exception = e {
        let v = ctx.catch();
        if let Some(obj) = v.as_object().filter(|_| v.is_error()) {
            let name: Option<String> = obj.get("name").ok();
            if name.as_deref() == Some("SyntaxError") {
                let message: String = obj.get("message").unwrap_or_default();
                let stack: String = obj.get("stack").unwrap_or_default();
                let (line, column) = location(&stack);
                return LoadError::Syntax {
                    line,
                    column,
                    message,
                };
            }
        }
        return match describe_thrown(ctx, sh, v) {
            Thrown::Memory(_) => LoadError::Memory {
                limit_bytes: limits.memory_bytes,
            },
            Thrown::Value(message) => LoadError::Threw { message },
        };
    }
    match e {
        rquickjs::Error::Allocation => LoadError::Memory {
            limit_bytes: limits.memory_bytes,
        },
        other => LoadError::Engine(other.to_string()),
    }
}

enum Thrown {
    Memory(String),
    Value(String),
}

fn thrown(ctx: &Ctx<'_>, sh: &Shared, e: rquickjs::Error) -> Thrown {
    match e {
        rquickjs::Error::Exception => describe_thrown(ctx, sh, ctx.catch()),
        rquickjs::Error::Allocation => Thrown::Memory("an allocation failed".into()),
        other => Thrown::Value(other.to_string()),
    }
}

/// Describes a thrown value, giving the bot's getters at most [`DESCRIBE_GRACE`].
fn describe_thrown(ctx: &Ctx<'_>, sh: &Shared, v: Value<'_>) -> Thrown {
    sh.deadline.set(Some(Instant::now() + DESCRIBE_GRACE));
    let out = if let Some(obj) = v.as_object().filter(|_| v.is_error()) {
        let name: String = obj.get("name").unwrap_or_else(|_| "Error".into());
        let message: String = obj.get("message").unwrap_or_default();
        // What QuickJS throws when the allocator refused: only then is it the memory limit
        // (a bot may throw an error of that name and message itself).
        if sh.refused.get() && name == "InternalError" && message == "out of memory" {
            sh.deadline.set(None);
            return Thrown::Memory("the bot went over its memory limit (out of memory)".into());
        }
        let stack: String = obj.get("stack").unwrap_or_default();
        let at = match location(&stack) {
            (Some(l), Some(c)) => format!(" at {FILE_NAME}:{l}:{c}"),
            (Some(l), None) => format!(" at {FILE_NAME}:{l}"),
            _ => String::new(),
        };
        Thrown::Value(format!("{name}: {}{at}", truncate(&message, 300)))
    } else if v.is_null() && sh.refused.get() {
        // Out of memory even for the error object.
        Thrown::Memory("the bot went over its memory limit (out of memory)".into())
    } else if v.is_null() && ctx.has_exception() {
        Thrown::Value("an exception that could not be read".into())
    } else {
        let text = match v.as_string() {
            Some(s) => format!(
                "the string {:?}",
                truncate(&s.to_string().unwrap_or_default(), 300)
            ),
            None => convert::describe(&v),
        };
        Thrown::Value(text)
    };
    sh.deadline.set(None);
    out
}

/// The first `bot.js:LINE:COL` in a stack trace.
pub(crate) fn location(stack: &str) -> (Option<u32>, Option<u32>) {
    let needle = format!("{FILE_NAME}:");
    let Some(i) = stack.find(&needle) else {
        return (None, None);
    };
    let rest = &stack[i + needle.len()..];
    let mut parts = rest.split(':');
    let num = |s: Option<&str>| -> Option<u32> {
        let s = s?;
        let digits: String = s.chars().take_while(|c| c.is_ascii_digit()).collect();
        digits.parse().ok()
    };
    let line = num(parts.next());
    let column = num(parts.next());
    (line, column)
}
