//! Several messages copied straight into one target together, their lines
//! merged in the order they write the target, each line's source fetched
//! a few lines ahead.
//!
//! A rank's target takes its kept elements and what it reads from its
//! node's peers' storage in interleaved stretches (`cyclic(40) →
//! cyclic(300)`: 40 of its own, 40 of a peer's, ...). Copied message by
//! message, every stretch of target is written in passes with gaps, and
//! every copy waits for its source lines from memory one after another.
//! Merged, the target is written front to back once; fetched ahead, the
//! source lines of the next copies are on their way while this one runs.
//! The tuning notes (`docs/TUNING.md`) have the figures.

use super::walk::{Sides, Walk};
use super::MessageProgram;
use crate::kernel::{CopyOp, LineCopy, Out, Store};
use crate::tuning::PREFETCH_BYTES;

/// Room [`MessageProgram::copy_merged_with`] gathers lines in, kept between
/// calls so that copying allocates nothing once it has grown: a portion's
/// lines, a few thousand at most.
#[derive(Debug, Default)]
pub struct MergeScratch {
    /// `(first target offset, message, line)` (first source offset for
    /// pushed copies), message after message.
    pub(super) lines: Vec<(usize, usize, LineCopy)>,
    /// Indices into `lines`, in target (or source) order.
    pub(super) order: Vec<usize>,
    /// Where each message's lines start in `lines`, and one past the last.
    pub(super) heads: Vec<usize>,
    /// While merging: each message's next line.
    pub(super) at: Vec<usize>,
}

impl MergeScratch {
    /// Bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.lines.capacity() * std::mem::size_of::<(usize, usize, LineCopy)>()
            + (self.order.capacity() + self.heads.capacity() + self.at.capacity())
                * std::mem::size_of::<usize>()
    }
}

impl MessageProgram {
    /// Whether merging this program's lines with others' pays
    /// ([`copy_merged_with`](Self::copy_merged_with)): it copies on the
    /// calling thread alone (no units of parallel work), and walks lines
    /// only — no dimension copies whole periods of short stretches
    /// through offset tables, which are many, short and best walked
    /// message by message.
    pub fn merges(&self) -> bool {
        self.shape.unit_elements == usize::MAX
            && self.shape.axes.iter().all(|a| a.offsets.is_none())
    }

