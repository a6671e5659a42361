//! Posting one round's sends and receives, and taking in what arrives:
//! pieces packed and sent as they are packed (with the local copy in the
//! same pass where they can), receives straight into target storage where
//! a piece lies there as one run.

use super::super::messages::{RankMessages, DATA};
use super::super::node_direct::{Near, NodeDirect};
use super::super::route::{Cut, Recv, Routes, Send};
use super::controls::{NOTE, TARGET_NOTE, WRITTEN};
use crate::error::RedistError;
use dist_array::{Element, SharedStorage};
use mpi_extras::buffers::SendBuf;
use mpi_extras::requests::Requests;
use redist_plan::kernel::Store;
use redist_plan::program::MessageProgram;

/// The target's local storage, written by MPI through the datatypes of
/// typed receives while this rank writes other elements of it.
#[derive(Clone, Copy)]
pub(super) struct Target<T> {
    /// Its first element.
    ptr: *mut T,
    /// Its elements.
    len: usize,
}

impl<T> Target<T> {
    /// The storage behind `out`.
    pub fn of(out: &mut [T]) -> Target<T> {
        Target {
            ptr: out.as_mut_ptr(),
            len: out.len(),
        }
    }
}

/// What one round of an execution reads: the messages and their routes,
/// the source storage, which messages stay within the node (round 1 with
/// node-direct copies only), and how copies store into the target.
pub(super) struct Round<'b, T, S> {
    pub messages: &'b RankMessages,
    pub routes: &'b Routes,
    pub src: &'b [T],
    pub near: Option<&'b Near>,
    pub store: S,
}

impl<'b, T: Element, S: Store<T>> Round<'b, T, S> {
    /// Whether send `i` goes to a rank of this node (and travels by note).
    pub fn near_send(&self, i: usize) -> bool {
        self.near.is_some_and(|n| n.send(i))
    }

    /// Whether receive `i` comes from a rank of this node (by note).
    pub fn near_recv(&self, i: usize) -> bool {
        self.near.is_some_and(|n| n.recv(i))
    }

    /// Whether send `i` is packed in pieces that pack on their own (whole
    /// outermost indices each), so it can go out piece by piece as the
    /// local copy proceeds.
    pub fn packs_alone(&self, i: usize) -> bool {
        let t = &self.messages.sends()[i];
        matches!(&self.routes.send[i], Send::Packed(c) if c.aligned(t))
    }

    /// Elements of send buffer that the packed sends `this` selects need.
    pub fn packed_room(&self, this: impl Fn(usize) -> bool) -> usize {
        (self
            .messages
            .sends()
            .iter()
            .zip(&self.routes.send)
            .enumerate())
        .filter(|&(i, (_, route))| this(i) && matches!(route, Send::Packed(_)))
        .map(|(_, (t, _))| t.len)
        .sum()
    }

    /// Receive slots, one after another, for the receives `this` selects
    /// that arrive in a buffer (the others take none).
    pub fn set_slots(&self, slots: &mut Vec<(usize, usize)>, this: impl Fn(usize) -> bool) {
        slots.clear();
        let mut at = 0;
        for (i, t) in self.messages.recvs().iter().enumerate() {
            let buffered = this(i) && self.routes.recv[i].typed.is_none();
            let n = if buffered { t.len } else { 0 };
            slots.push((at, n));
            at += n;
        }
    }

    /// Posts the receives `this` selects ([`post_receive`]).
    pub fn post_receives(
        &self,
        reqs: &mut Requests<'_, 'b, T>,
        target: Target<T>,
        this: impl Fn(usize) -> bool,
    ) -> Result<(), RedistError> {
        for (i, t) in self.messages.recvs().iter().enumerate() {
            if this(i) {
                post_receive(reqs, &self.routes.recv[i], t, i, target)?;
            }
        }
        Ok(())
    }

