//! Copy programs: how one message's elements are gathered from the source's
//! local storage into a buffer, scattered from a buffer into the target's
//! local storage, or copied straight from source to target.
//!
//! A message is the Cartesian product of per-dimension stretch sets
//! ([`AxisPlan`](crate::AxisPlan)). Per dimension, its program keeps what the plan keeps:
//! the lines of one basic period (`axis.rs`), the number of whole periods and the
//! strides by which local offsets advance per period, and the lines of the
//! partial last period. A line is `count` stretches of `len` indices whose
//! offsets advance by a constant step on each side — one plan run, or a
//! repeated run (`BLOCK` against `CYCLIC`), or a whole dimension folded
//! into one line when a period holds a single stretch (`CYCLIC` against
//! `CYCLIC(k)`). So a program costs O(runs per period) to build and hold,
//! whatever the extent: at n = 10³ as at 10¹².
//!
//! The buffer holds the message in the source's memory order over the
//! message box, so both sides walk the same order: outer dimensions index
//! by index, the innermost line by line through the [`kernel`](super::kernel)s.
//! Parallel work is cut by bytes: ranges of the outermost dimension's
//! indices holding about [`UNIT_BYTES`](crate::tuning::UNIT_BYTES) each.
//!
//! Every copy covers a range of the message's elements in buffer order
//! made of whole outermost indices: the whole message, a *piece* (one MPI
//! message's worth) or a *part* of a pass that does several copies
//! together ([`MessageProgram::part`]).

use super::kernel::{CopyOp, Out};
use crate::{AxisPlan, RankPlan};
use dist_array::{Layout, Order};
use rayon::prelude::*;
use std::mem::size_of;
use std::ops::Range;

mod axis;
#[cfg(test)]
mod tests;
mod tree;
mod walk;

use axis::AxisProgram;
pub(crate) use tree::TypeTree;
use walk::{Sides, Walk};

/// Strides of a local array of `shape` stored in `order`.
fn strides(shape: &[usize], order: Order) -> Vec<usize> {
    let mut s = vec![1usize; shape.len()];
    match order {
        Order::RowMajor => {
            for d in (0..shape.len().saturating_sub(1)).rev() {
                s[d] = s[d + 1] * shape[d + 1];
            }
        }
        Order::ColumnMajor => {
            for d in 1..shape.len() {
                s[d] = s[d - 1] * shape[d - 1];
            }
        }
    }
    s
}

/// The copy program of one message between a source and a target rank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MessageProgram {
    /// The other rank (target rank for a send, source rank for a receive).
    pub peer: usize,
    /// Elements in the message.
    pub len: usize,
    /// Per dimension, in loop order (slowest in source memory first).
    axes: Vec<AxisProgram>,
    /// Source, target and buffer strides in loop order (elements).
    src_strides: Vec<usize>,
    dst_strides: Vec<usize>,
    buf_strides: Vec<usize>,
    /// Elements per unit of parallel work (units are ranges of the
    /// outermost dimension's indices, computed when executing).
    unit_elements: usize,
    /// Whether unpacking into target storage streams (non-temporal stores
    /// for long stretches; see [`kernel`](super::kernel)).
    stream_unpack: bool,
    /// Whether copies straight from source to target storage stream.
    stream_direct: bool,
}

