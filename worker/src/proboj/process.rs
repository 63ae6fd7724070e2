//! One sandboxed process of a proboj game (the server or a player): started in the game folder
//! with raw, non-blocking stdin/stdout/stderr pipes, extra readable (and, for a player's private
//! copy of its folder, writable) folders, signals to its
//! process group, and a final kill-reap-verify step that returns its exit status.

use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::time::Duration;

use sandbox::lock::FsPolicy;
use sandbox::prepare::{self, Spec};
use sandbox::process::Process;
use sandbox::{Limits, SandboxConfig, SandboxMode, StartError};

/// What to start.
#[derive(Debug, Clone)]
pub struct Launch {
    /// Absolute program path.
    pub program: PathBuf,
    pub args: Vec<String>,
    /// Working directory (readable, not writable).
    pub cwd: PathBuf,
    /// Folders (or files) the process may read besides /usr and `cwd`.
    pub read: Vec<PathBuf>,
    /// Folders the process may write (a player's private copy of its folder).
    pub write: Vec<PathBuf>,
    pub limits: Limits,
}

/// A running sandboxed process.
#[derive(Debug)]
pub struct SandboxedProcess {
    proc_: Option<Process>,
    status: Option<i32>,
}

impl SandboxedProcess {
    /// Start `launch` under `cfg`; `slot` picks the uid of the pool in `Full` mode (distinct per
    /// concurrent process). A [`StartError::Host`] is the host's problem (the game must fail
    /// as such); only [`StartError::Program`] is the program's own.
    pub fn start(cfg: &SandboxConfig, launch: &Launch, slot: usize) -> Result<Self, StartError> {
        let mut extra = FsPolicy::default();
        if cfg.effective_mode() != SandboxMode::Off {
            extra.read.push(launch.cwd.clone());
            extra
                .read
                .extend(launch.read.iter().filter(|p| p.exists()).cloned());
            extra.write.extend(launch.write.iter().cloned());
        }
        let mut env = game_env();
        // As Go's exec does for a command with a working directory (the official runner's).
        env.push((
            "PWD".to_owned(),
            // Cleaned lexically, as Go's `filepath.Abs` does.
            normalize(&launch.cwd).to_string_lossy().into_owned(),
        ));
        if cfg.effective_mode() != SandboxMode::Off {
            if let Some(why) = unrunnable_interpreter(&launch.program, &env[0].1) {
                return Err(StartError::Host(sandbox::HostError::Setup(why)));
            }
            extra.exec.extend(interpreters(&launch.program, &env[0].1));
        }
        let spec = Spec {
            program: &launch.program,
            args: &launch.args,
            env,
            copy_program: false,
            extra,
            work_dir: None,
            tmpfs_scratch: true,
            cwd: Some(launch.cwd.clone()),
            stdin_null: false,
            limits: launch.limits.clone(),
            slot,
        };
        let proc_ = prepare::start(cfg, &spec)?;
        Ok(SandboxedProcess {
            proc_: Some(proc_),
            status: None,
        })
    }

    /// The host pid of the main process (= its process group id), if it ever ran.
    pub fn pid(&self) -> Option<i32> {
        self.proc_.as_ref().and_then(|p| p.bot_pid)
    }

    /// Non-blocking write end of its stdin (None once closed).
    pub fn stdin_fd(&self) -> Option<RawFd> {
        self.proc_
            .as_ref()
            .and_then(|p| p.stdin.as_ref())
            .map(|f| f.as_raw_fd())
    }

    /// Non-blocking read end of its stdout.
    pub fn stdout_fd(&self) -> Option<RawFd> {
        self.proc_.as_ref().map(|p| p.stdout.as_raw_fd())
    }

    /// A duplicate of the non-blocking read end of its stderr (for a drain thread).
    pub fn stderr_dup(&self) -> Option<std::os::fd::OwnedFd> {
        self.proc_.as_ref().and_then(|p| p.stderr.try_clone().ok())
    }

    /// Send `sig` to its process group.
    pub fn signal(&self, sig: i32) {
        if let Some(p) = &self.proc_ {
            p.signal_group(sig);
        }
    }

    /// Wait up to `timeout` for it to end by itself, keeping its own exit status (so that a
    /// later [`SandboxedProcess::finish`] does not report our SIGKILL instead). True if it ended.
    pub fn wait_exit(&mut self, timeout: Duration) -> bool {
        if self.status.is_none() {
            if let Some(p) = self.proc_.as_mut() {
                self.status = p.wait_status(timeout);
            }
        }
        self.status.is_some()
    }

