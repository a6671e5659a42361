//! Reading another rank's local storage directly, or writing into it,
//! between ranks of one node.
//!
//! A message between two ranks of one node normally costs four passes over
//! its elements: the sender packs, MPI copies into shared memory and out
//! again, the receiver unpacks. When the receiver's target keeps its local
//! part in shared memory ([`dist_array::storage`]) and lends it, the sender
//! maps it writable and copies the message's runs straight from its own
//! source into it; when the target is private but the sender's source is
//! shared, the receiver maps the source read-only and copies from it. One
//! pass either way, the same as the bare exchange of a contiguous buffer.
//! Writing reads each source front to back and leaves the gaps to the
//! writes, which write whole runs of the target: the faster where
//! stretches are long (`asynchronous/writes.rs`).
//!
//! Per execution, notes go both ways — whether the source is shared and
//! how to map it, whether the target is lent and how to map it — and the
//! rank whose storage is used waits for the other's word before returning,
//! so its array is not touched by its own program meanwhile (the protocol
//! is in `asynchronous/mod.rs`). Each side keeps one mapping per peer's
//! array ([`PeerCache`]), keyed by the owner's storage id (never reused),
//! so repeated executions on the same arrays map nothing.

use super::messages::PROBE;
use crate::tuning::{MAPPINGS_CHECK_EVERY, MAPPINGS_KEPT};
use dist_array::storage::Probe;
use dist_array::{ReadMapping, SharedStorage, WriteMapping};
use mpi::point_to_point::{Destination, Source};
use mpi::topology::{Communicator, SimpleCommunicator};
use procgrid::Node;
use redist_plan::padding::Padding;
use redist_plan::plan::{Link, RankPlan};
use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};

/// A note between two ranks of the node-direct protocol: whether the
/// sender's source (or the receiver's target) is shared, and how to map
/// it (the two layouts are [`NodeDirect::note_for`] and
/// [`NodeDirect::target_note_for`]).
pub(crate) type Note = mpi_extras::requests::Control;

/// How this rank's messages within its node moved in its last single
/// execution ([`Redistribution::node_copies`](crate::Redistribution::node_copies)):
/// written by this rank into its receivers' targets, read by it from its
/// senders' sources, and whether it lent its own target to its writers.
/// The others moved as messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NodeCopies {
    /// Sends this rank wrote straight into the receiver's target.
    pub written: usize,
    /// Receives this rank read straight from the sender's source.
    pub read: usize,
    /// Whether this rank's target was lent to the senders of its node.
    pub lent: bool,
}

/// Which messages of `async` may be read straight from the sender's shared
/// source storage: those between ranks of one node, when every rank can map
/// the storage of the peers it receives from.
pub(crate) struct NodeDirect {
    /// Which messages are between ranks of this node.
    pub near: Near,
    /// What reading the senders' storage needs.
    pub reader: PeerReader,
    /// What writing into the receivers' target storage needs.
    pub writer: PeerWriter,
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

    /// Sends to ranks of this node.
    pub fn send_count(&self) -> usize {
        self.sends.iter().filter(|&&x| x).count()
    }
}