impl MessageProgram {
    /// The program of the message from source rank `from` to target rank
    /// `to` of arrays laid out as `source` and `target`, whose runs per
    /// dimension `axes` hold (the whole plan's, or a row of `from` or a
    /// column of `to`: the runs of a pair are the same in each), with units
    /// of parallel work of about `unit_elements` elements.
    pub fn new(
        axes: &[AxisPlan],
        (source, target): (&Layout, &Layout),
        (from, to): (usize, usize),
        peer: usize,
        unit_elements: usize,
    ) -> MessageProgram {
        let (src, dst) = (source, target);
        let a = src.coords_of_rank(from).expect("source rank in layout");
        let b = dst.coords_of_rank(to).expect("target rank in layout");
        let src_shape = src.local_shape(from).expect("source rank in layout");
        let dst_shape = dst.local_shape(to).expect("target rank in layout");
        let ss = strides(&src_shape, src.storage());
        let ds = strides(&dst_shape, dst.storage());
        let order: Vec<usize> = match src.storage() {
            Order::RowMajor => (0..src.ndim()).collect(),
            Order::ColumnMajor => (0..src.ndim()).rev().collect(),
        };
        let axes: Vec<AxisProgram> = order
            .iter()
            .map(|&d| AxisProgram::new(&axes[d], a[d], b[d]))
            .collect();
        let extents: Vec<usize> = axes.iter().map(AxisProgram::len).collect();
        let mut buf_strides = vec![1usize; extents.len()];
        for d in (0..extents.len().saturating_sub(1)).rev() {
            buf_strides[d] = buf_strides[d + 1] * extents[d + 1];
        }
        let len = extents.iter().product();
        debug_assert!(axes.iter().zip(&order).all(|(ax, &d)| {
            let (s, t) = ax.ends();
            s <= src_shape[d] && t <= dst_shape[d]
        }));
        MessageProgram {
            peer,
            len,
            axes,
            src_strides: order.iter().map(|&d| ss[d]).collect(),
            dst_strides: order.iter().map(|&d| ds[d]).collect(),
            buf_strides,
            unit_elements,
            stream_unpack: false,
            stream_direct: false,
        }
    }

    /// This program, with copies into target storage streaming or not:
    /// with `Some(n)`, unpacking streams, and a straight copy when its
    /// source runs average at least `n` elements (see
    /// [`STREAM_MIN_SOURCE_RUN_BYTES`](crate::tuning::STREAM_MIN_SOURCE_RUN_BYTES));
    /// with `None`, nothing streams.
    pub fn streaming(mut self, stream: Option<usize>) -> MessageProgram {
        let source_run = self.len / self.type_tree(true).leaf_runs().max(1);
        self.stream_unpack = stream.is_some();
        self.stream_direct = stream.is_some_and(|n| source_run >= n);
        self
    }

    /// Bytes this program holds on the heap.
    pub fn heap_bytes(&self) -> usize {
        self.axes.iter().map(AxisProgram::heap_bytes).sum::<usize>()
            + self.axes.len() * (size_of::<AxisProgram>() + 3 * size_of::<usize>())
    }

    /// Runs `sides` over the outermost indices `u0..u1`, cut into units of
    /// work run in parallel when there are several, writing through `out`;
    /// buffer offsets are taken relative to `buf_start`.
    fn run<T: Copy + Send + Sync>(
        &self,
        sides: Sides,
        from: &[T],
        out: &Out<T>,
        (u0, u1): (usize, usize),
        buf_start: usize,
    ) {
        let outer = u1.saturating_sub(u0);
        let units = units(outer * self.outer_stride(), outer, self.unit_elements);
        // Only target storage streams: a packed buffer is read again at once.
        let stream = match sides {
            Sides::Pack => false,
            Sides::Unpack => self.stream_unpack,
            Sides::Direct => self.stream_direct,
        };
        let walk = Walk {
            sides,
            tables: true,
            buf_start,
        };
        let unit = |k: usize| {
            let cut = |k: usize| u0 + (k as u128 * outer as u128 / units as u128) as usize;
            self.walk(walk, (cut(k), cut(k + 1)), &mut |m| {
                out.apply(from, &m, stream);
                true
            });
            Out::<T>::fence(stream);
        };
        if units > 1 {
            (0..units).into_par_iter().for_each(unit);
        } else {
            (0..units).for_each(unit);
        }
    }

    /// Elements per index of the outermost loop dimension: a piece of the
    /// packed message made of whole multiples of it packs and unpacks on
    /// its own.
    pub fn outer_stride(&self) -> usize {
        self.buf_strides.first().copied().unwrap_or(1).max(1)
    }

    /// The outermost indices of the elements `range` of the message (in
    /// buffer order), which must cover whole outermost indices (or end
    /// with the message).
    fn outer_range(&self, range: &Range<usize>) -> (usize, usize) {
        let stride = self.outer_stride();
        let (start, end) = (range.start, range.end);
        assert!(
            start <= end
                && start % stride == 0
                && (end % stride == 0 || end == self.len)
                && end <= self.len,
            "elements {start}..{end} of whole outer indices of {stride} elements \
             in a message of {}",
            self.len
        );
        (start / stride, end.div_ceil(stride))
    }

    /// All of the message's elements, in buffer order.
    pub fn whole(&self) -> Range<usize> {
        0..self.len
    }

