//! `async`: post every receive, send each message as soon as it is packed
//! (or straight from source storage), unpack each message as it arrives —
//! the asynchronous scheme of seed 000 (Chung, Hsu and Bai), where a rank
//! never waits for a message it could already be unpacking. A packed
//! message travels in pieces of whole outermost indices: each piece is sent
//! as soon as it is packed and unpacked as soon as it arrives, so packing,
//! transfer and unpacking overlap.
//!
//! Between ranks of one node, a message may skip MPI (`node_direct.rs`),
//! written by its sender into the receiver's target or read by the
//! receiver from the sender's source. An execution then runs in two
//! rounds:
//!
//! 1. every message between ranks of different nodes moves as above.
//!    Within the node, notes go both ways: the sender's says whether its
//!    source storage is shared and how to map it; the receiver's whether
//!    it lends its target storage — shared, and the stretches it receives
//!    long enough for writing to pay (`writes.rs`).
//!    - Into a lent target, the sender writes: once every receiver's note
//!      is in, it maps the lent targets and copies all those messages,
//!      and its kept elements where its own target is lent too, in one
//!      pass over its source in source order with streaming stores,
//!      portion by portion; then it tells each receiver "written" (or
//!      "send it" where it could not map the target). The receiver waits
//!      for those words before returning.
//!    - Into a private target, the receiver reads: it maps the sender's
//!      shared source, copies the message straight from it and answers
//!      "copied", or answers "send it" when it cannot map it; the sender
//!      waits for the answer before returning, so its array is not written
//!      while being read. Once every note is in, the kept elements and all
//!      mapped messages are copied together, a fraction of each per step
//!      (about 1 MiB of target), so target stretches that several messages
//!      fill are fetched into cache once, not once per message.
//! 2. messages from private sources into private targets, and those a
//!    writer or reader answered "send it", move as ordinary messages. Only
//!    the ranks concerned take part, and they know it from round 1, so
//!    nobody waits for anybody else.
//!
//! The receive buffer holds only what arrives as messages: receives that
//! are all copied straight from the sender need none.

mod batch;
mod controls;
mod notes;
mod post;
mod trial;
mod writes;

use super::arrays::Arrays;
use super::exchange::Exchange;
use super::messages::{grow, RankMessages};
use super::node_direct::{Near, NodeCopies, NodeDirect};
use super::route::Routes;
use super::stacked::Stacked;
use crate::error::RedistError;
use batch::BatchNotes;
use controls::{Arrived, ANSWER, WRITTEN};
use dist_array::{DistArray, Element, SharedStorage};
use mpi::topology::SimpleCommunicator;
use mpi_extras::requests::{Event, RequestStore, Requests};
use post::{Round, Target};
use redist_plan::kernel::Store;
use redist_plan::program::MergeScratch;
use trial::{Trial, Verdict};

/// The receiver's answer: it copied the message itself.
const COPIED: u64 = 0;
/// The receiver's answer: send the message as MPI messages.
const SEND_IT: u64 = 1;

/// The `async` exchange of one redistribution, with what it keeps between
/// executions.
pub(crate) struct Async<T> {
    routes: Routes,
    node: Option<NodeDirect>,
    requests: RequestStore,
    send_buf: Vec<T>,
    recv_buf: Vec<T>,
    /// Per send / receive: whether it moves in round 2 of this execution.
    late_sends: Vec<bool>,
    late_recvs: Vec<bool>,
    /// Receive slots of the current round.
    slots: Vec<(usize, usize)>,
    /// Receives of this execution copied straight from a mapped peer.
    mapped: Vec<usize>,
    /// Sends of this execution written straight into a mapped target.
    written: Vec<usize>,
    /// Whether this rank lends its target to its node's writers, once the
    /// first execution has found out (`writes::lend_pays`).
    lend_pays: Option<bool>,
    /// Whether the last execution lent the target.
    lent: bool,
    /// Per send: pieces packed and sent so far when sends are packed
    /// together with the local copy.
    sent_pieces: Vec<usize>,
    /// The notes of the last batch (`asynchronous/batch.rs`).
    batch_notes: BatchNotes,
    /// The trial of other routes, while it lasts (`trial.rs`).
    trial: Option<Trial>,
    /// Buffers of stacked messages.
    stacked: Stacked<T>,
    /// Room for merging the kept elements' and mapped messages' lines
    /// ([`MergeScratch`]).
    merge: MergeScratch,
}

