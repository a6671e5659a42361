//! Non-blocking sends and receives tied to the lifetime of their buffers
//! ([`Requests`]), kept in a [`RequestStore`] reused from one execution to
//! the next, and what [`Requests::wait_any`] reports ([`Event`]).
//!
//! Besides the messages' elements, a list carries small control messages
//! of up to [`CONTROL_WORDS`] 64-bit words: one way to send and receive
//! them ([`Requests::isend_control`], [`Requests::irecv_control`]), their
//! kinds ([`ControlKind`]) named by the protocol that uses them, which this
//! crate knows nothing of.

use crate::buffers::SendBuf;
use crate::datatype::Datatype;
use crate::error::{check, count, MpiError};
use crate::launcher::oversubscribed;
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
pub enum Event {
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
    /// Control message `index` of `kind` has arrived: read it with
    /// [`Requests::control`].
    Control {
        /// Its kind.
        kind: ControlKind,
        /// Its number among the kind's incoming messages.
        index: usize,
    },
    /// A send completed.
    Sent,
    /// Receive message `i`, described by a datatype over target storage,
    /// has arrived there: nothing to unpack.
    Landed(usize),
}

/// The most 64-bit words one control message carries.
pub const CONTROL_WORDS: usize = 7;

/// One control message's words (the first [`ControlKind::words`] of them
/// travel).
pub type Control = [u64; CONTROL_WORDS];

/// A kind of control message, named where the protocol that sends it
/// lives: its number among the kinds one list carries (`0..kinds`, as
/// handed to [`RequestStore::list`]) and how many words it carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ControlKind {
    /// Its number: its slots are `spaces[id]` of [`RequestStore::list`].
    pub id: usize,
    /// Words per message, 1 to [`CONTROL_WORDS`].
    pub words: usize,
}

/// How many control messages of one kind a list may send and receive:
/// slots `0..outgoing` and `0..incoming`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ControlSpace {
    /// The kind (its `id` is its place in the list of spaces).
    pub kind: ControlKind,
    /// Messages of this kind sent.
    pub outgoing: usize,
    /// Messages of this kind received.
    pub incoming: usize,
}

/// The slots of one kind of control message.
#[derive(Default)]
struct ControlSlots {
    incoming: Vec<Control>,
    outgoing: Vec<Control>,
}

/// Storage of one exchange's requests, kept from one execution to the next
/// so that executing allocates nothing after the first call: request
/// handles, what each one is, per receive message its pieces outstanding and
/// the end of its last piece, and the control messages sent and received.
#[derive(Default)]
pub struct RequestStore {
    raw: Vec<ffi::MPI_Request>,
    what: Vec<What>,
    /// Per request: whether it completed.
    done: Vec<bool>,
    /// Per receive message: pieces not yet arrived.
    outstanding: Vec<usize>,
    /// Per receive message: where its next piece may start (pieces are
    /// posted in order and never overlap).
    next_free: Vec<usize>,
    /// Per kind of control message, its slots.
    controls: Vec<ControlSlots>,
}