    /// Part `k` of `parts` of the message: its outermost indices cut
    /// evenly, as a range of its elements in buffer order. Parts `0..parts`
    /// cover the message in order.
    pub fn part(&self, k: usize, parts: usize) -> Range<usize> {
        let outer = self.axes.first().map_or(0, AxisProgram::len);
        let cut = |k: usize| (k as u128 * outer as u128 / parts.max(1) as u128) as usize;
        let stride = self.outer_stride();
        (cut(k) * stride).min(self.len)..(cut(k + 1) * stride).min(self.len)
    }

    /// Where the elements `range` of the message (buffer order, whole
    /// outermost indices) lie in target storage when they lie there as one
    /// contiguous run: its first offset. O(lines of the range).
    pub fn target_run(&self, range: Range<usize>) -> Option<usize> {
        let outer = self.outer_range(&range);
        let (start, n) = (range.start, range.len());
        let mut run: Option<(usize, usize)> = None;
        let mut contiguous = true;
        let walk = Walk {
            sides: Sides::Unpack,
            tables: false,
            buf_start: start,
        };
        self.walk(walk, outer, &mut |m| {
            let CopyOp::Line(l) = m else {
                contiguous = false;
                return false;
            };
            let len = l.len * l.count;
            if len == 0 {
                return true;
            }
            // Element j of stretch i sits at to + i·to_step + j·to_stride.
            if (l.len > 1 && l.to_stride != 1) || (l.count > 1 && l.to_step != l.len) {
                contiguous = false;
                return false;
            }
            run = match run {
                None => Some((l.to, len)),
                Some((at, m)) if at + m == l.to => Some((at, m + len)),
                Some(_) => {
                    contiguous = false;
                    return false;
                }
            };
            true
        });
        match run {
            Some((at, m)) if contiguous && m == n => Some(at),
            _ => None,
        }
    }

    /// Gathers the elements `range` of the message (buffer order, whole
    /// outermost indices) from the source's local storage into `buf`, which
    /// holds exactly them.
    pub fn pack<T: Copy + Send + Sync>(&self, src: &[T], range: Range<usize>, buf: &mut [T]) {
        assert_eq!(buf.len(), range.len(), "a buffer for elements {range:?}");
        let outer = self.outer_range(&range);
        self.run(Sides::Pack, src, &Out::new(buf), outer, range.start);
    }

    /// Scatters `buf`, the elements `range` of the message (buffer order,
    /// whole outermost indices), into the target's local storage.
    pub fn unpack<T: Copy + Send + Sync>(&self, range: Range<usize>, buf: &[T], dst: &mut [T]) {
        assert_eq!(buf.len(), range.len(), "a buffer for elements {range:?}");
        let outer = self.outer_range(&range);
        self.run(Sides::Unpack, buf, &Out::new(dst), outer, range.start);
    }

    /// Copies the elements `range` of the message (buffer order, whole
    /// outermost indices) straight from the source's local storage `src`
    /// into the target's `dst`.
    pub fn copy<T: Copy + Send + Sync>(&self, src: &[T], range: Range<usize>, dst: &mut [T]) {
        let outer = self.outer_range(&range);
        self.run(Sides::Direct, src, &Out::new(dst), outer, 0);
    }

    /// The message on its source (`source == true`) or target side as a
    /// tree of runs, repeats and sequences over local storage, in message
    /// order: what a derived datatype describes. O(lines per period) nodes.
    pub fn type_tree(&self, source: bool) -> TypeTree {
        let strides = if source {
            &self.src_strides
        } else {
            &self.dst_strides
        };
        let mut tree = TypeTree::Run(1);
        for (axis, &stride) in self.axes.iter().zip(strides).rev() {
            tree = axis.type_tree(source, stride, &tree);
        }
        tree
    }

    /// The contiguous runs of the message in its source (`source == true`)
    /// or target local storage, in buffer order, as (offset, length) in
    /// elements, adjacent runs merged; `None` when that side is not
    /// contiguous along the innermost loop dimension or has more than
    /// `max_runs` runs. Costs O(`max_runs`) at most.
    #[cfg(test)]
    pub fn runs(&self, source: bool, max_runs: usize) -> Option<Vec<(usize, usize)>> {
        let mut runs = Vec::new();
        self.each_run(source, max_runs, |off, len| runs.push((off, len)))?;
        Some(runs)
    }

