//! `combined`: the messages between two nodes travel as one, and nothing
//! within a node goes through MPI.
//!
//! Where messages are small, what an exchange across nodes costs is mostly
//! how many messages cross the network, and a bare exchange sends one per
//! pair of ranks. Here each rank packs all its messages into its *area*, a
//! buffer in the node's shared memory (`area.rs`); the ranks of its node
//! unpack theirs straight from it, and the node's *leader* (its lowest
//! rank) sends each other node the messages its node has for that node as
//! one MPI message — the segments of the node's areas concatenated — and
//! receives each other node's message into its own area, where the
//! node's ranks unpack theirs. One message per pair of nodes crosses the
//! network, in each direction; within the node, one copy in and one out.
//!
//! The exchange is its own agreement: every rank's verdict on its arrays
//! is gathered by its leader through the area, and the leaders agree among
//! themselves while the data is on its way, so an execution costs no
//! collective of its own. Nothing writes a target before the verdict of
//! every rank is known, and a rank whose arrays are wrong still takes part,
//! without touching them, so nobody waits for it in vain.
//!
//! One execution, numbered `e` on every rank alike (the numbers live in
//! the areas' control words, `area::Word`):
//!
//! 1. wait until every rank of the node has finished execution `e - 1`
//!    (its `Done` word), so the areas may be written again;
//! 2. announce the verdict on this rank's arrays; if they are fine, pack
//!    every outgoing message into the outbox; announce `Packed = e`;
//! 3. the leader posts the receives from other nodes into its inbox, and
//!    per other node gathers the segments of the node's outboxes as each is
//!    packed and sends them; it combines its node's verdicts, agrees with
//!    the other leaders (a dissemination of ⌈log₂ L⌉ rounds among the L
//!    leaders, while the data travels) and announces the agreed verdict
//!    (`Global = e`);
//! 4. where every rank was fine: do the local copy, unpack the messages
//!    from the node's ranks from their outboxes and, once the leader
//!    announces `Inbox = e`, those from other nodes from its inbox;
//! 5. announce `Done = e`.
//!
//! Set up once (`setup.rs`): who leads each node, where each message lies.

mod area;
mod setup;

use super::arrays::Arrays;
use super::decide::BatchWay;
use super::exchange::{one_by_one, Exchange, Run, EXECUTING};
use super::messages::{grow, RankMessages, COMBINED, VERDICT};
use super::route::Chunks;
use super::stacked::Stacked;
use crate::error::RedistError;
use crate::tuning::COMBINED_PIECE_BYTES;
use area::{PeerArea, Word};
use dist_array::{DistArray, Element};
use mpi::point_to_point::{Destination, Source};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi_extras::buffers::SendBuf;
use mpi_extras::requests::{Event, RequestStore};
use procgrid::Node;
use redist_plan::kernel::Store;
use redist_plan::plan::RankPlan;
use setup::{From, Link, Segment, Staging};

/// The `combined` exchange of one redistribution.
pub(crate) struct Combined<T> {
    staging: Staging,
    /// The number of the last execution.
    epoch: u64,
    /// Longest MPI message, in elements.
    max_piece: usize,
    requests: RequestStore,
    /// The leader's messages to other nodes, gathered.
    send_buf: Vec<T>,
    /// The leader's receive slots: one per other node sending to it.
    slots: Vec<(usize, usize)>,
    /// Buffers of stacked messages.
    stacked: Stacked<T>,
}

/// The source and target of one execution, when this rank's are fine.
type Pair<'a, T> = (&'a DistArray<T>, &'a mut DistArray<T>);

