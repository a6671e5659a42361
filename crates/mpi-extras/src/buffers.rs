//! The buffers of point-to-point messages ([`SendBuf`], [`RecvBuf`]): a
//! slice of elements or a datatype laid over one, and the addresses MPI is
//! told they live at (never `MPI_IN_PLACE` by accident).

use crate::datatype::Datatype;
use crate::error::{count, MpiError};
use bytemuck::Pod;
use mpi::ffi;
use mpi::Count;

/// One side of a point-to-point message: a slice of elements, or one
/// instance of a derived datatype laid over a slice (its base address).
pub enum SendBuf<'a, T> {
    /// The elements of the slice, in order.
    Elements(&'a [T]),
    /// The elements the datatype picks out of the slice.
    Typed(&'a [T], &'a Datatype),
}

/// Like [`SendBuf`], for the receiving side.
pub enum RecvBuf<'a, T> {
    /// The elements of the slice, in order.
    Elements(&'a mut [T]),
    /// The elements the datatype picks out of the slice.
    Typed(&'a mut [T], &'a Datatype),
}

impl<T: Pod> SendBuf<'_, T> {
    /// Pointer, count and datatype for MPI, after the bounds checks.
    pub(crate) fn raw(
        &self,
        elem: &Datatype,
    ) -> Result<(*const T, Count, ffi::MPI_Datatype), MpiError> {
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
    pub(crate) fn raw(
        &mut self,
        elem: &Datatype,
    ) -> Result<(*mut T, Count, ffi::MPI_Datatype), MpiError> {
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
/// Where MPI is told `buf` lives: its address, or for an empty buffer a
/// well-aligned address no MPI constant uses. Rust places empty slices of
/// 1-byte-aligned types at address 1, which is Open MPI's `MPI_IN_PLACE`:
/// a collective handed such a buffer would take it for "in place" (and
/// refuse it, or read the wrong buffer). Nothing is read or written there
/// (the count is 0).
pub(crate) fn addr<T>(buf: &[T]) -> *const T {
    if buf.is_empty() {
        std::ptr::addr_of!(EMPTY_SEND).cast()
    } else {
        buf.as_ptr()
    }
}

/// [`addr`] of a writable buffer: an empty one gets another address than
/// an empty send buffer.
pub(crate) fn addr_mut<T>(buf: &mut [T]) -> *mut T {
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
