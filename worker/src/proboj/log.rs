//! Per-process logs of a proboj game (`logs/<name>.gz` or `.txt`, or nothing when logs are
//! disabled) and the thread that drains every process's stderr into them, so that a process
//! flooding stderr never blocks and never costs more than a bounded amount of disk.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use flate2::write::GzEncoder;
use flate2::Compression;
use sandbox::fdio::{self, PollFd};

enum Sink {
    Off,
    Txt(BufWriter<File>),
    Gz(GzEncoder<BufWriter<File>>),
}

/// What a log has written so far: bytes of stderr, whether the cap note was written, whether
/// the last byte ended a line, and a `\r` held back until the next byte shows whether it
/// starts a CRLF.
struct State {
    sink: Sink,
    /// A duplicate of the process's stderr, read before every runner line.
    source: Option<OwnedFd>,
    written: u64,
    noted: bool,
    at_line_start: bool,
    held_cr: bool,
}

/// One process's log; shared between the game thread and the drain thread. Written as the
/// official runner writes it: stderr line by line (CRLF ends a line as LF does), runner lines
/// `[proboj] ...` never in the middle of a stderr line.
pub struct Log {
    state: Mutex<State>,
    cap: u64,
}

impl std::fmt::Debug for Log {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Log")
    }
}

impl Log {
    /// `logs/<name>.gz|txt` in `dir`, or a log that drops everything when `enabled` is false.
    /// At most `cap` bytes of stderr are written (runner lines always are).
    pub fn create(
        dir: &Path,
        name: &str,
        enabled: bool,
        gzip: bool,
        cap: u64,
    ) -> std::io::Result<Arc<Log>> {
        let sink = if !enabled {
            Sink::Off
        } else if gzip {
            let f = File::create(dir.join(format!("{name}.gz")))?;
            Sink::Gz(GzEncoder::new(BufWriter::new(f), Compression::fast()))
        } else {
            Sink::Txt(BufWriter::new(File::create(
                dir.join(format!("{name}.txt")),
            )?))
        };
        Ok(Arc::new(Log {
            state: Mutex::new(State {
                sink,
                source: None,
                written: 0,
                noted: false,
                at_line_start: true,
                held_cr: false,
            }),
            cap,
        }))
    }

    fn write_raw(sink: &mut Sink, data: &[u8]) {
        let r = match sink {
            Sink::Off => Ok(()),
            Sink::Txt(w) => w.write_all(data),
            Sink::Gz(w) => w.write_all(data),
        };
        if let Err(e) = r {
            tracing::warn!(error = %e, "proboj log write failed");
        }
    }

    /// Read the process's stderr (a duplicate of it) before every runner line, so that a line
    /// the process wrote before its answer is in the log before the next `[proboj] ...` line,
    /// as in the official runner's.
    pub fn attach(&self, stderr: OwnedFd) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).source = Some(stderr);
    }

    /// Read what `fd` holds now into the log, under the log's lock (a runner line never
    /// overtakes stderr already read). `Ok(0)` at its end.
    pub fn read_from(&self, fd: std::os::fd::RawFd, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut g = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let n = fdio::read(fd, buf)?;
        self.stderr_locked(&mut g, &buf[..n]);
        Ok(n)
    }

    /// Append stderr bytes (up to the cap; then one note that the rest is dropped).
    pub fn stderr(&self, data: &[u8]) {
        let mut g = self.state.lock().unwrap_or_else(|e| e.into_inner());
        self.stderr_locked(&mut g, data);
    }

    fn stderr_locked(&self, st: &mut State, data: &[u8]) {
        let room = self.cap.saturating_sub(st.written) as usize;
        let n = room.min(data.len());
        let text = crlf_to_lf(&data[..n], &mut st.held_cr);
        Self::write_raw(&mut st.sink, &text);
        if let Some(&last) = text.last() {
            st.at_line_start = last == b'\n';
        }
        st.written += n as u64;
        if n < data.len() && !st.noted {
            st.noted = true;
            let note = format!("stderr exceeded {} bytes; the rest is dropped", self.cap);
            Self::line(st, &note);
        }
    }

    /// Append a runner line `[proboj] <text>` (text may hold more lines, as the official
    /// runner's `[proboj] process terminated\n exit: N\n err: <nil>`).
    pub fn note(&self, text: &str) {
        let mut g = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(fd) = g.source.as_ref().map(|f| f.as_raw_fd()) {
            let mut buf = [0u8; 8 << 10];
            for _ in 0..64 {
                match fdio::read(fd, &mut buf) {
                    Ok(n) if n > 0 => self.stderr_locked(&mut g, &buf[..n]),
                    _ => break,
                }
            }
        }
        Self::line(&mut g, text);
    }

    fn line(st: &mut State, text: &str) {
        // A stderr line cut short (or a held `\r`) ends first, as the official runner's
        // line-by-line copy ends it.
        if st.held_cr {
            st.held_cr = false;
            Self::write_raw(&mut st.sink, b"\r");
            st.at_line_start = false;
        }
        if !st.at_line_start {
            Self::write_raw(&mut st.sink, b"\n");
        }
        Self::write_raw(&mut st.sink, format!("[proboj] {text}\n").as_bytes());
        st.at_line_start = true;
    }

    /// Flush and close the file (idempotent).
    pub fn close(&self) {
        let mut g = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let r = match std::mem::replace(&mut g.sink, Sink::Off) {
            Sink::Off => Ok(()),
            Sink::Txt(mut w) => w.flush(),
            Sink::Gz(w) => w.finish().and_then(|mut b| b.flush()),
        };
        if let Err(e) = r {
            tracing::warn!(error = %e, "proboj log close failed");
        }
    }
}

