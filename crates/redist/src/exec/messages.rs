//! What every exchange strategy shares: this rank's messages
//! ([`RankMessages`]: their copy programs, where each sits in a buffer
//! holding all of them, the element datatype), the tags they travel under,
//! and copies done together in one pass ([`RankMessages::copy_local_with`]).

use crate::tuning::PORTION_BYTES;
use dist_array::Element;
use mpi::Tag;
use mpi_extras::Datatype;
use redist_plan::kernel::Store;
use redist_plan::program::{MergeScratch, MessageProgram, RankProgram};
use std::convert::Infallible;

/// Tag of the data messages. MPI keeps the messages of one sender, tag and
/// communicator in order, so every piece of every message can share it.
pub(crate) const DATA: Tag = 1000;
/// Tag of a sender's note between ranks of one node (whether and how its
/// source storage can be mapped).
pub(crate) const NOTE: Tag = 1001;
/// Tag of a receiver's answer to a note: it copied the message straight
/// from the sender, or asks for it as messages.
pub(crate) const ANSWER: Tag = 1002;
/// Tag of the probe descriptions ranks of one node exchange while a
/// redistribution is built (whether one can read another's storage).
pub(crate) const PROBE: Tag = 1003;
/// Tag of the messages between two nodes' leaders in `combined`.
pub(crate) const COMBINED: Tag = 1004;
/// Tags of `combined`'s set-up: a rank's node leader, told to the partners
/// it sends to (`LEADER_FWD`) and receives from (`LEADER_BACK`); a rank's
/// report to its leader (its length, then the words) and the leader's
/// reply.
pub(crate) const LEADER_FWD: Tag = 1005;
pub(crate) const LEADER_BACK: Tag = 1006;
pub(crate) const REPORT_LEN: Tag = 1007;
pub(crate) const REPORT: Tag = 1008;
pub(crate) const REPLY: Tag = 1009;
/// Tag of the verdicts `combined`'s leaders pass among themselves.
pub(crate) const VERDICT: Tag = 1010;
/// Tag of a receiver's note about its target (node-direct writes).
pub(crate) const TARGET_NOTE: Tag = 1011;
/// Tag of a writer's word: the message is written into the target, or
/// must be sent.
pub(crate) const WRITTEN: Tag = 1012;

/// This rank's part of a redistribution, shared by every strategy: the
/// copy programs of its sends, receives and kept elements, where each message
/// sits in a buffer holding all of them (its *slot*), and how elements
/// meet MPI.
pub(crate) struct RankMessages {
    /// The copy programs.
    pub program: RankProgram,
    /// Per send / receive: its slot, `(offset, length)` in a buffer
    /// holding every message of this rank, in order.
    pub send_slots: Vec<(usize, usize)>,
    pub recv_slots: Vec<(usize, usize)>,
    /// Elements sent and received per execution.
    pub send_total: usize,
    pub recv_total: usize,
    /// The element datatype.
    pub elem: Datatype,
}

impl RankMessages {
    /// The messages of `program`, whose elements move as `elem`s.
    pub fn new(program: RankProgram, elem: Datatype) -> RankMessages {
        let (send_slots, send_total) = slots(&program.sends);
        let (recv_slots, recv_total) = slots(&program.recvs);
        RankMessages {
            program,
            send_slots,
            recv_slots,
            send_total,
            recv_total,
            elem,
        }
    }

    /// The programs of the messages this rank sends.
    pub fn sends(&self) -> &[MessageProgram] {
        &self.program.sends
    }

    /// The programs of the messages this rank receives.
    pub fn recvs(&self) -> &[MessageProgram] {
        &self.program.recvs
    }

    /// Elements this rank keeps (copies locally) per execution.
    pub fn kept(&self) -> usize {
        self.program.local.as_ref().map_or(0, |t| t.len)
    }

    /// Bytes held on the heap (the element datatype aside, which MPI holds).
    pub fn heap_bytes(&self) -> usize {
        self.program.heap_bytes()
            + (self.send_slots.capacity() + self.recv_slots.capacity())
                * std::mem::size_of::<(usize, usize)>()
    }

