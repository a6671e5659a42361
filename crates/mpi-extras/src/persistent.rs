//! Persistent requests (`MPI_Send_init`, `MPI_Recv_init`, `MPI_Start`):
//! messages between fixed ranks with fixed buffers, set up once and
//! started again every time they are sent, for exchanges that repeat the
//! same messages each step (a stencil's ghost update).
//!
//! A [`Persistent`] set owns its communicator (a duplicate of the one it
//! is made from) and every message's buffer, so no buffer can be freed or
//! moved while MPI may use it: a buffer is lent out only while its request
//! is inactive. Dropping the set waits for its active sends and cancels
//! its active receives.
//!
//! ```
//! use mpi::topology::Communicator;
//! use mpi_extras::persistent::Persistent;
//!
//! let universe = mpi::initialize().unwrap();
//! let world = universe.world();
//! let (me, n) = (world.rank() as usize, world.size() as usize);
//! let mut set = Persistent::new(&world);
//! let send = set.send((me + 1) % n, 7, 8).unwrap();
//! let recv = set.recv((me + n - 1) % n, 7, 8).unwrap();
//! for step in 0..3u64 {
//!     set.words_mut(send).unwrap()[0] = 10 * me as u64 + step;
//!     set.start(recv).unwrap();
//!     set.start(send).unwrap();
//!     set.wait_all().unwrap();
//!     assert_eq!(set.words(recv).unwrap()[0], 10 * ((me + n - 1) % n) as u64 + step);
//! }
//! ```

use crate::error::{check, count, MpiError};
use crate::launcher::oversubscribed;
use crate::requests::{null_request, wait_any_of};
use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::Equivalence;
use mpi::Tag;
use std::os::raw::c_int;

/// A set of persistent sends and receives, each with its own buffer, over
/// a communicator of its own.
pub struct Persistent {
    comm: SimpleCommunicator,
    /// MPI's handles, one per message, in the order they were made.
    raw: Vec<ffi::MPI_Request>,
    slots: Vec<Slot>,
}

/// One message: its buffer (8-byte aligned, so any element type can be
/// seen in it) and whether MPI holds it.
struct Slot {
    buf: Vec<u64>,
    bytes: usize,
    active: bool,
    receive: bool,
}

impl Persistent {
    /// An empty set over a duplicate of `comm`. Collective over `comm`
    /// (duplicating is).
    pub fn new<C: Communicator>(comm: &C) -> Persistent {
        Persistent {
            comm: comm.duplicate(),
            raw: Vec::new(),
            slots: Vec::new(),
        }
    }

    /// The set's own communicator.
    pub fn communicator(&self) -> &SimpleCommunicator {
        &self.comm
    }

    /// Messages in the set.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether the set holds no message.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Adds a send of `bytes` bytes to rank `peer` with `tag`, inactive;
    /// returns its index.
    ///
    /// # Errors
    ///
    /// - [`MpiError::Limit`] when `peer` or `bytes` exceeds `i32::MAX`;
    /// - [`MpiError::InvalidArgument`] when `peer` is not a rank of the
    ///   communicator;
    /// - [`MpiError::Mpi`] when MPI returns an error code (only under an
    ///   error handler that returns errors).
    pub fn send(&mut self, peer: usize, tag: Tag, bytes: usize) -> Result<usize, MpiError> {
        self.add(peer, tag, bytes, false)
    }

    /// Adds a receive of `bytes` bytes from rank `peer` with `tag`,
    /// inactive; returns its index.
    ///
    /// # Errors
    ///
    /// As [`send`](Self::send).
    pub fn recv(&mut self, peer: usize, tag: Tag, bytes: usize) -> Result<usize, MpiError> {
        self.add(peer, tag, bytes, true)
    }

    fn add(
        &mut self,
        peer: usize,
        tag: Tag,
        bytes: usize,
        receive: bool,
    ) -> Result<usize, MpiError> {
        let n = count(bytes, "message bytes")?;
        let rank = count(peer, "rank")?;
        if rank >= self.comm.size() {
            return Err(MpiError::InvalidArgument {
                what: "peer rank",
                value: peer.to_string(),
                expected: format!("a rank below {}", self.comm.size()),
            });
        }
        let mut slot = Slot {
            buf: vec![0u64; bytes.div_ceil(8).max(1)],
            bytes,
            active: false,
            receive,
        };
        let mut req = null_request();
        let ty = u8::equivalent_datatype().as_raw();
        let comm = self.comm.as_raw();
        let code = if receive {
            // SAFETY: the buffer holds `bytes` bytes; it lives in the set,
            // which frees the request before it (Drop), and a Vec's heap
            // block does not move when the Vec does.
            unsafe {
                ffi::MPI_Recv_init(
                    slot.buf.as_mut_ptr().cast(),
                    n,
                    ty,
                    rank,
                    tag,
                    comm,
                    &mut req,
                )
            }
        } else {
            // SAFETY: as above.
            unsafe {
                ffi::MPI_Send_init(slot.buf.as_ptr().cast(), n, ty, rank, tag, comm, &mut req)
            }
        };
        check(
            code,
            if receive {
                "MPI_Recv_init"
            } else {
                "MPI_Send_init"
            },
        )?;
        slot.active = false;
        self.raw.push(req);
        self.slots.push(slot);
        Ok(self.slots.len() - 1)
    }

    fn slot(&self, i: usize) -> Result<&Slot, MpiError> {
        let slot = self.slots.get(i).ok_or_else(|| no_message(i))?;
        if slot.active {
            return Err(MpiError::Internal(format!(
                "message {i}'s buffer asked for while MPI holds it"
            )));
        }
        Ok(slot)
    }