    /// Copies portion `k` of `portions` ([`portion`](Self::portion)) of
    /// every message of `messages`, each straight from its source storage
    /// (`(program, source)`), into the target's `dst`: the messages' lines
    /// in the order of their first target offsets (each message's own in
    /// its walk order), the sources of the lines that read the next
    /// [`PREFETCH_BYTES`] fetched into cache meanwhile. Copies
    /// through offset tables or tiles run as the walk meets them. The
    /// elements written are those of [`copy_with`](Self::copy_with) on
    /// each message; only the order differs. Copies run on the calling
    /// thread.
    ///
    /// # Panics
    ///
    /// As [`copy_with`](Self::copy_with), when a copy reaches outside its
    /// source or `dst`.
    pub fn copy_merged_with<T: Copy + Send + Sync, S: Store<T>>(
        messages: &[(&MessageProgram, &[T])],
        k: usize,
        portions: usize,
        dst: &mut [T],
        store: S,
        scratch: &mut MergeScratch,
    ) {
        let MergeScratch {
            lines,
            order,
            heads,
            at,
        } = scratch;
        let out = Out::new(dst);
        let walk = Walk {
            sides: Sides::Direct,
            tables: true,
            buf_start: 0,
        };
        let stream_of = |m: &MessageProgram| (m.shape.stream_direct, m.shape.stream_unpack);
        let mut streamed = false;
        lines.clear();
        heads.clear();
        for (i, &(m, src)) in messages.iter().enumerate() {
            let outer = m.outer_range(&m.portion(k, portions));
            let stream = stream_of(m);
            streamed |= stream.0 || stream.1;
            heads.push(lines.len());
            m.walk(walk, outer, &mut |op| {
                match op {
                    CopyOp::Line(l) => lines.push((l.to, i, l)),
                    other => out.apply_with(src, &other, stream, store),
                }
                true
            });
        }
        heads.push(lines.len());
        // Stretches shorter than a cache line on average share the lines
        // the hardware fetches anyway, and are many: there the lines run
        // message after message, as walked, and nothing is fetched ahead.
        let size = std::mem::size_of::<T>();
        let (stretches, elements) = (lines.iter()).fold((0usize, 0usize), |(s, e), (_, _, l)| {
            (s + l.count, e + l.len * l.count)
        });
        let long = elements * size >= STRETCH_MIN_BYTES * stretches;
        if long {
            merge(lines, heads, at, order);
        } else {
            order.clear();
            order.extend(0..lines.len());
        }
        // `ahead`: the next line to fetch; `queued`: bytes the lines from
        // this one up to `ahead` read.
        let bytes = |l: &LineCopy| l.len * l.count * size;
        let (mut ahead, mut queued) = (0, 0);
        for &j in order.iter() {
            while long && ahead < order.len() && queued < PREFETCH_BYTES {
                let (_, i, l) = lines[order[ahead]];
                // A long contiguous source run the hardware follows alone,
                // and so stretches shorter than a cache line.
                let run = if l.from_step == l.len && l.from_stride == 1 {
                    l.len * l.count
                } else {
                    l.len
                };
                if run * size < PREFETCH_BYTES && l.len * size >= STRETCH_MIN_BYTES {
                    prefetch(messages[i].1, &l);
                }
                queued += bytes(&l);
                ahead += 1;
            }
            let (_, i, l) = lines[j];
            let (m, src) = messages[i];
            out.apply_with(src, &CopyOp::Line(l), stream_of(m), store);
            queued = queued.saturating_sub(bytes(&l));
        }
        Out::<T>::fence(streamed);
    }
}

/// The indices of `lines` (runs `heads[i]..heads[i + 1]` per message, each
/// in order) merged by their key (first target offset, or first source
/// offset for pushed copies) into `order`, ties to the earlier message;
/// `at` is room for each message's next line.
pub(super) fn merge(
    lines: &[(usize, usize, LineCopy)],
    heads: &[usize],
    at: &mut Vec<usize>,
    order: &mut Vec<usize>,
) {
    order.clear();
    let n = heads.len().saturating_sub(1);
    at.clear();
    at.extend_from_slice(&heads[..n]);
    loop {
        let mut best: Option<usize> = None;
        for i in 0..n {
            if at[i] < heads[i + 1] && best.is_none_or(|b| lines[at[i]].0 < lines[at[b]].0) {
                best = Some(i);
            }
        }
        let Some(i) = best else { break };
        order.push(at[i]);
        at[i] += 1;
    }
}

/// A cache line: stretches shorter than it (on average, for a portion's
/// lines) are neither merged nor fetched ahead.
const STRETCH_MIN_BYTES: usize = 64;

/// Asks for the first bytes of every stretch `l` reads from `src` to be
/// brought into cache (a hint: nothing is read, nothing can fault).
#[inline(always)]
fn prefetch<T>(src: &[T], l: &LineCopy) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let size = std::mem::size_of::<T>();
        // The first three lines of each stretch: the hardware follows on.
        let bytes = (l.len * size).min(3 * 128);
        for c in 0..l.count.min(4) {
            let at = l.from + c * l.from_step;
            if at >= src.len() {
                break;
            }
            let p = src.as_ptr().wrapping_add(at).cast::<i8>();
            let mut b = 0;
            while b < bytes {
                // SAFETY: a prefetch is a hint: it reads nothing the program
                // sees and cannot fault, whatever the address.
                unsafe { _mm_prefetch(p.wrapping_add(b), _MM_HINT_T0) };
                b += 128;
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (src, l);
}
