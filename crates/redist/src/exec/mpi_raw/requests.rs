//! Non-blocking sends and receives tied to the lifetime of their buffers
//! ([`Requests`]), kept in a [`RequestStore`] reused from one execution to
//! the next, and what [`Requests::wait_any`] reports ([`Event`]).

use super::{check, count, null_request, Datatype, SendBuf, What};
use crate::error::RedistError;
use bytemuck::Pod;
use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::SimpleCommunicator;
use mpi::traits::Equivalence;
use mpi::{Count, Tag};
use std::marker::PhantomData;
use std::mem::size_of;
use std::os::raw::c_int;

/// What [`Requests::wait_any`] saw complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Event {
    /// A piece of receive message `message` has arrived: read it with
    /// [`Requests::received`]`(request)`; `last` when it was the message's
    /// last piece outstanding (then [`Requests::message`] reads it whole).
    Piece {
        /// The request's number.
        request: usize,
        /// The receive message.
        message: usize,
        /// Whether every piece of the message has now arrived.
        last: bool,
    },
    /// The note of receive message `i` has arrived: read it with
    /// [`Requests::note`].
    Note(usize),
    /// The word answering send message `i` has arrived: read it with
    /// [`Requests::word`].
    Word(usize),
    /// The note of send message `i`'s receiver about its target has
    /// arrived: read it with [`Requests::target_note`].
    TargetNote(usize),
    /// The word of receive message `i`'s sender saying whether it wrote
    /// the message into this rank's target: read it with
    /// [`Requests::written`].
    Written(usize),
    /// A send completed.
    Sent,
    /// Receive message `i`, described by a datatype over target storage,
    /// has arrived there: nothing to unpack.
    Landed(usize),
}

/// A note between two ranks of the node-direct protocol: whether the
/// sender's source (or the receiver's target) is shared, and how to map
/// it (`node_direct.rs` has the two layouts).
pub(crate) type Note = [u64; 7];

/// Storage of one exchange's requests, kept from one execution to the next
/// so that executing allocates nothing after the first call: request
/// handles, what each one is, per receive message its pieces outstanding and
/// the end of its last piece, and the notes and words sent and received.
#[derive(Default)]
pub(crate) struct RequestStore {
    raw: Vec<ffi::MPI_Request>,
    what: Vec<What>,
    /// Per request: whether it completed.
    done: Vec<bool>,
    /// Per receive message: pieces not yet arrived.
    outstanding: Vec<usize>,
    /// Per receive message: where its next piece may start (pieces are
    /// posted in order and never overlap).
    next_free: Vec<usize>,
    notes_in: Vec<Note>,
    notes_out: Vec<Note>,
    /// Per send: the word its receiver answered.
    words_in: Vec<u64>,
    /// Per receive: the word this rank answered.
    words_out: Vec<u64>,
    /// Per send: its receiver's note about its target.
    target_notes_in: Vec<Note>,
    /// Per receive: this rank's note about its target.
    target_notes_out: Vec<Note>,
    /// Per receive: whether its sender wrote it.
    written_in: Vec<u64>,
    /// Per send: whether this rank wrote it.
    written_out: Vec<u64>,
}