/// One array of one peer, as its mapping is known: the peer's rank and
/// the array's slot (0 for a single execution, the array's place in a
/// batch).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct PeerArray {
    pub rank: usize,
    pub slot: usize,
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
    /// laid out as the plan's source and target, their local parts padded
    /// as `padding` says — the target's widths in the plan's axis order —,
    /// elements of `elem_bytes` bytes), with the probe the ranks it sends
    /// to read: keep it until every rank has agreed on the verdicts. Point
    /// to point over `comm` with the node's ranks this rank exchanges
    /// messages with ([`exchange_probes`]); every rank of `comm` must call
    /// it.
    pub fn new(
        comm: &SimpleCommunicator,
        node: &Node,
        plan: &RankPlan,
        padding: &Padding,
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
        // What a peer's storage holds: its local part and its ghosts.
        let (source, target) = (plan.source(), plan.target());
        let expected = (plan.recvs().iter())
            .map(|t| padding.source_len(source, t.peer).unwrap_or(0) * elem_bytes)
            .collect();
        let expected_targets = (plan.sends().iter())
            .map(|t| padding.target_len(target, t.peer).unwrap_or(0) * elem_bytes)
            .collect();
        let node_direct = NodeDirect {
            near: Near { sends, recvs },
            reader: PeerReader {
                pids,
                expected,
                cache: PeerCache::default(),
            },
            writer: PeerWriter {
                expected: expected_targets,
                cache: PeerCache::default(),
            },
        };
        (node_direct, can_map, ProbeKept(probe))
    }

    /// The note a sender sends: whether its source storage is shared, and
    /// how to map it (present, descriptor, storage id, bytes, device,
    /// inode; the process id the receiver checked when the redistribution
    /// was built).
    pub fn note_for(source: Option<&SharedStorage>) -> Note {
        match source {
            Some(s) => [1, word(s.fd), s.id, word(s.bytes), s.dev, s.ino, 0],
            None => [0; 7],
        }
    }

    /// The note a receiver sends each sender of its node: whether they may
    /// write their messages into its target storage, and how to map it
    /// (as [`storage_entry`]: with the process id).
    pub fn target_note_for(target: Option<&SharedStorage>) -> Note {
        storage_entry(target)
    }

    /// Bytes held on the heap (mappings aside).
    pub fn heap_bytes(&self) -> usize {
        self.near.sends.capacity()
            + self.near.recvs.capacity()
            + self.reader.pids.capacity() * std::mem::size_of::<u32>()
            + self.reader.expected.capacity() * std::mem::size_of::<usize>()
            + self.writer.expected.capacity() * std::mem::size_of::<usize>()
    }
}

impl PeerReader {
    /// Maps the storage that the note of receive `i` describes, as the
    /// sender's array `at`: `Ok(true)` when it is mapped (now or before),
    /// `Ok(false)` when the sender's source is private.
    ///
    /// # Errors
    ///
    /// - [`InvalidData`](std::io::ErrorKind::InvalidData) when the note
    ///   gives another size than the plan says the sender holds;
    /// - the errors of [`PeerCache::get`].
    pub fn map(&mut self, note: Note, i: usize, at: PeerArray) -> std::io::Result<bool> {
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
        self.cache.get(at, &storage).map(|_| true)
    }

    /// The storage of the peer's array `at` mapped last, as `T`s.
    ///
    /// # Safety
    ///
    /// The peer's storage holds `T`s and is not written while the returned
    /// slice lives (the peer waits for this rank's answer).
    pub unsafe fn storage<T: bytemuck::Pod>(&self, at: PeerArray) -> Option<&[T]> {
        // SAFETY: the caller's contract.
        self.cache.mapped(at).map(|m| unsafe { m.slice::<T>() })
    }
}

/// What a sender needs to write its messages into its receivers' target
/// storage: the size each receiver's target must have, and the mappings
/// made so far.
pub(crate) struct PeerWriter {
    /// Per send: the bytes the receiver's target storage holds, from the
    /// plan; a note saying otherwise is not trusted.
    expected: Vec<usize>,
    /// Mappings of the receivers' targets.
    cache: PeerCache<WriteMapping>,
}

impl PeerWriter {
    /// Maps, writable, the target storage that the note of send `i`'s
    /// receiver describes, as the receiver's array `at`.
    ///
    /// # Errors
    ///
    /// - [`InvalidData`](std::io::ErrorKind::InvalidData) when the note
    ///   describes no storage or another size than the plan gives the
    ///   receiver;
    /// - the errors of [`PeerCache::get`] (the receiver's storage sealed
    ///   against writers among them).
    pub fn map(&mut self, note: Note, i: usize, at: PeerArray) -> std::io::Result<()> {
        let storage = probe_storage(&note).filter(|s| Some(&s.bytes) == self.expected.get(i));
        let Some(storage) = storage else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "the target note describes no storage of the size the plan gives the receiver",
            ));
        };
        self.cache.get(at, &storage).map(|_| ())
    }

    /// The target storage of the peer's array `at` mapped last, as `T`s.
    ///
    /// # Safety
    ///
    /// The peer's storage holds `T`s, and nobody else reads or writes the
    /// elements written through the returned slice while it lives (the
    /// plan gives each target element to one message; the peer waits for
    /// this rank's word).
    #[allow(clippy::mut_from_ref, reason = "the peer's memory, lent by its note")]
    pub unsafe fn target<T: bytemuck::Pod>(&self, at: PeerArray) -> Option<&mut [T]> {
        let m = self.cache.mapped(at)?;
        // SAFETY: the mapping holds `bytes` writable bytes, page-aligned;
        // the caller's contract for the rest.
        Some(unsafe {
            std::slice::from_raw_parts_mut(
                m.as_mut_ptr().cast::<T>(),
                m.bytes() / std::mem::size_of::<T>(),
            )
        })
    }
}