    /// Whether its main process has ended, without waiting (as the official runner's
    /// `IsRunning`: what it started does not keep it running). Sandboxed, its reaping init
    /// reports the main process's status as it ends (and then kills what it left); unsandboxed,
    /// it is our child.
    pub fn has_exited(&mut self) -> bool {
        self.proc_.is_none() || self.wait_exit(Duration::ZERO)
    }

    /// Kill every process of it now (does not wait).
    pub fn kill(&self) {
        if let Some(p) = &self.proc_ {
            p.kill_now();
        }
    }

    /// Kill everything it started, reap, verify. Returns its wait status (if known) and what
    /// could not be removed (empty when clean).
    pub fn finish(&mut self) -> (Option<i32>, Vec<String>) {
        let Some(mut p) = self.proc_.take() else {
            return (self.status, Vec::new());
        };
        // SIGCONT first: a stopped process must be able to die of SIGKILL at once (it does,
        // but its children stopped in the same group get the same treatment).
        p.signal_group(libc::SIGCONT);
        p.kill_now();
        if self.status.is_none() {
            self.status = p.wait_status(Duration::from_secs(2));
        }
        // Under a pid namespace the kill takes its init along, which then reports nothing:
        // the process died of our SIGKILL (raw wait status = the signal number).
        if self.status.is_none() {
            self.status = Some(libc::SIGKILL);
        }
        let left = p.cleanup();
        (self.status, left)
    }
}

impl Drop for SandboxedProcess {
    fn drop(&mut self) {
        let (_, left) = self.finish();
        if !left.is_empty() {
            tracing::warn!(?left, "proboj process left things behind");
        }
    }
}

/// "exited with status N" / "killed by signal N (NAME)" for a raw wait status.
pub fn describe_status(status: Option<i32>) -> String {
    match status {
        None => "ended (status unknown)".to_owned(),
        Some(st) if libc::WIFEXITED(st) => format!("exited with status {}", libc::WEXITSTATUS(st)),
        Some(st) if libc::WIFSIGNALED(st) => {
            let sig = libc::WTERMSIG(st);
            let name = nix::sys::signal::Signal::try_from(sig)
                .map(|s| s.as_str().to_owned())
                .unwrap_or_else(|_| "?".into());
            format!("killed by signal {sig} ({name})")
        }
        Some(st) => format!("ended with wait status {st}"),
    }
}

/// PATH when the runner has none.
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// The environment of every process of a game (PATH first): the runner's `PATH` and locale
/// (`LANG`, `LANGUAGE`, `LC_*`), as the official runner, which passes its whole environment,
/// would give them; nothing else (no farm setting, key or broker URL). `start` adds `PWD`.
pub fn game_env() -> Vec<(String, String)> {
    let path = std::env::var("PATH")
        .ok()
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| DEFAULT_PATH.to_owned());
    let mut env = vec![("PATH".to_owned(), path)];
    for (k, v) in std::env::vars_os() {
        let (Some(k), Some(v)) = (k.to_str(), v.to_str()) else {
            continue;
        };
        if k == "LANG" || k == "LANGUAGE" || k.starts_with("LC_") {
            env.push((k.to_owned(), v.to_owned()));
        }
    }
    env
}

/// `path` with `.` and `..` removed without looking at the disk (as Go's `filepath.Clean`).
pub fn normalize(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The programs the kernel and `env` run for a `#!` script, which must be executable in the
/// sandbox (only the program itself is): `#!/usr/bin/python3` gives that interpreter;
/// `#!/bin/env [-S] python` gives env and the first `python` in `path` (the process's PATH)
/// that is a system program (under /usr: env passes over others the sandbox will not run).
/// Nothing for a program that is not a script.
pub fn interpreters(program: &Path, path: &str) -> Vec<PathBuf> {
    let Some(line) = shebang(program) else {
        return Vec::new();
    };
    let mut words = line.split_whitespace();
    let Some(interpreter) = words.next() else {
        return Vec::new();
    };
    let interpreter = PathBuf::from(interpreter);
    let mut out = vec![interpreter.clone()];
    if interpreter.file_name().is_some_and(|f| f == "env") {
        if let Some(name) = words.find(|w| !w.starts_with('-')) {
            if let Some(found) = std::env::split_paths(path)
                .map(|d| d.join(name))
                .filter(|p| p.is_file())
                .filter_map(|p| std::fs::canonicalize(p).ok())
                .find(|p| p.starts_with("/usr"))
            {
                out.push(found);
            }
        }
    }
    out.retain(|p| p.exists());
    out
}

/// The `#!` line of `program` (without `#!`), if it is a script.
fn shebang(program: &Path) -> Option<String> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = std::fs::File::open(program)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    let line = head[..n].strip_prefix(b"#!")?;
    let line = line.split(|&b| b == b'\n').next().unwrap_or_default();
    Some(String::from_utf8_lossy(line).into_owned())
}

