//! `Process::try_status` does not wait: asked while the process runs it answers None at once,
//! in every mode (sandboxed, the status comes from the reaping init through a pipe, and a plain
//! read of that pipe used to wait until the process ended, so the answer was Some, seconds
//! late).

mod common;

use std::path::Path;
use std::time::Duration;

use common::*;
use sandbox::lock::FsPolicy;
use sandbox::prepare::{self, Spec};
use sandbox::Limits;

#[test]
fn try_status_of_a_running_process_is_none_and_then_its_status() {
    // It sleeps 0.5 s: a try_status that waited would answer Some(0) after it.
    let program = Path::new("/usr/bin/sleep");
    let args = vec!["0.5".to_string()];
    for (slot, cfg) in modes().into_iter().enumerate() {
        let spec = Spec {
            program,
            args: &args,
            env: Vec::new(),
            copy_program: false,
            extra: FsPolicy::default(),
            work_dir: None,
            tmpfs_scratch: false,
            stdin_null: true,
            cwd: None,
            limits: Limits::default(),
            slot,
        };
        let mut p = prepare::start(&cfg, &spec).expect("sleep starts");
        assert_eq!(p.try_status(), None, "{:?}: it is still running", cfg.mode);
        let status = p.wait_status(Duration::from_secs(10));
        assert_eq!(status, Some(0), "{:?}: it exits 0 by itself", cfg.mode);
        assert_eq!(p.try_status(), status, "{:?}", cfg.mode);
        let left = p.cleanup();
        assert!(left.is_empty(), "{:?}: {left:?}", cfg.mode);
    }
}
