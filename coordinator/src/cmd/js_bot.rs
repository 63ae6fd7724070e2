//! `farm __js-bot` (hidden): the sandboxed child a worker starts to host one 钳王 match's
//! JavaScript bots, so that the worker can kill bot code stuck where no interrupt reaches it
//! (`worker::qianwang::serve_child`; the worker's side is `worker::qianwang::JsHost`).

use std::process::ExitCode;

/// Serves the worker on stdin/stdout until it closes stdin.
pub fn run() -> ExitCode {
    match worker::qianwang::serve_child() {
        0 => ExitCode::SUCCESS,
        _ => ExitCode::FAILURE,
    }
}

/// [`run`] where the other subcommands' `Result` is wanted.
pub fn run_ok() -> anyhow::Result<ExitCode> {
    Ok(run())
}
