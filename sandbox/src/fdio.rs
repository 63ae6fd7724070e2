//! Safe wrappers of the few fd syscalls the farm makes on its pipes and lock files: wait for
//! fds with a timeout (`ppoll`), read into and write from buffers, take an exclusive `flock`;
//! and `kill_pid`, the crate's one way to signal a single process, which never signals a pid
//! <= 0 (what `cgroup.procs` shows for a process outside our pid namespace is 0).
//! The one place outside the process layer's own set-up where these are called, so that the
//! rest of the farm has no `unsafe`.
//!
//! The fds are raw: a wrapper never takes ownership or closes one, and a stale fd only makes
//! the call fail (EBADF) or act on whatever file now has that number, as a plain syscall would;
//! the buffers are always Rust slices, so no call can write outside memory it was given.

use std::io;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::time::Duration;

/// Readable (or at end of file).
pub const IN: i16 = libc::POLLIN;
/// Writable.
pub const OUT: i16 = libc::POLLOUT;
/// The other end hung up (reported whatever was asked for).
pub const HUP: i16 = libc::POLLHUP;

/// One fd to wait for and what it is waited for; a negative fd is ignored by [`poll`].
#[derive(Debug, Clone, Copy)]
#[repr(transparent)]
pub struct PollFd(libc::pollfd);

impl PollFd {
    /// Wait for `events` ([`IN`], [`OUT`]) on `fd`.
    pub fn new(fd: RawFd, events: i16) -> Self {
        PollFd(libc::pollfd {
            fd,
            events,
            revents: 0,
        })
    }

    /// Wait until `fd` is readable.
    pub fn readable(fd: RawFd) -> Self {
        Self::new(fd, IN)
    }

    /// What happened on the fd in the last [`poll`] (0: nothing).
    pub fn revents(&self) -> i16 {
        self.0.revents
    }

    /// Whether anything happened on the fd in the last [`poll`] (ready, closed, an error).
    pub fn ready(&self) -> bool {
        self.0.revents != 0
    }
}

/// Wait at most `timeout` (to the nanosecond) until one of `fds` is ready; how many are.
/// `Ok(0)`: the time passed. An interrupted wait is an `Err` of kind `Interrupted`.
pub fn poll(fds: &mut [PollFd], timeout: Duration) -> io::Result<usize> {
    let ts = libc::timespec {
        tv_sec: timeout.as_secs().min(i32::MAX as u64) as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: `PollFd` is a transparent `pollfd`, and the slice holds `fds.len()` of them; the
    // timespec lives on the stack for the call; no signal mask is given.
    let r = unsafe {
        libc::ppoll(
            fds.as_mut_ptr().cast::<libc::pollfd>(),
            fds.len() as libc::nfds_t,
            &ts,
            std::ptr::null(),
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(r as usize)
}

/// One `read(2)` into `buf`: the bytes read (0: end of file). A non-blocking fd with nothing
/// to read gives an `Err` of kind `WouldBlock`.
pub fn read(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: the kernel writes at most `buf.len()` bytes into `buf`.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n as usize)
}

/// One `read(2)` into the spare capacity of `buf` (no zeroing of it first), appending what
/// was read: the bytes read (0: end of file, or no spare capacity).
pub fn read_append(fd: RawFd, buf: &mut Vec<u8>) -> io::Result<usize> {
    let spare = buf.spare_capacity_mut();
    // SAFETY: the kernel writes at most `spare.len()` bytes into the buffer's spare capacity.
    let n = unsafe { libc::read(fd, spare.as_mut_ptr().cast(), spare.len()) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let len = buf.len() + n as usize;
    // SAFETY: the kernel initialised the `n` bytes after the old length, within the capacity.
    unsafe { buf.set_len(len) };
    Ok(n as usize)
}

/// One `write(2)` of `data`: the bytes written. A full non-blocking pipe gives an `Err` of
/// kind `WouldBlock`.
pub fn write(fd: RawFd, data: &[u8]) -> io::Result<usize> {
    // SAFETY: the kernel reads at most `data.len()` bytes from `data`.
    let n = unsafe { libc::write(fd, data.as_ptr().cast(), data.len()) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n as usize)
}

/// Take an exclusive `flock` on `file`, waiting for it; held until every fd of that open file
/// is closed (for a `File`: until it is dropped).
pub fn lock_exclusive(file: &impl AsFd) -> io::Result<()> {
    flock(file, libc::LOCK_EX)
}

/// Take an exclusive `flock` on `file` if nobody holds one; whether it was taken.
pub fn try_lock_exclusive(file: &impl AsFd) -> bool {
    flock(file, libc::LOCK_EX | libc::LOCK_NB).is_ok()
}

fn flock(file: &impl AsFd, op: libc::c_int) -> io::Result<()> {
    // SAFETY: flock on a borrowed, open fd; it touches no memory.
    if unsafe { libc::flock(file.as_fd().as_raw_fd(), op) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Send `sig` to the one process `pid`; a pid <= 0 (0: our own process group, -1: everyone,
/// < -1: a group; what a `cgroup.procs` shows for a process outside our pid namespace is 0) is
/// never signalled. Whether the signal was sent.
pub(crate) fn kill_pid(pid: i32, sig: i32) -> bool {
    if pid <= 0 {
        return false;
    }
    // SAFETY: kill has no memory-safety preconditions; pid > 0 names one process.
    unsafe { libc::kill(pid, sig) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::{AsRawFd, OwnedFd};
    use std::time::Instant;

    fn pipe() -> (OwnedFd, OwnedFd) {
        nix::unistd::pipe2(nix::fcntl::OFlag::O_NONBLOCK | nix::fcntl::OFlag::O_CLOEXEC)
            .expect("pipe")
    }

    #[test]
    fn poll_read_and_write_on_a_pipe() {
        let (r, w) = pipe();
        let mut fds = [PollFd::readable(r.as_raw_fd()), PollFd::new(-1, IN)];
        let t0 = Instant::now();
        assert_eq!(poll(&mut fds, Duration::from_millis(20)).unwrap(), 0);
        assert!(t0.elapsed() >= Duration::from_millis(19));
        let mut buf = [0u8; 8];
        assert_eq!(
            read(r.as_raw_fd(), &mut buf).unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );
        assert_eq!(write(w.as_raw_fd(), b"hello").unwrap(), 5);
        assert_eq!(poll(&mut fds, Duration::from_secs(1)).unwrap(), 1);
        assert!(fds[0].ready() && fds[0].revents() & IN != 0 && !fds[1].ready());
        let mut v = Vec::with_capacity(3);
        assert_eq!(read_append(r.as_raw_fd(), &mut v).unwrap(), 3);
        assert_eq!(read(r.as_raw_fd(), &mut buf).unwrap(), 2);
        assert_eq!((&v[..], &buf[..2]), (&b"hel"[..], &b"lo"[..]));
        drop(w);
        assert_eq!(read(r.as_raw_fd(), &mut buf).unwrap(), 0);
    }

    #[test]
    fn an_exclusive_lock_is_taken_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.lock");
        let open = || std::fs::File::create(&path).unwrap();
        let (a, b) = (open(), open());
        lock_exclusive(&a).unwrap();
        assert!(!try_lock_exclusive(&b));
        drop(a);
        assert!(try_lock_exclusive(&b));
    }
}
