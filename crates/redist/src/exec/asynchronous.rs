//! `async`: post every receive, send each message as soon as it is packed
//! (or straight from source storage), unpack each message as it arrives —
//! the asynchronous scheme of seed 000 (Chung, Hsu and Bai), where a rank
//! never waits for a message it could already be unpacking. A packed
//! message travels in pieces of whole outermost indices: each piece is sent
//! as soon as it is packed and unpacked as soon as it arrives, so packing,
//! transfer and unpacking overlap.
//!
//! Between ranks of one node, a message may skip MPI (`node_direct.rs`).
//! An execution then runs in two rounds:
//!
//! 1. every message between ranks of different nodes moves as above; for
//!    a message within the node the sender sends a note — whether its
//!    source storage is shared and how to map it. The receiver copies the
//!    message straight from the sender's storage and answers "copied", or
//!    answers "send it" when it cannot map it; the sender of a shared
//!    source waits for the answer before returning, so its array is not
//!    written while being read. Once every note is in, the local part and
//!    all mapped messages are copied together, a fraction of each per step
//!    (about 1 MiB of target), so target stretches that several messages
//!    fill are fetched into cache once, not once per message.
//! 2. messages from private sources, and those whose receiver answered
//!    "send it", move as ordinary messages. Only the ranks concerned take
//!    part, and they know it from round 1, so nobody waits for anybody
//!    else.
//!
//! The receive buffer holds only what arrives as messages: receives that
//! are all copied straight from the sender need none.

use super::kernel::Out;
use super::mpi_raw::{Event, Part, RequestStore, Requests};
use super::node_direct::NodeDirect;
use super::program::Transfer;
use super::route::{Pieces, Recv, Routes, Send};
use super::{Traffic, ANSWER, DATA, NOTE};
use crate::RedistError;
use dist_array::{DistArray, Element};
use mpi::topology::SimpleCommunicator;

/// The receiver's answer: it copied the message itself.
const COPIED: u64 = 0;
/// The receiver's answer: send the message as MPI messages.
const SEND_IT: u64 = 1;

/// The `async` exchange of one redistribution, with what it keeps between
/// executions.
pub(crate) struct Async<T> {
    routes: Routes,
    node: Option<NodeDirect>,
    requests: RequestStore,
    send_buf: Vec<T>,
    recv_buf: Vec<T>,
    /// Per send / receive: whether it moves in round 2 of this execution.
    late_sends: Vec<bool>,
    late_recvs: Vec<bool>,
    /// Receive slots of the current round.
    slots: Vec<(usize, usize)>,
    /// Receives of this execution copied straight from a mapped peer.
    mapped: Vec<usize>,
    /// Per send: pieces packed and sent so far when sends are packed
    /// together with the local copy.
    sent_pieces: Vec<usize>,
}

impl<T: Element> Async<T> {
    /// The exchange of messages routed as `routes`, reading shared sources
    /// directly where `node` allows it.
    pub fn new(routes: Routes, node: Option<NodeDirect>) -> Async<T> {
        Async {
            routes,
            node,
            requests: RequestStore::default(),
            send_buf: Vec::new(),
            recv_buf: Vec::new(),
            late_sends: Vec::new(),
            late_recvs: Vec::new(),
            slots: Vec::new(),
            mapped: Vec::new(),
            sent_pieces: Vec::new(),
        }
    }

    /// Whether receivers read shared sources directly.
    pub fn node_direct(&self) -> bool {
        self.node.is_some()
    }

    /// Bytes of the routes and tables this exchange holds (buffers aside).
    pub fn heap_bytes(&self) -> usize {
        self.routes.heap_bytes()
            + self.slots.capacity() * std::mem::size_of::<(usize, usize)>()
            + self.late_sends.capacity()
            + self.late_recvs.capacity()
    }

