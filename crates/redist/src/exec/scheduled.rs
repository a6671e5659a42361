//! `scheduled`: one `MPI_Sendrecv` per step of the plan's contention-free
//! schedule (seeds 001 and 002): in every step each rank sends at most one
//! message and receives at most one, so no rank is swamped, and the buffers
//! are no larger than the largest message.

use super::mpi_raw::{self, Part, PartMut};
use super::program::Transfer;
use super::route::{PieceIter, Pieces, Routes, Send};
use super::{Traffic, DATA};
use crate::{Plan, RedistError};
use dist_array::{DistArray, Element};
use mpi::topology::SimpleCommunicator;

/// The `scheduled` exchange of one redistribution.
pub(crate) struct Scheduled<T> {
    /// Per schedule step: the index of this rank's send and receive, if any.
    steps: Vec<(Option<usize>, Option<usize>)>,
    routes: Routes,
    send_buf: Vec<T>,
    recv_buf: Vec<T>,
}

impl<T: Element> Scheduled<T> {
    /// The steps of `plan`'s schedule that concern rank `me`.
    pub fn new(plan: &Plan, traffic: &Traffic, routes: Routes, me: usize) -> Scheduled<T> {
        let program = &traffic.program;
        let steps = plan
            .schedule()
            .steps()
            .iter()
            .map(|step| {
                let mut mine = (None, None);
                for &i in step {
                    let m = plan.messages()[i];
                    if m.from == me {
                        mine.0 = program.sends.iter().position(|t| t.peer == m.to);
                    }
                    if m.to == me {
                        mine.1 = program.recvs.iter().position(|t| t.peer == m.from);
                    }
                }
                mine
            })
            .collect();
        Scheduled {
            steps,
            routes,
            send_buf: Vec::new(),
            recv_buf: Vec::new(),
        }
    }

    /// Bytes of the steps and routes this exchange holds (buffers aside).
    pub fn heap_bytes(&self) -> usize {
        self.steps.capacity() * std::mem::size_of::<(Option<usize>, Option<usize>)>()
            + self.routes.heap_bytes()
    }

    /// One execution: `src` into `dst`. Collective.
    pub fn run(
        &mut self,
        traffic: &Traffic,
        comm: &SimpleCommunicator,
        src: &DistArray<T>,
        dst: &mut DistArray<T>,
    ) -> Result<(), RedistError> {
        let program = &traffic.program;
        let packed_send = (0..program.sends.len())
            .filter(|&i| matches!(self.routes.send[i], Send::Packed(_)))
            .map(|i| program.sends[i].len)
            .max()
            .unwrap_or(0);
        let packed_recv = (0..program.recvs.len())
            .filter(|&i| self.routes.recv[i].typed.is_none())
            .map(|i| program.recvs[i].len)
            .max()
            .unwrap_or(0);
        super::ensure_len(&mut self.send_buf, packed_send);
        super::ensure_len(&mut self.recv_buf, packed_recv);
        let src = src.local_slice();
        let out = dst.local_slice_mut();
        // The local part is copied in one pass with the first packed send.
        let first = self.steps.iter().find_map(|&(s, _)| s);
        let first_packed = first.filter(|&i| matches!(self.routes.send[i], Send::Packed(_)));
        let first_send = first_packed.map(|i| (&program.sends[i], 0));
        traffic.copy_local_and_pack(src, out, &mut self.send_buf, first_send.into_iter());
        for &(s, r) in &self.steps {
            let send = s.map(|i| (&program.sends[i], &self.routes.send[i]));
            let recv = r.map(|i| (&program.recvs[i], &self.routes.recv[i]));
            if let (Some((t, Send::Packed(_))), false) = (send, s == first_packed) {
                t.pack(src, &mut self.send_buf[..t.len]);
            }
            // The pieces of each side, round by round.
            let chunks = |t: &Transfer, pieces: &Pieces| match *pieces {
                Pieces::Chunks(size) => PieceIter::chunks(t.len, size),
                // Never chosen outside `async`; one message all the same.
                Pieces::SourceRuns { .. } => PieceIter::whole(t.len),
            };
            let mut send_pieces = send.map(|(t, route)| match route {
                Send::Packed(pieces) => chunks(t, pieces),
                _ => PieceIter::whole(t.len),
            });
            let mut recv_pieces = recv.map(|(t, route)| match route.typed {
                Some(_) => PieceIter::whole(t.len),
                None => chunks(t, &route.pieces),
            });
            loop {
                let sp = send_pieces.as_mut().and_then(Iterator::next);
                let rp = recv_pieces.as_mut().and_then(Iterator::next);
                if sp.is_none() && rp.is_none() {
                    break;
                }
                let send_part = sp.zip(send).map(|((o, n), (t, route))| {
                    let part = match route {
                        Send::Typed(ty) => Part::Typed(src, ty),
                        _ => Part::Elements(&self.send_buf[o..o + n]),
                    };
                    (part, t.peer)
                });
                let recv_part = rp.zip(recv).map(|((o, n), (t, route))| {
                    let part = match &route.typed {
                        Some(ty) => PartMut::Typed(&mut *out, ty),
                        None => PartMut::Elements(&mut self.recv_buf[o..o + n]),
                    };
                    (part, t.peer)
                });
                mpi_raw::sendrecv(comm, send_part, recv_part, DATA, &traffic.elem)?;
            }
            if let Some((t, route)) = recv {
                if route.typed.is_none() {
                    t.unpack(&self.recv_buf[..t.len], out);
                }
            }
        }
        Ok(())
    }
}
