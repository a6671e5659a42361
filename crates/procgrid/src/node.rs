//! The ranks of a communicator that share the calling rank's node: the
//! group `MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)` gives, their process
//! ids, and a communicator among them.

use mpi::topology::{Communicator, SimpleCommunicator};

/// The ranks of a communicator on the calling rank's node (those that can
/// share memory with it), found with one split and one gather among the
/// node's ranks: O(ranks on the node), never O(ranks).
pub struct Node {
    comm: SimpleCommunicator,
    /// Ranks (in the parent communicator) on this node, increasing.
    ranks: Vec<usize>,
    /// Their process ids, in the same order.
    pids: Vec<u32>,
}

impl Node {
    /// The node of the calling rank in `comm`. Collective over `comm`.
    pub fn of(comm: &SimpleCommunicator) -> Node {
        let node = comm.split_shared(comm.rank());
        let n = usize::try_from(node.size()).unwrap_or(0);
        let me = [
            u64::try_from(comm.rank()).unwrap_or(0),
            u64::from(std::process::id()),
        ];
        let mut all = vec![0u64; 2 * n];
        mpi::collective::CommunicatorCollectives::all_gather_into(&node, &me[..], &mut all[..]);
        // Node ranks follow the key, the parent rank: increasing already.
        let ranks = all
            .chunks(2)
            .map(|c| usize::try_from(c[0]).unwrap_or(usize::MAX))
            .collect();
        let pids = all
            .chunks(2)
            .map(|c| u32::try_from(c[1]).unwrap_or(0))
            .collect();
        Node {
            comm: node,
            ranks,
            pids,
        }
    }

    /// The ranks on this node (in the parent communicator), increasing.
    pub fn ranks(&self) -> &[usize] {
        &self.ranks
    }

    /// Whether `rank` (of the parent communicator) is on this node.
    pub fn contains(&self, rank: usize) -> bool {
        self.ranks.binary_search(&rank).is_ok()
    }

    /// The process id of `rank`, when it is on this node.
    pub fn pid_of(&self, rank: usize) -> Option<u32> {
        self.ranks.binary_search(&rank).ok().map(|i| self.pids[i])
    }

    /// A communicator among the node's ranks, in the order of
    /// [`ranks`](Self::ranks).
    pub fn communicator(&self) -> &SimpleCommunicator {
        &self.comm
    }
}

impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Node").field("ranks", &self.ranks).finish()
    }
}