impl<T: Element> Combined<T> {
    /// Sets up the exchange of the messages of `plan` (whose copy programs
    /// the executions are handed, in the same order) among the ranks of
    /// `comm`, nodes as `node` says, MPI messages of at most `max_piece`
    /// elements (and [`COMBINED_PIECE_BYTES`]); with the verdict whether this rank can take part (shared
    /// memory it can make and map). Collective over `comm`: every rank
    /// calls it, whatever happens.
    pub fn new(
        comm: &SimpleCommunicator,
        node: &Node,
        plan: &RankPlan,
        max_piece: usize,
    ) -> (Option<Combined<T>>, bool) {
        let links = |list: &[redist_plan::plan::Link]| -> Vec<Link> {
            list.iter()
                .map(|t| Link {
                    peer: t.peer,
                    len: t.len,
                })
                .collect()
        };
        let (sends, recvs) = (links(plan.sends()), links(plan.recvs()));
        let (elem, align) = (std::mem::size_of::<T>(), std::mem::align_of::<T>());
        let (staging, ok) = setup::set_up(comm, node, &sends, &recvs, elem, align);
        let exchange = staging.map(|staging| {
            let slots = staging.relay.recvs.iter().map(|n| (n.at, n.len)).collect();
            Combined {
                staging,
                epoch: 0,
                max_piece: max_piece
                    .min(COMBINED_PIECE_BYTES / std::mem::size_of::<T>().max(1))
                    .max(1),
                requests: RequestStore::default(),
                send_buf: Vec::new(),
                slots,
                stacked: Stacked::default(),
            }
        });
        (exchange, ok)
    }

    /// Bytes of the tables this exchange holds (buffers aside).
    fn table_bytes(&self) -> usize {
        let s = &self.staging;
        let relay: usize = (s.relay.sends.iter())
            .map(|n| n.segments.capacity() * std::mem::size_of::<Segment>())
            .sum();
        s.out_at.capacity() * std::mem::size_of::<usize>()
            + s.recv_from.capacity() * std::mem::size_of::<From>()
            + relay
            + s.leaders.capacity() * std::mem::size_of::<usize>()
            + self.slots.capacity() * std::mem::size_of::<(usize, usize)>()
    }

    /// One execution, agreeing on every rank's verdict on its arrays as it
    /// goes: `arrays` are this rank's source and target when its own check
    /// found them fine, else the error it found. Collective over `comm`.
    ///
    /// # Errors
    ///
    /// This rank's own error, or [`RedistError::OtherRank`] naming the
    /// lowest rank whose arrays were wrong; targets are then left as they
    /// were on every rank.
    fn run_agreeing<S: Store<T>>(
        &mut self,
        messages: &RankMessages,
        comm: &SimpleCommunicator,
        arrays: Result<Pair<'_, T>, RedistError>,
        store: S,
    ) -> Result<(), RedistError> {
        self.epoch += 1;
        let e = self.epoch;
        // 1. Every area of the node is free again.
        for p in &self.staging.peers {
            p.wait_for(Word::Done, e - 1);
        }
        // 2. This rank's verdict, then its messages.
        let me = usize::try_from(comm.rank()).unwrap_or(0);
        let size = usize::try_from(comm.size()).unwrap_or(0);
        let mine = match &arrays {
            Ok(_) => 0,
            Err(err) => verdict_word(size - me, err.kind_code()),
        };
        let s = &mut self.staging;
        s.area.store(Word::VerdictValue, mine);
        s.area.store(Word::Verdict, e);
        if let Ok((src, _)) = &arrays {
            let (outbox, _) = s.area.boxes::<T>();
            let src = src.local_slice();
            for (t, &at) in messages.sends().iter().zip(&s.out_at) {
                t.pack(src, t.whole(), &mut outbox[at..at + t.len]);
            }
        }
        s.area.store(Word::Packed, e);
        // 3. The messages between nodes and the agreement, on the leader.
        let agreed = match s.leader {
            None => self.relay(messages, comm, mine)?,
            Some(l) => {
                let leader = &s.peers[l];
                leader.wait_for(Word::Global, e);
                leader.load(Word::GlobalValue)
            }
        };
        // 4. The targets, where every rank was fine.
        let outcome = match (arrays, agreed) {
            (Err(err), _) => Err(err),
            (Ok((src, dst)), 0) => {
                self.unpack(messages, src.local_slice(), dst.local_slice_mut(), store);
                Ok(())
            }
            (Ok(_), w) => Err(RedistError::OtherRank {
                rank: size.saturating_sub(usize::try_from(w >> 8).unwrap_or(size)),
                what: EXECUTING,
                kind: RedistError::kind_name(w & 0xff),
            }),
        };
        // 5.
        self.staging.area.store(Word::Done, e);
        outcome
    }

