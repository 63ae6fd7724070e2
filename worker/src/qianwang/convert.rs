//! Conversions between the engine's values (`games::qianwang`) and the JavaScript shapes of the
//! guide: boards as column-major `board[x][y]` of `null | 'black' | 'red'`, moves as
//! `{from:[x,y], to:[x,y]}`. Reading from JS validates every part and says which one is wrong.

use games::qianwang::{Board, Move, Ply, Side, SIZE};
use rquickjs::{Array, Ctx, Object, Value};

/// Why a JS value is not what was expected; the message names the part (e.g. `board[2][1]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Shape(pub String);

impl Shape {
    fn new(s: impl Into<String>) -> Shape {
        Shape(s.into())
    }
}

/// A short description of a JS value for messages (`undefined`, `null`, `a string "x"`, ...).
pub(crate) fn describe(v: &Value<'_>) -> String {
    if v.is_undefined() {
        "undefined".into()
    } else if v.is_null() {
        "null".into()
    } else if let Some(b) = v.as_bool() {
        format!("{b}")
    } else if let Some(n) = v.as_number() {
        format!("the number {n}")
    } else if let Some(s) = v.as_string() {
        let s = s.to_string().unwrap_or_default();
        format!("the string {:?}", truncate(&s, 40))
    } else if v.is_array() {
        let len = v.as_array().map(|a| a.len()).unwrap_or(0);
        format!("an array of length {len}")
    } else if v.is_function() {
        "a function".into()
    } else {
        v.type_name().to_string()
    }
}

/// At most `max` characters of `s`, with `...` when cut.
pub(crate) fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut out: String = s.chars().take(max).collect();
        out.push_str("...");
        out
    }
}

/// A side from `'black'` / `'red'`.
pub(crate) fn side_from_js(v: &Value<'_>, what: &str) -> Result<Side, Shape> {
    side_of(v).ok_or_else(|| side_error(v, what))
}

/// `Some(side)` for `'black'` / `'red'`. `to_cstring` borrows an ASCII string's bytes without
/// copying (this runs 16 times per board).
fn side_of(v: &Value<'_>) -> Option<Side> {
    let s = v.as_string()?.clone().to_cstring().ok()?;
    match s.as_str() {
        "black" => Some(Side::Black),
        "red" => Some(Side::Red),
        _ => None,
    }
}

fn side_error(v: &Value<'_>, what: &str) -> Shape {
    Shape::new(format!(
        "{what} must be 'black' or 'red', got {}",
        describe(v)
    ))
}

/// A board from a JS `board[x][y]` array of 4 columns of 4 cells.
pub(crate) fn board_from_js(v: &Value<'_>, what: &str) -> Result<Board, Shape> {
    let cols = v.as_array().ok_or_else(|| {
        Shape::new(format!(
            "{what} must be an array of 4 columns (board[x][y]), got {}",
            describe(v)
        ))
    })?;
    if cols.len() != SIZE as usize {
        return Err(Shape::new(format!(
            "{what} must have 4 columns (board[x][y]), it has {}",
            cols.len()
        )));
    }
    let mut cells = [[None; 4]; 4];
    for (x, column) in cells.iter_mut().enumerate() {
        let col: Value = cols
            .get(x)
            .map_err(|e| Shape::new(format!("{what}[{x}]: {e}")))?;
        let col = col.as_array().ok_or_else(|| {
            Shape::new(format!(
                "{what}[{x}] must be an array of 4 cells, got {}",
                describe(&col)
            ))
        })?;
        if col.len() != SIZE as usize {
            return Err(Shape::new(format!(
                "{what}[{x}] must have 4 cells, it has {}",
                col.len()
            )));
        }
        for (y, cell) in column.iter_mut().enumerate() {
            let c: Value = col
                .get(y)
                .map_err(|e| Shape::new(format!("{what}[{x}][{y}]: {e}")))?;
            *cell = if c.is_null() || c.is_undefined() {
                None
            } else {
                match side_of(&c) {
                    Some(side) => Some(side),
                    None => {
                        return Err(side_error(
                            &c,
                            &format!("{what}[{x}][{y}] (null, 'black' or 'red')"),
                        ))
                    }
                }
            };
        }
    }
    Ok(Board::from_cells(cells))
}

/// The JS board: an array of 4 columns, `board[x][y]`.
pub(crate) fn board_to_js<'js>(ctx: &Ctx<'js>, board: &Board) -> rquickjs::Result<Array<'js>> {
    let cols = Array::new(ctx.clone())?;
    // One JS string per side, shared by every cell (not one per cell).
    let black = rquickjs::String::from_str(ctx.clone(), Side::Black.as_str())?.into_value();
    let red = rquickjs::String::from_str(ctx.clone(), Side::Red.as_str())?.into_value();
    let null = Value::new_null(ctx.clone());
    for (x, column) in board.cells().iter().enumerate() {
        let col = Array::new(ctx.clone())?;
        for (y, cell) in column.iter().enumerate() {
            let v = match cell {
                None => null.clone(),
                Some(Side::Black) => black.clone(),
                Some(Side::Red) => red.clone(),
            };
            col.set(y, v)?;
        }
        cols.set(x, col)?;
    }
    Ok(cols)
}

