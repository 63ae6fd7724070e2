//! One module per `farm` subcommand: argument definitions (clap) and the command's effects.

pub mod inspect;
pub mod ladder;
pub mod manifest;
pub mod play;
pub mod proboj;
pub mod report;
pub mod verify;
pub mod view;
pub mod worker;