    /// One execution: `src` into `dst`. Collective.
    pub fn run(
        &mut self,
        traffic: &Traffic,
        comm: &SimpleCommunicator,
        src: &DistArray<T>,
        dst: &mut DistArray<T>,
    ) -> Result<(), RedistError> {
        let shared = src.shared_storage();
        let program = &traffic.program;
        let (sends, recvs) = (program.sends.len(), program.recvs.len());
        let Async {
            routes,
            node,
            requests,
            send_buf,
            recv_buf,
            late_sends,
            late_recvs,
            slots,
            mapped,
            sent_pieces,
        } = self;
        let within =
            |list: fn(&NodeDirect) -> &[bool], i: usize| node.as_ref().is_some_and(|n| list(n)[i]);
        let within_send = |i| within(|n| &n.sends, i);
        let within_recv = |i| within(|n| &n.recvs, i);
        // Round 1: messages across nodes move; within the node, notes.
        late_sends.clear();
        late_sends.resize(sends, false);
        late_recvs.clear();
        late_recvs.resize(recvs, false);
        let round_one_send = |i: usize| !within_send(i);
        let round_one_recv = |i: usize| !within_recv(i);
        let send_room = packed_room(program.sends.iter(), routes, round_one_send);
        super::ensure_len(send_buf, send_room);
        set_slots(slots, &program.recvs, |i| {
            round_one_recv(i) && routes.recv[i].typed.is_none()
        });
        super::ensure_len(recv_buf, slots.last().map_or(0, |&(o, n)| o + n));
        let src = src.local_slice();
        let out = dst.local_slice_mut();
        let target = Target(out.as_mut_ptr(), out.len());
        {
            let mut reqs = requests.list(comm, &traffic.elem, &mut recv_buf[..], slots, sends)?;
            for (i, t) in program.recvs.iter().enumerate() {
                if within_recv(i) {
                    reqs.irecv_note(i, t.peer, NOTE)?;
                } else {
                    post_receives(&mut reqs, &routes.recv[i], t, i, target)?;
                }
            }
            // Without copies from peers of the node, the local part is
            // copied in one pass with the packed sends whose pieces pack on
            // their own, a fraction of each per step.
            let mut notes_left = (0..recvs).filter(|&i| within_recv(i)).count();
            let fuse = notes_left == 0;
            let together = |i: usize| {
                fuse && !within_send(i)
                    && matches!(&routes.send[i], Send::Packed(p) if p.aligned(&program.sends[i]))
            };
            let mut rest: &mut [T] = &mut send_buf[..];
            for (i, t) in program.sends.iter().enumerate() {
                if together(i) {
                    continue;
                }
                if !within_send(i) {
                    send(&mut reqs, &routes.send[i], t, src, &mut rest)?;
                    continue;
                }
                reqs.isend_note(i, NodeDirect::note_for(shared.as_ref()), t.peer, NOTE)?;
                if shared.is_some() {
                    reqs.irecv_word(i, t.peer, ANSWER)?;
                } else {
                    late_sends[i] = true;
                }
            }
            mapped.clear();
            if fuse {
                copy_local_and_send(
                    traffic,
                    routes,
                    src,
                    out,
                    &mut reqs,
                    rest,
                    together,
                    sent_pieces,
                )?;
            }
            while let Some(event) = reqs.wait_any()? {
                match event {
                    Event::Piece {
                        request,
                        message,
                        last,
                    } => arrived(&reqs, routes, &program.recvs, out, request, message, last)?,
                    Event::Note(i) => {
                        let t = &program.recvs[i];
                        let n = node.as_mut().ok_or_else(|| {
                            RedistError::Internal("a note without node-direct copies".to_string())
                        })?;
                        notes_left -= 1;
                        let Some(storage) = n.storage_in(reqs.note(i), t.peer) else {
                            // A private source: its data follows in round 2.
                            late_recvs[i] = true;
                            if notes_left == 0 {
                                copy_together(traffic, src, out, mapped, n)?;
                                answer_copied(&mut reqs, mapped, &program.recvs)?;
                            }
                            continue;
                        };
                        let map = if storage.bytes == n.expected[i] {
                            n.cache.get(t.peer, &storage)
                        } else {
                            Err(std::io::Error::new(
                                std::io::ErrorKind::InvalidData,
                                "the note's size is not what the plan says the sender holds",
                            ))
                        };
                        match map {
                            Ok(_) => mapped.push(i),
                            Err(_) => {
                                // It cannot be read here: ask for messages.
                                reqs.isend_word(i, SEND_IT, t.peer, ANSWER)?;
                                late_recvs[i] = true;
                            }
                        }
                        if notes_left == 0 {
                            copy_together(traffic, src, out, mapped, n)?;
                            answer_copied(&mut reqs, mapped, &program.recvs)?;
                        }
                    }
                    Event::Word(i) => late_sends[i] = reqs.word(i) != COPIED,
                    Event::Sent | Event::Landed(_) => {}
                }
            }
        }
        // Round 2: what moves as messages after all, between the ranks
        // that know it from round 1.
        if !late_sends.contains(&true) && !late_recvs.contains(&true) {
            return Ok(());
        }
        let late_send = |i: usize| late_sends[i];
        let send_room = packed_room(program.sends.iter(), routes, late_send);
        super::ensure_len(send_buf, send_room);
        set_slots(slots, &program.recvs, |i| {
            late_recvs[i] && routes.recv[i].typed.is_none()
        });
        super::ensure_len(recv_buf, slots.last().map_or(0, |&(o, n)| o + n));
        let mut reqs = requests.list(comm, &traffic.elem, &mut recv_buf[..], slots, sends)?;
        for (i, t) in program.recvs.iter().enumerate() {
            if late_recvs[i] {
                post_receives(&mut reqs, &routes.recv[i], t, i, target)?;
            }
        }
        let mut rest: &mut [T] = &mut send_buf[..];
        for (i, t) in program.sends.iter().enumerate() {
            if late_sends[i] {
                send(&mut reqs, &routes.send[i], t, src, &mut rest)?;
            }
        }
        while let Some(event) = reqs.wait_any()? {
            if let Event::Piece {
                request,
                message,
                last,
            } = event
            {
                arrived(&reqs, routes, &program.recvs, out, request, message, last)?;
            }
        }
        Ok(())
    }
}

