//! The engine's only door to MPI's C interface (`mpi::ffi`).
//!
//! The exchange strategies talk to MPI through the functions here, which
//! check their arguments against the buffers they are given and turn MPI's
//! return codes into [`RedistError::Mpi`]. Where rsmpi wraps a call safely
//! we use it: element and run datatypes are rsmpi [`UserDatatype`]s,
//! [`alltoallv`] calls `all_to_all_varcount_into`, [`sendrecv`]
//! `send_receive_into_with_tags`. What rsmpi 0.8 lacks lives here:
//!
//! - [`Alltoallw`] (`MPI_Alltoallw`, one derived datatype per peer);
//! - [`Requests`]: non-blocking sends and receives tied to the lifetime of
//!   their buffers, kept in a [`RequestStore`] reused from one execution to
//!   the next. rsmpi's `wait_any` copies the whole request list on every
//!   call (quadratic over an exchange of many messages) and its
//!   `RequestCollection` panics when every request is complete; here
//!   [`Requests::wait_any`] returns `None` then. A list dropped with
//!   requests pending waits for them, or aborts the job when the thread is
//!   unwinding from a panic, so MPI never writes into freed memory;
//! - [`AbortOnUnwind`], which aborts the job when an exchange panics.
//!
//! Element types are moved as bytes: an element of `n` bytes is a
//! contiguous datatype of `n` `MPI_BYTE`s ([`Datatype::element`]), so any
//! plain-old-data type moves without an MPI equivalent of its own.

use crate::error::RedistError;
use bytemuck::Pod;
use mpi::datatype::{DynBuffer, DynBufferMut, UserDatatype};
use mpi::ffi;
use mpi::point_to_point::{self as p2p, Destination, Source};
use mpi::raw::{AsRaw, FromRaw};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::Equivalence;
use mpi::{Count, Tag};
use redist_plan::program::TypeTree;
use std::mem::{size_of, ManuallyDrop};
use std::os::raw::c_int;

pub mod file;
mod requests;

pub(crate) use requests::{Event, Note, RequestStore, Requests};

/// An MPI count from an element count, or an error naming the limit.
pub(crate) fn count(n: usize, what: &'static str) -> Result<Count, RedistError> {
    Count::try_from(n).map_err(|_| RedistError::Limit {
        what,
        value: n as u128,
        limit: Count::MAX as u128,
    })
}

/// `Err` unless `code` is `MPI_SUCCESS`. Only reachable when a
/// communicator's error handler returns errors instead of aborting.
fn check(code: c_int, call: &'static str) -> Result<(), RedistError> {
    // The standard fixes MPI_SUCCESS to 0.
    if code == 0 {
        return Ok(());
    }
    let mut text = vec![0u8; 1024];
    let mut len: c_int = 0;
    // SAFETY: the buffer holds MPI_MAX_ERROR_STRING (at most 1024) bytes.
    unsafe {
        ffi::MPI_Error_string(code, text.as_mut_ptr().cast(), &mut len);
    }
    text.truncate(usize::try_from(len).unwrap_or(0).min(1024));
    Err(RedistError::Mpi {
        call,
        code,
        message: String::from_utf8_lossy(&text).into_owned(),
    })
}

/// A committed MPI datatype and the bytes one instance of it spans from
/// its base address, freed on drop while MPI is running.
pub(crate) struct Datatype {
    inner: ManuallyDrop<UserDatatype>,
    span: usize,
}

impl Datatype {
    /// One element of `bytes` bytes.
    ///
    /// # Errors
    ///
    /// - [`RedistError::Limit`] when `bytes` exceeds `i32::MAX`.
    pub fn element(bytes: usize) -> Result<Datatype, RedistError> {
        let inner =
            UserDatatype::contiguous(count(bytes, "element size")?, &u8::equivalent_datatype());
        Ok(Datatype {
            inner: ManuallyDrop::new(inner),
            span: bytes,
        })
    }

