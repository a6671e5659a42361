//! `async`: post every receive, send each message as soon as it is packed
//! (or straight from source storage), unpack each message as it arrives —
//! the asynchronous scheme of seed 000 (Chung, Hsu and Bai), where a rank
//! never waits for a message it could already be unpacking.
//!
//! Between ranks of one node whose source storage is shared, a message
//! skips MPI: the sender sends a note saying how to map its storage, the
//! receiver copies the message straight from it and answers "done"
//! ([`super::node_direct`]).

use super::mpi_raw::{Event, Part, RequestStore, Requests};
use super::node_direct::NodeDirect;
use super::route::{PieceIter, Routes, Send};
use super::{Traffic, DATA, DONE, NOTE};
use crate::RedistError;
use dist_array::{DistArray, Element};
use mpi::topology::SimpleCommunicator;

/// The `async` exchange of one redistribution, with what it keeps between
/// executions.
pub(crate) struct Async<T> {
    routes: Routes,
    node: Option<NodeDirect>,
    requests: RequestStore,
    send_buf: Vec<T>,
    recv_buf: Vec<T>,
}

impl<T: Element> Async<T> {
    /// The exchange of messages routed as `routes`, reading shared sources
    /// directly where `node` allows it.
    pub fn new(routes: Routes, node: Option<NodeDirect>) -> Async<T> {
        Async {
            routes,
            node,
            requests: RequestStore::default(),
            send_buf: Vec::new(),
            recv_buf: Vec::new(),
        }
    }

    /// Whether receivers read shared sources directly.
    pub fn node_direct(&self) -> bool {
        self.node.is_some()
    }

    /// One execution: `src` into `dst`. Collective.
    pub fn run(
        &mut self,
        traffic: &Traffic,
        comm: &SimpleCommunicator,
        src: &DistArray<T>,
        dst: &mut DistArray<T>,
    ) -> Result<(), RedistError> {
        let Async {
            routes,
            node,
            requests,
            send_buf,
            recv_buf,
        } = self;
        let source = src.shared_storage();
        let direct_send = |i: usize| source.is_some() && node.as_ref().is_some_and(|n| n.sends[i]);
        let packed_sends = routes
            .send
            .iter()
            .enumerate()
            .any(|(i, r)| matches!(r, Send::Packed) && !direct_send(i));
        super::ensure_len(send_buf, if packed_sends { traffic.send_total } else { 0 });
        super::ensure_len(recv_buf, traffic.recv_total);
        let src = src.local_slice();
        let program = &traffic.program;
        let mut reqs = requests.list(
            comm,
            &traffic.elem,
            &mut recv_buf[..],
            &traffic.recv_slots,
            program.sends.len(),
        )?;
        // Receives: from ranks of this node, first the sender's note.
        for (i, t) in program.recvs.iter().enumerate() {
            if node.as_ref().is_some_and(|n| n.recvs[i]) {
                reqs.irecv_note(i, t.peer, NOTE)?;
            } else {
                post_data(&mut reqs, routes, traffic, i)?;
            }
        }
        let mut rest: &mut [T] = &mut send_buf[..];
        for (i, t) in program.sends.iter().enumerate() {
            if node.as_ref().is_some_and(|n| n.sends[i]) {
                reqs.isend_note(i, NodeDirect::note_for(source.as_ref()), t.peer, NOTE)?;
                if source.is_some() {
                    // The receiver reads the source itself; wait for its "done".
                    reqs.irecv_empty(t.peer, DONE)?;
                    continue;
                }
            }
            match &routes.send[i] {
                Send::Typed(ty) => reqs.isend(Part::Typed(src, ty), t.peer, DATA)?,
                Send::SourceRuns(runs) => {
                    for &(off, len) in runs {
                        reqs.isend(Part::Elements(&src[off..off + len]), t.peer, DATA)?;
                    }
                }
                Send::Packed => {
                    let (slot, r) = std::mem::take(&mut rest).split_at_mut(t.len);
                    rest = r;
                    t.pack(src, slot);
                    let slot: &[T] = slot;
                    for (o, n) in PieceIter::chunks(t.len, traffic.max_message) {
                        reqs.isend(Part::Elements(&slot[o..o + n]), t.peer, DATA)?;
                    }
                }
            }
        }
        let out = dst.local_slice_mut();
        traffic.copy_local(src, out);
        while let Some(event) = reqs.wait_any()? {
            match event {
                Event::Message(i) => program.recvs[i].unpack(reqs.message(i)?, out),
                Event::Note(i) => {
                    let t = &program.recvs[i];
                    let n = node.as_mut().ok_or_else(|| {
                        RedistError::Internal("a note without node-direct copies".to_string())
                    })?;
                    let Some(storage) = n.storage_in(reqs.note(i), t.peer) else {
                        // The sender's source is private: its data follows as messages.
                        post_data(&mut reqs, routes, traffic, i)?;
                        continue;
                    };
                    let peer = match n.cache.get(t.peer, &storage) {
                        Ok(p) => p,
                        // Checked at construction; failing now means the sender's
                        // memory is gone, and no rank could go on consistently.
                        Err(e) => panic!("mapping the storage of rank {} failed: {e}", t.peer),
                    };
                    // SAFETY: the sender's source storage holds `T`s and stays
                    // untouched until this rank's "done".
                    t.copy_local(unsafe { peer.slice::<T>() }, out);
                    reqs.isend_empty(t.peer, DONE)?;
                }
                Event::Other => {}
            }
        }
        Ok(())
    }
}

/// Posts the receives of message `i`'s data, piece by piece as the sender
/// cuts it.
fn post_data<T: Element>(
    reqs: &mut Requests<'_, '_, T>,
    routes: &Routes,
    traffic: &Traffic,
    i: usize,
) -> Result<(), RedistError> {
    let t = &traffic.program.recvs[i];
    for (o, n) in routes.recv[i].pieces.of(t.len, traffic.max_message) {
        reqs.irecv_piece(i, o, n, t.peer, DATA)?;
    }
    Ok(())
}
