//! The effectful side of one match: bot processes with CPU-fair deadlines (`bot`), the sandbox
//! applied to them (`sandbox`), core tokens that bound how many bots think at once (`tokens`),
//! the content-addressed compile cache (`compile`), the start-up self-test (`selftest`), the
//! Bomberman referee loop with its match clock (`referee`), the job runner for every game
//! (`job`: bomberman, 钳王, proboj and Nim jobs), the proboj runner (`proboj`) and 钳王's JavaScript bots (`qianwang`),
//! and the cluster worker loop of `farm worker` (`serve`: jobs from RabbitMQ, artifacts from
//! Redis, reports through an outbox, over the `broker` crate's vocabulary).

pub mod bot;
pub mod capture;
pub mod compile;
pub mod job;
pub mod metrics;
pub mod proboj;
pub mod qianwang;
pub mod referee;
pub mod sandbox;
pub mod selftest;
pub mod serve;
pub mod timing;
pub mod tokens;

pub use bot::{Bot, BotCommand, BotReport, SpawnError};
pub use compile::{CompileCache, CompileError};
pub use sandbox::{HostError, Limits, SandboxConfig, SandboxMode, StartError};
pub use timing::{BotTiming, TurnTiming};
pub use tokens::CoreTokens;