/// A mapping of a peer's storage that a [`PeerCache`] keeps.
pub(crate) trait Mapping: Sized {
    /// Maps `s`.
    ///
    /// # Errors
    ///
    /// The system's, as [`SharedStorage::map_read_only`] gives them.
    fn map(s: &SharedStorage) -> std::io::Result<Self>;
    /// Its size in bytes.
    fn bytes(&self) -> usize;
}

impl Mapping for ReadMapping {
    fn map(s: &SharedStorage) -> std::io::Result<Self> {
        s.map_read_only()
    }
    fn bytes(&self) -> usize {
        ReadMapping::bytes(self)
    }
}

impl Mapping for WriteMapping {
    fn map(s: &SharedStorage) -> std::io::Result<Self> {
        s.map_read_write()
    }
    fn bytes(&self) -> usize {
        WriteMapping::bytes(self)
    }
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

/// The mappings of the peers' storage this rank reads. Each peer's array
/// ([`PeerArray`]: the arrays of a batch take slots 0, 1, …)
/// has its current mapping, the one its last note named; mappings of
/// storages a slot named before are kept too, so that executions that
/// take turns over several arrays (one redistribution applied to fields
/// `u`, `v`, `w` in turn) map each once instead of on every execution —
/// mapping costs a few system calls and a page fault per page read. A
/// kept mapping whose owner has freed the storage would keep its memory
/// alive for nothing: those are dropped at the next miss and at least
/// every [`MAPPINGS_CHECK_EVERY`] lookups, and no more than
/// [`MAPPINGS_KEPT`] are kept besides the current ones (the least recently
/// used go first). Storage ids are never reused within a process.
#[derive(Debug)]
pub(crate) struct PeerCache<M = ReadMapping> {
    /// Per peer's array: the id of the storage mapped for it last.
    current: HashMap<PeerArray, u64>,
    /// Every mapping, by owner's rank and storage id, with the lookup
    /// that used it last.
    maps: HashMap<(usize, u64), Kept<M>>,
    /// Lookups so far.
    lookups: u64,
}

impl<M> Default for PeerCache<M> {
    fn default() -> Self {
        PeerCache {
            current: HashMap::new(),
            maps: HashMap::new(),
            lookups: 0,
        }
    }
}

/// A mapping kept in a [`PeerCache`].
#[derive(Debug)]
struct Kept<M> {
    storage: SharedStorage,
    map: M,
    used: u64,
}

impl<M: Mapping> PeerCache<M> {
    /// The mapping of `s`, the storage of the peer's array `at`, mapped
    /// now if not kept.
    ///
    /// # Errors
    ///
    /// - [`Other`](std::io::ErrorKind::Other) when the [`Fault::Map`](crate::faults::Fault::Map) fault is injected (tests);
    /// - the errors of [`SharedStorage::map_read_only`] when `s` is not kept and
    ///   cannot be mapped (the slot then has no current mapping).
    pub fn get(&mut self, at: PeerArray, s: &SharedStorage) -> std::io::Result<&M> {
        if crate::faults::injected(crate::faults::Fault::Map) {
            return Err(std::io::Error::other(
                "mapping refused (fault injected: Fault::Map)",
            ));
        }
        self.lookups += 1;
        let key = (at.rank, s.id);
        let hit = (self.maps.get(&key)).is_some_and(|k| k.map.bytes() == s.bytes);
        if !hit {
            self.maps.remove(&key);
        }
        // `s` is the slot's current storage from now on, so that pruning
        // keeps it.
        self.current.insert(at, s.id);
        if !hit || self.lookups.is_multiple_of(MAPPINGS_CHECK_EVERY) {
            self.prune();
        }
        let kept = match self.maps.entry(key) {
            Entry::Occupied(kept) => kept.into_mut(),
            Entry::Vacant(room) => match M::map(s) {
                Ok(map) => room.insert(Kept {
                    storage: *s,
                    map,
                    used: 0,
                }),
                Err(err) => {
                    self.current.remove(&at);
                    return Err(err);
                }
            },
        };
        kept.used = self.lookups;
        Ok(&kept.map)
    }