/// A point `[x, y]` of small integers. Integers off the board are kept (as 255 when they do not
/// fit) so the rules can call them off-board; anything else is a shape error.
fn point_from_js(v: &Value<'_>, owner: &str, field: &str) -> Result<[u8; 2], Shape> {
    // Messages are only formatted on error: this runs twice per Rules.apply.
    let bad = |why: String| Shape::new(format!("{owner}.{field}{why}"));
    let arr = v
        .as_array()
        .ok_or_else(|| bad(format!(" must be an array [x, y], got {}", describe(v))))?;
    if arr.len() != 2 {
        return Err(bad(format!(
            " must be an array [x, y] of length 2, it has length {}",
            arr.len()
        )));
    }
    let mut p = [0u8; 2];
    for (i, slot) in p.iter_mut().enumerate() {
        let c: Value = arr.get(i).map_err(|e| bad(format!("[{i}]: {e}")))?;
        let n = c
            .as_number()
            .ok_or_else(|| bad(format!("[{i}] must be an integer, got {}", describe(&c))))?;
        if n.fract() != 0.0 || !n.is_finite() {
            return Err(bad(format!("[{i}] must be an integer, got {n}")));
        }
        *slot = if (0.0..=254.0).contains(&n) {
            n as u8
        } else {
            255
        };
    }
    Ok(p)
}

/// A move `{from:[x,y], to:[x,y]}` (extra properties are ignored).
pub(crate) fn move_from_js(v: &Value<'_>, what: &str) -> Result<Move, Shape> {
    let obj = v
        .as_object()
        .filter(|_| !v.is_array() && !v.is_function())
        .ok_or_else(|| {
            Shape::new(format!(
                "{what} must be an object {{from:[x,y], to:[x,y]}}, got {}",
                describe(v)
            ))
        })?;
    let from: Value = obj
        .get("from")
        .map_err(|e| Shape::new(format!("{what}.from: {e}")))?;
    let to: Value = obj
        .get("to")
        .map_err(|e| Shape::new(format!("{what}.to: {e}")))?;
    Ok(Move {
        from: point_from_js(&from, what, "from")?,
        to: point_from_js(&to, what, "to")?,
    })
}

fn point_to_js<'js>(ctx: &Ctx<'js>, p: [u8; 2]) -> rquickjs::Result<Array<'js>> {
    let a = Array::new(ctx.clone())?;
    a.set(0, p[0] as i32)?;
    a.set(1, p[1] as i32)?;
    Ok(a)
}

/// `{from:[x,y], to:[x,y]}`.
pub(crate) fn move_to_js<'js>(ctx: &Ctx<'js>, m: &Move) -> rquickjs::Result<Object<'js>> {
    let o = Object::new(ctx.clone())?;
    o.set("from", point_to_js(ctx, m.from)?)?;
    o.set("to", point_to_js(ctx, m.to)?)?;
    Ok(o)
}

/// An array of moves.
pub(crate) fn moves_to_js<'js>(ctx: &Ctx<'js>, moves: &[Move]) -> rquickjs::Result<Array<'js>> {
    let a = Array::new(ctx.clone())?;
    for (i, m) in moves.iter().enumerate() {
        a.set(i, move_to_js(ctx, m)?)?;
    }
    Ok(a)
}

/// An array of points `[[x,y], ...]`.
pub(crate) fn points_to_js<'js>(ctx: &Ctx<'js>, pts: &[[u8; 2]]) -> rquickjs::Result<Array<'js>> {
    let a = Array::new(ctx.clone())?;
    for (i, p) in pts.iter().enumerate() {
        a.set(i, point_to_js(ctx, *p)?)?;
    }
    Ok(a)
}

/// One history entry: `{side, from, to, captured, pass:false}` or
/// `{side, from:null, to:null, captured:[], pass:true}`.
pub(crate) fn ply_to_js<'js>(ctx: &Ctx<'js>, ply: &Ply) -> rquickjs::Result<Object<'js>> {
    let o = Object::new(ctx.clone())?;
    o.set("side", ply.side.as_str())?;
    match &ply.mv {
        Some(m) => {
            o.set("from", point_to_js(ctx, m.from)?)?;
            o.set("to", point_to_js(ctx, m.to)?)?;
            o.set("pass", false)?;
        }
        None => {
            o.set("from", Value::new_null(ctx.clone()))?;
            o.set("to", Value::new_null(ctx.clone()))?;
            o.set("pass", true)?;
        }
    }
    o.set("captured", points_to_js(ctx, &ply.captured)?)?;
    Ok(o)
}
