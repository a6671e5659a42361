//! `scheduled`: one `MPI_Sendrecv` per step of the contention-free
//! schedule (seeds 001 and 002): in every step each rank sends at most one
//! message and receives at most one, so no rank is swamped, and the buffers
//! are no larger than the largest message. A rank goes through its own
//! steps only, in order: O(its messages), whatever the number of steps.

use super::exchange::Exchange;
use super::messages::{grow, RankMessages, DATA};
use super::route::{Chunks, Cut, Recv, Routes, Send};
use super::stacked::Stacked;
use crate::error::RedistError;
use dist_array::{DistArray, Element};
use mpi::topology::SimpleCommunicator;
use mpi_extras::buffers::{RecvBuf, SendBuf};
use mpi_extras::collective::{self, WithPeer};
use mpi_extras::Datatype;
use redist_plan::kernel::Store;
use redist_plan::plan::RankPlan;
use redist_plan::program::MessageProgram;

/// The `scheduled` exchange of one redistribution.
pub(crate) struct Scheduled<T> {
    /// This rank's steps, in order.
    steps: Vec<Step>,
    routes: Routes,
    send_buf: Vec<T>,
    recv_buf: Vec<T>,
    stacked: Stacked<T>,
}

/// What this rank does in one step of the schedule: the index of its send
/// and of its receive in its plan's lists, either absent when it has none
/// in that step.
#[derive(Debug, Clone, Copy)]
struct Step {
    send: Option<usize>,
    recv: Option<usize>,
}

impl<T: Element> Scheduled<T> {
    /// The steps of the rank whose plan is `plan`, in order: per step the
    /// index of its send and of its receive in that step, if any.
    pub fn new(plan: &RankPlan, routes: Routes) -> Scheduled<T> {
        let mut entries: Vec<(usize, Option<usize>, Option<usize>)> = (plan.sends().iter())
            .enumerate()
            .map(|(i, l)| (l.step, Some(i), None))
            .chain(
                plan.recvs()
                    .iter()
                    .enumerate()
                    .map(|(j, l)| (l.step, None, Some(j))),
            )
            .collect();
        entries.sort_by_key(|e| e.0);
        let mut steps: Vec<Step> = Vec::with_capacity(entries.len());
        let mut last = None;
        for (step, send, recv) in entries {
            match steps.last_mut() {
                Some(mine) if last == Some(step) => {
                    mine.send = mine.send.or(send);
                    mine.recv = mine.recv.or(recv);
                }
                _ => steps.push(Step { send, recv }),
            }
            last = Some(step);
        }
        Scheduled {
            steps,
            routes,
            send_buf: Vec::new(),
            recv_buf: Vec::new(),
            stacked: Stacked::default(),
        }
    }

    /// Messages this rank sends, and receives, described by a derived
    /// datatype.
    pub fn typed(&self) -> (usize, usize) {
        self.routes.typed()
    }

    /// Grows the buffers to the longest packed send and receive.
    fn grow_buffers(&mut self, messages: &RankMessages) {
        let routes = &self.routes;
        let packed_send = (messages.sends().iter().zip(&routes.send))
            .filter(|(_, route)| matches!(route, Send::Packed(_)))
            .map(|(t, _)| t.len)
            .max()
            .unwrap_or(0);
        let packed_recv = (messages.recvs().iter().zip(&routes.recv))
            .filter(|(_, route)| route.typed.is_none())
            .map(|(t, _)| t.len)
            .max()
            .unwrap_or(0);
        grow(&mut self.send_buf, packed_send);
        grow(&mut self.recv_buf, packed_recv);
    }
}

/// This rank's send in one step of the schedule.
#[derive(Clone, Copy)]
struct StepSend<'a, T> {
    /// The message sent.
    message: &'a MessageProgram,
    /// How it travels.
    route: &'a Send,
    /// What it is read from: the packed buffer, or source storage for a
    /// typed route.
    from: &'a [T],
}

/// This rank's receive in one step of the schedule.
#[derive(Clone, Copy)]
struct StepRecv<'a> {
    /// The message received.
    message: &'a MessageProgram,
    /// How it travels.
    route: &'a Recv,
}

