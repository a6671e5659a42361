//! Reading another rank's local storage directly, between ranks of one node.
//!
//! A message between two ranks of one node normally costs four passes over
//! its elements: the sender packs, MPI copies into shared memory and out
//! again, the receiver unpacks. When the sender's array keeps its local part
//! in shared memory ([`dist_array::storage`]), the receiver maps that memory
//! read-only and copies the message's runs straight from the sender's source
//! storage into its own target storage: one pass, the same as the bare
//! exchange of a contiguous buffer.
//!
//! Per execution, the sender sends a note — whether its source is shared and
//! how to map it — and, if it is, waits for the receiver's answer before
//! returning, so its array is not written while being read (the protocol is
//! in `asynchronous.rs`). The receiver keeps one mapping per peer, keyed by
//! the sender's storage id (never reused), so repeated executions on the
//! same arrays map nothing.

use super::mpi_raw::Note;
use super::program::RankProgram;
use dist_array::{Layout, ReadMapping, SharedStorage};
use mpi::collective::{CommunicatorCollectives, SystemOperation};
use mpi::topology::Communicator;
use procgrid::Node;
use std::collections::HashMap;

/// Which messages of `async` may be read straight from the sender's shared
/// source storage: those between ranks of one node, when every rank can map
/// the storage of the peers it receives from.
pub(crate) struct NodeDirect {
    /// Which messages are between ranks of this node.
    pub near: Near,
    /// What reading the senders' storage needs.
    pub reader: PeerReader,
}

/// Per send and receive of a rank: whether its peer is on the rank's node.
pub(crate) struct Near {
    sends: Vec<bool>,
    recvs: Vec<bool>,
}

impl Near {
    /// Whether send `i` goes to a rank of this node.
    pub fn send(&self, i: usize) -> bool {
        self.sends[i]
    }

    /// Whether receive `i` comes from a rank of this node.
    pub fn recv(&self, i: usize) -> bool {
        self.recvs[i]
    }

    /// Receives from ranks of this node.
    pub fn recv_count(&self) -> usize {
        self.recvs.iter().filter(|&&x| x).count()
    }
}

/// What a receiver needs to read its senders' storage: their process ids,
/// the size each sender's storage must have, and the mappings made so far.
pub(crate) struct PeerReader {
    /// Per receive: the process id of its sender (0 off the node).
    pids: Vec<u32>,
    /// Per receive: the bytes the sender's source storage holds, from the
    /// plan; a note saying otherwise is not trusted.
    expected: Vec<usize>,
    /// Mappings of the senders' storage.
    cache: PeerCache,
}

impl NodeDirect {
    /// Which messages of `program` stay within the rank's `node`, and
    /// whether it can map the storage of the node's ranks it receives from
    /// (arrays laid out as `source`, elements of `elem_bytes` bytes).
    /// Collective over the node's ranks (each shares a probe and reads its
    /// peers'); every rank of the communicator must call it, and the ranks
    /// then agree on the verdicts before any uses the result.
    pub fn new(
        node: &Node,
        source: &Layout,
        program: &RankProgram,
        elem_bytes: usize,
    ) -> (NodeDirect, bool) {
        let recvs: Vec<bool> = program
            .recvs
            .iter()
            .map(|t| node.contains(t.peer))
            .collect();
        let sends: Vec<bool> = program
            .sends
            .iter()
            .map(|t| node.contains(t.peer))
            .collect();
        let read_from: Vec<usize> = (program.recvs.iter())
            .filter(|t| node.contains(t.peer))
            .map(|t| t.peer)
            .collect();
        let can_map = can_map_peers(node, &read_from);
        let pids = (program.recvs.iter())
            .map(|t| node.pid_of(t.peer).unwrap_or(0))
            .collect();
        let expected = (program.recvs.iter())
            .map(|t| source.local_len(t.peer).unwrap_or(0) * elem_bytes)
            .collect();
        let node_direct = NodeDirect {
            near: Near { sends, recvs },
            reader: PeerReader {
                pids,
                expected,
                cache: PeerCache::default(),
            },
        };
        (node_direct, can_map)
    }

