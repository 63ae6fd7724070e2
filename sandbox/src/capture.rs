//! Bounded capture of a bot's stderr: the first and last bytes are kept for the replay, the
//! middle is counted and dropped, so a bot that floods stderr costs the worker no memory.

use std::collections::VecDeque;

/// Keeps at most `keep` bytes: half from the start, half from the end.
#[derive(Debug, Clone)]
pub struct HeadTail {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    head_cap: usize,
    tail_cap: usize,
    total: u64,
}

impl HeadTail {
    pub fn new(keep: usize) -> Self {
        let head_cap = keep / 2;
        HeadTail {
            head: Vec::new(),
            tail: VecDeque::new(),
            head_cap,
            tail_cap: keep - head_cap,
            total: 0,
        }
    }

    /// Every byte ever pushed (kept or not).
    pub fn total(&self) -> u64 {
        self.total
    }

    pub fn push(&mut self, mut data: &[u8]) {
        self.total += data.len() as u64;
        if self.head.len() < self.head_cap {
            let n = (self.head_cap - self.head.len()).min(data.len());
            self.head.extend_from_slice(&data[..n]);
            data = &data[n..];
        }
        if self.tail_cap == 0 {
            return;
        }
        if data.len() >= self.tail_cap {
            self.tail.clear();
            self.tail.extend(&data[data.len() - self.tail_cap..]);
            return;
        }
        let overflow = (self.tail.len() + data.len()).saturating_sub(self.tail_cap);
        self.tail.drain(..overflow);
        self.tail.extend(data);
    }

    /// Whether the byte sequence occurs in what was kept (used to recognise `std::bad_alloc`).
    pub fn contains(&self, needle: &[u8]) -> bool {
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        [&self.head[..], &tail[..]]
            .iter()
            .any(|hay| hay.windows(needle.len()).any(|w| w == needle))
    }

    /// The kept text (lossy UTF-8), with a marker where bytes were dropped.
    pub fn render(&self) -> String {
        let kept = self.head.len() as u64 + self.tail.len() as u64;
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        let mut out = String::from_utf8_lossy(&self.head).into_owned();
        if self.total > kept {
            out.push_str(&format!(
                "\n[... {} bytes of stderr omitted ...]\n",
                self.total - kept
            ));
        }
        out.push_str(&String::from_utf8_lossy(&tail));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_output_is_kept_whole() {
        let mut c = HeadTail::new(16);
        c.push(b"hello ");
        c.push(b"world");
        assert_eq!(c.render(), "hello world");
        assert_eq!(c.total(), 11);
    }

    #[test]
    fn long_output_keeps_head_and_tail() {
        let mut c = HeadTail::new(8);
        c.push(b"ABCD");
        for _ in 0..1000 {
            c.push(b"xxxxxxxx");
        }
        c.push(b"WXYZ");
        let r = c.render();
        assert!(r.starts_with("ABCD"), "{r}");
        assert!(r.ends_with("WXYZ"), "{r}");
        assert!(r.contains("8000 bytes of stderr omitted"), "{r}");
        assert!(c.contains(b"XYZ"));
        assert!(!c.contains(b"Q"));
    }
}
