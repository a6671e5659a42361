//! The ranks of a communicator that share the calling rank's node.
//!
//! A node here is what lets one process read another's memory through
//! `/proc`: one running kernel (its boot id), one pid namespace, and one
//! network namespace (so that nodes emulated by network namespaces on one
//! machine count as different nodes). Each rank hashes these into a key,
//! and the ranks gather every rank's key once per communicator — one
//! non-blocking all-gather of 8 bytes per rank, completed as
//! [`waits::complete`](crate::waits::complete) does. Nothing else is
//! created: no communicator among the node's ranks.
//!
//! `MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)` would give MPI's own view,
//! but it is a chain of blocking collectives (a gather of colours and
//! keys, the agreement on a context id): measured with 32 ranks on 2
//! cores, 1.8 s, against 20–30 ms for the gather of keys. The node a key
//! names is a candidate only: whoever reads another rank's memory first
//! checks that it can (a probe), and a wrong key costs speed, never
//! correctness.

use mpi::topology::{Communicator, SimpleCommunicator};

/// The ranks of a communicator on the calling rank's node (those whose
/// memory it may be able to read). Finding them holds O(ranks) for a
/// moment; what is kept is O(ranks on the node).
pub struct Node {
    /// Ranks (in the parent communicator) on this node, increasing.
    ranks: Vec<usize>,
}

impl Node {
    /// The node of the calling rank in `comm`. Collective over `comm`.
    pub fn of(comm: &SimpleCommunicator) -> Node {
        Node::with_key(comm, node_key())
    }

    /// The ranks of `comm` whose key is `key`, this rank's. Collective over
    /// `comm`.
    fn with_key(comm: &SimpleCommunicator, key: u64) -> Node {
        let size = usize::try_from(comm.size()).unwrap_or(0);
        let mut keys = vec![0u64; size];
        crate::waits::all_gather_into(comm, &key, &mut keys[..]);
        Node::from_keys(&keys, key)
    }

    /// The ranks whose entry of `keys` (one per rank) is `key`.
    fn from_keys(keys: &[u64], key: u64) -> Node {
        let ranks = (keys.iter().enumerate())
            .filter(|&(_, &k)| k == key)
            .map(|(r, _)| r)
            .collect();
        Node { ranks }
    }

    /// The ranks on this node (in the parent communicator), increasing.
    pub fn ranks(&self) -> &[usize] {
        &self.ranks
    }

    /// Whether `rank` (of the parent communicator) is on this node.
    pub fn contains(&self, rank: usize) -> bool {
        self.ranks.binary_search(&rank).is_ok()
    }
}

impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Node").field("ranks", &self.ranks).finish()
    }
}

/// This process's node key: a hash of the kernel's boot id (or the host
/// name where it cannot be read), its pid namespace and its network
/// namespace. Equal on two processes of one node, and (but for a hash
/// collision, which costs only speed) different otherwise.
fn node_key() -> u64 {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let link = |p: &str| {
        std::fs::read_link(p)
            .map(|l| l.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let kernel = match read("/proc/sys/kernel/random/boot_id") {
        id if !id.is_empty() => id,
        _ => read("/proc/sys/kernel/hostname"),
    };
    let parts = [kernel, link("/proc/self/ns/pid"), link("/proc/self/ns/net")];
    // FNV-1a over the parts, each ended by a zero byte.
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for b in parts.iter().flat_map(|p| p.trim().bytes().chain([0])) {
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_is_the_ranks_with_its_key() {
        let node = Node::from_keys(&[7, 3, 7, 7, 9, 3], 7);
        assert_eq!(node.ranks(), &[0, 2, 3]);
        assert!(node.contains(2) && !node.contains(1) && !node.contains(6));
        let alone = Node::from_keys(&[7, 3, 7], 3);
        assert_eq!(alone.ranks(), &[1]);
    }

    #[test]
    fn this_process_has_one_key() {
        // The same process, asked twice: the same node.
        assert_eq!(node_key(), node_key());
    }
}