impl RequestStore {
    /// A list of requests over `comm` for an exchange of `T`s (moved as
    /// `elem`s) with `slots[i] = (offset, len)` the place of receive message
    /// `i` in `inbox`, and `sends` messages sent. The slots must be
    /// disjoint and inside `inbox`.
    ///
    /// # Errors
    ///
    /// - [`RedistError::Internal`] when the slots overlap or leave `inbox`.
    pub fn list<'s, 'b, T: Pod>(
        &'s mut self,
        comm: &'b SimpleCommunicator,
        elem: &'b Datatype,
        inbox: &'b mut [T],
        slots: &'b [(usize, usize)],
        sends: usize,
    ) -> Result<Requests<'s, 'b, T>, RedistError> {
        let mut end = 0;
        for &(o, n) in slots {
            if n > 0 && (o < end || o.checked_add(n).is_none_or(|e| e > inbox.len())) {
                return Err(RedistError::Internal(
                    "receive slots overlap or leave the buffer".to_string(),
                ));
            }
            end = end.max(o + n);
        }
        debug_assert_eq!(elem.span, size_of::<T>());
        let recvs = slots.len();
        self.raw.clear();
        self.what.clear();
        self.done.clear();
        self.outstanding.clear();
        self.outstanding.resize(recvs, 0);
        self.next_free.clear();
        self.next_free.resize(recvs, 0);
        self.notes_in.resize(recvs, [0; 7]);
        self.notes_out.resize(sends, [0; 7]);
        self.words_in.resize(sends, 0);
        self.words_out.resize(recvs, 0);
        self.target_notes_in.resize(sends, [0; 7]);
        self.target_notes_out.resize(recvs, [0; 7]);
        self.written_in.resize(recvs, 0);
        self.written_out.resize(sends, 0);
        Ok(Requests {
            store: self,
            pending: 0,
            comm: comm.as_raw(),
            elem,
            inbox: inbox.as_mut_ptr(),
            slots,
            _inbox: PhantomData,
        })
    }
}

/// Non-blocking sends and receives of one exchange, tied to their buffers.
///
/// Sends read slices borrowed for `'b`. Receives write into the slots of
/// one receive buffer (the inbox) that the list borrows exclusively for
/// `'b`, piece after piece without overlap; a piece is handed back
/// ([`received`](Self::received)) only once it has arrived, a whole slot
/// ([`message`](Self::message)) once all its pieces have. Notes and words
/// live in the [`RequestStore`]. Dropping the list with requests pending
/// waits for them (or aborts the job while unwinding from a panic), so no
/// buffer is freed while MPI may still use it.
pub(crate) struct Requests<'s, 'b, T> {
    store: &'s mut RequestStore,
    pending: usize,
    comm: ffi::MPI_Comm,
    elem: &'b Datatype,
    inbox: *mut T,
    slots: &'b [(usize, usize)],
    _inbox: PhantomData<&'b mut [T]>,
}