/// One step of the schedule: this rank's send and receive (either may be
/// absent), piece by piece in `MPI_Sendrecv`s, then the unpacking of what
/// arrived in `recv_buf`.
fn exchange_step<T: Element, S: Store<T>>(
    comm: &SimpleCommunicator,
    elem: &Datatype,
    send: Option<StepSend<'_, T>>,
    recv: Option<StepRecv<'_>>,
    out: &mut [T],
    recv_buf: &mut [T],
    store: S,
) -> Result<(), RedistError> {
    let mut send_pieces = send.map(|s| match s.route {
        Send::Packed(cut) => chunks(s.message, cut),
        _ => Chunks::whole(s.message.len),
    });
    let mut recv_pieces = recv.map(|r| match r.route.typed {
        Some(_) => Chunks::whole(r.message.len),
        None => chunks(r.message, &r.route.cut),
    });
    loop {
        let sp = send_pieces.as_mut().and_then(Iterator::next);
        let rp = recv_pieces.as_mut().and_then(Iterator::next);
        if sp.is_none() && rp.is_none() {
            break;
        }
        let outgoing = sp.zip(send).map(|((o, n), s)| {
            let buf = match s.route {
                Send::Typed(ty) => SendBuf::Typed(s.from, ty),
                _ => SendBuf::Elements(&s.from[o..o + n]),
            };
            WithPeer {
                buf,
                peer: s.message.peer,
            }
        });
        let incoming = rp.zip(recv).map(|((o, n), r)| {
            let buf = match &r.route.typed {
                Some(ty) => RecvBuf::Typed(&mut *out, ty),
                None => RecvBuf::Elements(&mut recv_buf[o..o + n]),
            };
            WithPeer {
                buf,
                peer: r.message.peer,
            }
        });
        collective::sendrecv(comm, outgoing, incoming, DATA, elem)?;
    }
    if let Some(StepRecv { message: t, route }) = recv {
        if route.typed.is_none() {
            t.unpack_with(t.whole(), &recv_buf[..t.len], out, store);
        }
    }
    Ok(())
}

/// The pieces a message cut as `cut` travels in, here: `scheduled` never
/// sends run by run, so a message of source runs goes whole.
fn chunks(t: &MessageProgram, cut: &Cut) -> Chunks {
    match *cut {
        Cut::Chunks(size) => Chunks::of(t.len, size),
        Cut::SourceRuns { .. } => Chunks::whole(t.len),
    }
}

impl<T: Element> Exchange<T> for Scheduled<T> {
    /// One array: `src` into `dst`, stored through `store`. Collective.
    fn run_one<S: Store<T>>(
        &mut self,
        messages: &RankMessages,
        comm: &SimpleCommunicator,
        src: &DistArray<T>,
        dst: &mut DistArray<T>,
        store: S,
    ) -> Result<(), RedistError> {
        self.grow_buffers(messages);
        let (sends, recvs) = (messages.sends(), messages.recvs());
        let src = src.local_slice();
        let out = dst.local_slice_mut();
        // The kept elements are copied in one pass with the first packed send.
        let first = self.steps.iter().find_map(|s| s.send);
        let first_packed = first.filter(|&i| matches!(self.routes.send[i], Send::Packed(_)));
        let first_send = first_packed.map(|i| (&sends[i], 0));
        messages.copy_local_and_pack(src, out, &mut self.send_buf, first_send.into_iter(), store);
        for step in &self.steps {
            let send = step.send.map(|i| (&sends[i], &self.routes.send[i]));
            if let (Some((t, Send::Packed(_))), false) = (send, step.send == first_packed) {
                t.pack(src, t.whole(), &mut self.send_buf[..t.len]);
            }
            let send = send.map(|(message, route)| StepSend {
                message,
                route,
                from: match route {
                    Send::Typed(_) => src,
                    _ => &self.send_buf[..],
                },
            });
            let recv = (step.recv).map(|i| StepRecv {
                message: &recvs[i],
                route: &self.routes.recv[i],
            });
            exchange_step(
                comm,
                &messages.elem,
                send,
                recv,
                out,
                &mut self.recv_buf,
                store,
            )?;
        }
        Ok(())
    }

    fn stacked(&mut self) -> &mut Stacked<T> {
        &mut self.stacked
    }

    /// Bytes of the steps and routes this exchange holds (buffers aside).
    fn heap_bytes(&self) -> usize {
        self.steps.capacity() * std::mem::size_of::<Step>()
            + self.routes.heap_bytes()
            + self.stacked.heap_bytes()
    }
}