    /// One side of a message, described by `tree` (offsets in elements of
    /// `elem`), as a single datatype laid over local storage, so MPI reads
    /// or writes it directly: a run becomes a block of elements, a repeat
    /// an `MPI_Type_create_hvector`, a sequence of runs an
    /// `MPI_Type_create_hindexed`, any other sequence an `MPI_Type_create_struct`
    /// — one MPI datatype per node of the tree, never one entry per run.
    ///
    /// # Errors
    ///
    /// - [`RedistError::Limit`] when a count exceeds `i32::MAX` or an offset
    ///   in bytes overflows `MPI_Aint`.
    pub fn tree(tree: &TypeTree, elem: &Datatype) -> Result<Datatype, RedistError> {
        let span = tree
            .span()
            .checked_mul(elem.span)
            .ok_or(RedistError::Limit {
                what: "datatype span in bytes",
                value: tree.span() as u128 * elem.span as u128,
                limit: usize::MAX as u128,
            })?;
        elem.offset(tree.span())?;
        let inner = match node_type(tree, elem)? {
            (1, Some(ty)) => ty,
            (n, None) => UserDatatype::contiguous(n, &*elem.inner),
            (n, Some(ty)) => UserDatatype::contiguous(n, &ty),
        };
        Ok(Datatype {
            inner: ManuallyDrop::new(inner),
            span,
        })
    }

    /// `elements` of this datatype as a byte offset for MPI.
    fn offset(&self, elements: usize) -> Result<ffi::MPI_Aint, RedistError> {
        elements
            .checked_mul(self.span)
            .and_then(|b| ffi::MPI_Aint::try_from(b).ok())
            .ok_or(RedistError::Limit {
                what: "datatype offset in bytes",
                value: elements as u128 * self.span as u128,
                limit: ffi::MPI_Aint::MAX as u128,
            })
    }

    fn raw(&self) -> ffi::MPI_Datatype {
        self.inner.as_raw()
    }

    /// Bytes one instance spans (an element's size, for element types).
    pub fn bytes(&self) -> usize {
        self.span
    }

    /// Checks that one instance laid over `base` stays inside it.
    fn fits<T>(&self, base: &[T]) -> Result<(), RedistError> {
        let bytes = std::mem::size_of_val(base);
        if self.span > bytes {
            return Err(RedistError::Internal(format!(
                "a datatype spanning {} bytes laid over {bytes} bytes",
                self.span
            )));
        }
        Ok(())
    }
}

/// A node of a message's tree as (block length, datatype of one block
/// element), offsets in elements of `elem`: runs are blocks of the element
/// type, so they need no datatype of their own.
fn node_type(
    node: &TypeTree,
    elem: &Datatype,
) -> Result<(Count, Option<UserDatatype>), RedistError> {
    Ok(match node {
        TypeTree::Run(n) => (count(*n, "run length")?, None),
        TypeTree::Repeat {
            count: c,
            stride,
            inner,
        } => {
            let (len, ty) = node_type(inner, elem)?;
            let c = count(*c, "repeat count")?;
            let stride = elem.offset(*stride)?;
            let ty = match &ty {
                Some(t) => UserDatatype::heterogeneous_vector(c, len, stride, t),
                None => UserDatatype::heterogeneous_vector(c, len, stride, &*elem.inner),
            };
            (1, Some(ty))
        }
        TypeTree::Seq(children) if children.iter().all(|(_, p)| p.is_run()) => {
            // Runs only: an hindexed type of the element, which MPI walks as
            // one indexed loop (a struct of per-run duplicates of the element
            // type, it walks block by block).
            let mut lens = Vec::with_capacity(children.len());
            let mut displs = Vec::with_capacity(children.len());
            for (at, child) in children {
                lens.push(count(child.elements(), "run length")?);
                displs.push(elem.offset(*at)?);
            }
            let ty = UserDatatype::heterogeneous_indexed(&lens, &displs, &*elem.inner);
            (1, Some(ty))
        }
        TypeTree::Seq(children) => {
            let mut lens = Vec::with_capacity(children.len());
            let mut displs = Vec::with_capacity(children.len());
            let mut types = Vec::with_capacity(children.len());
            for (at, child) in children {
                let (len, ty) = node_type(child, elem)?;
                lens.push(len);
                displs.push(elem.offset(*at)?);
                types.push(match ty {
                    Some(t) => t,
                    None => mpi::datatype::UncommittedDatatype::dup(&*elem.inner),
                });
            }
            (1, Some(UserDatatype::structured(&lens, &displs, &types)))
        }
    })
}