    /// Round 1's receives: from each rank of the node a note, after this
    /// rank's own note about its target — lent to be written into when
    /// `lent` describes it, and then a receive of the writer's word —, the
    /// data from every other rank.
    pub fn post_receives_and_notes(
        &self,
        reqs: &mut Requests<'_, 'b, T>,
        target: Target<T>,
        lent: Option<&SharedStorage>,
    ) -> Result<(), RedistError> {
        for (i, t) in self.messages.recvs().iter().enumerate() {
            if self.near_recv(i) {
                NOTE.receive(reqs, i, t.peer)?;
                TARGET_NOTE.send(reqs, i, &NodeDirect::target_note_for(lent), t.peer)?;
                if lent.is_some() {
                    WRITTEN.receive(reqs, i, t.peer)?;
                }
            }
        }
        self.post_receives(reqs, target, |i| !self.near_recv(i))
    }

    /// Sends the messages `this` selects, packed ones taking their slots
    /// from the front of `rest` ([`send`]).
    pub fn send(
        &self,
        reqs: &mut Requests<'_, 'b, T>,
        rest: &mut &'b mut [T],
        this: impl Fn(usize) -> bool,
    ) -> Result<(), RedistError> {
        for (i, t) in self.messages.sends().iter().enumerate() {
            if this(i) {
                send(reqs, &self.routes.send[i], t, self.src, rest)?;
            }
        }
        Ok(())
    }

    /// Round 1's sends but those `later` selects (they go with the local
    /// copy): the data to ranks of other nodes, to each rank of the node a
    /// note — whether the source is `shared` — and a receive for its note
    /// about its target (`writes.rs` decides on it). Returns the send
    /// buffer not taken.
    pub fn send_and_note(
        &self,
        reqs: &mut Requests<'_, 'b, T>,
        buf: &'b mut [T],
        shared: Option<&SharedStorage>,
        later: impl Fn(usize) -> bool,
    ) -> Result<&'b mut [T], RedistError> {
        let mut rest = buf;
        self.send(reqs, &mut rest, |i| !later(i) && !self.near_send(i))?;
        for (i, t) in self.messages.sends().iter().enumerate() {
            if later(i) || !self.near_send(i) {
                continue;
            }
            NOTE.send(reqs, i, &NodeDirect::note_for(shared), t.peer)?;
            TARGET_NOTE.receive(reqs, i, t.peer)?;
        }
        Ok(rest)
    }

    /// Round 1's sends ([`send_and_note`](Self::send_and_note)) and,
    /// where the kept elements are copied in one pass with packing
    /// (`fuse`), that pass over the sends whose pieces pack on their own
    /// ([`copy_local_and_send`](Self::copy_local_and_send)).
    pub fn send_round_one(
        &self,
        reqs: &mut Requests<'_, 'b, T>,
        send_buf: &'b mut [T],
        shared: Option<&SharedStorage>,
        fuse: bool,
        out: &mut [T],
        sent_pieces: &mut Vec<usize>,
    ) -> Result<(), RedistError> {
        let together = |i: usize| fuse && !self.near_send(i) && self.packs_alone(i);
        let rest = self.send_and_note(reqs, send_buf, shared, together)?;
        if fuse {
            self.copy_local_and_send(together, out, reqs, rest, sent_pieces)?;
        }
        Ok(())
    }

    /// Copies the kept elements into `out` and packs and sends the sends
    /// that `together` selects (packed, in pieces of whole outermost
    /// indices), in one pass over the source
    /// ([`RankMessages::copy_local_with`]): per portion, the pieces of each
    /// message due by the end of the portion, each
    /// sent as soon as it is packed. Pieces take their room from the front
    /// of `rest` in the order they are packed.
    pub fn copy_local_and_send(
        &self,
        together: impl Fn(usize) -> bool,
        out: &mut [T],
        reqs: &mut Requests<'_, 'b, T>,
        mut rest: &'b mut [T],
        sent_pieces: &mut Vec<usize>,
    ) -> Result<(), RedistError> {
        let sends = self.messages.sends();
        let piece_size = |i: usize| match &self.routes.send[i] {
            Send::Packed(Cut::Chunks(size)) => *size,
            _ => usize::MAX,
        };
        let chosen = || (0..sends.len()).filter(|&i| together(i));
        let elements = chosen().map(|i| sends[i].len).sum();
        sent_pieces.clear();
        sent_pieces.resize(sends.len(), 0);
        let src = self.src;
        self.messages
            .copy_local_with(src, out, elements, self.store, |k, portions, _| {
                for i in chosen() {
                    let (t, size) = (&sends[i], piece_size(i));
                    let pieces = t.len.div_ceil(size);
                    // The pieces due by the end of portion k.
                    let due =
                        ((k + 1) as u128 * pieces as u128).div_ceil(portions as u128) as usize;
                    while sent_pieces[i] < due {
                        let o = sent_pieces[i] * size;
                        let n = size.min(t.len - o);
                        let (piece, r) = std::mem::take(&mut rest).split_at_mut(n);
                        rest = r;
                        t.pack(src, o..o + n, piece);
                        reqs.isend(SendBuf::Elements(piece), t.peer, DATA)?;
                        sent_pieces[i] += 1;
                    }
                }
                Ok(())
            })
    }

    /// A piece of receive `message` arrived: unpack it, or the whole
    /// message once its last piece is in when pieces do not unpack alone.
    pub fn arrived(
        &self,
        reqs: &Requests<'_, '_, T>,
        out: &mut [T],
        request: usize,
        message: usize,
        last: bool,
    ) -> Result<(), RedistError> {
        let t = &self.messages.recvs()[message];
        if self.routes.recv[message].unpack_pieces {
            let (offset, piece) = reqs.received(request)?;
            t.unpack_with(offset..offset + piece.len(), piece, out, self.store);
        } else if last {
            t.unpack_with(t.whole(), reqs.message(message)?, out, self.store);
        }
        Ok(())
    }
}

