//! The persistent messages of one rank's ghost update, made once: per
//! receive and per send, its data message, and between ranks of one node
//! its note and the reader's word ([`protocol`](super::protocol)).

use super::protocol::{DATA, DONE, DONE_BYTES, NOTE, NOTE_BYTES};
use mpi::topology::SimpleCommunicator;
use mpi_extras::persistent::Persistent;
use mpi_extras::MpiError;
use procgrid::Node;
use redist_plan::ghost::RankGhosts;

/// The persistent set's indices of one message with a peer.
#[derive(Debug, Clone, Copy)]
pub(super) struct Wire {
    /// The packed boxes.
    pub data: usize,
    /// The note and the reader's word, when the peer is on this node.
    pub near: Option<(usize, usize)>,
}

/// What a completed request was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Arrival {
    /// Receive `k`'s note.
    Note(usize),
    /// Receive `k`'s boxes.
    Data(usize),
    /// Send `j`'s reader's word.
    Done(usize),
    /// A send went out.
    Sent,
}

/// One rank's persistent messages.
pub(super) struct Wires {
    pub set: Persistent,
    /// Per receive of the part, in its order.
    pub recvs: Vec<Wire>,
    /// Per send of the part, in its order.
    pub sends: Vec<Wire>,
    /// What each request of the set is.
    arrivals: Vec<Arrival>,
}

impl Wires {
    /// The messages of `part` over a duplicate of `comm` (collective),
    /// with notes for the peers on `node` when `near` allows them, for
    /// elements of `elem` bytes.
    pub fn new(
        comm: &SimpleCommunicator,
        part: &RankGhosts,
        node: &Node,
        near: bool,
        elem: usize,
    ) -> Result<Wires, MpiError> {
        let mut set = Persistent::new(comm);
        let mut arrivals = Vec::new();
        let mut recvs = Vec::with_capacity(part.recvs().len());
        for m in part.recvs() {
            let data = set.recv(m.peer, DATA, m.cells * elem)?;
            arrivals.push(Arrival::Data(recvs.len()));
            let near = if near && node.contains(m.peer) {
                let note = set.recv(m.peer, NOTE, NOTE_BYTES)?;
                arrivals.push(Arrival::Note(recvs.len()));
                let done = set.send(m.peer, DONE, DONE_BYTES)?;
                arrivals.push(Arrival::Sent);
                Some((note, done))
            } else {
                None
            };
            recvs.push(Wire { data, near });
        }
        let mut sends = Vec::with_capacity(part.sends().len());
        for m in part.sends() {
            let data = set.send(m.peer, DATA, m.cells * elem)?;
            arrivals.push(Arrival::Sent);
            let near = if near && node.contains(m.peer) {
                let note = set.send(m.peer, NOTE, NOTE_BYTES)?;
                arrivals.push(Arrival::Sent);
                let done = set.recv(m.peer, DONE, DONE_BYTES)?;
                arrivals.push(Arrival::Done(sends.len()));
                Some((note, done))
            } else {
                None
            };
            sends.push(Wire { data, near });
        }
        Ok(Wires {
            set,
            recvs,
            sends,
            arrivals,
        })
    }

    /// Waits for the next request to complete: what it was, `None` when
    /// nothing is in flight.
    pub fn next(&mut self) -> Result<Option<Arrival>, MpiError> {
        Ok(self.set.wait_any()?.map(|i| self.arrivals[i]))
    }

    /// Whether any message is with a peer on this node.
    pub fn any_near(&self) -> bool {
        self.recvs
            .iter()
            .chain(&self.sends)
            .any(|w| w.near.is_some())
    }
}
