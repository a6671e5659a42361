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

use super::messages::PROBE;
use super::mpi_raw::Note;
use crate::{Link, RankPlan};
use dist_array::storage::Probe;
use dist_array::{ReadMapping, SharedStorage};
use mpi::point_to_point::{Destination, Source};
use mpi::topology::{Communicator, SimpleCommunicator};
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
    /// Which messages of `plan` stay within the rank's `node`, and whether
    /// it can map the storage of the node's ranks it receives from (arrays
    /// laid out as the plan's source, elements of `elem_bytes` bytes), with
    /// the probe the ranks it sends to read: keep it until every rank has
    /// agreed on the verdicts. Point to point over `comm` with the node's
    /// ranks this rank exchanges messages with ([`exchange_probes`]);
    /// every rank of `comm` must call it.
    pub fn new(
        comm: &SimpleCommunicator,
        node: &Node,
        plan: &RankPlan,
        elem_bytes: usize,
    ) -> (NodeDirect, bool, ProbeKept) {
        let near =
            |links: &[Link]| -> Vec<bool> { links.iter().map(|t| node.contains(t.peer)).collect() };
        let (sends, recvs) = (near(plan.sends()), near(plan.recvs()));
        let (probe, entries) = exchange_probes(comm, plan, &sends, &recvs);
        let mut can_map = true;
        let mut pids = vec![0u32; recvs.len()];
        for ((t, entry), pid) in plan.recvs().iter().zip(&entries).zip(&mut pids) {
            if let Some(e) = entry {
                let storage = e.and_then(|e| probe_storage(&e));
                can_map &= storage.as_ref().is_some_and(|s| reads_probe(s, t.peer));
                *pid = storage.map_or(0, |s| s.pid);
            }
        }
        let source = plan.source();
        let expected = (plan.recvs().iter())
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
        (node_direct, can_map, ProbeKept(probe))
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
    /// describes, as the peer's array `slot` (0 for a single execution,
    /// the array's place in a batch): `Ok(true)` when it is mapped (now or
    /// before), `Ok(false)` when the sender's source is private.
    ///
    /// # Errors
    ///
    /// - [`InvalidData`](std::io::ErrorKind::InvalidData) when the note
    ///   gives another size than the plan says the sender holds;
    /// - the errors of [`PeerCache::get`].
    pub fn map(
        &mut self,
        note: Note,
        i: usize,
        (peer, slot): (usize, usize),
    ) -> std::io::Result<bool> {
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
        self.cache.get((peer, slot), &storage).map(|_| true)
    }

    /// The storage of `peer`'s array `slot` mapped last, as `T`s.
    ///
    /// # Safety
    ///
    /// The peer's storage holds `T`s and is not written while the returned
    /// slice lives (the peer waits for this rank's answer).
    pub unsafe fn storage<T: bytemuck::Pod>(&self, peer: (usize, usize)) -> Option<&[T]> {
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

/// The mapping of each peer's storage this rank reads, one per peer and
/// array slot (`(rank, slot)`: the arrays of a batch take slots 0, 1, …):
/// repeated executions on the same arrays map nothing, and a peer's new
/// array in a slot replaces its old mapping (storage ids are never reused).
#[derive(Debug, Default)]
pub(crate) struct PeerCache {
    entries: HashMap<(usize, usize), (u64, ReadMapping)>,
}

impl PeerCache {
    /// The mapping of `s`, owned by `rank` and held in array slot `slot`
    /// (`at = (rank, slot)`), mapped now if not cached.
    ///
    /// # Errors
    ///
    /// - [`Other`](std::io::ErrorKind::Other) when `NDCYCLIC_FAULTS` names `map` (tests);
    /// - the errors of [`SharedStorage::map_read_only`] when `s` is not cached and
    ///   cannot be mapped (the peer's previous mapping is dropped all the same).
    pub fn get(&mut self, at: (usize, usize), s: &SharedStorage) -> std::io::Result<&ReadMapping> {
        if fault_injected("map") {
            return Err(std::io::Error::other(
                "mapping refused (NDCYCLIC_FAULTS=map)",
            ));
        }
        let fresh =
            !matches!(self.entries.get(&at), Some((id, m)) if *id == s.id && m.bytes() == s.bytes);
        if fresh {
            // Unmap the old one first: the peer has moved on from it.
            self.entries.remove(&at);
            self.entries.insert(at, (s.id, s.map_read_only()?));
        }
        Ok(&self.entries[&at].1)
    }

    /// The mapping of `(rank, slot)` that [`get`](Self::get) made last.
    pub fn mapped(&self, at: (usize, usize)) -> Option<&ReadMapping> {
        self.entries.get(&at).map(|(_, m)| m)
    }

    /// Mappings held.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries.len()
    }
}

/// The probe a rank shows the ranks of its node that read from it: shared
/// storage holding a known value. Dropped only after the ranks have agreed
/// that each could read its senders' probes.
pub(crate) struct ProbeKept(#[allow(dead_code, reason = "held, never read")] Option<Probe>);

/// A probe's description as sent: present (1 or 0), then the process id,
/// descriptor, storage id, bytes, device and inode of its storage.
type ProbeEntry = [u64; 7];

/// The value a probe of `rank` holds.
fn probe_value(rank: usize) -> u64 {
    const MAGIC: u64 = 0x6e64_6379_636c_6963;
    MAGIC ^ rank as u64
}

/// Makes this rank's probe and exchanges probe descriptions with the
/// ranks of its node it sends to (`near_sends`, by send) and receives from
/// (`near_recvs`, by receive): sends its own to each, and returns it with,
/// per receive, `Some(entry)` from a rank of its node (`None` from one
/// that sent nothing usable) or `None` off the node. Point to point with
/// those ranks only, waits as [`procgrid::waits::complete`] does.
fn exchange_probes(
    comm: &SimpleCommunicator,
    plan: &RankPlan,
    near_sends: &[bool],
    near_recvs: &[bool],
) -> (Option<Probe>, Vec<Option<Option<ProbeEntry>>>) {
    let me = usize::try_from(comm.rank()).unwrap_or(0);
    let probe = near_recvs
        .iter()
        .chain(near_sends)
        .any(|&n| n)
        .then(|| dist_array::storage::probe(probe_value(me)))
        .flatten();
    let mine: ProbeEntry = match probe.as_ref().map(Probe::info) {
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
    let mut got = vec![[0u64; 7]; near_recvs.len()];
    mpi::request::scope(|scope| {
        let rank = |peer: usize| comm.process_at_rank(i32::try_from(peer).unwrap_or(i32::MAX));
        let mut requests = Vec::new();
        for (buf, (t, _)) in got
            .iter_mut()
            .zip(plan.recvs().iter().zip(near_recvs))
            .filter(|(_, (_, &n))| n)
        {
            requests.push(rank(t.peer).immediate_receive_into_with_tag(scope, &mut buf[..], PROBE));
        }
        for (t, _) in plan.sends().iter().zip(near_sends).filter(|(_, &n)| n) {
            requests.push(rank(t.peer).immediate_send_with_tag(scope, &mine[..], PROBE));
        }
        requests.into_iter().for_each(procgrid::waits::complete);
    });
    let entries = (got.into_iter().zip(near_recvs))
        .map(|(e, &n)| n.then_some((e[0] == 1).then_some(e)))
        .collect();
    (probe, entries)
}

/// The storage a probe entry describes.
fn probe_storage(e: &ProbeEntry) -> Option<SharedStorage> {
    (e[0] == 1).then(|| SharedStorage {
        pid: from_word(e[1]),
        fd: from_word(e[2]),
        id: e[3],
        bytes: from_word(e[4]),
        dev: e[5],
        ino: e[6],
    })
}

/// Whether this rank can map `s`, the probe of `rank`, and reads the
/// value that rank's probe holds.
fn reads_probe(s: &SharedStorage, rank: usize) -> bool {
    // SAFETY: a probe holds u64s and is not written after creation.
    s.map_read_only()
        .is_ok_and(|m| unsafe { m.slice::<u64>() }.first() == Some(&probe_value(rank)))
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
                let m = cache.get((peer, 0), &p.info()).unwrap();
                // SAFETY: the probe holds one u64, not written after creation.
                assert_eq!(unsafe { m.slice::<u64>() }[0], peer as u64);
            }
        }
        assert_eq!(cache.len(), 6);
        // Peer 2 moves to a new storage: its entry is replaced.
        let newer = dist_array::storage::probe(42).unwrap();
        let m = cache.get((2, 0), &newer.info()).unwrap();
        // SAFETY: as above.
        assert_eq!(unsafe { m.slice::<u64>() }[0], 42);
        assert_eq!(cache.len(), 6);
    }
}
