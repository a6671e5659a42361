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
//! indices holding about [`UNIT_BYTES`] each.

use super::kernel::{Indexed, Move, Moves, Out};
use crate::Plan;
use dist_array::Order;
use rayon::prelude::*;
use std::mem::size_of;

/// Bytes of data per unit of parallel work.
pub(crate) const UNIT_BYTES: usize = 1 << 21;

mod axis;
#[cfg(test)]
mod tests;
mod tree;

use axis::{AxisProgram, Piece};
pub(crate) use tree::TypeTree;

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

/// Which two sides a copy moves between.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sides {
    /// Source storage into the buffer.
    Pack,
    /// The buffer into target storage.
    Unpack,
    /// Source storage into target storage.
    Direct,
}

/// The copy program of one message between a source and a target rank.
#[derive(Debug, Clone)]
pub(crate) struct Transfer {
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

impl Transfer {
    /// The program of the message from source rank `from` to target rank
    /// `to`, with units of parallel work of about `unit_elements` elements.
    pub fn with_units(
        plan: &Plan,
        from: usize,
        to: usize,
        peer: usize,
        unit_elements: usize,
    ) -> Transfer {
        let src = plan.source();
        let dst = plan.target();
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
            .map(|&d| AxisProgram::new(&plan.axes()[d], a[d], b[d]))
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
        Transfer {
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
    /// [`stream::MIN_SOURCE_RUN_BYTES`](super::stream::MIN_SOURCE_RUN_BYTES));
    /// with `None`, nothing streams.
    pub fn streaming(mut self, stream: Option<usize>) -> Transfer {
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

    /// Calls `f` with every copy of the message between `sides` over the
    /// outermost indices `u0..u1`, offsets in elements of local storage or
    /// buffer; whole periods of short stretches come as index tables when
    /// `periods` allows it; buffer offsets are taken relative to
    /// `buf_start`, at most the first buffer offset of index `u0`. `f`
    /// returns whether to go on; so does `walk`.
    fn walk(
        &self,
        sides: Sides,
        u0: usize,
        u1: usize,
        periods: bool,
        buf_start: usize,
        f: &mut impl FnMut(Move<'_>) -> bool,
    ) -> bool {
        self.len == 0 || self.walk_dim(sides, 0, u0, u1, (0, 0, 0), buf_start, periods, f)
    }

    #[allow(clippy::too_many_arguments)]
    fn walk_dim(
        &self,
        sides: Sides,
        d: usize,
        u0: usize,
        u1: usize,
        base: (usize, usize, usize),
        buf_start: usize,
        periods: bool,
        f: &mut impl FnMut(Move<'_>) -> bool,
    ) -> bool {
        let (ss, ds, bs) = (
            self.src_strides[d],
            self.dst_strides[d],
            self.buf_strides[d],
        );
        if d + 1 == self.axes.len() {
            return self.axes[d].pieces(u0, u1, periods, &mut |pos, piece| match piece {
                Piece::Line(l) => {
                    let src = (base.0 + l.src * ss, l.src_step * ss, ss);
                    let dst = (base.1 + l.dst * ds, l.dst_step * ds, ds);
                    let buf = (base.2 + pos * bs - buf_start, l.len * bs, bs);
                    let (from, to) = match sides {
                        Sides::Pack => (src, buf),
                        Sides::Unpack => (buf, dst),
                        Sides::Direct => (src, dst),
                    };
                    f(Move::Line(Moves {
                        from: from.0,
                        from_step: from.1,
                        from_stride: from.2,
                        to: to.0,
                        to_step: to.1,
                        to_stride: to.2,
                        len: l.len,
                        count: l.count,
                    }))
                }
                Piece::Period(p) => {
                    let Some(o) = p.offsets else {
                        // Whole periods of longer stretches: their lines,
                        // period after period, in one tight loop.
                        let axis = &self.axes[d];
                        let mut at = pos;
                        for k in 0..p.repeat {
                            let (s0, d0) = (p.src + k * p.src_stride, p.dst + k * p.dst_stride);
                            for l in &axis.body {
                                let src = (base.0 + (s0 + l.src) * ss, l.src_step * ss, ss);
                                let dst = (base.1 + (d0 + l.dst) * ds, l.dst_step * ds, ds);
                                let buf = (base.2 + at * bs - buf_start, l.len * bs, bs);
                                let (from, to) = match sides {
                                    Sides::Pack => (src, buf),
                                    Sides::Unpack => (buf, dst),
                                    Sides::Direct => (src, dst),
                                };
                                let m = Moves {
                                    from: from.0,
                                    from_step: from.1,
                                    from_stride: from.2,
                                    to: to.0,
                                    to_step: to.1,
                                    to_stride: to.2,
                                    len: l.len,
                                    count: l.count,
                                };
                                if !f(Move::Line(m)) {
                                    return false;
                                }
                                at += l.len * l.count;
                            }
                        }
                        return true;
                    };
                    let n = o.src.len();
                    let src = (
                        base.0 + p.src * ss,
                        Some(&o.src[..]),
                        o.src_span,
                        ss,
                        p.src_stride * ss,
                    );
                    let dst = (
                        base.1 + p.dst * ds,
                        Some(&o.dst[..]),
                        o.dst_span,
                        ds,
                        p.dst_stride * ds,
                    );
                    let buf = (base.2 + pos * bs - buf_start, None, 0, bs, n * bs);
                    let (from, to) = match sides {
                        Sides::Pack => (src, buf),
                        Sides::Unpack => (buf, dst),
                        Sides::Direct => (src, dst),
                    };
                    f(Move::Indexed(Indexed {
                        from: from.0,
                        from_index: from.1,
                        from_span: from.2,
                        from_stride: from.3,
                        to: to.0,
                        to_index: to.1,
                        to_span: to.2,
                        to_stride: to.3,
                        n,
                        repeat: p.repeat,
                        from_period: from.4,
                        to_period: to.4,
                    }))
                }
            });
        }
        let inner = self.axes[d + 1].len();
        // The last dimension one stretch on both sides: each stretch of
        // this dimension is one line of such stretches, one per index.
        let fused = (d + 2 == self.axes.len())
            .then(|| self.axes[d + 1].single_stretch())
            .flatten();
        if let Some(st) = fused {
            let (ss1, ds1, bs1) = (
                self.src_strides[d + 1],
                self.dst_strides[d + 1],
                self.buf_strides[d + 1],
            );
            return self.axes[d].lines(u0, u1, &mut |pos, l| {
                for i in 0..l.count {
                    let src = (
                        base.0 + (l.src + i * l.src_step) * ss + st.src * ss1,
                        ss,
                        ss1,
                    );
                    let dst = (
                        base.1 + (l.dst + i * l.dst_step) * ds + st.dst * ds1,
                        ds,
                        ds1,
                    );
                    let buf = (base.2 + (pos + i * l.len) * bs - buf_start, bs, bs1);
                    let (from, to) = match sides {
                        Sides::Pack => (src, buf),
                        Sides::Unpack => (buf, dst),
                        Sides::Direct => (src, dst),
                    };
                    let m = Moves {
                        from: from.0,
                        from_step: from.1,
                        from_stride: from.2,
                        to: to.0,
                        to_step: to.1,
                        to_stride: to.2,
                        len: st.len,
                        count: l.len,
                    };
                    if !f(Move::Line(m)) {
                        return false;
                    }
                }
                true
            });
        }
        self.axes[d].lines(u0, u1, &mut |pos, l| {
            for i in 0..l.count {
                for j in 0..l.len {
                    let b = (
                        base.0 + (l.src + i * l.src_step + j) * ss,
                        base.1 + (l.dst + i * l.dst_step + j) * ds,
                        base.2 + (pos + i * l.len + j) * bs - buf_start,
                    );
                    if !self.walk_dim(sides, d + 1, 0, inner, b, 0, periods, f) {
                        return false;
                    }
                }
            }
            true
        })
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
        let unit = |k: usize| {
            let cut = |k: usize| u0 + (k as u128 * outer as u128 / units as u128) as usize;
            self.walk(sides, cut(k), cut(k + 1), true, buf_start, &mut |m| {
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

    /// The outermost indices of the packed elements `start..start + n`,
    /// which must cover whole outermost indices (or end with the message).
    fn outer_range(&self, start: usize, n: usize) -> (usize, usize) {
        let stride = self.outer_stride();
        assert!(
            start % stride == 0
                && (n % stride == 0 || start + n == self.len)
                && start + n <= self.len,
            "a piece {start}+{n} of whole outer indices of {stride} elements in a message of {}",
            self.len
        );
        (start / stride, (start + n).div_ceil(stride))
    }

    /// Where the packed elements `start..start + n` of the message, which
    /// cover whole outermost indices, lie in target storage when they lie
    /// there as one contiguous run: its first offset. O(lines of the
    /// piece).
    pub fn target_run(&self, start: usize, n: usize) -> Option<usize> {
        let (u0, u1) = self.outer_range(start, n);
        let mut run: Option<(usize, usize)> = None;
        let mut contiguous = true;
        self.walk(Sides::Unpack, u0, u1, false, start, &mut |m| {
            let Move::Line(l) = m else {
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

    /// Gathers the message from the source local storage into `buf`
    /// (exactly `self.len` elements long).
    pub fn pack<T: Copy + Send + Sync>(&self, src: &[T], buf: &mut [T]) {
        assert_eq!(buf.len(), self.len, "pack buffer of the message's length");
        self.pack_piece(0, src, buf);
    }

    /// Gathers the packed elements `start..start + buf.len()` of the
    /// message, which cover whole outermost indices, into `buf`.
    pub fn pack_piece<T: Copy + Send + Sync>(&self, start: usize, src: &[T], buf: &mut [T]) {
        let range = self.outer_range(start, buf.len());
        self.run(Sides::Pack, src, &Out::new(buf), range, start);
    }

    /// Scatters `buf` (the packed message) into the target local storage.
    pub fn unpack<T: Copy + Send + Sync>(&self, buf: &[T], dst: &mut [T]) {
        assert_eq!(buf.len(), self.len, "unpack buffer of the message's length");
        self.unpack_piece(0, buf, dst);
    }

    /// Scatters the packed elements `start..start + buf.len()` of the
    /// message, which cover whole outermost indices, into the target local
    /// storage.
    pub fn unpack_piece<T: Copy + Send + Sync>(&self, start: usize, buf: &[T], dst: &mut [T]) {
        let range = self.outer_range(start, buf.len());
        self.run(Sides::Unpack, buf, &Out::new(dst), range, start);
    }

    /// Copies the message straight from source to target local storage.
    pub fn copy_local<T: Copy + Send + Sync>(&self, src: &[T], dst: &mut [T]) {
        let outer = self.axes.first().map_or(0, AxisProgram::len);
        self.run(Sides::Direct, src, &Out::new(dst), (0, outer), 0);
    }

    /// Copies part `k` of `parts` of the message (its outermost indices cut
    /// evenly) straight from `src` into the target behind `out`; the parts
    /// `0..parts` together are [`copy_local`](Self::copy_local).
    pub fn copy_part<T: Copy + Send + Sync>(
        &self,
        src: &[T],
        out: &Out<T>,
        k: usize,
        parts: usize,
    ) {
        self.run_part(Sides::Direct, src, out, k, parts);
    }

    /// Packs part `k` of `parts` of the message (its outermost indices cut
    /// evenly) into `buf`, the whole message's buffer; the parts `0..parts`
    /// together are [`pack`](Self::pack).
    pub fn pack_part<T: Copy + Send + Sync>(
        &self,
        src: &[T],
        buf: &Out<T>,
        k: usize,
        parts: usize,
    ) {
        self.run_part(Sides::Pack, src, buf, k, parts);
    }

    /// Runs part `k` of `parts` of the message's copy between `sides`, its
    /// outermost indices cut evenly.
    fn run_part<T: Copy + Send + Sync>(
        &self,
        sides: Sides,
        from: &[T],
        out: &Out<T>,
        k: usize,
        parts: usize,
    ) {
        let outer = self.axes.first().map_or(0, AxisProgram::len);
        let cut = |k: usize| (k as u128 * outer as u128 / parts.max(1) as u128) as usize;
        self.run(sides, from, out, (cut(k), cut(k + 1)), 0);
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
        self.walk(
            if source { Sides::Pack } else { Sides::Unpack },
            0,
            outer,
            false,
            0,
            &mut |m| {
                let Move::Line(m) = m else {
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
            },
        );
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
#[derive(Debug, Clone)]
pub(crate) struct RankProgram {
    /// Messages this rank sends, by increasing target rank (itself excluded).
    pub sends: Vec<Transfer>,
    /// Messages this rank receives, by increasing source rank (itself excluded).
    pub recvs: Vec<Transfer>,
    /// The part that stays on this rank.
    pub local: Option<Transfer>,
}

impl RankProgram {
    /// The programs of rank `me`, with units of parallel work of about
    /// `unit_elements` elements (`usize::MAX`: copies run on the calling
    /// thread alone); copies into this rank's target storage stream as
    /// [`Transfer::streaming`] says for `stream`.
    pub fn new(plan: &Plan, me: usize, unit_elements: usize, stream: Option<usize>) -> RankProgram {
        let mut sends = vec![];
        let mut recvs = vec![];
        let mut local = None;
        for m in plan.messages() {
            if m.len == 0 {
                continue;
            }
            if m.from == me && m.to == me {
                local =
                    Some(Transfer::with_units(plan, me, me, me, unit_elements).streaming(stream));
            } else if m.from == me {
                sends.push(Transfer::with_units(plan, me, m.to, m.to, unit_elements));
            } else if m.to == me {
                recvs.push(
                    Transfer::with_units(plan, m.from, me, m.from, unit_elements).streaming(stream),
                );
            }
        }
        sends.sort_by_key(|t| t.peer);
        recvs.sort_by_key(|t| t.peer);
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
            .map(Transfer::heap_bytes)
            .sum::<usize>()
            + (self.sends.capacity() + self.recvs.capacity()) * size_of::<Transfer>()
    }
}
