//! Several messages copied out of one source into their targets together,
//! their lines merged in the order they read the source.
//!
//! Between ranks of one node a rank may *write* its messages straight into
//! its peers' target storage instead of having them read it. Then the
//! gaps fall on the writes: walked in source order, the rank reads its
//! source part once, front to back, and each stretch it writes is a whole
//! run of some target. Written with streaming stores, a target's cache
//! lines are written without being read first, so the copy costs what a
//! sequential copy does (`docs/performance.md`, 2026-11-29: 6.3–8.9 ms for
//! 64 MiB in runs of 320 bytes, against 12.8–17.1 ms read with gaps).

use super::merged::merge;
use super::walk::{Sides, Walk};
use super::{MergeScratch, MessageProgram};
use crate::kernel::{CopyOp, Out, Store};

/// What one call of [`MessageProgram::push_merged_with`] copies and how:
/// portion `portion` of `portions` of every message, streamed or not,
/// stored by `store`.
#[derive(Debug, Clone, Copy)]
pub struct PushPass<S> {
    /// The portion copied ([`portion`](MessageProgram::portion)), below
    /// `portions`.
    pub portion: usize,
    /// How many portions every message is cut into.
    pub portions: usize,
    /// Whether stretches of a cache line or more stream into targets larger
    /// than the cache (the caller fences, [`fence`](MessageProgram::fence),
    /// before the targets are read by anybody else).
    pub stream: bool,
    /// How each element is stored.
    pub store: S,
}

impl MessageProgram {
    /// Copies portion `pass.portion` of `pass.portions`
    /// ([`portion`](Self::portion)) of every message of `messages`, each
    /// from `src` into its own target storage (`(program, target)`): the
    /// messages' lines in the order of their first source offsets (each
    /// message's own in its walk order), streaming as `pass.stream` says
    /// ([`PushPass`]). Copies through offset tables or tiles run as the
    /// walk meets them. The elements written are those of
    /// [`copy_with`](Self::copy_with) on each message; only the order
    /// differs. Copies run on the calling thread.
    ///
    /// # Panics
    ///
    /// As [`copy_with`](Self::copy_with), when a copy reaches outside `src`
    /// or its target.
    pub fn push_merged_with<T: Copy + Send + Sync, S: Store<T>>(
        src: &[T],
        messages: &mut [(&MessageProgram, &mut [T])],
        pass: PushPass<S>,
        scratch: &mut MergeScratch,
    ) {
        let PushPass {
            portion: k,
            portions,
            stream,
            store,
        } = pass;
        let MergeScratch {
            lines,
            order,
            heads,
            at,
        } = scratch;
        let walk = Walk {
            sides: Sides::Direct,
            tables: true,
            buf_start: 0,
        };
        // Only into targets too large for the cache (those the plan
        // streams unpacking into).
        let stream_of = |m: &MessageProgram| {
            let s = stream && m.shape.stream_unpack;
            (s, s)
        };
        lines.clear();
        heads.clear();
        for (i, (m, dst)) in messages.iter_mut().enumerate() {
            let outer = m.outer_range(&m.portion(k, portions));
            let out = Out::new(dst);
            let s = stream_of(m);
            heads.push(lines.len());
            m.walk(walk, outer, &mut |op| {
                match op {
                    CopyOp::Line(l) => lines.push((l.from, i, l)),
                    other => out.apply_with(src, &other, s, store),
                }
                true
            });
        }
        heads.push(lines.len());
        merge(lines, heads, at, order);
        for &j in order.iter() {
            let (_, i, l) = lines[j];
            let (m, dst) = &mut messages[i];
            Out::new(dst).apply_with(src, &CopyOp::Line(l), stream_of(m), store);
        }
    }

    /// Orders this thread's streamed stores before everything it does next
    /// (a no-op unless `stream`): call it after the last
    /// [`push_merged_with`](Self::push_merged_with) that streamed, before
    /// telling the targets' owners they are written.
    pub fn fence(stream: bool) {
        Out::<u8>::fence(stream);
    }
}