/// Copies the local part and every message of `mapped` (receives whose
/// sender's storage `node` has mapped) into `out`, in steps: each step
/// copies the same fraction of every message, so where messages interleave
/// in the target, each stretch of target is fetched into cache once for all
/// of them rather than once per message.
fn copy_together<T: Element>(
    traffic: &Traffic,
    src: &[T],
    out: &mut [T],
    mapped: &[usize],
    node: &NodeDirect,
) -> Result<(), RedistError> {
    let program = &traffic.program;
    let local = program.local.as_ref();
    let elements =
        local.map_or(0, |t| t.len) + mapped.iter().map(|&i| program.recvs[i].len).sum::<usize>();
    let steps = super::steps_of(elements * std::mem::size_of::<T>());
    let out = Out::new(out);
    for k in 0..steps {
        if let Some(t) = local {
            t.copy_part(src, &out, k, steps);
        }
        for &i in mapped {
            let t = &program.recvs[i];
            let peer = node.cache.mapped(t.peer).ok_or_else(|| {
                RedistError::Internal(format!("no mapping of rank {}'s storage", t.peer))
            })?;
            // SAFETY: the sender's source storage holds `T`s and stays
            // untouched until it has this rank's answer, sent after the copy.
            t.copy_part(unsafe { peer.slice::<T>() }, &out, k, steps);
        }
    }
    Ok(())
}

/// Copies the local part into `out` and packs and sends the sends that
/// `together` selects (packed, in pieces of whole outermost indices), in
/// one pass over the source: per step the same fraction of the local part
/// and of each message, each piece sent as soon as it is packed. Where the
/// messages and the local part interleave in source storage, each source
/// cache line is then fetched once, not once per message. Pieces take their
/// room from the front of `rest` in the order they are packed.
#[allow(clippy::too_many_arguments)]
fn copy_local_and_send<'b, T: Element>(
    traffic: &Traffic,
    routes: &'b Routes,
    src: &'b [T],
    out: &mut [T],
    reqs: &mut Requests<'_, 'b, T>,
    mut rest: &'b mut [T],
    together: impl Fn(usize) -> bool,
    sent_pieces: &mut Vec<usize>,
) -> Result<(), RedistError> {
    let program = &traffic.program;
    let local = program.local.as_ref();
    let piece_size = |i: usize| match &routes.send[i] {
        Send::Packed(Pieces::Chunks(size)) => *size,
        _ => usize::MAX,
    };
    let sends = (0..program.sends.len()).filter(|&i| together(i));
    let elements =
        local.map_or(0, |t| t.len) + sends.clone().map(|i| program.sends[i].len).sum::<usize>();
    let steps = super::steps_of(elements * std::mem::size_of::<T>());
    sent_pieces.clear();
    sent_pieces.resize(program.sends.len(), 0);
    let out = Out::new(out);
    for k in 0..steps {
        if let Some(t) = local {
            t.copy_part(src, &out, k, steps);
        }
        for i in sends.clone() {
            let t = &program.sends[i];
            let size = piece_size(i);
            let pieces = t.len.div_ceil(size);
            // The pieces due by the end of step k.
            let due = ((k + 1) as u128 * pieces as u128).div_ceil(steps as u128) as usize;
            while sent_pieces[i] < due {
                let o = sent_pieces[i] * size;
                let n = size.min(t.len - o);
                let (piece, r) = std::mem::take(&mut rest).split_at_mut(n);
                rest = r;
                t.pack_piece(o, src, piece);
                reqs.isend(Part::Elements(piece), t.peer, DATA)?;
                sent_pieces[i] += 1;
            }
        }
    }
    Ok(())
}

