//! A batch of K arrays through node-direct copies: between ranks of one
//! node, one note per pair of ranks names the sender's K source storages;
//! the receiver maps all K and copies each array's message straight from
//! its sender, together with the array's kept elements, then answers once.
//! Every other message — to and from other nodes, from senders whose
//! storage cannot be mapped here — carries the K arrays' shares one after
//! the other (array `j`'s share at `j · len`): one message per pair of
//! ranks, in pieces of whole arrays' shares of about
//! [`BATCH_GROUP_BYTES`](crate::tuning::BATCH_GROUP_BYTES) when long.
//!
//! An execution, on every rank:
//!
//! 1. notes: each rank sends every rank of its node it sends to one note of
//!    K entries (whether each source is shared, and how to map it) and
//!    receives one from every rank of its node it receives from;
//! 2. the receiver maps the K storages a note names; if any of them cannot
//!    be mapped, it asks for the pair's whole message ("send it");
//! 3. array by array, so that its source and target stay in cache: the
//!    pieces of messages to other nodes that start with the array are
//!    packed and sent, its kept elements and mapped messages copied, and the
//!    pieces that have arrived unpacked; then the receiver answers
//!    "copied";
//! 4. a sender waits for every answer of its node's receivers (its sources
//!    are not written while being read), and packs and sends what it is
//!    asked for; what arrives is unpacked array by array.

use super::super::arrays::Arrays;
use super::super::messages::{grow, RankMessages, DATA, NOTE};
use super::super::node_direct::Note;
use super::super::node_direct::{NodeDirect, PeerArray};
use super::controls::{self, Arrived, ANSWER};
use super::{notes, reset, Async, COPIED, SEND_IT};
use crate::error::RedistError;
use crate::tuning::BATCH_GROUP_BYTES;
use dist_array::{DistArray, Element};
use mpi::point_to_point::{Destination, Source};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi_extras::buffers::SendBuf;
use mpi_extras::requests::{Event, Requests};
use redist_plan::kernel::Store;
use redist_plan::program::MessageProgram;

/// Words of one note entry.
const NOTE_WORDS: usize = std::mem::size_of::<Note>() / 8;

/// The notes of a batch: this rank's, one entry per array, and those it
/// received, `k` entries per receive from a rank of its node; kept from
/// one batch to the next.
#[derive(Default)]
pub(super) struct BatchNotes {
    mine: Vec<u64>,
    theirs: Vec<u64>,
    /// Receives whose senders are asked to send their message: some of
    /// their K sources cannot be mapped here.
    asks: Vec<usize>,
}

impl BatchNotes {
    /// Entry `j` of the note of receive `i` (of `k` entries each).
    fn entry(&self, i: usize, j: usize, k: usize) -> Note {
        let at = (i * k + j) * NOTE_WORDS;
        let mut note = [0; NOTE_WORDS];
        note.copy_from_slice(&self.theirs[at..at + NOTE_WORDS]);
        note
    }
}