impl Drop for Datatype {
    fn drop(&mut self) {
        if mpi::environment::is_initialized() && !mpi::environment::is_finalized() {
            // SAFETY: dropped once, here; MPI is running.
            unsafe { ManuallyDrop::drop(&mut self.inner) }
        }
        // After MPI_Finalize the handle is gone with the library: nothing to free.
    }
}

/// One side of a point-to-point message: a slice of elements, or one
/// instance of a derived datatype laid over a slice (its base address).
pub(crate) enum SendBuf<'a, T> {
    /// The elements of the slice, in order.
    Elements(&'a [T]),
    /// The elements the datatype picks out of the slice.
    Typed(&'a [T], &'a Datatype),
}

/// Like [`SendBuf`], for the receiving side.
pub(crate) enum RecvBuf<'a, T> {
    /// The elements of the slice, in order.
    Elements(&'a mut [T]),
    /// The elements the datatype picks out of the slice.
    Typed(&'a mut [T], &'a Datatype),
}

impl<T: Pod> SendBuf<'_, T> {
    /// Pointer, count and datatype for MPI, after the bounds checks.
    fn raw(&self, elem: &Datatype) -> Result<(*const T, Count, ffi::MPI_Datatype), RedistError> {
        match self {
            SendBuf::Elements(b) => Ok((addr(b), count(b.len(), "message length")?, elem.raw())),
            SendBuf::Typed(b, t) => {
                t.fits(b)?;
                Ok((addr(b), 1, t.raw()))
            }
        }
    }
}

impl<T: Pod> RecvBuf<'_, T> {
    /// Pointer, count and datatype for MPI, after the bounds checks.
    fn raw(&mut self, elem: &Datatype) -> Result<(*mut T, Count, ffi::MPI_Datatype), RedistError> {
        match self {
            RecvBuf::Elements(b) => {
                Ok((addr_mut(b), count(b.len(), "message length")?, elem.raw()))
            }
            RecvBuf::Typed(b, t) => {
                t.fits(b)?;
                Ok((addr_mut(b), 1, t.raw()))
            }
        }
    }
}

/// Per rank `r`, how many elements an `MPI_Alltoallv` sends to it and
/// receives from it, and where they lie in the two buffers.
#[derive(Clone, Copy)]
pub(crate) struct Counts<'a> {
    /// Elements sent to each rank.
    pub send: &'a [Count],
    /// Where those start in the send buffer.
    pub send_at: &'a [Count],
    /// Elements received from each rank.
    pub recv: &'a [Count],
    /// Where those start in the receive buffer.
    pub recv_at: &'a [Count],
}