    /// Calls `f(offset, length)` for each contiguous run of the message on
    /// one side, in message order, without storing them; returns how many,
    /// or `None` (having called `f` for the first `max_runs` at most) when
    /// there are more than `max_runs`.
    pub fn each_run(
        &self,
        source: bool,
        max_runs: usize,
        mut f: impl FnMut(usize, usize),
    ) -> Option<usize> {
        let inner = *if source {
            &self.src_strides
        } else {
            &self.dst_strides
        }
        .last()?;
        if inner != 1 || self.len == 0 {
            return None;
        }
        let mut pending: Option<(usize, usize)> = None;
        let mut emitted = 0;
        let mut ok = true;
        let outer = self.axes[0].len();
        let walk = Walk {
            sides: if source { Sides::Pack } else { Sides::Unpack },
            tables: false,
            buf_start: 0,
        };
        self.walk(walk, (0, outer), &mut |m| {
            let CopyOp::Line(m) = m else {
                ok = false;
                return false;
            };
            let (start, step) = if source {
                (m.from, m.from_step)
            } else {
                (m.to, m.to_step)
            };
            for i in 0..m.count {
                let off = start + i * step;
                match &mut pending {
                    Some(run) if run.0 + run.1 == off => run.1 += m.len,
                    _ => {
                        if let Some((o, n)) = pending.take() {
                            if emitted == max_runs {
                                ok = false;
                                return false;
                            }
                            f(o, n);
                            emitted += 1;
                        }
                        pending = Some((off, m.len));
                    }
                }
            }
            true
        });
        if let Some((o, n)) = pending.filter(|_| ok) {
            if emitted == max_runs {
                return None;
            }
            f(o, n);
            emitted += 1;
        }
        ok.then_some(emitted)
    }
}

/// How many units of parallel work a message of `len` elements whose
/// outermost dimension has `outer` indices is cut into: about
/// `unit_elements` elements each, at most one per outer index.
fn units(len: usize, outer: usize, unit_elements: usize) -> usize {
    if len == 0 || outer == 0 {
        return 0;
    }
    len.div_ceil(unit_elements.max(1)).clamp(1, outer)
}

/// What one rank sends, receives and copies locally in a redistribution.
#[derive(Debug, Clone, Default)]
pub(crate) struct RankProgram {
    /// Messages this rank sends, by increasing target rank (itself excluded).
    pub sends: Vec<MessageProgram>,
    /// Messages this rank receives, by increasing source rank (itself excluded).
    pub recvs: Vec<MessageProgram>,
    /// The part that stays on this rank.
    pub local: Option<MessageProgram>,
}

impl RankProgram {
    /// The programs of the messages of `plan` (one rank's), with units of
    /// parallel work of about `unit_elements` elements (`usize::MAX`:
    /// copies run on the calling thread alone); copies into the rank's
    /// target storage stream as [`MessageProgram::streaming`] says for
    /// `stream`. Sends and the local part come from the rank's rows,
    /// receives from its columns.
    pub fn new(plan: &RankPlan, unit_elements: usize, stream: Option<usize>) -> RankProgram {
        let me = plan.rank();
        let layouts = (plan.source(), plan.target());
        let program = |axes: &[AxisPlan], from, to, peer| {
            MessageProgram::new(axes, layouts, (from, to), peer, unit_elements)
        };
        let sends = (plan.sends().iter())
            .map(|l| program(plan.rows(), me, l.peer, l.peer))
            .collect();
        let recvs = (plan.recvs().iter())
            .map(|l| program(plan.columns(), l.peer, me, l.peer).streaming(stream))
            .collect();
        let local = (plan.kept() > 0).then(|| program(plan.rows(), me, me, me).streaming(stream));
        RankProgram {
            sends,
            recvs,
            local,
        }
    }

    /// Whether some copy into this rank's target storage streams.
    pub fn streams(&self) -> bool {
        self.recvs
            .iter()
            .chain(&self.local)
            .any(|t| t.stream_unpack || t.stream_direct)
    }

    /// Bytes the programs hold on the heap.
    pub fn heap_bytes(&self) -> usize {
        self.sends
            .iter()
            .chain(&self.recvs)
            .chain(&self.local)
            .map(MessageProgram::heap_bytes)
            .sum::<usize>()
            + (self.sends.capacity() + self.recvs.capacity()) * size_of::<MessageProgram>()
    }
}
