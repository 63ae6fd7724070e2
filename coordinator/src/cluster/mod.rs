//! The coordinator's cluster commands, over the `broker` crate's vocabulary: where the cluster
//! is ([`Cluster`], filled by the commands from their flags) and `proboj` (games.json on the
//! cluster). A tournament on the cluster is the run engine's (`run::cluster`); the workers'
//! side, the `farm worker` loop, is `worker::serve`.

pub mod proboj;

use shared::codec::FarmKey;

/// A cluster to dispatch to: the RabbitMQ broker, the Redis beside it, and the farm key every
/// job and report is signed with.
#[derive(Clone)]
pub struct Cluster {
    pub broker: String,
    pub redis: String,
    pub key: FarmKey,
    /// How workers serve this run beside other tournaments (share, priority, min speed).
    pub terms: broker::Terms,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // URLs may hold passwords and the key is a secret: neither is printed.
        f.write_str("Cluster { .. }")
    }
}