    /// The mapping of `at` that [`get`](Self::get) made last.
    pub fn mapped(&self, at: PeerArray) -> Option<&M> {
        let id = self.current.get(&at)?;
        self.maps.get(&(at.rank, *id)).map(|k| &k.map)
    }

    /// Drops the mappings no slot names now whose owner has freed the
    /// storage, then the least recently used of those left beyond
    /// [`MAPPINGS_KEPT`].
    fn prune(&mut self) {
        let current: HashSet<(usize, u64)> =
            self.current.iter().map(|(at, &id)| (at.rank, id)).collect();
        self.maps
            .retain(|key, k| current.contains(key) || k.storage.still_open());
        let mut old: Vec<((usize, u64), u64)> = (self.maps.iter())
            .filter(|(key, _)| !current.contains(key))
            .map(|(&key, k)| (key, k.used))
            .collect();
        if old.len() > MAPPINGS_KEPT {
            old.sort_unstable_by_key(|&(_, used)| used);
            for (key, _) in &old[..old.len() - MAPPINGS_KEPT] {
                self.maps.remove(key);
            }
        }
    }

    /// Mappings held.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.maps.len()
    }

    /// Whether the storage `id` of `rank` is mapped.
    #[cfg(test)]
    fn holds(&self, rank: usize, id: u64) -> bool {
        self.maps.contains_key(&(rank, id))
    }
}