impl<T: Element> Async<T> {
    /// The exchange of messages routed as `routes`, reading shared sources
    /// directly where `node` allows it, and trying the `other` routes on the
    /// next executions where there are any (every rank alike: a trial is
    /// collective).
    pub fn new(routes: Routes, node: Option<NodeDirect>, other: Option<Routes>) -> Async<T> {
        Async {
            routes,
            node,
            requests: RequestStore::default(),
            send_buf: Vec::new(),
            recv_buf: Vec::new(),
            late_sends: Vec::new(),
            late_recvs: Vec::new(),
            slots: Vec::new(),
            mapped: Vec::new(),
            written: Vec::new(),
            lend_pays: None,
            lent: false,
            sent_pieces: Vec::new(),
            batch_notes: BatchNotes::default(),
            trial: other.map(Trial::new),
            stacked: Stacked::default(),
            merge: MergeScratch::default(),
        }
    }

    /// Whether the executions are still trying two ways of routing the
    /// messages (`trial.rs`).
    pub fn trying_routes(&self) -> bool {
        self.trial.is_some()
    }

    /// Messages this rank sends, and receives, described by a derived
    /// datatype, with the routes in use.
    pub fn typed(&self) -> (usize, usize) {
        self.routes.typed()
    }

    /// Messages this rank sends run by run from source storage, with the
    /// routes in use.
    pub fn sent_from_source(&self) -> usize {
        self.routes.sent_from_source()
    }

    /// Whether receivers read shared sources directly.
    pub fn node_direct(&self) -> bool {
        self.node.is_some()
    }

    /// How the last single execution's messages within the node moved.
    pub fn node_copies(&self) -> NodeCopies {
        NodeCopies {
            written: self.written.len(),
            read: self.mapped.len(),
            lent: self.lent,
        }
    }

    /// One execution with the routes in use.
    fn run_routed<S: Store<T>>(
        &mut self,
        messages: &RankMessages,
        comm: &SimpleCommunicator,
        src: &DistArray<T>,
        dst: &mut DistArray<T>,
        store: S,
    ) -> Result<(), RedistError> {
        let shared = src.shared_storage();
        // The target is lent to the node's writers where its storage lets
        // them map it and their stretches are long enough.
        let near = self.node.as_ref().map(|n| &n.near);
        let pays = *(self.lend_pays)
            .get_or_insert_with(|| near.is_some_and(|near| writes::lend_pays::<T>(messages, near)));
        let lent = dst.shared_storage().filter(|_| pays);
        self.lent = lent.is_some();
        let (src, out) = (src.local_slice(), dst.local_slice_mut());
        let storages = Storages {
            source: shared.as_ref(),
            target: lent.as_ref(),
        };
        self.round_one(messages, comm, storages, src, out, store)?;
        if self.late_sends.contains(&true) || self.late_recvs.contains(&true) {
            self.round_two(messages, comm, src, out, store)?;
        }
        Ok(())
    }

    /// Round 1: messages across nodes move; within the node, notes both
    /// ways, then the messages into lent targets written by their senders
    /// (with the local copy where this rank's target is lent), those from
    /// shared sources into private targets read by their receivers (with
    /// the local copy there). In four phases: post the receives and notes,
    /// send (with the local copy where it fuses with packing), then drain:
    /// each arrival unpacked or answered as it comes ([`RoundOne::on`]).
    fn round_one<S: Store<T>>(
        &mut self,
        messages: &RankMessages,
        comm: &SimpleCommunicator,
        storages: Storages<'_>,
        src: &[T],
        out: &mut [T],
        store: S,
    ) -> Result<(), RedistError> {
        let Async {
            routes,
            node,
            requests,
            send_buf,
            recv_buf,
            late_sends,
            late_recvs,
            slots,
            mapped,
            written,
            sent_pieces,
            merge,
            ..
        } = self;
        let (near, reader, writer) = match node {
            Some(n) => (Some(&n.near), Some(&mut n.reader), Some(&mut n.writer)),
            None => (None, None, None),
        };
        let lent = storages.target.filter(|_| near.is_some());
        let round = Round {
            messages,
            routes,
            src,
            near,
            store,
        };
        let (sends, recvs) = (messages.sends().len(), messages.recvs().len());
        reset(late_sends, sends);
        reset(late_recvs, recvs);
        grow(send_buf, round.packed_room(|i| !round.near_send(i)));
        round.set_slots(slots, |i| !round.near_recv(i));
        grow(recv_buf, slots.last().map_or(0, |&(o, n)| o + n));
        let controls = controls::spaces(sends, recvs);
        let mut reqs = requests.list(comm, &messages.elem, &mut recv_buf[..], slots, &controls)?;
        round.post_receives_and_notes(&mut reqs, Target::of(out), lent)?;
        let kept = Kept::of(lent.is_some(), near);
        let fuse = kept == Kept::Fused;
        round.send_round_one(&mut reqs, send_buf, storages.source, fuse, out, sent_pieces)?;
        let notes_left = near.filter(|_| lent.is_none()).map_or(0, Near::recv_count);
        let targets_left = near.map_or(0, Near::send_count);
        let shared = storages.source.is_some();
        let with_writes = kept == Kept::WithWrites;
        let mut on = RoundOne {
            lent: lent.is_some(),
            reading: reader.map(|r| notes::Reading::new(r, mapped, notes_left)),
            writing: writer
                .map(|w| writes::Writing::new(w, written, targets_left, with_writes, shared)),
            late_sends,
            late_recvs,
            merge,
        };
        while let Some(event) = reqs.wait_any()? {
            on.on(event, &mut reqs, &round, out)?;
        }
        Ok(())
    }