impl<'b, T: Pod> Requests<'_, 'b, T> {
    /// Posts a send of `buf` to `peer`.
    ///
    /// # Errors
    ///
    /// - [`RedistError::Limit`] when `buf` holds more than `i32::MAX` elements or
    ///   `peer` exceeds `i32::MAX`;
    /// - [`RedistError::Internal`] when `buf`'s datatype reaches outside its slice;
    /// - [`RedistError::Mpi`] when MPI returns an error code (only under an error handler that returns
    ///   errors; the library's communicators abort instead).
    pub fn isend(&mut self, buf: SendBuf<'b, T>, peer: usize, tag: Tag) -> Result<(), RedistError> {
        let (ptr, n, ty) = buf.raw(self.elem)?;
        // SAFETY: `raw` checked the bounds; the data is borrowed for 'b,
        // which outlives this list, and the list completes every request
        // before it is dropped.
        unsafe { self.post_send(ptr.cast(), n, ty, peer, tag) }
    }

    /// Posts a send of `note` as the note of send message `i`.
    ///
    /// # Errors
    ///
    /// - [`RedistError::Internal`] when there is no send message `i`;
    /// - [`RedistError::Limit`] when `peer` exceeds `i32::MAX`;
    /// - [`RedistError::Mpi`] when MPI returns an error code (only under an error handler that returns
    ///   errors; the library's communicators abort instead).
    pub fn isend_note(
        &mut self,
        i: usize,
        note: Note,
        peer: usize,
        tag: Tag,
    ) -> Result<(), RedistError> {
        let slot = self
            .store
            .notes_out
            .get_mut(i)
            .ok_or_else(|| no_slot("note", i))?;
        *slot = note;
        let ptr: *const Note = slot;
        // SAFETY: the note lives in the store, which the list borrows until
        // every request is complete, and is not written meanwhile.
        unsafe { self.post_send(ptr.cast(), NOTE_BYTES, byte_type(), peer, tag) }
    }

    /// Posts a send of `word` as this rank's answer to receive message `i`.
    ///
    /// # Errors
    ///
    /// - [`RedistError::Internal`] when there is no receive message `i`;
    /// - [`RedistError::Limit`] when `peer` exceeds `i32::MAX`;
    /// - [`RedistError::Mpi`] when MPI returns an error code (only under an error handler that returns
    ///   errors; the library's communicators abort instead).
    pub fn isend_word(
        &mut self,
        i: usize,
        word: u64,
        peer: usize,
        tag: Tag,
    ) -> Result<(), RedistError> {
        let slot = self
            .store
            .words_out
            .get_mut(i)
            .ok_or_else(|| no_slot("word", i))?;
        *slot = word;
        let ptr: *const u64 = slot;
        // SAFETY: as for notes.
        unsafe { self.post_send(ptr.cast(), WORD_BYTES, byte_type(), peer, tag) }
    }

    /// Posts a send of `note` as this rank's note about its target to the
    /// sender of receive message `i`.
    ///
    /// # Errors
    ///
    /// As [`isend_note`](Self::isend_note), for receive message `i`.
    pub fn isend_target_note(
        &mut self,
        i: usize,
        note: Note,
        peer: usize,
        tag: Tag,
    ) -> Result<(), RedistError> {
        let slot = (self.store.target_notes_out.get_mut(i)).ok_or_else(|| no_slot("note", i))?;
        *slot = note;
        let ptr: *const Note = slot;
        // SAFETY: as for notes.
        unsafe { self.post_send(ptr.cast(), NOTE_BYTES, byte_type(), peer, tag) }
    }

    /// Posts a send of `word` telling the receiver of send message `i`
    /// whether this rank wrote it into its target.
    ///
    /// # Errors
    ///
    /// As [`isend_word`](Self::isend_word), for send message `i`.
    pub fn isend_written(
        &mut self,
        i: usize,
        word: u64,
        peer: usize,
        tag: Tag,
    ) -> Result<(), RedistError> {
        let slot = (self.store.written_out.get_mut(i)).ok_or_else(|| no_slot("word", i))?;
        *slot = word;
        let ptr: *const u64 = slot;
        // SAFETY: as for notes.
        unsafe { self.post_send(ptr.cast(), WORD_BYTES, byte_type(), peer, tag) }
    }

    /// # Safety
    /// `ptr` addresses `n` instances of `ty` that stay valid and unwritten
    /// until the request completes.
    unsafe fn post_send(
        &mut self,
        ptr: *const std::ffi::c_void,
        n: Count,
        ty: ffi::MPI_Datatype,
        peer: usize,
        tag: Tag,
    ) -> Result<(), RedistError> {
        let peer = count(peer, "rank")?;
        let mut req = null_request();
        // SAFETY: the caller's contract.
        let code = unsafe { ffi::MPI_Isend(ptr, n, ty, peer, tag, self.comm, &mut req) };
        check(code, "MPI_Isend")?;
        self.push(req, What::Send);
        Ok(())
    }

    /// Posts the receive of the piece of receive message `i` at `offset`
    /// within its slot, `len` elements from `peer`. Cut of one message
    /// are posted in order and never overlap.
    ///
    /// # Errors
    ///
    /// - [`RedistError::Internal`] when there is no receive message `i`, or the piece
    ///   starts before the end of the previous one or ends past the message;
    /// - [`RedistError::Limit`] when `peer` or `len` exceeds `i32::MAX`;
    /// - [`RedistError::Mpi`] when MPI returns an error code (only under an error handler that returns
    ///   errors; the library's communicators abort instead).
    pub fn irecv_piece(
        &mut self,
        i: usize,
        offset: usize,
        len: usize,
        peer: usize,
        tag: Tag,
    ) -> Result<(), RedistError> {
        let &(start, n) = self.slots.get(i).ok_or_else(|| no_slot("message", i))?;
        if offset < self.store.next_free[i] || offset.checked_add(len).is_none_or(|e| e > n) {
            return Err(RedistError::Internal(format!(
                "piece {offset}+{len} of message {i} ({n} elements) overlaps an earlier one or \
                 leaves the message"
            )));
        }
        // SAFETY: inside slot `i` of the inbox, which the list borrows
        // exclusively for 'b, and after every earlier piece of the slot;
        // the piece is not handed out before its request completes.
        let ptr = unsafe { self.inbox.add(start + offset) };
        let peer = count(peer, "rank")?;
        let c = count(len, "message length")?;
        let mut req = null_request();
        // SAFETY: as above.
        let code = unsafe {
            ffi::MPI_Irecv(
                ptr.cast(),
                c,
                self.elem.raw(),
                peer,
                tag,
                self.comm,
                &mut req,
            )
        };
        check(code, "MPI_Irecv")?;
        self.store.outstanding[i] += 1;
        self.store.next_free[i] = offset + len;
        self.push(req, What::Piece { i, offset, len });
        Ok(())
    }

    /// Posts the receive of message `i` straight into target storage:
    /// one instance of `ty` laid over the `len` elements at `target`.
    ///
    /// # Errors
    ///
    /// - [`RedistError::Internal`] when `ty` reaches outside the `len`
    ///   elements;
    /// - [`RedistError::Limit`] when `peer` exceeds `i32::MAX`;
    /// - [`RedistError::Mpi`] when MPI returns an error code.
    ///
    /// # Safety
    ///
    /// `target` must point to `len` elements that stay allocated for `'b`,
    /// and until the request completes nothing else may read or write the
    /// elements `ty` picks out of them (other elements may be written).
    pub unsafe fn irecv_typed(
        &mut self,
        i: usize,
        target: *mut T,
        len: usize,
        ty: &'b Datatype,
        peer: usize,
        tag: Tag,
    ) -> Result<(), RedistError> {
        if ty.span > len.saturating_mul(size_of::<T>()) {
            return Err(RedistError::Internal(format!(
                "a datatype spanning {} bytes laid over {len} elements",
                ty.span
            )));
        }
        // SAFETY: the caller's contract; the span was checked above.
        unsafe { self.post_recv(target.cast(), 1, ty.raw(), peer, tag, What::Landed(i)) }
    }

    /// Posts the receive of a piece of receive message `i` from `peer`
    /// straight into the elements `piece` of the `len` elements at
    /// `target` (a piece that lands as one run of target storage:
    /// nothing to unpack). Reported as [`Event::Landed`]`(i)`.
    ///
    /// # Errors
    ///
    /// - [`RedistError::Internal`] when the piece leaves the target;
    /// - [`RedistError::Limit`] when `peer` or the piece's length exceeds
    ///   `i32::MAX`;
    /// - [`RedistError::Mpi`] when MPI returns an error code.
    ///
    /// # Safety
    ///
    /// `target` must point to `len` elements that stay allocated for
    /// `'b`, and until the request completes nothing else may read or write
    /// the piece's elements (other elements may be written).
    pub unsafe fn irecv_into(
        &mut self,
        i: usize,
        target: *mut T,
        len: usize,
        piece: std::ops::Range<usize>,
        peer: usize,
        tag: Tag,
    ) -> Result<(), RedistError> {
        if piece.start > piece.end || piece.end > len {
            return Err(RedistError::Internal(format!(
                "a piece {piece:?} of message {i} outside {len} target elements"
            )));
        }
        let c = count(piece.len(), "message length")?;
        // SAFETY: inside the target (checked above); the caller's contract
        // keeps it allocated and untouched until the request completes.
        unsafe {
            let ptr = target.add(piece.start);
            self.post_recv(ptr.cast(), c, self.elem.raw(), peer, tag, What::Landed(i))
        }
    }

    /// Posts the receive of the note of receive message `i` from `peer`.
    ///
    /// # Errors
    ///
    /// - [`RedistError::Internal`] when there is no receive message `i`;
    /// - [`RedistError::Limit`] when `peer` exceeds `i32::MAX`;
    /// - [`RedistError::Mpi`] when MPI returns an error code (only under an error handler that returns
    ///   errors; the library's communicators abort instead).
    pub fn irecv_note(&mut self, i: usize, peer: usize, tag: Tag) -> Result<(), RedistError> {
        let slot = self
            .store
            .notes_in
            .get_mut(i)
            .ok_or_else(|| no_slot("note", i))?;
        let ptr: *mut Note = slot;
        // SAFETY: the note lives in the store, borrowed by the list until
        // every request is complete; it is read only after completion.
        unsafe {
            self.post_recv(
                ptr.cast(),
                NOTE_BYTES,
                byte_type(),
                peer,
                tag,
                What::Note(i),
            )
        }
    }

    /// Posts the receive of the word answering send message `i` from `peer`.
    ///
    /// # Errors
    ///
    /// - [`RedistError::Internal`] when there is no send message `i`;
    /// - [`RedistError::Limit`] when `peer` exceeds `i32::MAX`;
    /// - [`RedistError::Mpi`] when MPI returns an error code (only under an error handler that returns
    ///   errors; the library's communicators abort instead).
    pub fn irecv_word(&mut self, i: usize, peer: usize, tag: Tag) -> Result<(), RedistError> {
        let slot = self
            .store
            .words_in
            .get_mut(i)
            .ok_or_else(|| no_slot("word", i))?;
        let ptr: *mut u64 = slot;
        // SAFETY: as for notes.
        unsafe {
            self.post_recv(
                ptr.cast(),
                WORD_BYTES,
                byte_type(),
                peer,
                tag,
                What::Word(i),
            )
        }
    }

    /// Posts the receive of the note about its target from the receiver
    /// of send message `i`.
    ///
    /// # Errors
    ///
    /// As [`irecv_note`](Self::irecv_note), for send message `i`.
    pub fn irecv_target_note(
        &mut self,
        i: usize,
        peer: usize,
        tag: Tag,
    ) -> Result<(), RedistError> {
        let slot = (self.store.target_notes_in.get_mut(i)).ok_or_else(|| no_slot("note", i))?;
        let ptr: *mut Note = slot;
        // SAFETY: as for notes.
        unsafe {
            self.post_recv(
                ptr.cast(),
                NOTE_BYTES,
                byte_type(),
                peer,
                tag,
                What::TargetNote(i),
            )
        }
    }

    /// Posts the receive of the word saying whether the sender of receive
    /// message `i` wrote it.
    ///
    /// # Errors
    ///
    /// As [`irecv_word`](Self::irecv_word), for receive message `i`.
    pub fn irecv_written(&mut self, i: usize, peer: usize, tag: Tag) -> Result<(), RedistError> {
        let slot = (self.store.written_in.get_mut(i)).ok_or_else(|| no_slot("word", i))?;
        let ptr: *mut u64 = slot;
        // SAFETY: as for notes.
        unsafe {
            self.post_recv(
                ptr.cast(),
                WORD_BYTES,
                byte_type(),
                peer,
                tag,
                What::Written(i),
            )
        }
    }

    /// # Safety
    /// `ptr` addresses `bytes` writable bytes in the store that are not
    /// accessed until the request completes.
    unsafe fn post_recv(
        &mut self,
        ptr: *mut std::ffi::c_void,
        n: Count,
        ty: ffi::MPI_Datatype,
        peer: usize,
        tag: Tag,
        what: What,
    ) -> Result<(), RedistError> {
        let peer = count(peer, "rank")?;
        let mut req = null_request();
        // SAFETY: the caller's contract.
        let code = unsafe { ffi::MPI_Irecv(ptr, n, ty, peer, tag, self.comm, &mut req) };
        check(code, "MPI_Irecv")?;
        self.push(req, what);
        Ok(())
    }

    fn push(&mut self, req: ffi::MPI_Request, what: What) {
        self.store.raw.push(req);
        self.store.what.push(what);
        self.store.done.push(false);
        self.pending += 1;
    }

    /// Waits until a pending request completes and says what it was;
    /// `None` once every request is complete.
    ///
    /// # Errors
    ///
    /// - [`RedistError::Limit`] when more than `i32::MAX` requests were posted;
    /// - [`RedistError::Mpi`] when MPI returns an error code (only under an error handler that returns
    ///   errors; the library's communicators abort instead).
    pub fn wait_any(&mut self) -> Result<Option<Event>, RedistError> {
        if self.pending == 0 {
            return Ok(None);
        }
        let n = count(self.store.raw.len(), "pending requests")?;
        let mut index: c_int = 0;
        if procgrid::waits::oversubscribed() {
            // More ranks than cores: a rank spinning in MPI_Waitany takes the
            // core the rank it waits for needs. Test, and give the core away
            // between tests.
            loop {
                let mut flag: c_int = 0;
                // SAFETY: as for MPI_Waitany below; MPI_Testany skips
                // MPI_REQUEST_NULL handles too.
                let code = unsafe {
                    ffi::MPI_Testany(
                        n,
                        self.store.raw.as_mut_ptr(),
                        &mut index,
                        &mut flag,
                        ffi::RSMPI_STATUS_IGNORE,
                    )
                };
                check(code, "MPI_Testany")?;
                if flag != 0 {
                    break;
                }
                std::thread::yield_now();
            }
        } else {
            // SAFETY: the array holds `n` handles; completed ones are
            // MPI_REQUEST_NULL, which MPI_Waitany skips.
            let code = unsafe {
                ffi::MPI_Waitany(
                    n,
                    self.store.raw.as_mut_ptr(),
                    &mut index,
                    ffi::RSMPI_STATUS_IGNORE,
                )
            };
            check(code, "MPI_Waitany")?;
        }
        Ok(self.completed(index))
    }

    /// Like [`wait_any`](Self::wait_any) but returns at once: the event
    /// of a request that has completed, or `None` when none has yet (or
    /// none is pending). Drives MPI's progress, as waiting does.
    ///
    /// # Errors
    ///
    /// As [`wait_any`](Self::wait_any).
    pub fn test_any(&mut self) -> Result<Option<Event>, RedistError> {
        if self.pending == 0 {
            return Ok(None);
        }
        let n = count(self.store.raw.len(), "pending requests")?;
        let (mut index, mut flag): (c_int, c_int) = (0, 0);
        // SAFETY: the array holds `n` handles; completed ones are
        // MPI_REQUEST_NULL, which MPI_Testany skips.
        let code = unsafe {
            ffi::MPI_Testany(
                n,
                self.store.raw.as_mut_ptr(),
                &mut index,
                &mut flag,
                ffi::RSMPI_STATUS_IGNORE,
            )
        };
        check(code, "MPI_Testany")?;
        Ok(if flag == 0 {
            None
        } else {
            self.completed(index)
        })
    }

    /// Records that request `index` (from MPI_Waitany or MPI_Testany)
    /// completed and says what it was; `None` for MPI_UNDEFINED.
    fn completed(&mut self, index: c_int) -> Option<Event> {
        let Ok(r) = usize::try_from(index) else {
            // MPI_UNDEFINED: nothing was pending after all.
            self.pending = 0;
            return None;
        };
        self.pending -= 1;
        self.store.done[r] = true;
        Some(match self.store.what[r] {
            What::Piece { i, .. } => {
                self.store.outstanding[i] -= 1;
                Event::Piece {
                    request: r,
                    message: i,
                    last: self.store.outstanding[i] == 0,
                }
            }
            What::Note(i) => Event::Note(i),
            What::Word(i) => Event::Word(i),
            What::TargetNote(i) => Event::TargetNote(i),
            What::Written(i) => Event::Written(i),
            What::Send => Event::Sent,
            What::Landed(i) => Event::Landed(i),
        })
    }

    /// The piece request `request` received, once it has arrived, with its
    /// offset within its message.
    ///
    /// # Errors
    ///
    /// - [`RedistError::Internal`] when `request` is not a piece receive that has
    ///   completed.
    pub fn received(&self, request: usize) -> Result<(usize, &[T]), RedistError> {
        match (self.store.what.get(request), self.store.done.get(request)) {
            (Some(&What::Piece { i, offset, len }), Some(true)) => {
                let start = self.slots[i].0 + offset;
                // SAFETY: inside slot `i` of the exclusively borrowed inbox
                // (checked when posted); the piece's receive has completed
                // and no other piece overlaps it.
                let piece = unsafe { std::slice::from_raw_parts(self.inbox.add(start), len) };
                Ok((offset, piece))
            }
            _ => Err(RedistError::Internal(format!(
                "request {request} is not an arrived piece"
            ))),
        }
    }

    /// Receive message `i` whole, once every piece of it has arrived.
    ///
    /// # Errors
    ///
    /// - [`RedistError::Internal`] when there is no receive message `i`, or its pieces
    ///   do not yet fill it or have not all arrived.
    pub fn message(&self, i: usize) -> Result<&[T], RedistError> {
        let &(start, n) = self.slots.get(i).ok_or_else(|| no_slot("message", i))?;
        if self.store.next_free[i] != n || self.store.outstanding[i] != 0 {
            return Err(RedistError::Internal(format!(
                "message {i} read before it arrived"
            )));
        }
        // SAFETY: inside the exclusively borrowed inbox; every receive into
        // this slot has completed, and new ones could only start after its
        // end.
        Ok(unsafe { std::slice::from_raw_parts(self.inbox.add(start), n) })
    }

    /// The note about its target from the receiver of send message `i`
    /// (meaningful once it has arrived).
    pub fn target_note(&self, i: usize) -> Note {
        self.store
            .target_notes_in
            .get(i)
            .copied()
            .unwrap_or_default()
    }

    /// Whether the sender of receive message `i` wrote it (its word,
    /// meaningful once it has arrived).
    pub fn written(&self, i: usize) -> u64 {
        self.store.written_in.get(i).copied().unwrap_or(u64::MAX)
    }

    /// The note of receive message `i` (meaningful once it has arrived).
    pub fn note(&self, i: usize) -> Note {
        self.store.notes_in.get(i).copied().unwrap_or_default()
    }

    /// The word answering send message `i` (meaningful once it has arrived).
    pub fn word(&self, i: usize) -> u64 {
        self.store.words_in.get(i).copied().unwrap_or_default()
    }
}

