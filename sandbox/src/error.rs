//! Why a sandboxed process could not start, split along the fault boundary: the host's problems
//! (never scored against a bot) and the program's own.
//!
//! # The rule
//!
//! Everything before the bot's `execve` is the farm's: making its folder, the private program
//! copy, the uid lease, cgroups, pipes, chown/chmod, mounts, setsid/rlimits/setuid, landlock and
//! seccomp set-up, the clone itself. Any failure there is a [`HostError`] (EEXIST, ENOSPC,
//! EACCES, EPERM, ... whatever the errno).
//!
//! At `execve` of the bot's program (our private copy of it), the errno decides:
//! * `ENOEXEC` ("Exec format error"): the file is not a program the kernel can run (a text
//!   file, a truncated or foreign binary). That is the program's own fault:
//!   [`StartError::Program`], scored as the bot's `start_failure`.
//! * everything else is the host's: EACCES/EPERM (a noexec mount, landlock, modes on our copy),
//!   ENOENT (our copy vanished, or the ELF loader or a `#!` interpreter named by the program is
//!   not installed here: when unsure, the host's), ETXTBSY, ENOMEM, E2BIG, ...
//!
//! So a `#!` script whose interpreter does not exist on this host is a host error: the worker
//! cannot tell a bot asking for a nonsense interpreter from a host missing a real one, and an
//! unscored retry elsewhere is the safe side.

use std::path::PathBuf;

/// A failure caused by the host (the worker's machine, its mounts, permissions, tools, limits):
/// a job hitting it is an infrastructure failure, never a bot's fault.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// A file-system step in the parent (folder, copy, chmod, chown, lock file, ...).
    #[error("{what} {}: {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A set-up step in the child between clone and exec (setsid, mount, setuid, landlock, ...).
    #[error("sandbox set-up step {stage} failed: {source}")]
    Stage {
        stage: &'static str,
        #[source]
        source: std::io::Error,
    },
    /// The program copy could not be executed for a reason that is not the program's.
    #[error("execve of {} failed: {source}{}", program.display(), exec_hint(source))]
    Exec {
        program: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// No uid of the pool could be leased.
    #[error("uid lease: {0}")]
    Uid(String),
    /// Building a sandbox layer (cgroups, landlock ruleset, seccomp program, pipes, clone).
    #[error("sandbox set-up: {0}")]
    Setup(String),
}

fn exec_hint(e: &std::io::Error) -> &'static str {
    match e.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => {
            " (is the scratch folder on a noexec mount? mount it with exec or set the scratch \
             folder elsewhere)"
        }
        _ => "",
    }
}

impl HostError {
    /// A parent-side I/O step.
    pub(crate) fn io(what: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        HostError::Io {
            what,
            path: path.into(),
            source,
        }
    }

    /// The errno, when the failure has one.
    pub fn raw_os_error(&self) -> Option<i32> {
        match self {
            HostError::Io { source, .. }
            | HostError::Stage { source, .. }
            | HostError::Exec { source, .. } => source.raw_os_error(),
            _ => None,
        }
    }
}

/// Why a process did not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Host(#[from] HostError),
    /// The program itself cannot be executed (see the module docs): the bot's fault.
    #[error("execve failed: {source}")]
    Program {
        program: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Classify the child's report "stage failed with errno" (see the module docs).
pub(crate) fn classify_child_failure(
    stage: &'static str,
    errno: i32,
    program: PathBuf,
) -> StartError {
    let source = std::io::Error::from_raw_os_error(errno);
    match (stage, errno) {
        ("execve", libc::ENOEXEC) => StartError::Program { program, source },
        ("execve", _) => HostError::Exec { program, source }.into(),
        _ => HostError::Stage { stage, source }.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every (stage, errno) the child can report, and whose fault it is.
    #[test]
    fn child_failures_are_the_hosts_except_a_non_executable_program() {
        let p = || PathBuf::from("/scratch/bot-x/bin/bot");
        let table: &[(&str, i32, bool)] = &[
            // (stage, errno, the bot's fault?)
            ("execve", libc::ENOEXEC, true),
            ("execve", libc::EACCES, false), // noexec mount, landlock
            ("execve", libc::EPERM, false),
            ("execve", libc::ENOENT, false), // missing loader / #! interpreter: unsure -> host
            ("execve", libc::ETXTBSY, false),
            ("execve", libc::ENOMEM, false),
            ("execve", libc::E2BIG, false),
            ("execve", libc::ELIBBAD, false),
            ("mount", libc::EPERM, false),
            ("setresuid", libc::EAGAIN, false),
            ("landlock", libc::EINVAL, false),
            ("seccomp", libc::EINVAL, false),
            ("cgroup", libc::ENOSPC, false),
            ("fork", libc::EAGAIN, false),
            ("chdir", libc::EACCES, false),
            ("setrlimit", libc::EPERM, false),
            ("setsid", libc::EPERM, false),
            ("stdio", libc::EBADF, false),
        ];
        for &(stage, errno, bots) in table {
            let got = classify_child_failure(stage, errno, p());
            assert_eq!(
                matches!(got, StartError::Program { .. }),
                bots,
                "{stage} errno {errno}: {got}"
            );
        }
        let noexec = classify_child_failure("execve", libc::EACCES, p()).to_string();
        assert!(noexec.contains("noexec"), "{noexec}");
    }
}