    /// Round 2: what moves as messages after all (private sources, and
    /// those whose receiver asked for them), between the ranks that know it
    /// from round 1.
    fn round_two<S: Store<T>>(
        &mut self,
        messages: &RankMessages,
        comm: &SimpleCommunicator,
        src: &[T],
        out: &mut [T],
        store: S,
    ) -> Result<(), RedistError> {
        let Async {
            routes,
            requests,
            send_buf,
            recv_buf,
            late_sends,
            late_recvs,
            slots,
            ..
        } = self;
        let round = Round {
            messages,
            routes,
            src,
            near: None,
            store,
        };
        grow(send_buf, round.packed_room(|i| late_sends[i]));
        round.set_slots(slots, |i| late_recvs[i]);
        grow(recv_buf, slots.last().map_or(0, |&(o, n)| o + n));
        let target = Target::of(out);
        // Round 2 moves data only: no control messages.
        let mut reqs = requests.list(comm, &messages.elem, &mut recv_buf[..], slots, &[])?;
        round.post_receives(&mut reqs, target, |i| late_recvs[i])?;
        let mut rest: &mut [T] = &mut send_buf[..];
        round.send(&mut reqs, &mut rest, |i| late_sends[i])?;
        while let Some(event) = reqs.wait_any()? {
            if let Event::Piece {
                request,
                message,
                last,
            } = event
            {
                round.arrived(&reqs, out, request, message, last)?;
            }
        }
        Ok(())
    }
}

/// What round 1 does as its requests complete: unpack a piece, read a
/// mapped sender's message on its note, write into a lent target on its
/// receiver's note, and mark the messages the answers and written words
/// send to round 2.
struct RoundOne<'r> {
    /// Whether this rank's target is lent to its node's writers (then the
    /// senders' notes about their sources do not matter).
    lent: bool,
    reading: Option<notes::Reading<'r>>,
    writing: Option<writes::Writing<'r>>,
    late_sends: &'r mut Vec<bool>,
    late_recvs: &'r mut Vec<bool>,
    merge: &'r mut MergeScratch,
}

impl RoundOne<'_> {
    /// Handles one completed request.
    fn on<'b, T: Element, S: Store<T>>(
        &mut self,
        event: Event,
        reqs: &mut Requests<'_, 'b, T>,
        round: &Round<'b, T, S>,
        out: &mut [T],
    ) -> Result<(), RedistError> {
        match event {
            Event::Piece {
                request,
                message,
                last,
            } => round.arrived(reqs, out, request, message, last),
            Event::Control { kind, index } => match Arrived::of(kind, index)? {
                Arrived::Note(_) if self.lent => Ok(()),
                Arrived::Note(i) => (self.reading.as_mut().ok_or_else(no_node)?).on_note(
                    reqs,
                    round,
                    i,
                    out,
                    self.late_recvs,
                    self.merge,
                ),
                Arrived::TargetNote(i) => (self.writing.as_mut().ok_or_else(no_node)?).on_note(
                    reqs,
                    round,
                    i,
                    out,
                    self.late_sends,
                    self.merge,
                ),
                Arrived::Answer(i) => {
                    self.late_sends[i] = ANSWER.word(reqs, i) != COPIED;
                    Ok(())
                }
                Arrived::Written(i) => {
                    self.late_recvs[i] = WRITTEN.word(reqs, i) != COPIED;
                    Ok(())
                }
            },
            Event::Sent | Event::Landed(_) => Ok(()),
        }
    }
}

