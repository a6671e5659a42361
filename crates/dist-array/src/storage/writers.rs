//! Whether the node's other processes may write a rank's shared storage:
//! a process-wide choice, read once from the environment.
//!
//! A redistribution between ranks of one node is fastest when each rank
//! *writes* its source, read front to back, straight into its peers'
//! targets (`docs/performance.md`, 2026-11-30). That needs the targets
//! mapped writable by their writers, so by default shared storage is
//! sealed against resizing only. `NDCYCLIC_NODE_WRITES=never` seals it
//! against every writer but its owner too (where the kernel has
//! `F_SEAL_FUTURE_WRITE`): the node's ranks then only read each other's
//! storage, and redistributions copy by reading.

/// The environment variable that keeps other processes from writing this
/// process's shared storage: `never` seals every file against writers
/// other than its owner; anything else (or nothing) lets the node's ranks
/// write the targets they are lent.
pub const NODE_WRITES_VAR: &str = "NDCYCLIC_NODE_WRITES";

/// Whether this process's shared storage may be mapped writable by other
/// processes: `true` unless [`NODE_WRITES_VAR`] is `never`. Read once per
/// process; a value other than `never`, `allow` or empty is reported once
/// on standard error and writers allowed.
///
/// ```
/// // Every rank may decide for itself: writers of a sealed target fall
/// // back to being read from, or to messages.
/// let _ = dist_array::storage::node_writes();
/// ```
pub fn node_writes() -> bool {
    static ALLOWED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ALLOWED.get_or_init(|| match std::env::var(NODE_WRITES_VAR) {
        Err(_) => true,
        Ok(v) => match v.trim() {
            "never" => false,
            "" | "allow" => true,
            other => {
                eprintln!(
                    "ndcyclic: {NODE_WRITES_VAR}={other:?} ignored: expected `never` or \
                     `allow`; the node's ranks may write this process's shared targets"
                );
                true
            }
        },
    })
}