/// Tells the sender of every receive in `mapped` that its message is copied.
fn answer_copied<T: Element>(
    reqs: &mut Requests<'_, '_, T>,
    mapped: &[usize],
    recvs: &[Transfer],
) -> Result<(), RedistError> {
    for &i in mapped {
        reqs.isend_word(i, COPIED, recvs[i].peer, ANSWER)?;
    }
    Ok(())
}

/// Elements of send buffer the packed messages among `sends` that `this`
/// selects need.
fn packed_room<'a>(
    sends: impl Iterator<Item = &'a Transfer>,
    routes: &Routes,
    this: impl Fn(usize) -> bool,
) -> usize {
    sends
        .enumerate()
        .filter(|&(i, _)| this(i) && matches!(routes.send[i], Send::Packed(_)))
        .map(|(_, t)| t.len)
        .sum()
}

/// Receive slots, one after another, for the receives `this` selects (the
/// others take none).
fn set_slots(slots: &mut Vec<(usize, usize)>, recvs: &[Transfer], this: impl Fn(usize) -> bool) {
    slots.clear();
    let mut at = 0;
    for (i, t) in recvs.iter().enumerate() {
        let n = if this(i) { t.len } else { 0 };
        slots.push((at, n));
        at += n;
    }
}

/// The target's local storage, written by MPI through the datatypes of
/// typed receives while this rank writes other elements of it.
#[derive(Clone, Copy)]
struct Target<T>(*mut T, usize);

/// Posts the receive of message `i`: straight into target storage when
/// its route has a datatype, else its pieces, as its sender cuts it — each
/// straight into target storage when it lies there as one run, else into
/// the message's slot, to be unpacked.
fn post_receives<'b, T: Element>(
    reqs: &mut Requests<'_, 'b, T>,
    route: &'b Recv,
    t: &Transfer,
    i: usize,
    target: Target<T>,
) -> Result<(), RedistError> {
    if let Some(ty) = &route.typed {
        // SAFETY: the target storage outlives the request list (both live
        // through `run`, which completes every request before returning).
        // The plan gives every target element to one message or the local
        // part, so nothing else reads or writes this message's elements;
        // the rank writes only others' while MPI writes these.
        return unsafe { reqs.irecv_typed(i, target.0, target.1, ty, t.peer, DATA) };
    }
    route.pieces.each(t, |o, n, _| {
        match route.unpack_pieces.then(|| t.target_run(o, n)).flatten() {
            // SAFETY: as above, for the piece's elements of target storage.
            Some(at) => unsafe {
                reqs.irecv_into(i, (target.0, target.1), at..at + n, t.peer, DATA)
            },
            None => reqs.irecv_piece(i, o, n, t.peer, DATA),
        }
    })
}

/// Sends message `t` as `route` says; a packed message takes its slot from
/// the front of `rest` and leaves piece by piece as it is packed.
fn send<'b, T: Element>(
    reqs: &mut Requests<'_, 'b, T>,
    route: &'b Send,
    t: &Transfer,
    src: &'b [T],
    rest: &mut &'b mut [T],
) -> Result<(), RedistError> {
    match route {
        Send::Typed(ty) => reqs.isend(Part::Typed(src, ty), t.peer, DATA),
        &Send::SourceRuns { max } => Pieces::SourceRuns { max }.each(t, |_, n, off| {
            reqs.isend(Part::Elements(&src[off..off + n]), t.peer, DATA)
        }),
        Send::Packed(pieces) => {
            let (slot, r) = std::mem::take(rest).split_at_mut(t.len);
            *rest = r;
            if pieces.aligned(t) {
                let mut left = slot;
                pieces.each(t, |o, n, _| {
                    let (piece, r) = std::mem::take(&mut left).split_at_mut(n);
                    left = r;
                    t.pack_piece(o, src, piece);
                    reqs.isend(Part::Elements(piece), t.peer, DATA)
                })
            } else {
                t.pack(src, slot);
                let slot: &'b [T] = slot;
                pieces.each(t, |o, n, _| {
                    reqs.isend(Part::Elements(&slot[o..o + n]), t.peer, DATA)
                })
            }
        }
    }
}

/// A piece of receive message `message` arrived: unpack it, or the whole
/// message once its last piece is in when pieces do not unpack alone.
fn arrived<T: Element>(
    reqs: &Requests<'_, '_, T>,
    routes: &Routes,
    recvs: &[Transfer],
    out: &mut [T],
    request: usize,
    message: usize,
    last: bool,
) -> Result<(), RedistError> {
    let t = &recvs[message];
    if routes.recv[message].unpack_pieces {
        let (offset, piece) = reqs.received(request)?;
        t.unpack_piece(offset, piece, out);
    } else if last {
        t.unpack(reqs.message(message)?, out);
    }
    Ok(())
}