/// The largest of every rank's `times` (seconds), element by element.
/// Collective.
fn slowest(comm: &SimpleCommunicator, times: [f64; 2]) -> [f64; 2] {
    // As whole nanoseconds, so that the ranks' maxima are one all-reduce
    // of integers (an untimed route counts as never done).
    use std::time::Duration;
    let ns = |t: f64| {
        Duration::try_from_secs_f64(t).map_or(u64::MAX, |d| {
            u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
        })
    };
    let mut all = [0u64; 2];
    super::agree::all_reduce_max(comm, &times.map(ns), &mut all);
    all.map(|n| Duration::from_nanos(n).as_secs_f64())
}

/// The shared storages of one execution's arrays: the source's (read by
/// the node's receivers) and the target's where it is lent to the node's
/// writers.
#[derive(Clone, Copy)]
struct Storages<'a> {
    source: Option<&'a SharedStorage>,
    target: Option<&'a SharedStorage>,
}

/// Where round 1 copies the kept elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kept {
    /// With the messages read from the node's senders (a private target).
    WithReads,
    /// With the messages written to the node's receivers.
    WithWrites,
    /// In one pass with the packed sends whose pieces pack on their own.
    Fused,
}

impl Kept {
    /// Where the kept elements go when the target is `lent` (or not) and
    /// `near` tells the messages within the node.
    fn of(lent: bool, near: Option<&Near>) -> Kept {
        match near {
            Some(n) if !lent && n.recv_count() > 0 => Kept::WithReads,
            Some(n) if n.send_count() > 0 => Kept::WithWrites,
            _ => Kept::Fused,
        }
    }
}

/// The error of a note where no node-direct copies were set up.
fn no_node() -> RedistError {
    RedistError::Internal("a note without node-direct copies".to_string())
}

/// `flags` holding `n` times `false`.
fn reset(flags: &mut Vec<bool>, n: usize) {
    flags.clear();
    flags.resize(n, false);
}

impl<T: Element> Exchange<T> for Async<T> {
    /// One array: `src` into `dst`, stored through `store`, timed while
    /// other routes are on trial. Collective.
    fn run_one<S: Store<T>>(
        &mut self,
        messages: &RankMessages,
        comm: &SimpleCommunicator,
        src: &DistArray<T>,
        dst: &mut DistArray<T>,
        store: S,
    ) -> Result<(), RedistError> {
        let Some(trial) = &mut self.trial else {
            return self.run_routed(messages, comm, src, dst, store);
        };
        if let Verdict::Kept { .. } = trial.before(&mut self.routes, |t| slowest(comm, t)) {
            self.trial = None;
            return self.run_routed(messages, comm, src, dst, store);
        }
        let start = std::time::Instant::now();
        let result = self.run_routed(messages, comm, src, dst, store);
        if let Some(trial) = &mut self.trial {
            // A failed execution counts too (as never done), so that the
            // ranks keep counting alike.
            let seconds = match result {
                Ok(()) => start.elapsed().as_secs_f64(),
                Err(_) => f64::INFINITY,
            };
            trial.after(seconds);
        }
        result
    }

    fn run_node_direct<S: Store<T>>(
        &mut self,
        messages: &RankMessages,
        comm: &SimpleCommunicator,
        arrays: Arrays<'_, '_, T>,
        store: S,
    ) -> Result<(), RedistError> {
        self.run_batch(messages, comm, arrays, store)
    }

    fn stacked(&mut self) -> &mut Stacked<T> {
        &mut self.stacked
    }

    /// Bytes of the routes and tables this exchange holds (buffers aside).
    fn heap_bytes(&self) -> usize {
        self.routes.heap_bytes()
            + self.trial.as_ref().map_or(0, |t| t.other().heap_bytes())
            + self.node.as_ref().map_or(0, NodeDirect::heap_bytes)
            + self.slots.capacity() * std::mem::size_of::<(usize, usize)>()
            + self.late_sends.capacity()
            + self.late_recvs.capacity()
            + (self.mapped.capacity() + self.written.capacity()) * std::mem::size_of::<usize>()
            + self.stacked.heap_bytes()
            + self.merge.heap_bytes()
    }
}
