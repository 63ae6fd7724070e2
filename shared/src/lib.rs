//! matchfarm's vocabulary, shared by every other crate: the fault taxonomy, job/result messages
//! and their wire form, the schedule, MANIFEST/identity hashing, Bradley–Terry ratings and report
//! rendering. Pure: no processes, no sockets, no clocks.

pub mod bootstrap;
pub mod bt;
pub mod codec;
pub mod fault;
pub mod manifest;
pub mod msg;
pub mod ordmap;
pub mod pyjson;
pub mod pyrandom;
pub mod quarantine;
pub mod report;
pub mod report_html;
pub mod results;
pub mod schedule;
pub mod settle;
pub mod sprt;

pub use fault::{Fault, FaultKind};