    fn slot_mut(&mut self, i: usize) -> Result<&mut Slot, MpiError> {
        self.slot(i)?;
        Ok(&mut self.slots[i])
    }

    /// Message `i`'s buffer, while it is inactive.
    ///
    /// # Errors
    ///
    /// [`MpiError::Internal`] when there is no message `i` or it is active.
    pub fn bytes(&self, i: usize) -> Result<&[u8], MpiError> {
        let slot = self.slot(i)?;
        Ok(&bytemuck::cast_slice(&slot.buf)[..slot.bytes])
    }

    /// Message `i`'s buffer, writable, while it is inactive.
    ///
    /// # Errors
    ///
    /// As [`bytes`](Self::bytes).
    pub fn bytes_mut(&mut self, i: usize) -> Result<&mut [u8], MpiError> {
        let slot = self.slot_mut(i)?;
        let bytes = slot.bytes;
        Ok(&mut bytemuck::cast_slice_mut(&mut slot.buf)[..bytes])
    }

    /// Message `i`'s buffer as 64-bit words (its length rounded up).
    ///
    /// # Errors
    ///
    /// As [`bytes`](Self::bytes).
    pub fn words(&self, i: usize) -> Result<&[u64], MpiError> {
        Ok(&self.slot(i)?.buf)
    }

    /// Message `i`'s buffer as 64-bit words, writable.
    ///
    /// # Errors
    ///
    /// As [`bytes`](Self::bytes).
    pub fn words_mut(&mut self, i: usize) -> Result<&mut [u64], MpiError> {
        Ok(&mut self.slot_mut(i)?.buf)
    }

    /// Whether message `i` is active (started, not yet waited for).
    pub fn is_active(&self, i: usize) -> bool {
        self.slots.get(i).is_some_and(|s| s.active)
    }

    /// Starts message `i` (`MPI_Start`).
    ///
    /// # Errors
    ///
    /// - [`MpiError::Internal`] when there is no message `i` or it is
    ///   active already;
    /// - [`MpiError::Mpi`] when MPI returns an error code.
    pub fn start(&mut self, i: usize) -> Result<(), MpiError> {
        self.slot(i)?;
        // SAFETY: an inactive persistent request of this set.
        let code = unsafe { ffi::MPI_Start(&mut self.raw[i]) };
        check(code, "MPI_Start")?;
        self.slots[i].active = true;
        Ok(())
    }

    /// Waits until one active message completes and returns its index;
    /// `None` when none is active. Yields the core between tests where
    /// ranks outnumber cores.
    ///
    /// # Errors
    ///
    /// [`MpiError::Limit`] past `i32::MAX` messages, [`MpiError::Mpi`] when
    /// MPI returns an error code.
    pub fn wait_any(&mut self) -> Result<Option<usize>, MpiError> {
        if !self.slots.iter().any(|s| s.active) {
            return Ok(None);
        }
        let index = wait_any_of(&mut self.raw)?;
        let Ok(i) = usize::try_from(index) else {
            return Ok(None); // MPI_UNDEFINED: nothing was active
        };
        if let Some(slot) = self.slots.get_mut(i) {
            slot.active = false;
        }
        Ok(Some(i))
    }

    /// Waits until message `i` completes (at once if inactive).
    ///
    /// # Errors
    ///
    /// [`MpiError::Internal`] when there is no message `i`,
    /// [`MpiError::Mpi`] when MPI returns an error code.
    pub fn wait(&mut self, i: usize) -> Result<(), MpiError> {
        let slot = self.slots.get(i).ok_or_else(|| no_message(i))?;
        if !slot.active {
            return Ok(());
        }
        if oversubscribed() {
            loop {
                let mut flag: c_int = 0;
                // SAFETY: an active request of this set.
                let code =
                    unsafe { ffi::MPI_Test(&mut self.raw[i], &mut flag, ffi::RSMPI_STATUS_IGNORE) };
                check(code, "MPI_Test")?;
                if flag != 0 {
                    break;
                }
                std::thread::yield_now();
            }
        } else {
            // SAFETY: an active request of this set.
            let code = unsafe { ffi::MPI_Wait(&mut self.raw[i], ffi::RSMPI_STATUS_IGNORE) };
            check(code, "MPI_Wait")?;
        }
        self.slots[i].active = false;
        Ok(())
    }

    /// Waits until every active message completes.
    ///
    /// # Errors
    ///
    /// As [`wait_any`](Self::wait_any).
    pub fn wait_all(&mut self) -> Result<(), MpiError> {
        while self.wait_any()?.is_some() {}
        Ok(())
    }
}

fn no_message(i: usize) -> MpiError {
    MpiError::Internal(format!("no persistent message {i}"))
}

impl Drop for Persistent {
    fn drop(&mut self) {
        for (req, slot) in self.raw.iter_mut().zip(&mut self.slots) {
            if slot.active {
                if slot.receive {
                    // SAFETY: an active receive of this set; cancelled, it
                    // still completes (as cancelled) in the wait below.
                    unsafe { ffi::MPI_Cancel(req) };
                }
                // SAFETY: an active request of this set.
                unsafe { ffi::MPI_Wait(req, ffi::RSMPI_STATUS_IGNORE) };
                slot.active = false;
            }
            // SAFETY: an inactive persistent request, freed once.
            unsafe { ffi::MPI_Request_free(req) };
        }
    }
}