/// The probe a rank shows the ranks of its node that read from it: shared
/// storage holding a known value. Dropped only after the ranks have agreed
/// that each could read its senders' probes.
pub(crate) struct ProbeKept(#[allow(dead_code, reason = "held, never read")] Option<Probe>);

/// A shared storage's description as sent (a probe's, or a source part's
/// for the pattern baseline): present (1 or 0), then the process id,
/// descriptor, storage id, bytes, device and inode.
pub(crate) type ProbeEntry = [u64; 7];

/// The description of `s` (zeros when there is none).
pub(crate) fn storage_entry(s: Option<&SharedStorage>) -> ProbeEntry {
    match s {
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
    }
}

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
    let mine = storage_entry(probe.as_ref().map(Probe::info).as_ref());
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
pub(crate) fn probe_storage(e: &ProbeEntry) -> Option<SharedStorage> {
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

    /// Array `slot` of peer `rank`.
    fn at(rank: usize, slot: usize) -> PeerArray {
        PeerArray { rank, slot }
    }

    fn probes(values: std::ops::Range<u64>) -> Vec<Probe> {
        values
            .map(|v| dist_array::storage::probe(v).unwrap())
            .collect()
    }

    /// The value a mapped probe holds.
    fn value(m: &ReadMapping) -> u64 {
        // SAFETY: a probe holds one u64, not written after creation.
        let v = unsafe { m.slice::<u64>() };
        v[0]
    }

    #[test]
    fn one_mapping_per_peer_kept_and_a_new_storage_current() {
        let probes = probes(0..6);
        let mut cache = PeerCache::<ReadMapping>::default();
        // Six peers, each mapped once and kept: no eviction however many.
        for _ in 0..3 {
            for (peer, p) in probes.iter().enumerate() {
                let m = cache.get(at(peer, 0), &p.info()).unwrap();
                assert_eq!(value(m), peer as u64);
            }
        }
        assert_eq!(cache.len(), 6);
        // Peer 2 moves to a new storage: it is current, the old one kept
        // (its owner still holds it).
        let newer = dist_array::storage::probe(42).unwrap();
        assert_eq!(value(cache.get(at(2, 0), &newer.info()).unwrap()), 42);
        assert_eq!(value(cache.mapped(at(2, 0)).unwrap()), 42);
        assert_eq!(cache.len(), 7);
    }

    #[test]
    fn storages_taking_turns_in_a_slot_are_mapped_once() {
        let fields = probes(10..13);
        let mut cache = PeerCache::<ReadMapping>::default();
        let mut first = Vec::new();
        for round in 0..4 {
            for (j, f) in fields.iter().enumerate() {
                let m = cache.get(at(1, 0), &f.info()).unwrap();
                assert_eq!(value(m), 10 + j as u64);
                // The same mapping every round: nothing mapped again.
                match round {
                    0 => first.push(m.as_ptr()),
                    _ => assert_eq!(m.as_ptr(), first[j], "field {j}, round {round}"),
                }
                assert_eq!(value(cache.mapped(at(1, 0)).unwrap()), 10 + j as u64);
            }
        }
        assert_eq!(cache.len(), 3);
    }

    #[test]
    fn mappings_of_freed_storages_are_dropped() {
        let mut fields = probes(0..3);
        let mut cache = PeerCache::<ReadMapping>::default();
        for f in &fields {
            cache.get(at(0, 0), &f.info()).unwrap();
        }
        assert_eq!(cache.len(), 3);
        // The owner frees the first two; the next miss drops them.
        fields.drain(..2);
        let newer = dist_array::storage::probe(7).unwrap();
        cache.get(at(0, 0), &newer.info()).unwrap();
        assert_eq!(cache.len(), 2);
        // Freed while current elsewhere, a storage is dropped by the
        // periodic check once no slot names it any more.
        let other = dist_array::storage::probe(8).unwrap();
        cache.get(at(0, 1), &other.info()).unwrap();
        cache.get(at(0, 1), &fields[0].info()).unwrap();
        drop(other);
        for _ in 0..MAPPINGS_CHECK_EVERY {
            cache.get(at(0, 0), &newer.info()).unwrap();
        }
        assert_eq!(cache.len(), 2, "the freed one dropped by the check");
    }

    #[test]
    fn at_most_so_many_old_mappings_are_kept() {
        let many = probes(0..MAPPINGS_KEPT as u64 + 5);
        let mut cache = PeerCache::<ReadMapping>::default();
        for p in &many {
            cache.get(at(3, 0), &p.info()).unwrap();
        }
        // The current one and the MAPPINGS_KEPT most recent others; the
        // least recently used went first.
        assert_eq!(cache.len(), MAPPINGS_KEPT + 1);
        let held = |cache: &PeerCache, p: &Probe| cache.holds(3, p.info().id);
        assert!(many[..4].iter().all(|p| !held(&cache, p)));
        assert!(many[4..].iter().all(|p| held(&cache, p)));
        assert_eq!(
            value(cache.mapped(at(3, 0)).unwrap()),
            many.len() as u64 - 1
        );
        // A use keeps one from going: used again, probe 4 stays when the
        // first comes back, probe 5 goes.
        cache.get(at(3, 0), &many[4].info()).unwrap();
        cache.get(at(3, 0), &many[0].info()).unwrap();
        assert!(held(&cache, &many[4]) && !held(&cache, &many[5]));
        assert_eq!(value(cache.mapped(at(3, 0)).unwrap()), 0);
        assert_eq!(cache.len(), MAPPINGS_KEPT + 1);
    }

    #[test]
    fn the_storage_looked_up_is_always_the_one_given() {
        // More storages than are kept, taken in an irregular order by
        // three slots, past several periodic checks: every lookup gives
        // the storage asked for, and no more than the current ones and
        // MAPPINGS_KEPT others are held.
        let many = probes(0..MAPPINGS_KEPT as u64 + 8);
        let mut cache = PeerCache::<ReadMapping>::default();
        for i in 0..5 * usize::try_from(MAPPINGS_CHECK_EVERY).unwrap() {
            let (slot, j) = (i % 3, (i * 7 + i / 5) % many.len());
            let m = cache.get(at(1, slot), &many[j].info()).unwrap();
            assert_eq!(value(m), j as u64, "lookup {i}");
            assert_eq!(value(cache.mapped(at(1, slot)).unwrap()), j as u64);
            assert!(
                cache.len() <= MAPPINGS_KEPT + 3,
                "lookup {i}: {}",
                cache.len()
            );
        }
    }
}