/// Why a `#!` script cannot start in the sandbox although this host has its interpreter (the
/// official runner, unsandboxed, would run it): the interpreter, named or found by `env` in
/// `path` (the process's PATH), exists only outside /usr, e.g. a pyenv shim for
/// `#!/bin/env python` on a host without a system `python`. The host's problem (a missing
/// system tool), never the player's: without this check the player would end at once with
/// env's 126 and its games be scored. None when it can run, or when the host has no such
/// interpreter at all (then the official runner fails too: the player's own problem).
pub fn unrunnable_interpreter(program: &Path, path: &str) -> Option<String> {
    let line = shebang(program)?;
    let mut words = line.split_whitespace();
    let interpreter = PathBuf::from(words.next()?);
    let system = |p: &Path| std::fs::canonicalize(p).is_ok_and(|c| c.starts_with("/usr"));
    let own = program.parent().unwrap_or(Path::new("/"));
    let (name, found) = if interpreter.file_name().is_some_and(|f| f == "env") {
        let name = words.find(|w| !w.starts_with('-'))?.to_owned();
        let found: Vec<PathBuf> = std::env::split_paths(path)
            .map(|d| d.join(&name))
            .filter(|p| p.is_file())
            .collect();
        if found.is_empty() || found.iter().any(|p| system(p)) {
            return None;
        }
        (name, found[0].clone())
    } else {
        if !interpreter.exists() || system(&interpreter) || interpreter.starts_with(own) {
            return None;
        }
        (interpreter.display().to_string(), interpreter.clone())
    };
    Some(format!(
        "{} starts with `#!{}`, which needs `{name}`: this host has it only at {}, outside /usr, \
         where the sandbox cannot run it (a user-level install such as a pyenv shim); install a \
         system one (for `python` on Debian or Ubuntu: python-is-python3), name a system \
         interpreter in the command (`/usr/bin/python3 ...`) or run with --sandbox off",
        program.display(),
        line.trim(),
        found.display()
    ))
}

/// The folder a program or script lives in, when it is not a system path under /usr.
pub fn own_folder(path: &Path) -> Option<PathBuf> {
    if path.starts_with("/usr") {
        return None;
    }
    path.parent().map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    /// `#!/bin/env python` where PATH has `python` only as a user-level program (a pyenv shim:
    /// a shell script outside /usr) is the host's problem, named before the player starts; a
    /// system `python` anywhere in PATH, or none at all, is not.
    #[test]
    fn proboj_env_interpreter_only_outside_usr_is_named() {
        let d = tempfile::tempdir().unwrap();
        let shims = d.path().join("shims");
        let system = d.path().join("system");
        std::fs::create_dir_all(&shims).unwrap();
        std::fs::create_dir_all(&system).unwrap();
        script(
            &shims,
            "python",
            "#!/bin/sh\nexec pyenv exec python \"$@\"\n",
        );
        std::os::unix::fs::symlink("/usr/bin/env", system.join("python")).unwrap();
        let player = script(d.path(), "player.py", "#!/bin/env python\nprint(1)\n");
        let only_shim = format!("{}:/nonexistent", shims.display());
        let why = unrunnable_interpreter(&player, &only_shim).expect("a host problem");
        assert!(why.contains("python-is-python3"), "{why}");
        assert!(
            why.contains(&shims.join("python").display().to_string()),
            "{why}"
        );
        let both = format!("{}:{}", shims.display(), system.display());
        assert_eq!(unrunnable_interpreter(&player, &both), None);
        assert_eq!(unrunnable_interpreter(&player, "/nonexistent"), None);
        let direct = script(d.path(), "direct.py", "#!/usr/bin/env python3\n");
        assert_eq!(unrunnable_interpreter(&direct, &only_shim), None);
        let elsewhere = script(
            d.path(),
            "elsewhere.py",
            &format!("#!{}\n", shims.join("python").display()),
        );
        let p = d.path().join("sub");
        std::fs::create_dir_all(&p).unwrap();
        let moved = p.join("elsewhere.py");
        std::fs::rename(&elsewhere, &moved).unwrap();
        assert!(unrunnable_interpreter(&moved, "/usr/bin").is_some());
        assert_eq!(
            unrunnable_interpreter(Path::new("/usr/bin/env"), &only_shim),
            None
        );
    }
}