    /// The note a sender sends: whether its source storage is shared, and
    /// how to map it.
    pub fn note_for(source: Option<&SharedStorage>) -> Note {
        match source {
            Some(s) => [1, word(s.fd), s.id, word(s.bytes), s.dev, s.ino],
            None => [0; 6],
        }
    }

    /// Bytes held on the heap (mappings aside).
    pub fn heap_bytes(&self) -> usize {
        self.near.sends.capacity()
            + self.near.recvs.capacity()
            + self.reader.pids.capacity() * std::mem::size_of::<u32>()
            + self.reader.expected.capacity() * std::mem::size_of::<usize>()
    }
}

impl PeerReader {
    /// Maps the storage that the note of receive `i`, from `peer`,
    /// describes: `Ok(true)` when it is mapped (now or before), `Ok(false)`
    /// when the sender's source is private.
    ///
    /// # Errors
    ///
    /// - [`InvalidData`](std::io::ErrorKind::InvalidData) when the note
    ///   gives another size than the plan says the sender holds;
    /// - the errors of [`PeerCache::get`].
    pub fn map(&mut self, note: Note, i: usize, peer: usize) -> std::io::Result<bool> {
        if note[0] == 0 {
            return Ok(false);
        }
        let storage = SharedStorage {
            pid: self.pids[i],
            fd: from_word(note[1]),
            id: note[2],
            bytes: from_word(note[3]),
            dev: note[4],
            ino: note[5],
        };
        if storage.bytes != self.expected[i] {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "the note's size is not what the plan says the sender holds",
            ));
        }
        self.cache.get(peer, &storage).map(|_| true)
    }

    /// The storage of `peer` mapped last, as `T`s.
    ///
    /// # Safety
    ///
    /// The peer's storage holds `T`s and is not written while the returned
    /// slice lives (the peer waits for this rank's answer).
    pub unsafe fn storage<T: bytemuck::Pod>(&self, peer: usize) -> Option<&[T]> {
        // SAFETY: the caller's contract.
        self.cache.mapped(peer).map(|m| unsafe { m.slice::<T>() })
    }
}

/// Whether the environment variable `NDCYCLIC_FAULTS` (a comma-separated
/// list) names `what`: a way for tests to make this rank's next mappings
/// fail as a full file table or a security policy would (`map`), or its
/// next exchange panic (`exchange-panic`).
pub(crate) fn fault_injected(what: &str) -> bool {
    std::env::var("NDCYCLIC_FAULTS").is_ok_and(|v| v.split(',').any(|f| f.trim() == what))
}

/// A non-negative integer as one word of a note.
fn word<I: TryInto<u64>>(x: I) -> u64 {
    x.try_into().unwrap_or(u64::MAX)
}

/// A word of a note as an integer; a value that does not fit (a corrupt
/// note) becomes the type's largest value, which no mapping accepts.
fn from_word<I: TryFrom<u64> + Bounded>(w: u64) -> I {
    I::try_from(w).unwrap_or(I::MAX)
}

/// Integer types with a largest value.
trait Bounded {
    const MAX: Self;
}

impl Bounded for i32 {
    const MAX: i32 = i32::MAX;
}
impl Bounded for u32 {
    const MAX: u32 = u32::MAX;
}
impl Bounded for usize {
    const MAX: usize = usize::MAX;
}

/// The mapping of each peer's storage this rank reads, one per peer:
/// repeated executions on the same arrays map nothing, and a peer's new
/// array replaces its old mapping (storage ids are never reused).
#[derive(Debug, Default)]
pub(crate) struct PeerCache {
    entries: HashMap<usize, (u64, ReadMapping)>,
}

