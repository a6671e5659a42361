//! The writing side of round 1 within a node: a receiver whose target is
//! shared lends it to the senders of its node with a note; a sender
//! maps each lent target, writes its messages into them together — its
//! source read once, front to back ([`MessageProgram::push_merged_with`])
//! — and tells each receiver it is done, or that the message follows as
//! messages after all.

use super::super::messages::{portions, RankMessages};
use super::super::node_direct::{Near, PeerArray, PeerWriter};
use super::controls::{ANSWER, TARGET_NOTE, WRITTEN};
use super::post::Round;
use super::{COPIED, SEND_IT};
use crate::error::RedistError;
use crate::tuning::{WRITE_MAX_SOURCE_RUN_BYTES, WRITE_MIN_SOURCE_RUN_BYTES};
use dist_array::storage::{node_writes, NodeWrites};
use dist_array::Element;
use mpi_extras::requests::Requests;
use redist_plan::kernel::Store;
use redist_plan::program::{MergeScratch, MessageProgram, PushPass};

/// Whether this rank lends its target to the ranks of its node it receives
/// from (`near`): as [`node_writes`] says, and by default where the runs
/// of their source storage its messages read average from
/// [`WRITE_MIN_SOURCE_RUN_BYTES`] up to [`WRITE_MAX_SOURCE_RUN_BYTES`].
pub(super) fn lend_pays<T>(messages: &RankMessages, near: &Near) -> bool {
    match node_writes() {
        NodeWrites::Never => false,
        NodeWrites::Always => true,
        NodeWrites::Auto => {
            let (mut bytes, mut runs) = (0usize, 0usize);
            for (i, t) in messages.recvs().iter().enumerate() {
                if near.recv(i) {
                    bytes = bytes.saturating_add(t.len.saturating_mul(std::mem::size_of::<T>()));
                    runs = runs.saturating_add(t.type_tree(true).leaf_runs());
                }
            }
            runs > 0
                && bytes >= runs.saturating_mul(WRITE_MIN_SOURCE_RUN_BYTES)
                && bytes < runs.saturating_mul(WRITE_MAX_SOURCE_RUN_BYTES)
        }
    }
}

/// What a sender does with send `i` (program `t`) once its receiver's note
/// about its target is in: writes it there (remembered in `written`), or —
/// when the target is private — leaves it to be read (`source_shared`:
/// then it waits for the receiver's answer, `pull`) or to round 2
/// (`late_sends`); a lent target it cannot map is answered "send it".
enum OnTarget {
    /// Written with the others once every note is in.
    Write,
    /// Read by the receiver from this rank's shared source.
    Pull,
    /// Sent as messages in round 2.
    Late,
}

/// What a sender keeps while its receivers' notes about their targets
/// come in: where it maps them, the sends it writes, how many notes are
/// still to come, whether its kept elements go with the writes, and
/// whether its own source is shared (readable where a target is not lent).
pub(super) struct Writing<'w> {
    writer: &'w mut PeerWriter,
    written: &'w mut Vec<usize>,
    left: usize,
    with_local: bool,
    source_shared: bool,
}

impl<'w> Writing<'w> {
    /// Waits for `left` notes, mapping through `writer`, the sends it
    /// writes in `written` (emptied first); the kept elements go with the
    /// writes when `with_local`.
    pub fn new(
        writer: &'w mut PeerWriter,
        written: &'w mut Vec<usize>,
        left: usize,
        with_local: bool,
        source_shared: bool,
    ) -> Self {
        written.clear();
        Writing {
            writer,
            written,
            left,
            with_local,
            source_shared,
        }
    }

    /// The note of send `i`'s receiver is in: decide the send
    /// ([`on_target_note`]) — written, read by the receiver (then wait for
    /// its answer), or sent in round 2 (`late_sends`) — and, once every
    /// note is in, write every written send (and the kept elements into
    /// `out` where they go with them) in one pass ([`write_together`]).
    pub fn on_note<T: Element, S: Store<T>>(
        &mut self,
        reqs: &mut Requests<'_, '_, T>,
        round: &Round<'_, T, S>,
        i: usize,
        out: &mut [T],
        late_sends: &mut [bool],
        merge: &mut MergeScratch,
    ) -> Result<(), RedistError> {
        let t = &round.messages.sends()[i];
        self.left -= 1;
        match on_target_note(reqs, self.writer, t, i, self.source_shared)? {
            OnTarget::Write => self.written.push(i),
            OnTarget::Pull => ANSWER.receive(reqs, i, t.peer)?,
            OnTarget::Late => late_sends[i] = true,
        }
        if self.left == 0 {
            let local = self.with_local.then_some(out);
            self.write_together(reqs, round, local, merge)?;
        }
        Ok(())
    }
}

/// Decides send `i` from its receiver's target `note`, mapping the target
/// through `writer` where it is lent.
fn on_target_note<T: Element>(
    reqs: &mut Requests<'_, '_, T>,
    writer: &mut PeerWriter,
    t: &MessageProgram,
    i: usize,
    source_shared: bool,
) -> Result<OnTarget, RedistError> {
    let note = TARGET_NOTE.note(reqs, i);
    if note[0] == 1 {
        let at = PeerArray {
            rank: t.peer,
            slot: 0,
        };
        return Ok(match writer.map(note, i, at) {
            Ok(()) => OnTarget::Write,
            Err(_) => {
                // Sealed against writers, or not what the plan says: the
                // receiver waits for this word, then for messages.
                WRITTEN.send(reqs, i, &[SEND_IT], t.peer)?;
                OnTarget::Late
            }
        });
    }
    Ok(if source_shared {
        OnTarget::Pull
    } else {
        OnTarget::Late
    })
}

impl Writing<'_> {
    /// Writes the sends `written` into their receivers' mapped targets
    /// and, where `local` holds this rank's own target, the kept elements
    /// too, all from the round's source in one pass in source order,
    /// portion by portion; then fences the streamed stores and tells each
    /// receiver its message is written.
    fn write_together<T: Element, S: Store<T>>(
        &self,
        reqs: &mut Requests<'_, '_, T>,
        round: &Round<'_, T, S>,
        local: Option<&mut [T]>,
        merge: &mut MergeScratch,
    ) -> Result<(), RedistError> {
        let (messages, src, store) = (round.messages, round.src, round.store);
        let (written, writer) = (&self.written[..], &*self.writer);
        let sends = messages.sends();
        let mut list: Vec<(&MessageProgram, &mut [T])> = Vec::with_capacity(written.len() + 1);
        if let (Some(t), Some(out)) = (messages.local(), local) {
            list.push((t, out));
        }
        for &i in written {
            let t = &sends[i];
            let at = PeerArray {
                rank: t.peer,
                slot: 0,
            };
            // SAFETY: the receiver's target holds `T`s; it lent it with its
            // note and waits for this rank's word, sent below, before using it;
            // the plan gives each of its elements to one message only.
            let target = unsafe { writer.target::<T>(at) }.ok_or_else(|| {
                RedistError::Internal(format!("no mapping of rank {}'s target", t.peer))
            })?;
            list.push((t, target));
        }
        let n = portions::<T>(list.iter().map(|(t, _)| t.len).sum());
        for k in 0..n {
            let pass = PushPass {
                portion: k,
                portions: n,
                stream: true,
                store,
            };
            MessageProgram::push_merged_with(src, &mut list, pass, merge);
        }
        MessageProgram::fence(true);
        for &i in written {
            WRITTEN.send(reqs, i, &[COPIED], sends[i].peer)?;
        }
        Ok(())
    }
}
