//! The effectful side of one match: bot processes with CPU-fair deadlines (`bot`), the sandbox
//! applied to them (`sandbox`), core tokens that bound how many bots think at once (`tokens`),
//! and the content-addressed compile cache (`compile`).

pub mod bot;
pub mod capture;
pub mod compile;
pub mod job;
pub mod metrics;
pub mod proboj;
pub mod qianwang;
pub mod referee;
pub mod sandbox;
pub mod timing;
pub mod tokens;

pub use bot::{Bot, BotCommand, BotReport};
pub use compile::{CompileCache, CompileError};
pub use sandbox::{Limits, SandboxConfig, SandboxMode};
pub use timing::{BotTiming, TurnTiming};
pub use tokens::CoreTokens;
