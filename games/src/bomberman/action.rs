//! What a player does in one turn (a move and a bomb flag), the strict parser of a bot's answer
//! line `t M b`, and the compact replay form of an action ("U1", "S0").

use thiserror::Error;

/// Longest accepted answer line in bytes, without its line terminator.
pub const MAX_ANSWER_BYTES: usize = 256;

/// One step: up = y-1, down = y+1, left = x-1, right = x+1, or stay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Move {
    Up,
    Down,
    Left,
    Right,
    Stay,
}

impl Move {
    /// The protocol letter.
    pub fn letter(self) -> char {
        match self {
            Move::Up => 'U',
            Move::Down => 'D',
            Move::Left => 'L',
            Move::Right => 'R',
            Move::Stay => 'S',
        }
    }

    /// The move of a protocol letter (uppercase only).
    pub fn from_letter(c: u8) -> Option<Move> {
        Some(match c {
            b'U' => Move::Up,
            b'D' => Move::Down,
            b'L' => Move::Left,
            b'R' => Move::Right,
            b'S' => Move::Stay,
            _ => return None,
        })
    }

    /// Every move, in protocol order.
    pub const ALL: [Move; 5] = [Move::Up, Move::Down, Move::Left, Move::Right, Move::Stay];
}

/// A player's decision for one turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Action {
    pub mv: Move,
    pub bomb: bool,
}

impl Action {
    /// Stay without a bomb.
    pub const STAY: Action = Action {
        mv: Move::Stay,
        bomb: false,
    };

    /// The compact replay form: move letter then bomb digit, e.g. "U1".
    pub fn compact(self) -> String {
        format!("{}{}", self.mv.letter(), u8::from(self.bomb))
    }

    /// Parses the compact replay form.
    pub fn from_compact(s: &str) -> Option<Action> {
        match s.as_bytes() {
            [m, b @ (b'0' | b'1')] => Some(Action {
                mv: Move::from_letter(*m)?,
                bomb: *b == b'1',
            }),
            _ => None,
        }
    }
}

/// The engine's input for one player on one turn (ignored for dead players).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    Act(Action),
    /// A protocol fault (timeout, crash, bad output, ...): the player dies in phase 1.
    Fault,
}

/// Why an answer line is not a valid `t M b`.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AnswerError {
    #[error("answer line is {len} bytes long, more than the {MAX_ANSWER_BYTES} allowed")]
    TooLong { len: usize },
    #[error("answer line is not valid UTF-8 (bad byte at offset {offset})")]
    NotUtf8 { offset: usize },
    #[error("empty answer line (expected `{turn} M b`)")]
    Empty { turn: u32 },
    #[error("answer contains the control character {ch:?} at byte {offset}; fields are separated by single spaces")]
    ControlChar { ch: char, offset: usize },
    #[error("answer has a leading or trailing space or two spaces in a row at byte {offset} (expected `t M b` with single spaces)")]
    ExtraSpaces { offset: usize },
    #[error("answer is missing the {what} (got {got:?}, expected `t M b`)")]
    MissingField { what: &'static str, got: String },
    #[error("answer has {count} fields, more than the 3 of `t M b` (extra: {extra:?})")]
    ExtraField { count: usize, extra: String },
    #[error("turn number {got:?} is not a plain decimal number (digits only, no sign, no leading zeros)")]
    BadTurnNumber { got: String },
    #[error("answered turn {answered} on turn {expected}")]
    WrongTurn { answered: u64, expected: u32 },
    #[error("move {got:?} is not one of U D L R S (uppercase, one letter)")]
    BadMove { got: String },
    #[error("bomb flag {got:?} is not 0 or 1")]
    BadBomb { got: String },
}

fn shorten(s: &str) -> String {
    s.chars().take(32).collect()
}

/// Parses one answer line (WITHOUT its LF or CRLF) for turn `turn`, strictly: `t M b`.
pub fn parse_answer(line: &[u8], turn: u32) -> Result<Action, AnswerError> {
    if line.len() > MAX_ANSWER_BYTES {
        return Err(AnswerError::TooLong { len: line.len() });
    }
    let text = std::str::from_utf8(line).map_err(|e| AnswerError::NotUtf8 {
        offset: e.valid_up_to(),
    })?;
    if text.is_empty() {
        return Err(AnswerError::Empty { turn });
    }
    if let Some((offset, ch)) = text.char_indices().find(|(_, c)| c.is_control()) {
        return Err(AnswerError::ControlChar { ch, offset });
    }
    let b = text.as_bytes();
    if b[0] == b' ' {
        return Err(AnswerError::ExtraSpaces { offset: 0 });
    }
    if let Some(i) = b.windows(2).position(|w| w == b"  ") {
        return Err(AnswerError::ExtraSpaces { offset: i + 1 });
    }
    if b[b.len() - 1] == b' ' {
        return Err(AnswerError::ExtraSpaces {
            offset: b.len() - 1,
        });
    }
    let fields: Vec<&str> = text.split(' ').collect();
    if fields.len() > 3 {
        return Err(AnswerError::ExtraField {
            count: fields.len(),
            extra: shorten(fields[3]),
        });
    }
    let t = fields[0];
    let plain = t.bytes().all(|c| c.is_ascii_digit()) && (t == "0" || !t.starts_with('0'));
    let answered: u64 = match (plain, t.parse()) {
        (true, Ok(v)) => v,
        _ => return Err(AnswerError::BadTurnNumber { got: shorten(t) }),
    };
    if answered != u64::from(turn) {
        return Err(AnswerError::WrongTurn {
            answered,
            expected: turn,
        });
    }
    let Some(m) = fields.get(1) else {
        return Err(AnswerError::MissingField {
            what: "move letter",
            got: shorten(text),
        });
    };
    let mv = match m.as_bytes() {
        [c] => Move::from_letter(*c),
        _ => None,
    }
    .ok_or_else(|| AnswerError::BadMove { got: shorten(m) })?;
    let Some(f) = fields.get(2) else {
        return Err(AnswerError::MissingField {
            what: "bomb flag",
            got: shorten(text),
        });
    };
    let bomb = match *f {
        "0" => false,
        "1" => true,
        _ => return Err(AnswerError::BadBomb { got: shorten(f) }),
    };
    Ok(Action { mv, bomb })
}
