//! Whether the node's other processes may write a rank's shared storage:
//! a process-wide choice, read once from the environment.
//!
//! A redistribution between ranks of one node whose stretches are long is
//! fastest when each rank *writes* its source, read front to back,
//! straight into its peers' targets (`docs/performance.md`, 2026-11-29,
//! the written copies). That needs the targets mapped writable by their
//! writers, so by default shared storage is sealed against resizing
//! only. `NDCYCLIC_NODE_WRITES=never` seals it against every writer but
//! its owner too (where the kernel has `F_SEAL_FUTURE_WRITE`): the node's
//! ranks then only read each other's storage.

/// The environment variable that says whether the node's ranks may write
/// this process's shared targets: `never`, `auto` (the default) or
/// `always` ([`NodeWrites`]).
pub const NODE_WRITES_VAR: &str = "NDCYCLIC_NODE_WRITES";

/// Whether the node's ranks write their messages into this process's
/// shared targets ([`NODE_WRITES_VAR`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeWrites {
    /// Never: shared storage is sealed against every writer but its owner,
    /// and the node's ranks read each other's sources instead.
    Never,
    /// Where it pays: a redistribution lends its target to the node's
    /// writers when the stretches it receives from them are a cache line
    /// or longer on average (the default).
    Auto,
    /// Whenever the target is shared (tests use it to write short
    /// stretches too).
    Always,
}

/// This process's [`NodeWrites`]: [`NodeWrites::Auto`] unless
/// [`NODE_WRITES_VAR`] says `never` or `always`. Read once per process; a
/// value that cannot be read is reported once on standard error and the
/// default kept.
///
/// ```
/// use dist_array::storage::{node_writes, NodeWrites};
///
/// // Every rank may decide for itself: the writers of a sealed target
/// // fall back to being read from, or to messages.
/// let sealed = node_writes() == NodeWrites::Never;
/// # let _ = sealed;
/// ```
pub fn node_writes() -> NodeWrites {
    static WRITES: std::sync::OnceLock<NodeWrites> = std::sync::OnceLock::new();
    *WRITES.get_or_init(|| match std::env::var(NODE_WRITES_VAR) {
        Err(_) => NodeWrites::Auto,
        Ok(v) => match v.trim() {
            "never" => NodeWrites::Never,
            "always" => NodeWrites::Always,
            "" | "auto" => NodeWrites::Auto,
            other => {
                eprintln!(
                    "ndcyclic: {NODE_WRITES_VAR}={other:?} ignored: expected `never`, `auto` \
                     or `always`; `auto` kept"
                );
                NodeWrites::Auto
            }
        },
    })
}