impl<'a> Counts<'a> {
    /// The counts held as `[send, send_at, recv, recv_at]`.
    pub fn of(c: &'a [Vec<Count>; 4]) -> Counts<'a> {
        let [send, send_at, recv, recv_at] = c;
        Counts {
            send,
            send_at,
            recv,
            recv_at,
        }
    }
}

/// `MPI_Alltoallv` of `elem`s: `counts.send[r]` elements from
/// `counts.send_at[r]` of `send` go to rank `r`, `counts.recv[r]` arrive
/// at `counts.recv_at[r]` of `recv`. Collective.
pub(crate) fn alltoallv<T: Pod>(
    comm: &SimpleCommunicator,
    send: &[T],
    recv: &mut [T],
    counts: Counts<'_>,
    elem: &Datatype,
) -> Result<(), RedistError> {
    let within = |counts: &[Count], displs: &[Count], len: usize| {
        counts
            .iter()
            .zip(displs)
            .all(|(&c, &d)| c >= 0 && d >= 0 && (c as usize) + (d as usize) <= len)
    };
    let Counts {
        send: scounts,
        send_at: sdispls,
        recv: rcounts,
        recv_at: rdispls,
    } = counts;
    if !within(scounts, sdispls, send.len()) || !within(rcounts, rdispls, recv.len()) {
        return Err(RedistError::Internal(
            "MPI_Alltoallv counts and displacements outside the buffers".to_string(),
        ));
    }
    debug_assert_eq!(elem.span, size_of::<T>());
    count(send.len(), "elements in one MPI buffer")?;
    count(recv.len(), "elements in one MPI buffer")?;
    let (sbuf, rbuf) = (addr(send).cast(), addr_mut(recv).cast());
    let ty = elem.inner.as_raw();
    if procgrid::waits::oversubscribed() {
        // More ranks than cores: the non-blocking form, completed by
        // testing and yielding (a rank spinning in MPI takes the core the
        // ranks it waits for need).
        // SAFETY: reads a constant handle MPI defines.
        let mut request = unsafe { ffi::RSMPI_REQUEST_NULL };
        // SAFETY: the counts and displacements stay inside the buffers
        // (checked above), in elements of `elem`; buffers, arrays and
        // datatype outlive the request, completed before returning.
        let code = unsafe {
            ffi::MPI_Ialltoallv(
                sbuf,
                scounts.as_ptr(),
                sdispls.as_ptr(),
                ty,
                rbuf,
                rcounts.as_ptr(),
                rdispls.as_ptr(),
                ty,
                comm.as_raw(),
                &mut request,
            )
        };
        check(code, "MPI_Ialltoallv")?;
        return test_until_complete(request, "MPI_Test");
    }
    // SAFETY: as above, for the blocking form.
    let code = unsafe {
        ffi::MPI_Alltoallv(
            sbuf,
            scounts.as_ptr(),
            sdispls.as_ptr(),
            ty,
            rbuf,
            rcounts.as_ptr(),
            rdispls.as_ptr(),
            ty,
            comm.as_raw(),
        )
    };
    check(code, "MPI_Alltoallv")
}

/// Completes `request` by testing it and yielding the core between tests,
/// as [`procgrid::waits::complete`] does for rsmpi's requests.
fn test_until_complete(
    mut request: ffi::MPI_Request,
    what: &'static str,
) -> Result<(), RedistError> {
    loop {
        let mut flag: c_int = 0;
        // SAFETY: `request` is an active request this rank started; a
        // completed one becomes MPI_REQUEST_NULL, which is not tested again.
        let code = unsafe { ffi::MPI_Test(&mut request, &mut flag, ffi::RSMPI_STATUS_IGNORE) };
        check(code, what)?;
        if flag != 0 {
            return Ok(());
        }
        std::thread::yield_now();
    }
}

/// The arguments of an `MPI_Alltoallw` with zero displacements, built once:
/// to rank `r` goes one instance of its send datatype laid over the send
/// buffer (if it has one), from rank `r` one instance of its receive
/// datatype laid over the receive buffer.
pub(crate) struct Alltoallw {
    types: Vec<Datatype>,
    scounts: Vec<c_int>,
    rcounts: Vec<c_int>,
    sraw: Vec<ffi::MPI_Datatype>,
    rraw: Vec<ffi::MPI_Datatype>,
    zeros: Vec<c_int>,
    /// Bytes the send datatypes reach into the send buffer.
    send_span: usize,
    /// Bytes the receive datatypes reach into the receive buffer.
    recv_span: usize,
}

impl Alltoallw {
    /// Arguments for `size` ranks: `sends` and `recvs` list (rank, datatype).
    ///
    /// # Errors
    ///
    /// - [`RedistError::Internal`] when a rank is not below `size`.
    pub fn new(
        size: usize,
        sends: Vec<(usize, Datatype)>,
        recvs: Vec<(usize, Datatype)>,
        elem: &Datatype,
    ) -> Result<Alltoallw, RedistError> {
        let mut w = Alltoallw {
            types: Vec::with_capacity(sends.len() + recvs.len()),
            scounts: vec![0; size],
            rcounts: vec![0; size],
            sraw: vec![elem.raw(); size],
            rraw: vec![elem.raw(); size],
            zeros: vec![0; size],
            send_span: 0,
            recv_span: 0,
        };
        for (list, counts, raw, span) in [
            (sends, &mut w.scounts, &mut w.sraw, &mut w.send_span),
            (recvs, &mut w.rcounts, &mut w.rraw, &mut w.recv_span),
        ] {
            for (rank, t) in list {
                if rank >= size {
                    return Err(RedistError::Internal(format!("rank {rank} of {size}")));
                }
                counts[rank] = 1;
                raw[rank] = t.raw();
                *span = (*span).max(t.span);
                w.types.push(t);
            }
        }
        Ok(w)
    }