impl<T: Element> Async<T> {
    /// Redistributes `arrays` (checked, agreed on, of equal number on
    /// every rank) in one exchange through node-direct copies, storing
    /// through `store`. Collective.
    ///
    /// # Errors
    ///
    /// [`RedistError::Internal`] when the exchange has no node-direct
    /// copies; [`RedistError::Mpi`] and [`RedistError::Limit`] as an
    /// execution's.
    pub fn run_batch<S: Store<T>>(
        &mut self,
        messages: &RankMessages,
        comm: &SimpleCommunicator,
        arrays: Arrays<'_, '_, T>,
        store: S,
    ) -> Result<(), RedistError> {
        let Arrays {
            sources: srcs,
            targets: dsts,
        } = arrays;
        let k = srcs.len();
        // A batch writes nothing into its peers' targets.
        self.written.clear();
        self.lent = false;
        let node = self.node.as_mut().ok_or_else(|| {
            RedistError::Internal("a node-direct batch without node-direct copies".to_string())
        })?;
        exchange_notes(comm, messages, node, &mut self.batch_notes, srcs);
        let (recvs, sends) = (messages.recvs(), messages.sends());
        let mut receives = Receives {
            late: &mut self.late_recvs,
            mapped: &mut self.mapped,
            slots: &mut self.slots,
        };
        let recv_total = receives.map_near(node, &mut self.batch_notes, recvs, k);
        grow(&mut self.recv_buf, recv_total);
        grow(&mut self.send_buf, k * messages.send_total);
        let mut flow = Flow {
            messages,
            srcs,
            dsts,
            store,
            rooms: Rooms::split(&mut self.send_buf, messages, k),
        };
        let near = &node.near;
        let mut reqs = self.requests.list(
            comm,
            &messages.elem,
            &mut self.recv_buf[..],
            &self.slots,
            &controls::spaces(sends.len(), recvs.len()),
        )?;
        post_receives(&mut reqs, recvs, &self.slots, k)?;
        // Sends read from shared storage wait for their receiver's answer;
        // the others are packed and sent piece by piece below.
        let answered = |i: usize| near.send(i);
        post_answers(&mut reqs, messages, answered, &self.batch_notes.asks)?;
        // Array by array, so that its source and target stay in cache:
        // the pieces of the sends that start with it, its kept elements and
        // mapped messages, then whatever has arrived.
        for j in 0..k {
            for (i, t) in sends.iter().enumerate() {
                if !answered(i) && j % arrays_per_piece::<T>(t.len, k) == 0 {
                    flow.rooms.send_piece(i, t, flow.srcs, j, &mut reqs)?;
                }
            }
            let (src, out) = (flow.srcs[j].local_slice(), flow.dsts[j].local_slice_mut());
            let peers = notes::Mapped {
                recvs: &self.mapped,
                reader: &node.reader,
                slot: j,
            };
            notes::copy_together(messages, src, out, peers, store, &mut self.merge)?;
            while let Some(event) = reqs.test_any()? {
                flow.on_event(event, &mut reqs)?;
            }
        }
        notes::answer_copied(&mut reqs, &self.mapped, recvs)?;
        while let Some(event) = reqs.wait_any()? {
            flow.on_event(event, &mut reqs)?;
        }
        Ok(())
    }
}

/// The arrays of a batch on their way: sources, targets, and the send
/// buffer's rooms.
struct Flow<'a, 'd, 'b, T, S> {
    messages: &'a RankMessages,
    srcs: &'a [&'a DistArray<T>],
    dsts: &'a mut [&'d mut DistArray<T>],
    /// How values are stored into the targets.
    store: S,
    rooms: Rooms<'b, T>,
}

