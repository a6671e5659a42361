//! The exchanges of many peers at once rsmpi lacks or does slowly: an
//! `MPI_Alltoallv` of any element size ([`alltoallv`]), an `MPI_Alltoallw`
//! of one derived datatype per peer built once ([`Alltoallw`]), and one
//! step of a schedule, sending to one peer while receiving from another
//! ([`sendrecv`]). Where ranks outnumber cores, each starts the
//! non-blocking form and tests it, yielding the core between tests.

use crate::buffers::{addr, addr_mut, RecvBuf, SendBuf};
use crate::datatype::{datatype_ref, Datatype};
use crate::error::{check, count, MpiError};
use crate::launcher::oversubscribed;
use bytemuck::Pod;
use mpi::datatype::{DynBuffer, DynBufferMut};
use mpi::ffi;
use mpi::point_to_point::{self as p2p, Destination, Source};
use mpi::raw::AsRaw;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::{Count, Tag};
use std::mem::size_of;
use std::os::raw::c_int;

/// Per rank `r`, how many elements an `MPI_Alltoallv` sends to it and
/// receives from it, and where they lie in the two buffers.
#[derive(Clone, Copy)]
pub struct Counts<'a> {
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
///
/// # Errors
///
/// - [`MpiError::Limit`] when a buffer holds more than `i32::MAX` elements;
/// - [`MpiError::Mpi`] when MPI returns an error code (only under an error
///   handler that returns errors).
pub fn alltoallv<T: Pod>(
    comm: &SimpleCommunicator,
    send: &[T],
    recv: &mut [T],
    counts: Counts<'_>,
    elem: &Datatype,
) -> Result<(), MpiError> {
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
        return Err(MpiError::Internal(
            "MPI_Alltoallv counts and displacements outside the buffers".to_string(),
        ));
    }
    debug_assert_eq!(elem.span, size_of::<T>());
    count(send.len(), "elements in one MPI buffer")?;
    count(recv.len(), "elements in one MPI buffer")?;
    let (sbuf, rbuf) = (addr(send).cast(), addr_mut(recv).cast());
    let ty = elem.inner.as_raw();
    if oversubscribed() {
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
/// as procgrid's `waits::complete` does for rsmpi's requests.
pub(crate) fn test_until_complete(
    mut request: ffi::MPI_Request,
    what: &'static str,
) -> Result<(), MpiError> {
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
pub struct Alltoallw {
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
    /// - [`MpiError::Internal`] when a rank is not below `size`.
    pub fn new(
        size: usize,
        sends: Vec<(usize, Datatype)>,
        recvs: Vec<(usize, Datatype)>,
        elem: &Datatype,
    ) -> Result<Alltoallw, MpiError> {
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
                    return Err(MpiError::Internal(format!("rank {rank} of {size}")));
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
    /// - [`MpiError::Internal`] when a datatype reaches outside `send` or `recv`
    ///   (checked before the call, on this rank alone);
    /// - [`MpiError::Mpi`] when MPI returns an error code (only under an error handler that returns
    ///   errors; the library's communicators abort instead).
    pub fn run<T: Pod>(
        &self,
        comm: &SimpleCommunicator,
        send: &[T],
        recv: &mut [T],
    ) -> Result<(), MpiError> {
        if self.send_span > std::mem::size_of_val(send)
            || self.recv_span > std::mem::size_of_val(recv)
        {
            return Err(MpiError::Internal(
                "MPI_Alltoallw datatypes reach outside their buffers".to_string(),
            ));
        }
        if oversubscribed() {
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
pub struct WithPeer<B> {
    /// The buffer.
    pub buf: B,
    /// The rank it goes to, or comes from.
    pub peer: usize,
}

/// One step of a schedule: sends `send` to its peer and receives `recv`
/// from its peer at the same time (either may be absent), tagged `tag`.
///
/// # Errors
///
/// - [`MpiError::Limit`] when a buffer holds more than `i32::MAX` elements
///   or a peer exceeds `i32::MAX`;
/// - [`MpiError::Internal`] when a datatype reaches outside its slice.
pub fn sendrecv<T: Pod>(
    comm: &SimpleCommunicator,
    send: Option<WithPeer<SendBuf<'_, T>>>,
    recv: Option<WithPeer<RecvBuf<'_, T>>>,
    tag: Tag,
    elem: &Datatype,
) -> Result<(), MpiError> {
    let rank = |r: usize| {
        mpi::Rank::try_from(r)
            .ok()
            .filter(|&r| r < comm.size())
            .ok_or_else(|| MpiError::Internal(format!("peer {r} outside the communicator")))
    };
    let dyn_send = |p: &SendBuf<'_, T>| -> Result<DynBuffer<'_>, MpiError> {
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
