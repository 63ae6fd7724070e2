//! The game and job side of the worker, on top of the `sandbox` crate (bot processes, their
//! isolation, CPU-fair timing and core tokens): the content-addressed compile cache
//! (`compile`), the start-up self-test (`selftest`), the Bomberman referee loop with its match
//! clock (`referee`), the job runner for every game (`job`: bomberman, 钳王, proboj and Nim
//! jobs), the proboj runner (`proboj`), 钳王's JavaScript bots (`qianwang`) and the worker's
//! Prometheus metrics (`metrics`). Its fd I/O (proboj pipes, compiler output, locks) goes
//! through `sandbox::fdio`: the worker makes no raw syscalls of its own.
//! The cluster worker loop of `farm worker` is `serve` (jobs from RabbitMQ, artifacts from
//! Redis, reports through an outbox, over the `broker` crate's vocabulary).

pub mod compile;
pub mod job;
pub mod metrics;
pub mod proboj;
pub mod qianwang;
pub mod referee;
pub mod selftest;
pub mod serve;

pub use compile::{CompileCache, CompileError};
