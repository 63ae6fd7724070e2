//! What the worker and its JavaScript child process (`farm __js-bot`, [`super::child`]) say to
//! each other over the child's stdin and stdout: length-prefixed JSON frames (4 bytes big-endian
//! length, then the JSON of one [`Request`] or [`Reply`]). Small on purpose: the child hosts
//! the bots of one match, the worker keeps the match and the clock.

use std::io::{Read, Write};

use games::qianwang::{Forfeit, Move, Ply, RuntimeKind, Side};
use serde::{Deserialize, Serialize};

use super::{Limits, LoadError};

/// The largest frame either side accepts (a program is far smaller; the ladder caps code).
pub(crate) const MAX_FRAME: usize = 16 << 20;

/// From the worker to the child.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) enum Request {
    /// Load `side`'s program (the child answers [`Reply::Loaded`] or [`Reply::LoadFailed`]).
    Load {
        side: Side,
        code: String,
        seed: u64,
        limits: Limits,
    },
    /// The plies played since the last request, then `side` (loaded) is to move.
    Turn { side: Side, plies: Vec<Ply> },
}

/// From the child to the worker.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) enum Reply {
    /// Sent once at start, before any request is read.
    Ready,
    Loaded,
    LoadFailed(LoadError),
    /// The move as the bot wrote it (not yet checked) and the thinking points it used.
    Moved {
        mv: Move,
        points: u32,
    },
    /// The bot lost this turn.
    Fault {
        fault: WireForfeit,
        detail: String,
    },
    /// The request made no sense to the child: the host's problem, never a bot's.
    Host(String),
}

/// [`Forfeit`] on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum WireForfeit {
    Illegal,
    Error,
    Runtime(RuntimeKind),
}

impl From<Forfeit> for WireForfeit {
    fn from(f: Forfeit) -> Self {
        match f {
            Forfeit::Illegal => WireForfeit::Illegal,
            Forfeit::Error => WireForfeit::Error,
            Forfeit::Runtime(k) => WireForfeit::Runtime(k),
        }
    }
}

impl From<WireForfeit> for Forfeit {
    fn from(f: WireForfeit) -> Self {
        match f {
            WireForfeit::Illegal => Forfeit::Illegal,
            WireForfeit::Error => Forfeit::Error,
            WireForfeit::Runtime(k) => Forfeit::Runtime(k),
        }
    }
}

/// A frame that could not be read or written.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FrameError {
    #[error("the pipe failed: {0}")]
    Io(#[from] std::io::Error),
    #[error("a frame of {0} bytes is over the limit of {MAX_FRAME}")]
    TooLong(usize),
    #[error("a frame is not a message: {0}")]
    Json(#[from] serde_json::Error),
}

/// The bytes of one frame holding `msg`.
pub(crate) fn encode<T: Serialize>(msg: &T) -> Result<Vec<u8>, FrameError> {
    let body = serde_json::to_vec(msg)?;
    let len = u32::try_from(body.len())
        .ok()
        .filter(|n| (*n as usize) <= MAX_FRAME)
        .ok_or(FrameError::TooLong(body.len()))?;
    let mut out = Vec::with_capacity(4 + body.len());
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&body);
    Ok(out)
}

/// The body length a frame header announces, if it is within the limit.
pub(crate) fn body_len(header: [u8; 4]) -> Result<usize, FrameError> {
    let n = u32::from_be_bytes(header) as usize;
    if n > MAX_FRAME {
        return Err(FrameError::TooLong(n));
    }
    Ok(n)
}

/// Reads one frame from a blocking reader (the child's stdin). `Ok(None)`: clean end of input.
pub(crate) fn read_blocking<T: for<'de> Deserialize<'de>>(
    r: &mut impl Read,
) -> Result<Option<T>, FrameError> {
    let mut header = [0u8; 4];
    match r.read_exact(&mut header) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e.into()),
    }
    let mut body = vec![0u8; body_len(header)?];
    r.read_exact(&mut body)?;
    Ok(Some(serde_json::from_slice(&body)?))
}

/// Writes one frame to a blocking writer (the child's stdout) and flushes it.
pub(crate) fn write_blocking<T: Serialize>(w: &mut impl Write, msg: &T) -> Result<(), FrameError> {
    w.write_all(&encode(msg)?)?;
    w.flush()?;
    Ok(())
}