impl PeerCache {
    /// The mapping of `s`, owned by `rank`, mapped now if not cached.
    ///
    /// # Errors
    ///
    /// - [`Other`](std::io::ErrorKind::Other) when `NDCYCLIC_FAULTS` names `map` (tests);
    /// - the errors of [`SharedStorage::map_read_only`] when `s` is not cached and
    ///   cannot be mapped (the peer's previous mapping is dropped all the same).
    pub fn get(&mut self, rank: usize, s: &SharedStorage) -> std::io::Result<&ReadMapping> {
        if fault_injected("map") {
            return Err(std::io::Error::other(
                "mapping refused (NDCYCLIC_FAULTS=map)",
            ));
        }
        let fresh = !matches!(self.entries.get(&rank), Some((id, m)) if *id == s.id && m.bytes() == s.bytes);
        if fresh {
            // Unmap the old one first: the peer has moved on from it.
            self.entries.remove(&rank);
            self.entries.insert(rank, (s.id, s.map_read_only()?));
        }
        Ok(&self.entries[&rank].1)
    }

    /// The mapping of `rank`'s storage that [`get`](Self::get) made last.
    pub fn mapped(&self, rank: usize) -> Option<&ReadMapping> {
        self.entries.get(&rank).map(|(_, m)| m)
    }

    /// Mappings held.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries.len()
    }
}

/// Whether this rank can map the shared storage of each rank of `node` in
/// `read_from`. Collective over the node's ranks: each shares a small probe
/// storage, reads its peers' probes, and they wait for each other (one
/// all-reduce among them) before the probes go.
fn can_map_peers(node: &Node, read_from: &[usize]) -> bool {
    const MAGIC: u64 = 0x6e64_6379_636c_6963;
    let comm = node.communicator();
    let me = node.ranks()[usize::try_from(comm.rank()).unwrap_or(0)];
    // A probe in shared storage, holding MAGIC ^ rank.
    let probe = dist_array::storage::probe(MAGIC ^ me as u64);
    let entry = match probe.as_ref().map(|p| p.info()) {
        Some(s) => [
            1,
            u64::from(s.pid),
            word(s.fd),
            s.id,
            word(s.bytes),
            s.dev,
            s.ino,
        ],
        None => [0; 7],
    };
    let mut all = vec![0u64; 7 * node.ranks().len()];
    comm.all_gather_into(&entry[..], &mut all[..]);
    let mut ok = true;
    for &r in read_from {
        let Ok(i) = node.ranks().binary_search(&r) else {
            ok = false;
            continue;
        };
        let e = &all[7 * i..7 * i + 7];
        if e[0] == 0 {
            ok = false;
            continue;
        }
        let s = SharedStorage {
            pid: from_word(e[1]),
            fd: from_word(e[2]),
            id: e[3],
            bytes: from_word(e[4]),
            dev: e[5],
            ino: e[6],
        };
        // SAFETY: the probe holds u64s and is not written after creation.
        ok &= s
            .map_read_only()
            .is_ok_and(|m| unsafe { m.slice::<u64>() }.first() == Some(&(MAGIC ^ r as u64)));
    }
    // The probe lives until every rank of the node has read its peers'.
    let mut node_ok = 0i32;
    comm.all_reduce_into(&i32::from(ok), &mut node_ok, SystemOperation::min());
    drop(probe);
    ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_mapping_per_peer_replaced_by_a_new_storage() {
        let probes: Vec<_> = (0..6)
            .map(|v| dist_array::storage::probe(v).unwrap())
            .collect();
        let mut cache = PeerCache::default();
        // Six peers, each mapped once and kept: no eviction however many.
        for _ in 0..3 {
            for (peer, p) in probes.iter().enumerate() {
                let m = cache.get(peer, &p.info()).unwrap();
                // SAFETY: the probe holds one u64, not written after creation.
                assert_eq!(unsafe { m.slice::<u64>() }[0], peer as u64);
            }
        }
        assert_eq!(cache.len(), 6);
        // Peer 2 moves to a new storage: its entry is replaced.
        let newer = dist_array::storage::probe(42).unwrap();
        let m = cache.get(2, &newer.info()).unwrap();
        // SAFETY: as above.
        assert_eq!(unsafe { m.slice::<u64>() }[0], 42);
        assert_eq!(cache.len(), 6);
    }
}