/// Bytes of a note and of a word on the wire.
#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    reason = "56 bytes"
)]
const NOTE_BYTES: Count = std::mem::size_of::<Note>() as Count;
const WORD_BYTES: Count = 8;

/// `MPI_BYTE`.
fn byte_type() -> ffi::MPI_Datatype {
    u8::equivalent_datatype().as_raw()
}

fn no_slot(what: &str, i: usize) -> RedistError {
    RedistError::Internal(format!("no {what} slot {i}"))
}

impl<T> Drop for Requests<'_, '_, T> {
    fn drop(&mut self) {
        if self.pending == 0 {
            return;
        }
        if std::thread::panicking() {
            // Unwinding would free buffers MPI still reads or writes.
            eprintln!("redist: a panic during an exchange with requests pending; aborting the job");
            // SAFETY: aborting is always allowed while MPI runs.
            unsafe {
                ffi::MPI_Abort(self.comm, 101);
            }
        }
        let n = c_int::try_from(self.store.raw.len()).unwrap_or(c_int::MAX);
        // SAFETY: as in `wait_any`.
        let code =
            unsafe { ffi::MPI_Waitall(n, self.store.raw.as_mut_ptr(), ffi::RSMPI_STATUSES_IGNORE) };
        if check(code, "MPI_Waitall").is_err() {
            // SAFETY: as above; the buffers must not be freed while in use.
            unsafe {
                ffi::MPI_Abort(self.comm, 101);
            }
        }
    }
}