    /// Copies the kept elements (the local copy), storing through `store`.
    pub fn copy_local<T: Element, S: Store<T>>(&self, src: &[T], dst: &mut [T], store: S) {
        let done: Result<(), Infallible> =
            self.copy_local_with(src, dst, 0, store, |_, _, _| Ok(()));
        let Ok(()) = done;
    }

    /// Copies the kept elements (the local copy) together with other copies
    /// of `elements` elements in all, in one pass: in portion `k` of
    /// `portions` (each about [`PORTION_BYTES`] of what the copies write),
    /// portion `k` of the local copy, then `others(k, portions, dst)`, which
    /// does portion `k` of each other copy ([`MessageProgram::portion`]). Where
    /// the kept elements and the messages interleave in storage (every other block of a column
    /// goes to another rank), copying them one after the other would fetch
    /// each cache line they share once per copy; together, once. Stops at
    /// the first error of `others`.
    pub fn copy_local_with<T: Element, E, S: Store<T>>(
        &self,
        src: &[T],
        dst: &mut [T],
        elements: usize,
        store: S,
        mut others: impl FnMut(usize, usize, &mut [T]) -> Result<(), E>,
    ) -> Result<(), E> {
        let local = self.program.local.as_ref();
        let portions = portions::<T>(local.map_or(0, |t| t.len) + elements);
        for k in 0..portions {
            if let Some(t) = local {
                t.copy_with(src, t.portion(k, portions), dst, store);
            }
            others(k, portions, dst)?;
        }
        Ok(())
    }

    /// The program of the kept elements (the local copy), if any.
    pub fn local(&self) -> Option<&MessageProgram> {
        self.program.local.as_ref()
    }

    /// Copies the kept elements and packs the sends `packs` (each with the
    /// offset of its slot in `buf`) in one pass over the source
    /// ([`copy_local_with`](Self::copy_local_with)).
    pub fn copy_local_and_pack<'a, T: Element, S: Store<T>>(
        &self,
        src: &[T],
        dst: &mut [T],
        buf: &mut [T],
        packs: impl Iterator<Item = (&'a MessageProgram, usize)> + Clone,
        store: S,
    ) {
        let elements = packs.clone().map(|(t, _)| t.len).sum();
        let done: Result<(), Infallible> =
            self.copy_local_with(src, dst, elements, store, |k, portions, _| {
                for (t, at) in packs.clone() {
                    let r = t.portion(k, portions);
                    t.pack(src, r.clone(), &mut buf[at + r.start..at + r.end]);
                }
                Ok(())
            });
        let Ok(()) = done;
    }
}

/// How many portions of about [`PORTION_BYTES`] of target copies of
/// `elements` elements in all take (at least one).
pub(crate) fn portions<T>(elements: usize) -> usize {
    (elements * std::mem::size_of::<T>())
        .div_ceil(PORTION_BYTES)
        .max(1)
}

/// Copies the messages `all` (each program with its source storage) into
/// `dst` together, their lines merged in target order portion by portion
/// ([`MessageProgram::copy_merged_with`]).
pub fn copy_merged<T: Element, S: Store<T>>(
    all: &[(&MessageProgram, &[T])],
    dst: &mut [T],
    store: S,
    scratch: &mut MergeScratch,
) {
    let portions = portions::<T>(all.iter().map(|(t, _)| t.len).sum());
    for k in 0..portions {
        MessageProgram::copy_merged_with(all, k, portions, dst, store, scratch);
    }
}

/// The slots of `list` one after another in one buffer, and its length.
fn slots(list: &[MessageProgram]) -> (Vec<(usize, usize)>, usize) {
    let mut total = 0;
    let slots = list
        .iter()
        .map(|t| {
            total += t.len;
            (total - t.len, t.len)
        })
        .collect();
    (slots, total)
}

/// Grows `buf` to at least `len` elements (never shrinks: executing again
/// allocates nothing).
pub(crate) fn grow<T: Element>(buf: &mut Vec<T>, len: usize) {
    if buf.len() < len {
        buf.resize(len, T::zeroed());
    }
}