    /// Runs the exchange from `send` into `recv`. Collective.
    ///
    /// # Errors
    ///
    /// - [`RedistError::Internal`] when a datatype reaches outside `send` or `recv`
    ///   (checked before the call, on this rank alone);
    /// - [`RedistError::Mpi`] when MPI returns an error code (only under an error handler that returns
    ///   errors; the library's communicators abort instead).
    pub fn run<T: Pod>(
        &self,
        comm: &SimpleCommunicator,
        send: &[T],
        recv: &mut [T],
    ) -> Result<(), RedistError> {
        if self.send_span > std::mem::size_of_val(send)
            || self.recv_span > std::mem::size_of_val(recv)
        {
            return Err(RedistError::Internal(
                "MPI_Alltoallw datatypes reach outside their buffers".to_string(),
            ));
        }
        if procgrid::waits::oversubscribed() {
            // As in `alltoallv`: the non-blocking form, tested and yielding.
            // SAFETY: reads a constant handle MPI defines.
            let mut request = unsafe { ffi::RSMPI_REQUEST_NULL };
            // SAFETY: as for MPI_Alltoallw below; `send`, `recv` and the
            // arrays outlive the request, completed before returning.
            let code = unsafe {
                ffi::MPI_Ialltoallw(
                    addr(send).cast(),
                    self.scounts.as_ptr(),
                    self.zeros.as_ptr(),
                    self.sraw.as_ptr(),
                    addr_mut(recv).cast(),
                    self.rcounts.as_ptr(),
                    self.zeros.as_ptr(),
                    self.rraw.as_ptr(),
                    comm.as_raw(),
                    &mut request,
                )
            };
            check(code, "MPI_Ialltoallw")?;
            return test_until_complete(request, "MPI_Test");
        }
        // SAFETY: every count is 0 or one instance of a datatype that stays
        // inside its buffer (checked above); the datatypes live in `self`;
        // the arrays hold one entry per rank.
        let code = unsafe {
            ffi::MPI_Alltoallw(
                addr(send).cast(),
                self.scounts.as_ptr(),
                self.zeros.as_ptr(),
                self.sraw.as_ptr(),
                addr_mut(recv).cast(),
                self.rcounts.as_ptr(),
                self.zeros.as_ptr(),
                self.rraw.as_ptr(),
                comm.as_raw(),
            )
        };
        check(code, "MPI_Alltoallw")
    }
}

/// A buffer of one step of a schedule and the peer it goes to, or comes
/// from.
pub(crate) struct WithPeer<B> {
    pub buf: B,
    pub peer: usize,
}

/// One step of a schedule: sends `send` to its peer and receives `recv`
/// from its peer at the same time (either may be absent), tagged `tag`.
pub(crate) fn sendrecv<T: Pod>(
    comm: &SimpleCommunicator,
    send: Option<WithPeer<SendBuf<'_, T>>>,
    recv: Option<WithPeer<RecvBuf<'_, T>>>,
    tag: Tag,
    elem: &Datatype,
) -> Result<(), RedistError> {
    let rank = |r: usize| {
        mpi::Rank::try_from(r)
            .ok()
            .filter(|&r| r < comm.size())
            .ok_or_else(|| RedistError::Internal(format!("peer {r} outside the communicator")))
    };
    let dyn_send = |p: &SendBuf<'_, T>| -> Result<DynBuffer<'_>, RedistError> {
        let (ptr, n, ty) = p.raw(elem)?;
        // SAFETY: `raw` checked that `n` instances of `ty` stay inside the
        // borrowed slice, which outlives the buffer.
        Ok(unsafe { DynBuffer::from_raw(ptr, n, datatype_ref(ty)) })
    };
    match (send, recv) {
        (None, None) => {}
        (Some(s), None) => {
            let b = dyn_send(&s.buf)?;
            comm.process_at_rank(rank(s.peer)?).send_with_tag(&b, tag);
        }
        (None, Some(mut r)) => {
            let (ptr, n, ty) = r.buf.raw(elem)?;
            // SAFETY: as above, for the exclusively borrowed receive slice.
            let mut b = unsafe { DynBufferMut::from_raw(ptr, n, datatype_ref(ty)) };
            comm.process_at_rank(rank(r.peer)?)
                .receive_into_with_tag(&mut b, tag);
        }
        (Some(s), Some(mut r)) => {
            let sb = dyn_send(&s.buf)?;
            let (ptr, n, ty) = r.buf.raw(elem)?;
            // SAFETY: as above.
            let mut rb = unsafe { DynBufferMut::from_raw(ptr, n, datatype_ref(ty)) };
            p2p::send_receive_into_with_tags(
                &sb,
                &comm.process_at_rank(rank(s.peer)?),
                tag,
                &mut rb,
                &comm.process_at_rank(rank(r.peer)?),
                tag,
            );
        }
    }
    Ok(())
}

/// `MPI_REQUEST_NULL`, which the standard defines as a handle constant.
fn null_request() -> ffi::MPI_Request {
    // SAFETY: reads a constant of the MPI library.
    unsafe { ffi::RSMPI_REQUEST_NULL }
}

/// An rsmpi view of a raw datatype handle owned by a [`Datatype`].
fn datatype_ref<'a>(raw: ffi::MPI_Datatype) -> mpi::datatype::DatatypeRef<'a> {
    // SAFETY: `raw` comes from a committed `Datatype` (or element datatype)
    // that outlives the call the reference is used in.
    unsafe { mpi::datatype::DatatypeRef::from_raw(raw) }
}

/// What a pending request is, so that its completion can be reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum What {
    /// Elements `offset..offset + len` of receive message `i`'s slot.
    Piece { i: usize, offset: usize, len: usize },
    /// The note of receive message `i`.
    Note(usize),
    /// The word answering send message `i`.
    Word(usize),
    /// The target note of send message `i`'s receiver.
    TargetNote(usize),
    /// The word of receive message `i`'s sender: written or not.
    Written(usize),
    /// A send.
    Send,
    /// Receive message `i`, straight into target storage.
    Landed(usize),
}

