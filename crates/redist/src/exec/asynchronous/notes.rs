//! The receiving side of round 1 within a node: a sender's note says
//! whether its source storage is shared; the receiver maps it (or asks for
//! messages), and once every note is in, copies the mapped messages
//! together with its kept elements, then tells each sender it is done.

use super::super::messages::{copy_merged, RankMessages};
use super::super::node_direct::{PeerArray, PeerReader};
use super::controls::{ANSWER, NOTE};
use super::post::Round;
use super::{COPIED, SEND_IT};
use crate::error::RedistError;
use dist_array::Element;
use mpi_extras::requests::Requests;
use redist_plan::kernel::Store;
use redist_plan::program::{MergeScratch, MessageProgram};

/// The note of receive `i` (program `t`) is in: map the sender's storage
/// and remember the receive in `mapped`, or — a private source, or one
/// that cannot be mapped here, in which case the sender is asked to send
/// it — mark it for round 2 in `late_recvs`.
pub(super) fn on_note<T: Element>(
    reqs: &mut Requests<'_, '_, T>,
    reader: &mut PeerReader,
    t: &MessageProgram,
    i: usize,
    mapped: &mut Vec<usize>,
    late_recvs: &mut [bool],
) -> Result<(), RedistError> {
    match reader.map(
        NOTE.note(reqs, i),
        i,
        PeerArray {
            rank: t.peer,
            slot: 0,
        },
    ) {
        Ok(true) => mapped.push(i),
        // A private source: its data follows in round 2.
        Ok(false) => late_recvs[i] = true,
        Err(_) => {
            // It cannot be read here: ask for messages.
            ANSWER.send(reqs, i, &[SEND_IT], t.peer)?;
            late_recvs[i] = true;
        }
    }
    Ok(())
}

/// What a receiver keeps while its senders' notes come in: where it maps
/// their storage, the receives it copies straight from them, and how many
/// notes are still to come.
pub(super) struct Reading<'r> {
    reader: &'r mut PeerReader,
    mapped: &'r mut Vec<usize>,
    left: usize,
}

impl<'r> Reading<'r> {
    /// Waits for `left` notes, mapping through `reader`, the receives it
    /// copies in `mapped` (emptied first).
    pub fn new(reader: &'r mut PeerReader, mapped: &'r mut Vec<usize>, left: usize) -> Self {
        mapped.clear();
        Reading {
            reader,
            mapped,
            left,
        }
    }

    /// The note of receive `i` is in: map the sender's storage or mark the
    /// receive for round 2 ([`on_note`], `late_recvs`); once every note is
    /// in, copy the mapped receives and the kept elements into `out`
    /// together ([`copy_together`]) and answer each sender.
    pub fn on_note<T: Element, S: Store<T>>(
        &mut self,
        reqs: &mut Requests<'_, '_, T>,
        round: &Round<'_, T, S>,
        i: usize,
        out: &mut [T],
        late_recvs: &mut [bool],
        merge: &mut MergeScratch,
    ) -> Result<(), RedistError> {
        let recvs = round.messages.recvs();
        self.left -= 1;
        on_note(reqs, self.reader, &recvs[i], i, self.mapped, late_recvs)?;
        if self.left == 0 {
            let peers = Mapped {
                recvs: self.mapped,
                reader: self.reader,
                slot: 0,
            };
            copy_together(round.messages, round.src, out, peers, round.store, merge)?;
            answer_copied(reqs, self.mapped, recvs)?;
        }
        Ok(())
    }
}

/// The receives a rank copies straight from its peers' storage: their
/// indices among its receives, the reader holding the mappings, and the
/// array's place in a batch (0 for a single execution).
pub(super) struct Mapped<'a> {
    pub recvs: &'a [usize],
    pub reader: &'a PeerReader,
    pub slot: usize,
}

/// Copies the kept elements and every message of `peers` into `out`
/// together, in one pass: where messages interleave in the target, each
/// stretch of target is written once for all of them rather than once per
/// message. Where every program merges ([`MessageProgram::merges`]),
/// their lines merge in target order, sources fetched ahead
/// ([`copy_merged`]); otherwise portion by portion
/// ([`RankMessages::copy_local_with`]).
pub(super) fn copy_together<T: Element, S: Store<T>>(
    messages: &RankMessages,
    src: &[T],
    out: &mut [T],
    peers: Mapped<'_>,
    store: S,
    merge: &mut MergeScratch,
) -> Result<(), RedistError> {
    let recvs = messages.recvs();
    // The local copy first, then the peers' messages.
    let local = messages.local();
    let mut sources: Vec<(&MessageProgram, &[T])> = Vec::with_capacity(peers.recvs.len() + 1);
    sources.extend(local.map(|t| (t, src)));
    for &i in peers.recvs {
        let t = &recvs[i];
        let at = PeerArray {
            rank: t.peer,
            slot: peers.slot,
        };
        // SAFETY: the sender's source storage holds `T`s and stays
        // untouched until it has this rank's answer, sent after the copy.
        let peer = unsafe { peers.reader.storage::<T>(at) }.ok_or_else(|| {
            RedistError::Internal(format!("no mapping of rank {}'s storage", t.peer))
        })?;
        sources.push((t, peer));
    }
    let from_peers = &sources[usize::from(local.is_some())..];
    if !from_peers.is_empty() && sources.iter().all(|(t, _)| t.merges()) {
        copy_merged(&sources, out, store, merge);
        return Ok(());
    }
    let elements = from_peers.iter().map(|(t, _)| t.len).sum();
    messages.copy_local_with(src, out, elements, store, |k, portions, out| {
        for &(t, peer) in from_peers {
            t.copy_with(peer, t.portion(k, portions), out, store);
        }
        Ok::<(), RedistError>(())
    })
}

/// Tells the sender of every receive in `mapped` that its message is copied.
pub(super) fn answer_copied<T: Element>(
    reqs: &mut Requests<'_, '_, T>,
    mapped: &[usize],
    recvs: &[MessageProgram],
) -> Result<(), RedistError> {
    for &i in mapped {
        ANSWER.send(reqs, i, &[COPIED], recvs[i].peer)?;
    }
    Ok(())
}