/// `data` with every CRLF made LF; a `\r` at the end is held in `held` for the next chunk.
fn crlf_to_lf(data: &[u8], held: &mut bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + 1);
    if std::mem::take(held) && data.first() != Some(&b'\n') {
        out.push(b'\r');
    }
    for (i, &b) in data.iter().enumerate() {
        if b == b'\r' {
            match data.get(i + 1) {
                Some(b'\n') => continue,
                None => {
                    *held = true;
                    continue;
                }
                Some(_) => {}
            }
        }
        out.push(b);
    }
    out
}

/// A thread reading every given stderr pipe into its log until stopped.
pub struct Drain {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Drain {
    pub fn start(pipes: Vec<(OwnedFd, Arc<Log>)>) -> Drain {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::Builder::new()
            .name("proboj-stderr".into())
            .spawn(move || drain_loop(pipes, &flag))
            .ok();
        Drain { stop, handle }
    }

    /// Read what is left in the pipes and end the thread.
    pub fn stop(mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Drain {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

fn drain_loop(pipes: Vec<(OwnedFd, Arc<Log>)>, stop: &AtomicBool) {
    let mut open: Vec<bool> = vec![true; pipes.len()];
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let stopping = stop.load(Ordering::SeqCst);
        let mut fds: Vec<PollFd> = pipes
            .iter()
            .zip(&open)
            .filter(|(_, o)| **o)
            .map(|((fd, _), _)| PollFd::readable(fd.as_raw_fd()))
            .collect();
        if fds.is_empty() {
            return;
        }
        let timeout = Duration::from_millis(if stopping { 0 } else { 50 });
        let _ = fdio::poll(&mut fds, timeout);
        let mut got_any = false;
        for (i, (fd, log)) in pipes.iter().enumerate() {
            if !open[i] {
                continue;
            }
            // Read what is there now (the pipe is non-blocking).
            for _ in 0..16 {
                match log.read_from(fd.as_raw_fd(), &mut buf) {
                    Ok(0) => open[i] = false,
                    Ok(_) => {
                        got_any = true;
                        continue;
                    }
                    Err(_) => {}
                }
                break;
            }
        }
        if stopping && !got_any {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::crlf_to_lf;

    #[test]
    fn crlf_ends_a_line_as_lf_does_across_chunks() {
        let mut held = false;
        assert_eq!(crlf_to_lf(b"a\r\nb\r", &mut held), b"a\nb");
        assert!(held);
        assert_eq!(crlf_to_lf(b"\nc\rd", &mut held), b"\nc\rd");
        assert!(!held);
        let mut held = true;
        assert_eq!(crlf_to_lf(b"x", &mut held), b"\rx");
    }
}