/// Where MPI is told `buf` lives: its address, or for an empty buffer a
/// well-aligned address no MPI constant uses. Rust places empty slices of
/// 1-byte-aligned types at address 1, which is Open MPI's `MPI_IN_PLACE`:
/// a collective handed such a buffer would take it for "in place" (and
/// refuse it, or read the wrong buffer). Nothing is read or written there
/// (the count is 0).
fn addr<T>(buf: &[T]) -> *const T {
    if buf.is_empty() {
        std::ptr::addr_of!(EMPTY_SEND).cast()
    } else {
        buf.as_ptr()
    }
}

/// [`addr`] of a writable buffer: an empty one gets another address than
/// an empty send buffer.
fn addr_mut<T>(buf: &mut [T]) -> *mut T {
    if buf.is_empty() {
        EMPTY_RECV.as_ptr().cast()
    } else {
        buf.as_mut_ptr()
    }
}

/// Where an empty send buffer points, and an empty receive buffer: two
/// real, distinct addresses. Open MPI's non-blocking all-to-alls take a
/// send and a receive buffer at the same address for an exchange in
/// place, and a rank with nothing to send or receive, handing over two
/// empty buffers at one dangling address, then ran another algorithm than
/// the others: the job hung (Open MPI 4.1.4, `MPI_Ialltoallv`). Nothing is
/// ever read or written here (every count is 0).
static EMPTY_SEND: u64 = 0;
static EMPTY_RECV: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The element-wise maximum of every rank's `mine` over `comm`, into `all`
/// (collective), waiting as [`procgrid::waits::complete`] does.
pub(crate) fn all_reduce_max(comm: &SimpleCommunicator, mine: &[u64], all: &mut [u64]) {
    let max = mpi::collective::SystemOperation::max();
    procgrid::waits::all_reduce_into(comm, mine, all, max);
}

/// Aborts the job if dropped while the thread unwinds from a panic: an
/// exchange that panics on one rank would otherwise leave the others
/// blocked in MPI (or, with requests pending, MPI writing into freed
/// memory), whether or not the program installed an abort-on-panic hook.
pub(crate) struct AbortOnUnwind(ffi::MPI_Comm);

impl AbortOnUnwind {
    /// A guard over `comm` for the current exchange.
    pub fn new(comm: &SimpleCommunicator) -> AbortOnUnwind {
        AbortOnUnwind(comm.as_raw())
    }
}

impl Drop for AbortOnUnwind {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("redist: a panic during an exchange; aborting the job");
            // SAFETY: aborting is always allowed while MPI runs.
            unsafe {
                ffi::MPI_Abort(self.0, 101);
            }
        }
    }
}