impl RequestStore {
    /// A list of requests over `comm` for an exchange of `T`s (moved as
    /// `elem`s) with `slots[i] = (offset, len)` the place of receive message
    /// `i` in `inbox`, and room for the control messages `controls[k]`
    /// says of kind `k`. The slots must be disjoint and inside `inbox`.
    ///
    /// # Errors
    ///
    /// - [`MpiError::Internal`] when the slots overlap or leave `inbox`.
    pub fn list<'s, 'b, T: Pod>(
        &'s mut self,
        comm: &'b SimpleCommunicator,
        elem: &'b Datatype,
        inbox: &'b mut [T],
        slots: &'b [(usize, usize)],
        controls: &[ControlSpace],
    ) -> Result<Requests<'s, 'b, T>, MpiError> {
        let mut end = 0;
        for &(o, n) in slots {
            if n > 0 && (o < end || o.checked_add(n).is_none_or(|e| e > inbox.len())) {
                return Err(MpiError::Internal(
                    "receive slots overlap or leave the buffer".to_string(),
                ));
            }
            end = end.max(o + n);
        }
        for (k, space) in controls.iter().enumerate() {
            if space.kind.id != k || !(1..=CONTROL_WORDS).contains(&space.kind.words) {
                return Err(MpiError::Internal(format!(
                    "control space {k} holds kind {:?}",
                    space.kind
                )));
            }
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
        // Kinds this list does not carry keep their room (emptied) for the
        // next list that does: a store reused across executions allocates
        // nothing after the first.
        if self.controls.len() < controls.len() {
            self.controls
                .resize_with(controls.len(), ControlSlots::default);
        }
        let given = controls.iter().map(Some).chain(std::iter::repeat(None));
        for (slots, space) in self.controls.iter_mut().zip(given) {
            let (outgoing, incoming) = space.map_or((0, 0), |s| (s.outgoing, s.incoming));
            slots.incoming.resize(incoming, [0; CONTROL_WORDS]);
            slots.outgoing.resize(outgoing, [0; CONTROL_WORDS]);
        }
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
/// ([`message`](Self::message)) once all its pieces have. Control messages
/// live in the [`RequestStore`]. Dropping the list with requests pending
/// waits for them (or aborts the job while unwinding from a panic), so no
/// buffer is freed while MPI may still use it.
pub struct Requests<'s, 'b, T> {
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
    /// - [`MpiError::Limit`] when `buf` holds more than `i32::MAX` elements or
    ///   `peer` exceeds `i32::MAX`;
    /// - [`MpiError::Internal`] when `buf`'s datatype reaches outside its slice;
    /// - [`MpiError::Mpi`] when MPI returns an error code (only under an error handler that returns
    ///   errors; the library's communicators abort instead).
    pub fn isend(&mut self, buf: SendBuf<'b, T>, peer: usize, tag: Tag) -> Result<(), MpiError> {
        let (ptr, n, ty) = buf.raw(self.elem)?;
        // SAFETY: `raw` checked the bounds; the data is borrowed for 'b,
        // which outlives this list, and the list completes every request
        // before it is dropped.
        unsafe { self.post_send(ptr.cast(), n, ty, peer, tag) }
    }

    /// Posts the send of control message `i` of `kind`, `words` (its
    /// `kind.words` words), to `peer`.
    ///
    /// # Errors
    ///
    /// - [`MpiError::Internal`] when the list has no outgoing slot `i` of
    ///   `kind`, or `words` is not `kind.words` long;
    /// - [`MpiError::Limit`] when `peer` exceeds `i32::MAX`;
    /// - [`MpiError::Mpi`] when MPI returns an error code (only under an error handler that returns
    ///   errors; the library's communicators abort instead).
    pub fn isend_control(
        &mut self,
        kind: ControlKind,
        i: usize,
        words: &[u64],
        peer: usize,
        tag: Tag,
    ) -> Result<(), MpiError> {
        if words.len() != kind.words {
            return Err(MpiError::Internal(format!(
                "{} words for a control message of {kind:?}",
                words.len()
            )));
        }
        let slot = (self.store.controls.get_mut(kind.id))
            .and_then(|c| c.outgoing.get_mut(i))
            .ok_or_else(|| no_slot("control", i))?;
        slot[..words.len()].copy_from_slice(words);
        let ptr: *const Control = slot;
        // SAFETY: the message lives in the store, which the list borrows
        // until every request is complete, and is not written meanwhile.
        unsafe { self.post_send(ptr.cast(), control_bytes(kind)?, byte_type(), peer, tag) }
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
    ) -> Result<(), MpiError> {
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
    /// - [`MpiError::Internal`] when there is no receive message `i`, or the piece
    ///   starts before the end of the previous one or ends past the message;
    /// - [`MpiError::Limit`] when `peer` or `len` exceeds `i32::MAX`;
    /// - [`MpiError::Mpi`] when MPI returns an error code (only under an error handler that returns
    ///   errors; the library's communicators abort instead).
    pub fn irecv_piece(
        &mut self,
        i: usize,
        offset: usize,
        len: usize,
        peer: usize,
        tag: Tag,
    ) -> Result<(), MpiError> {
        let &(start, n) = self.slots.get(i).ok_or_else(|| no_slot("message", i))?;
        if offset < self.store.next_free[i] || offset.checked_add(len).is_none_or(|e| e > n) {
            return Err(MpiError::Internal(format!(
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
    /// - [`MpiError::Internal`] when `ty` reaches outside the `len`
    ///   elements;
    /// - [`MpiError::Limit`] when `peer` exceeds `i32::MAX`;
    /// - [`MpiError::Mpi`] when MPI returns an error code.
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
    ) -> Result<(), MpiError> {
        if ty.span > len.saturating_mul(size_of::<T>()) {
            return Err(MpiError::Internal(format!(
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
    /// - [`MpiError::Internal`] when the piece leaves the target;
    /// - [`MpiError::Limit`] when `peer` or the piece's length exceeds
    ///   `i32::MAX`;
    /// - [`MpiError::Mpi`] when MPI returns an error code.
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
    ) -> Result<(), MpiError> {
        if piece.start > piece.end || piece.end > len {
            return Err(MpiError::Internal(format!(
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

    /// Posts the receive of control message `i` of `kind` from `peer`.
    ///
    /// # Errors
    ///
    /// - [`MpiError::Internal`] when the list has no incoming slot `i` of
    ///   `kind`;
    /// - [`MpiError::Limit`] when `peer` exceeds `i32::MAX`;
    /// - [`MpiError::Mpi`] when MPI returns an error code (only under an error handler that returns
    ///   errors; the library's communicators abort instead).
    pub fn irecv_control(
        &mut self,
        kind: ControlKind,
        i: usize,
        peer: usize,
        tag: Tag,
    ) -> Result<(), MpiError> {
        let slot = (self.store.controls.get_mut(kind.id))
            .and_then(|c| c.incoming.get_mut(i))
            .ok_or_else(|| no_slot("control", i))?;
        let ptr: *mut Control = slot;
        let bytes = control_bytes(kind)?;
        // SAFETY: the message lives in the store, borrowed by the list
        // until every request is complete; it is read only after completion.
        unsafe {
            let what = What::Control { kind, index: i };
            self.post_recv(ptr.cast(), bytes, byte_type(), peer, tag, what)
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
    ) -> Result<(), MpiError> {
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
    /// - [`MpiError::Limit`] when more than `i32::MAX` requests were posted;
    /// - [`MpiError::Mpi`] when MPI returns an error code (only under an error handler that returns
    ///   errors; the library's communicators abort instead).
    pub fn wait_any(&mut self) -> Result<Option<Event>, MpiError> {
        if self.pending == 0 {
            return Ok(None);
        }
        let index = wait_any_of(&mut self.store.raw)?;
        Ok(self.completed(index))
    }

    /// Like [`wait_any`](Self::wait_any) but returns at once: the event
    /// of a request that has completed, or `None` when none has yet (or
    /// none is pending). Drives MPI's progress, as waiting does.
    ///
    /// # Errors
    ///
    /// As [`wait_any`](Self::wait_any).
    pub fn test_any(&mut self) -> Result<Option<Event>, MpiError> {
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
            What::Control { kind, index } => Event::Control { kind, index },
            What::Send => Event::Sent,
            What::Landed(i) => Event::Landed(i),
        })
    }

    /// The piece request `request` received, once it has arrived, with its
    /// offset within its message.
    ///
    /// # Errors
    ///
    /// - [`MpiError::Internal`] when `request` is not a piece receive that has
    ///   completed.
    pub fn received(&self, request: usize) -> Result<(usize, &[T]), MpiError> {
        match (self.store.what.get(request), self.store.done.get(request)) {
            (Some(&What::Piece { i, offset, len }), Some(true)) => {
                let start = self.slots[i].0 + offset;
                // SAFETY: inside slot `i` of the exclusively borrowed inbox
                // (checked when posted); the piece's receive has completed
                // and no other piece overlaps it.
                let piece = unsafe { std::slice::from_raw_parts(self.inbox.add(start), len) };
                Ok((offset, piece))
            }
            _ => Err(MpiError::Internal(format!(
                "request {request} is not an arrived piece"
            ))),
        }
    }

    /// Receive message `i` whole, once every piece of it has arrived.
    ///
    /// # Errors
    ///
    /// - [`MpiError::Internal`] when there is no receive message `i`, or its pieces
    ///   do not yet fill it or have not all arrived.
    pub fn message(&self, i: usize) -> Result<&[T], MpiError> {
        let &(start, n) = self.slots.get(i).ok_or_else(|| no_slot("message", i))?;
        if self.store.next_free[i] != n || self.store.outstanding[i] != 0 {
            return Err(MpiError::Internal(format!(
                "message {i} read before it arrived"
            )));
        }
        // SAFETY: inside the exclusively borrowed inbox; every receive into
        // this slot has completed, and new ones could only start after its
        // end.
        Ok(unsafe { std::slice::from_raw_parts(self.inbox.add(start), n) })
    }

    /// The words of incoming control message `i` of `kind` (meaningful
    /// once it has arrived; empty where there is no such slot).
    pub fn control(&self, kind: ControlKind, i: usize) -> &[u64] {
        (self.store.controls.get(kind.id))
            .and_then(|c| c.incoming.get(i))
            .map_or(&[], |c| &c[..kind.words.min(CONTROL_WORDS)])
    }
}

/// Bytes of one control message of `kind` on the wire.
fn control_bytes(kind: ControlKind) -> Result<Count, MpiError> {
    count(
        kind.words.min(CONTROL_WORDS) * size_of::<u64>(),
        "control bytes",
    )
}

/// `MPI_BYTE`.
fn byte_type() -> ffi::MPI_Datatype {
    u8::equivalent_datatype().as_raw()
}

fn no_slot(what: &str, i: usize) -> MpiError {
    MpiError::Internal(format!("no {what} slot {i}"))
}

impl<T> Drop for Requests<'_, '_, T> {
    fn drop(&mut self) {
        if self.pending == 0 {
            return;
        }
        if std::thread::panicking() {
            // Unwinding would free buffers MPI still reads or writes.
            eprintln!("a panic with MPI requests pending; aborting the job");
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

/// `MPI_Waitany` over `raw` (null and inactive handles skipped): the index
/// of the request that completed, or `MPI_UNDEFINED` when none was
/// pending. Where ranks outnumber cores, `MPI_Testany` and a yield between
/// tests instead: a rank spinning in `MPI_Waitany` takes the core the rank
/// it waits for needs.
pub(crate) fn wait_any_of(raw: &mut [ffi::MPI_Request]) -> Result<c_int, MpiError> {
    let n = count(raw.len(), "pending requests")?;
    let mut index: c_int = 0;
    if oversubscribed() {
        loop {
            let mut flag: c_int = 0;
            // SAFETY: `raw` holds `n` handles; MPI_Testany skips null and
            // inactive ones.
            let code = unsafe {
                ffi::MPI_Testany(
                    n,
                    raw.as_mut_ptr(),
                    &mut index,
                    &mut flag,
                    ffi::RSMPI_STATUS_IGNORE,
                )
            };
            check(code, "MPI_Testany")?;
            if flag != 0 {
                return Ok(index);
            }
            std::thread::yield_now();
        }
    }
    // SAFETY: as above, for MPI_Waitany.
    let code =
        unsafe { ffi::MPI_Waitany(n, raw.as_mut_ptr(), &mut index, ffi::RSMPI_STATUS_IGNORE) };
    check(code, "MPI_Waitany")?;
    Ok(index)
}

/// `MPI_REQUEST_NULL`, which the standard defines as a handle constant.
pub(crate) fn null_request() -> ffi::MPI_Request {
    // SAFETY: reads a constant of the MPI library.
    unsafe { ffi::RSMPI_REQUEST_NULL }
}
/// What a pending request is, so that its completion can be reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum What {
    /// Elements `offset..offset + len` of receive message `i`'s slot.
    Piece { i: usize, offset: usize, len: usize },
    /// Incoming control message `index` of `kind`.
    Control { kind: ControlKind, index: usize },
    /// A send.
    Send,
    /// Receive message `i`, straight into target storage.
    Landed(usize),
}
