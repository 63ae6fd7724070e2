//! Deadline-bounded I/O on the non-blocking pipes of a proboj game: read one line, read a
//! message up to its `.` line, write everything; every wait also watches the run's stop flag
//! (Ctrl-C) so that nothing blocks a clean shutdown.

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use sandbox::fdio::{self, PollFd};

/// Why a read or write did not complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PipeError {
    /// The other end closed (EOF / EPIPE).
    Closed,
    /// The deadline passed.
    Timeout,
    /// The run was asked to stop.
    Stopped,
    /// More than the allowed bytes without completing.
    TooLong,
}

/// Buffered line reader over a non-blocking fd.
#[derive(Debug, Default)]
pub struct LineReader {
    buf: Vec<u8>,
    start: usize,
}

const TICK: Duration = Duration::from_millis(100);

/// Wait until `fd` is ready for `events`, the deadline passes, or the stop flag is set.
fn wait_ready(
    fd: RawFd,
    events: i16,
    deadline: Option<Instant>,
    stop: &AtomicBool,
) -> Result<(), PipeError> {
    loop {
        if stop.load(Ordering::Relaxed) {
            return Err(PipeError::Stopped);
        }
        let mut wait = TICK;
        if let Some(d) = deadline {
            let left = d.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(PipeError::Timeout);
            }
            wait = wait.min(left);
        }
        // Whole milliseconds, rounded up.
        let wait = Duration::from_millis(wait.as_micros().div_ceil(1000).max(1) as u64);
        if matches!(fdio::poll(&mut [PollFd::new(fd, events)], wait), Ok(n) if n > 0) {
            return Ok(());
        }
    }
}

/// One wait of at most a tick (and never past the deadline) for `fd` to become readable; what
/// it found is left to the read that follows.
fn poll_once(fd: RawFd, deadline: Option<Instant>) {
    let mut wait = TICK;
    if let Some(d) = deadline {
        wait = wait.min(d.saturating_duration_since(Instant::now()));
    }
    let wait = Duration::from_millis(wait.as_micros().div_ceil(1000) as u64);
    let _ = fdio::poll(&mut [PollFd::readable(fd)], wait);
}

impl LineReader {
    /// The next line (without LF / CRLF). At most `max` bytes per line.
    pub fn line(
        &mut self,
        fd: RawFd,
        deadline: Option<Instant>,
        stop: &AtomicBool,
        max: usize,
    ) -> Result<Vec<u8>, PipeError> {
        let mut first = true;
        loop {
            if let Some(pos) = self.buf[self.start..].iter().position(|&b| b == b'\n') {
                let end = self.start + pos;
                let mut line = self.buf[self.start..end].to_vec();
                self.start = end + 1;
                if self.start == self.buf.len() {
                    self.buf.clear();
                    self.start = 0;
                }
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Ok(line);
            }
            if self.buf.len() - self.start > max {
                return Err(PipeError::TooLong);
            }
            if self.start > 0 {
                self.buf.drain(..self.start);
                self.start = 0;
            }
            if first {
                // The other side usually has yet to answer (it runs only once we wait): poll
                // before the read, not after an EAGAIN, which saves a read per message.
                first = false;
                poll_once(fd, deadline);
            }
            // Read into spare capacity: no zeroing of 64 KiB per read (this loop is the hot path
            // of every READ PLAYER).
            self.buf.reserve(64 << 10);
            let err = match fdio::read_append(fd, &mut self.buf) {
                Ok(0) => return Err(PipeError::Closed),
                Ok(_) => continue,
                Err(err) => err,
            };
            match err.raw_os_error() {
                Some(libc::EAGAIN) | Some(libc::EINTR) => wait_ready(fd, fdio::IN, deadline, stop)?,
                _ => return Err(PipeError::Closed),
            }
        }
    }

    /// Lines up to (not including) a line holding only `.`; at most `max` bytes in total.
    pub fn message(
        &mut self,
        fd: RawFd,
        deadline: Option<Instant>,
        stop: &AtomicBool,
        max: usize,
    ) -> Result<Vec<Vec<u8>>, PipeError> {
        let mut lines = Vec::new();
        let mut total = 0;
        loop {
            let line = self.line(fd, deadline, stop, max)?;
            if line == b"." {
                return Ok(lines);
            }
            total += line.len() + 1;
            if total > max {
                return Err(PipeError::TooLong);
            }
            lines.push(line);
        }
    }
}

/// Write all of `data` to the non-blocking `fd` before `deadline`. `on_block` is called once
/// the first time the pipe is full (e.g. to let a stopped reader run).
pub fn write_all(
    fd: RawFd,
    mut data: &[u8],
    deadline: Option<Instant>,
    stop: &AtomicBool,
    mut on_block: impl FnMut(),
) -> Result<(), PipeError> {
    let mut blocked = false;
    while !data.is_empty() {
        let err = match fdio::write(fd, data) {
            Ok(n) if n > 0 => {
                data = &data[n..];
                continue;
            }
            // Nothing written of a non-empty slice: try again when the pipe is writable.
            Ok(_) => std::io::Error::from_raw_os_error(libc::EAGAIN),
            Err(err) => err,
        };
        match err.raw_os_error() {
            Some(libc::EAGAIN) | Some(libc::EINTR) => {
                if !blocked {
                    blocked = true;
                    on_block();
                }
                wait_ready(fd, fdio::OUT, deadline, stop)?;
            }
            _ => return Err(PipeError::Closed),
        }
    }
    Ok(())
}

/// A payload as written to a player: the lines, then `\n.\n`.
pub fn encode_payload(payload: &[Vec<u8>]) -> Vec<u8> {
    let mut out = payload.join(&b'\n');
    out.extend_from_slice(b"\n.\n");
    out
}