impl<'b, T: Element, S: Store<T>> Flow<'_, '_, 'b, T, S> {
    /// Step 3 and 4 as requests complete: a piece that arrived is unpacked
    /// array by array; a receiver that asks for its message gets it whole.
    fn on_event(
        &mut self,
        event: Event,
        reqs: &mut Requests<'_, 'b, T>,
    ) -> Result<(), RedistError> {
        match event {
            Event::Piece {
                request, message, ..
            } => {
                let t = &self.messages.recvs()[message];
                let (offset, piece) = reqs.received(request)?;
                let first = offset / t.len.max(1);
                let shares = piece.chunks_exact(t.len.max(1));
                for (share, dst) in shares.zip(self.dsts.iter_mut().skip(first)) {
                    t.unpack_with(t.whole(), share, dst.local_slice_mut(), self.store);
                }
            }
            Event::Control { kind, index } => {
                let Arrived::Answer(i) = Arrived::of(kind, index)? else {
                    return Ok(());
                };
                if ANSWER.word(reqs, i) == COPIED {
                    return Ok(());
                }
                let t = &self.messages.sends()[i];
                let per_piece = arrays_per_piece::<T>(t.len, self.srcs.len());
                for first in (0..self.srcs.len()).step_by(per_piece) {
                    self.rooms.send_piece(i, t, self.srcs, first, reqs)?;
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// Posts every receive of a batch of `k` arrays, in pieces of whole
/// arrays' shares, into its slot.
fn post_receives<T: Element>(
    reqs: &mut Requests<'_, '_, T>,
    recvs: &[MessageProgram],
    slots: &[(usize, usize)],
    k: usize,
) -> Result<(), RedistError> {
    for (i, t) in recvs.iter().enumerate() {
        let n = slots[i].1;
        let per_piece = (arrays_per_piece::<T>(t.len, k) * t.len).max(1);
        for offset in (0..n).step_by(per_piece) {
            reqs.irecv_piece(i, offset, per_piece.min(n - offset), t.peer, DATA)?;
        }
    }
    Ok(())
}

/// Posts the receives of the answers to the sends `answered` selects (read
/// by their receivers from shared storage), and this rank's "send it" to
/// the senders of the receives it `asks` for whole.
fn post_answers<T: Element>(
    reqs: &mut Requests<'_, '_, T>,
    messages: &RankMessages,
    answered: impl Fn(usize) -> bool,
    asks: &[usize],
) -> Result<(), RedistError> {
    for (i, t) in messages.sends().iter().enumerate() {
        if answered(i) {
            ANSWER.receive(reqs, i, t.peer)?;
        }
    }
    for &i in asks {
        ANSWER.send(reqs, i, &[SEND_IT], messages.recvs()[i].peer)?;
    }
    Ok(())
}

/// What a batch decides about its receives: which travel late (asked for
/// whole), which are copied from a mapped sender, and each receive's slot
/// in the receive buffer.
struct Receives<'a> {
    late: &'a mut Vec<bool>,
    mapped: &'a mut Vec<usize>,
    slots: &'a mut Vec<(usize, usize)>,
}

impl Receives<'_> {
    /// Step 2: maps, for every receive from the node, the K storages its
    /// note names; a receive is copied only if all K map, else its sender
    /// is asked for the message (`notes.asks`). (Batches come here only
    /// when every rank's sources are shared; a private one is asked for
    /// all the same.)
    /// Gives every receive that travels as a message a slot of K shares and
    /// returns the receive buffer's length.
    fn map_near(
        &mut self,
        node: &mut NodeDirect,
        notes: &mut BatchNotes,
        recvs: &[MessageProgram],
        k: usize,
    ) -> usize {
        reset(self.late, recvs.len());
        self.mapped.clear();
        notes.asks.clear();
        let mut from_node = 0;
        for (i, t) in recvs.iter().enumerate() {
            if !node.near.recv(i) {
                continue;
            }
            let readable = (0..k).all(|j| {
                let note = notes.entry(from_node, j, k);
                matches!(
                    node.reader.map(
                        note,
                        i,
                        PeerArray {
                            rank: t.peer,
                            slot: j
                        }
                    ),
                    Ok(true)
                )
            });
            from_node += 1;
            if readable {
                self.mapped.push(i);
            } else {
                self.late[i] = true;
                notes.asks.push(i);
            }
        }
        self.slots.clear();
        let mut at = 0;
        for (i, t) in recvs.iter().enumerate() {
            let travels = !node.near.recv(i) || self.late[i];
            let n = if travels { k * t.len } else { 0 };
            self.slots.push((at, n));
            at += n;
        }
        at
    }
}

/// Each send's room in the send buffer, taken when it is packed (a
/// message is packed once).
struct Rooms<'b, T> {
    rooms: Vec<Option<&'b mut [T]>>,
    k: usize,
}

impl<'b, T: Element> Rooms<'b, T> {
    /// Splits `buf` into one room of K shares per send of `messages`.
    fn split(buf: &'b mut [T], messages: &RankMessages, k: usize) -> Rooms<'b, T> {
        let mut rooms = Vec::with_capacity(messages.sends().len());
        let mut rest = buf;
        for t in messages.sends() {
            let (room, r) = std::mem::take(&mut rest).split_at_mut(k * t.len);
            rooms.push(Some(room));
            rest = r;
        }
        Rooms { rooms, k }
    }

    /// Packs the piece of send `i` (`t`) that starts with array `first`
    /// (the next one: pieces go in order) into the front of its room,
    /// array `j`'s share at `j · len` of the message, and sends it.
    fn send_piece(
        &mut self,
        i: usize,
        t: &MessageProgram,
        srcs: &[&DistArray<T>],
        first: usize,
        reqs: &mut Requests<'_, 'b, T>,
    ) -> Result<(), RedistError> {
        if t.len == 0 {
            return Ok(());
        }
        let arrays = arrays_per_piece::<T>(t.len, self.k).min(self.k.saturating_sub(first));
        let room = self.rooms.get_mut(i).and_then(Option::take);
        let Some((piece, rest)) = room.and_then(|r| r.split_at_mut_checked(arrays * t.len)) else {
            return Err(RedistError::Internal(format!(
                "piece of message to {} at array {first} packed twice",
                t.peer
            )));
        };
        self.rooms[i] = Some(rest);
        for (share, src) in piece.chunks_exact_mut(t.len).zip(&srcs[first..]) {
            t.pack(src.local_slice(), t.whole(), share);
        }
        reqs.isend(SendBuf::Elements(piece), t.peer, DATA)?;
        Ok(())
    }
}

/// Arrays whose shares of a message of `len` elements travel together in
/// one piece: as many as fit [`BATCH_GROUP_BYTES`] (at least one, at most
/// the batch's `k`), so that a batch of small arrays sends one message per
/// pair of ranks, while large shares are packed, sent and unpacked in pieces
/// that stay in cache and overlap. Sender and receiver compute the same.
fn arrays_per_piece<T>(len: usize, k: usize) -> usize {
    let bytes = len.saturating_mul(std::mem::size_of::<T>()).max(1);
    (BATCH_GROUP_BYTES / bytes).clamp(1, k.max(1))
}

/// Step 1: this rank's note of `srcs` to every rank of its node it sends
/// to, and the notes of those it receives from, into `notes` (K entries
/// per receive from the node, in the order of the receives). Point to
/// point, waits as [`procgrid::waits::complete`] does.
fn exchange_notes<T: Element>(
    comm: &SimpleCommunicator,
    messages: &RankMessages,
    node: &NodeDirect,
    notes: &mut BatchNotes,
    srcs: &[&DistArray<T>],
) {
    let k = srcs.len();
    notes.mine.clear();
    for src in srcs {
        notes
            .mine
            .extend_from_slice(&NodeDirect::note_for(src.shared_storage().as_ref()));
    }
    let near_recvs = (0..messages.recvs().len()).filter(|&i| node.near.recv(i));
    notes.theirs.clear();
    notes
        .theirs
        .resize(near_recvs.clone().count() * k * NOTE_WORDS, 0);
    let rank = |peer: usize| comm.process_at_rank(i32::try_from(peer).unwrap_or(i32::MAX));
    let BatchNotes { mine, theirs, .. } = notes;
    mpi::request::scope(|scope| {
        let mut requests = Vec::new();
        for (buf, i) in theirs.chunks_exact_mut(k * NOTE_WORDS).zip(near_recvs) {
            let peer = messages.recvs()[i].peer;
            requests.push(rank(peer).immediate_receive_into_with_tag(scope, buf, NOTE));
        }
        for (i, t) in messages.sends().iter().enumerate() {
            if node.near.send(i) {
                requests.push(rank(t.peer).immediate_send_with_tag(scope, &mine[..], NOTE));
            }
        }
        requests.into_iter().for_each(procgrid::waits::complete);
    });
}
