//! One module per `farm` subcommand: argument definitions (clap) and the command's effects,
//! plus the flag groups several share (`flags`). The only layer that sees clap types.

pub mod flags;
pub mod inspect;
pub mod js_bot;
pub mod ladder;
pub mod manifest;
pub mod play;
pub mod proboj;
pub mod quarantine;
pub mod report;
pub mod run;
pub mod sprt;
pub mod verify;
pub mod view;
pub mod worker;