    /// The leader's step 3: receives from other nodes into its inbox,
    /// sends each other node the segments of the node's outboxes, agrees with
    /// the other leaders on the verdict (its node's from the areas, `mine`
    /// its own) and announces it, waits for its receives and announces its
    /// inbox. Returns the agreed verdict.
    fn relay(
        &mut self,
        messages: &RankMessages,
        comm: &SimpleCommunicator,
        mine: u64,
    ) -> Result<u64, RedistError> {
        let e = self.epoch;
        let Combined {
            staging: s,
            max_piece,
            requests,
            send_buf,
            slots,
            ..
        } = self;
        let total = s.relay.sends.iter().map(|n| n.len).sum();
        grow(send_buf, total);
        let (control, outbox, inbox) = s.area.split::<T>();
        let mut reqs = requests.list(comm, &messages.elem, inbox, slots, &[])?;
        for (i, n) in s.relay.recvs.iter().enumerate() {
            for (o, len) in Chunks::of(n.len, *max_piece) {
                reqs.irecv_piece(i, o, len, n.leader, COMBINED)?;
            }
        }
        let mut rest: &mut [T] = &mut send_buf[..];
        for n in &s.relay.sends {
            let (gathered, next) = std::mem::take(&mut rest).split_at_mut(n.len);
            rest = next;
            gather(&n.segments, outbox, &s.peers, e, gathered);
            let gathered: &[T] = gathered;
            for (o, len) in Chunks::of(n.len, *max_piece) {
                reqs.isend(SendBuf::Elements(&gathered[o..o + len]), n.leader, COMBINED)?;
            }
        }
        // The node's verdicts, then every node's.
        let node = s.peers.iter().fold(mine, |v, p| {
            p.wait_for(Word::Verdict, e);
            v.max(p.load(Word::VerdictValue))
        });
        let agreed = disseminate(comm, &s.leaders, node);
        control.store(Word::GlobalValue, agreed);
        control.store(Word::Global, e);
        while let Some(event) = reqs.wait_any()? {
            debug_assert!(matches!(event, Event::Piece { .. } | Event::Sent));
        }
        drop(reqs);
        control.store(Word::Inbox, e);
        Ok(agreed)
    }

    /// Step 4 on a rank whose every peer was fine: the local copy, the
    /// messages from the node's ranks, those from other nodes.
    fn unpack<S: Store<T>>(&mut self, messages: &RankMessages, src: &[T], out: &mut [T], store: S) {
        let e = self.epoch;
        messages.copy_local(src, out, store);
        let s = &mut self.staging;
        for (t, from) in messages.recvs().iter().zip(&s.recv_from) {
            if let &From::Peer { peer, at } = from {
                let p = &s.peers[peer];
                p.wait_for(Word::Packed, e);
                // SAFETY: the peer announced this execution's outbox and
                // writes it again only after this rank's `Done = e`.
                let (outbox, _) = unsafe { p.boxes::<T>() };
                t.unpack_with(t.whole(), &outbox[at..at + t.len], out, store);
            }
        }
        if !s.recv_from.iter().any(|f| matches!(f, From::Inbox { .. })) {
            return;
        }
        let inbox: &[T] = match s.leader {
            Some(l) => {
                let leader = &s.peers[l];
                leader.wait_for(Word::Inbox, e);
                // SAFETY: the leader announced this execution's inbox and
                // receives into it again only after this rank's `Done = e`.
                unsafe { leader.boxes::<T>() }.1
            }
            None => s.area.boxes::<T>().1,
        };
        for (t, f) in messages.recvs().iter().zip(&s.recv_from) {
            if let &From::Inbox { at } = f {
                t.unpack_with(t.whole(), &inbox[at..at + t.len], out, store);
            }
        }
    }
}

/// The word a failed rank announces: the larger, the lower the rank
/// (`size - rank`), with its kind of error in the low byte. The maximum
/// over ranks names the lowest failed rank; 0 means none failed.
fn verdict_word(size_minus_rank: usize, kind: u64) -> u64 {
    ((size_minus_rank as u64) << 8) | (kind & 0xff)
}

