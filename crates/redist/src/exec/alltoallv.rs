//! `alltoallv`: pack every outgoing message into one buffer, exchange with
//! one `MPI_Alltoallv`, unpack. When every rank describes every message by
//! derived datatypes over its local storage, one `MPI_Alltoallw` moves the
//! data with no buffer at all.

use super::exchange::Exchange;
use super::messages::{grow, RankMessages};
use super::route::{Routes, Send};
use super::stacked::Stacked;
use crate::error::RedistError;
use dist_array::{DistArray, Element};
use mpi::topology::SimpleCommunicator;
use mpi::Count;
use mpi_extras::collective::{self, Alltoallw, Counts};
use mpi_extras::count;
use redist_plan::kernel::Store;

/// The `alltoallv` exchange of one redistribution.
pub(crate) struct Alltoallv<T> {
    way: Way,
    send_buf: Vec<T>,
    recv_buf: Vec<T>,
    stacked: Stacked<T>,
}

/// Packed buffers and `MPI_Alltoallv`, or datatypes and `MPI_Alltoallw`.
enum Way {
    Packed {
        scounts: Vec<Count>,
        sdispls: Vec<Count>,
        rcounts: Vec<Count>,
        rdispls: Vec<Count>,
    },
    Typed(Alltoallw),
}

impl<T: Element> Alltoallv<T> {
    /// The exchange over a communicator of `size` ranks; `typed` when every
    /// rank routes every message by datatypes (agreed on by all ranks).
    pub fn new(
        messages: &RankMessages,
        routes: Routes,
        size: usize,
        typed: bool,
    ) -> Result<Alltoallv<T>, RedistError> {
        let way = if typed {
            let sends = messages
                .sends()
                .iter()
                .zip(routes.send)
                .filter_map(|(t, s)| match s {
                    Send::Typed(ty) => Some((t.peer, ty)),
                    _ => None,
                })
                .collect();
            let recvs = messages
                .recvs()
                .iter()
                .zip(routes.recv)
                .filter_map(|(t, r)| r.typed.map(|ty| (t.peer, ty)))
                .collect();
            Way::Typed(Alltoallw::new(size, sends, recvs, &messages.elem)?)
        } else {
            let mut scounts = vec![0; size];
            let mut sdispls = vec![0; size];
            let mut rcounts = vec![0; size];
            let mut rdispls = vec![0; size];
            for (t, &(o, n)) in messages.sends().iter().zip(&messages.send_slots) {
                scounts[t.peer] = count(n, "elements one rank sends in one MPI_Alltoallv")?;
                sdispls[t.peer] = count(o, "elements one rank sends in one MPI_Alltoallv")?;
            }
            for (t, &(o, n)) in messages.recvs().iter().zip(&messages.recv_slots) {
                rcounts[t.peer] = count(n, "elements one rank receives in one MPI_Alltoallv")?;
                rdispls[t.peer] = count(o, "elements one rank receives in one MPI_Alltoallv")?;
            }
            Way::Packed {
                scounts,
                sdispls,
                rcounts,
                rdispls,
            }
        };
        Ok(Alltoallv {
            way,
            send_buf: Vec::new(),
            recv_buf: Vec::new(),
            stacked: Stacked::default(),
        })
    }
}

impl<T: Element> Exchange<T> for Alltoallv<T> {
    /// One array: `src` into `dst`, stored through `store`. Collective.
    fn run_one<S: Store<T>>(
        &mut self,
        messages: &RankMessages,
        comm: &SimpleCommunicator,
        src: &DistArray<T>,
        dst: &mut DistArray<T>,
        store: S,
    ) -> Result<(), RedistError> {
        let src = src.local_slice();
        let out = dst.local_slice_mut();
        match &self.way {
            Way::Typed(w) => {
                messages.copy_local(src, out, store);
                Ok(w.run(comm, src, out)?)
            }
            Way::Packed {
                scounts,
                sdispls,
                rcounts,
                rdispls,
            } => {
                grow(&mut self.send_buf, messages.send_total);
                grow(&mut self.recv_buf, messages.recv_total);
                let slots = messages.sends().iter().zip(&messages.send_slots);
                let packs = slots.map(|(t, &(o, _))| (t, o));
                messages.copy_local_and_pack(src, out, &mut self.send_buf, packs, store);
                let counts = Counts {
                    send: scounts,
                    send_at: sdispls,
                    recv: rcounts,
                    recv_at: rdispls,
                };
                let (send, recv) = (&self.send_buf, &mut self.recv_buf);
                collective::alltoallv(comm, send, recv, counts, &messages.elem)?;
                for (t, &(o, n)) in messages.recvs().iter().zip(&messages.recv_slots) {
                    t.unpack_with(t.whole(), &self.recv_buf[o..o + n], out, store);
                }
                Ok(())
            }
        }
    }

    fn stacked(&mut self) -> &mut Stacked<T> {
        &mut self.stacked
    }

    /// Bytes of the counts and displacements this exchange holds (buffers
    /// and MPI's datatypes aside).
    fn heap_bytes(&self) -> usize {
        let counts = match &self.way {
            Way::Packed { scounts, .. } => 4 * scounts.capacity() * std::mem::size_of::<Count>(),
            Way::Typed(_) => 0,
        };
        counts + self.stacked.heap_bytes()
    }
}