/// Posts the receive of message `i`: straight into target storage when
/// its route has a datatype, else its pieces, as its sender cuts it — each
/// straight into target storage when it lies there as one run, else into
/// the message's slot, to be unpacked.
fn post_receive<'b, T: Element>(
    reqs: &mut Requests<'_, 'b, T>,
    route: &'b Recv,
    t: &MessageProgram,
    i: usize,
    target: Target<T>,
) -> Result<(), RedistError> {
    if let Some(ty) = &route.typed {
        // SAFETY: the target storage outlives the request list (both live
        // through the exchange, which completes every request before
        // returning). The plan gives every target element to one message
        // or the kept elements, so nothing else reads or writes this
        // message's elements; the rank writes only others' while MPI
        // writes these.
        return Ok(unsafe { reqs.irecv_typed(i, target.ptr, target.len, ty, t.peer, DATA) }?);
    }
    route.cut.each(t, |o, n, _| -> Result<(), RedistError> {
        Ok(match (route.unpack_pieces && route.lands)
            .then(|| t.target_run(o..o + n))
            .flatten()
        {
            // SAFETY: as above, for the piece's elements of target storage.
            Some(at) => unsafe {
                reqs.irecv_into(i, target.ptr, target.len, at..at + n, t.peer, DATA)
            },
            None => reqs.irecv_piece(i, o, n, t.peer, DATA),
        }?)
    })
}

/// Sends message `t` as `route` says; a packed message takes its slot from
/// the front of `rest` and leaves piece by piece as it is packed.
fn send<'b, T: Element>(
    reqs: &mut Requests<'_, 'b, T>,
    route: &'b Send,
    t: &MessageProgram,
    src: &'b [T],
    rest: &mut &'b mut [T],
) -> Result<(), RedistError> {
    match route {
        Send::Typed(ty) => Ok(reqs.isend(SendBuf::Typed(src, ty), t.peer, DATA)?),
        &Send::SourceRuns { max } => Cut::SourceRuns { max }.each(t, |_, n, off| {
            Ok(reqs.isend(SendBuf::Elements(&src[off..off + n]), t.peer, DATA)?)
        }),
        Send::Packed(cut) => {
            let (slot, r) = std::mem::take(rest).split_at_mut(t.len);
            *rest = r;
            if cut.aligned(t) {
                let mut left = slot;
                cut.each(t, |o, n, _| {
                    let (piece, r) = std::mem::take(&mut left).split_at_mut(n);
                    left = r;
                    t.pack(src, o..o + n, piece);
                    Ok(reqs.isend(SendBuf::Elements(piece), t.peer, DATA)?)
                })
            } else {
                t.pack(src, t.whole(), slot);
                let slot: &'b [T] = slot;
                cut.each(t, |o, n, _| {
                    Ok(reqs.isend(SendBuf::Elements(&slot[o..o + n]), t.peer, DATA)?)
                })
            }
        }
    }
}