/// Fills `gathered` with `segments` of the outboxes, in order: `own` is
/// the leader's, `peers` the node's others', each read once its owner
/// announces execution `e` packed.
fn gather<T: Element>(
    segments: &[Segment],
    own: &[T],
    peers: &[PeerArea],
    e: u64,
    gathered: &mut [T],
) {
    let mut at = 0;
    for seg in segments {
        let dst = &mut gathered[at..at + seg.len];
        match seg.source {
            None => dst.copy_from_slice(&own[seg.at..seg.at + seg.len]),
            Some(p) => {
                let p = &peers[p];
                p.wait_for(Word::Packed, e);
                // SAFETY: the peer announced this execution's outbox and
                // writes it again only after the leader's `Done = e`.
                let (theirs, _) = unsafe { p.boxes::<T>() };
                dst.copy_from_slice(&theirs[seg.at..seg.at + seg.len]);
            }
        }
        at += seg.len;
    }
}

/// The maximum of `value` over the leaders `leaders` (this rank among
/// them): in round `k`, each leader sends what it has to the one `2^k`
/// after it and takes the maximum with what the one `2^k` before it sent;
/// after ⌈log₂ L⌉ rounds every leader has seen every value. Point to point
/// among the leaders, waits as [`procgrid::waits::complete`] does.
fn disseminate(comm: &SimpleCommunicator, leaders: &[usize], value: u64) -> u64 {
    let me = usize::try_from(comm.rank()).unwrap_or(0);
    let Ok(i) = leaders.binary_search(&me) else {
        return value;
    };
    let l = leaders.len();
    let rank = |r: usize| comm.process_at_rank(i32::try_from(r).unwrap_or(i32::MAX));
    let mut value = value;
    let mut step = 1;
    while step < l {
        let to = leaders[(i + step) % l];
        let from = leaders[(i + l - step) % l];
        let mut got = 0u64;
        let sent = value;
        mpi::request::scope(|scope| {
            let r = rank(from).immediate_receive_into_with_tag(scope, &mut got, VERDICT);
            let s = rank(to).immediate_send_with_tag(scope, &sent, VERDICT);
            procgrid::waits::complete(s);
            procgrid::waits::complete(r);
        });
        value = value.max(got);
        step *= 2;
    }
    value
}

impl<T: Element> Exchange<T> for Combined<T> {
    /// A batch: stacked (it was agreed on as a whole), or one array with
    /// this rank's own verdict, agreed on as the exchange goes.
    fn run<S: Store<T>>(
        &mut self,
        messages: &RankMessages,
        comm: &SimpleCommunicator,
        mut arrays: Arrays<'_, '_, T>,
        verdict: Result<(), RedistError>,
        run: Run<S>,
    ) -> Result<(), RedistError> {
        if let BatchWay::Stacked(group) = run.way {
            verdict?;
            return (self.stacked).run(messages, comm, arrays, group, run.store);
        }
        if arrays.len() != 1 {
            return one_by_one(arrays, verdict, |src, dst| {
                self.run_one(messages, comm, src, dst, run.store)
            });
        }
        let pair = arrays.pairs().next();
        let pair = pair.ok_or_else(|| RedistError::Internal("a batch of one, empty".to_string()));
        let one = verdict.and(pair);
        self.run_agreeing(messages, comm, one, run.store)
    }

    fn run_one<S: Store<T>>(
        &mut self,
        messages: &RankMessages,
        comm: &SimpleCommunicator,
        src: &DistArray<T>,
        dst: &mut DistArray<T>,
        store: S,
    ) -> Result<(), RedistError> {
        self.run_agreeing(messages, comm, Ok((src, dst)), store)
    }

    fn stacked(&mut self) -> &mut Stacked<T> {
        &mut self.stacked
    }

    fn agrees_as_it_goes(&self) -> bool {
        true
    }

    fn heap_bytes(&self) -> usize {
        self.table_bytes() + self.stacked.heap_bytes()
    }
}
