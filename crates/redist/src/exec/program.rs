//! Copy programs: how one message's elements are gathered from the source's
//! local storage into a buffer, scattered from a buffer into the target's
//! local storage, or copied straight from source to target.
//!
//! A message is the Cartesian product of per-dimension stretch sets
//! ([`AxisPlan`]). Per dimension, its program keeps what the plan keeps:
//! the [`Line`]s of one basic period, the number of whole periods and the
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
use crate::{AxisPlan, Plan};
use dist_array::Order;
use rayon::prelude::*;
use std::mem::size_of;

/// Bytes of data per unit of parallel work.
pub(crate) const UNIT_BYTES: usize = 1 << 21;

/// `count` stretches of `len` indices of one dimension: stretch `i` starts
/// at local index `src + i·src_step` on the source rank and `dst +
/// i·dst_step` on the target rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Line {
    src: usize,
    dst: usize,
    len: usize,
    count: usize,
    src_step: usize,
    dst_step: usize,
}

impl Line {
    fn elements(&self) -> usize {
        self.len * self.count
    }

    #[inline(always)]
    fn shifted(mut self, src: usize, dst: usize) -> Line {
        self.src += src;
        self.dst += dst;
        self
    }

    /// Stretches `i..j` of the line, shortened to `a..b` within each.
    fn part(&self, i: usize, count: usize, a: usize, b: usize) -> Line {
        Line {
            src: self.src + i * self.src_step + a,
            dst: self.dst + i * self.dst_step + a,
            len: b - a,
            count,
            src_step: self.src_step,
            dst_step: self.dst_step,
        }
    }

    /// Elements `x0..x1` of the line (counted stretch after stretch) as at
    /// most three lines, with the position of each within the line.
    /// `f` returns whether to go on; so does `clip`.
    fn clip(&self, x0: usize, x1: usize, f: &mut impl FnMut(usize, Line) -> bool) -> bool {
        if x0 >= x1 {
            return true;
        }
        let (i0, j0) = (x0 / self.len, x0 % self.len);
        let (i1, j1) = (x1 / self.len, x1 % self.len);
        if i0 == i1 {
            return f(x0, self.part(i0, 1, j0, j1));
        }
        let mut first = i0;
        if j0 > 0 {
            if !f(x0, self.part(i0, 1, j0, self.len)) {
                return false;
            }
            first += 1;
        }
        if i1 > first && !f(first * self.len, self.part(first, i1 - first, 0, self.len)) {
            return false;
        }
        j1 == 0 || f(i1 * self.len, self.part(i1, 1, 0, j1))
    }

    /// Whether `next` continues this single stretch on both sides.
    fn continued_by(&self, next: &Line) -> bool {
        self.count == 1
            && next.count == 1
            && self.src + self.len == next.src
            && self.dst + self.len == next.dst
    }
}

/// Merges what can be merged in a list of lines: stretches that follow each
/// other on both sides become one.
fn normalise(lines: Vec<Line>) -> Vec<Line> {
    let mut out: Vec<Line> = Vec::with_capacity(lines.len());
    for mut l in lines {
        if l.elements() == 0 {
            continue;
        }
        if l.count > 1 && l.src_step == l.len && l.dst_step == l.len {
            l.len *= l.count;
            l.count = 1;
        }
        if l.count == 1 {
            l.src_step = l.len;
            l.dst_step = l.len;
        }
        match out.last_mut() {
            Some(last) if last.continued_by(&l) => {
                last.len += l.len;
                last.src_step = last.len;
                last.dst_step = last.len;
            }
            _ => out.push(l),
        }
    }
    out.shrink_to_fit();
    out
}

/// Calls `f` with the part of line `l`, which starts at element `pos`,
/// inside `u0..u1`; returns the position after the line, or `None` when `f`
/// asked to stop.
#[inline(always)]
fn clip_line(
    pos: usize,
    l: Line,
    u0: usize,
    u1: usize,
    f: &mut impl FnMut(usize, Piece<'_>) -> bool,
) -> Option<usize> {
    let n = l.elements();
    let go_on = if pos >= u0 && pos + n <= u1 {
        // The whole line: the common case, no division.
        f(pos, Piece::Line(l))
    } else {
        pos + n <= u0
            || pos >= u1
            || l.clip(u0.max(pos) - pos, u1.min(pos + n) - pos, &mut |x, part| {
                f(pos + x, Piece::Line(part))
            })
    };
    go_on.then_some(pos + n)
}

/// A stretch of a dimension handed to a copy: one line, or one whole
/// period of short stretches as per-element offsets.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Piece<'a> {
    /// A line, offsets absolute.
    Line(Line),
    /// Whole periods: element `e` of period `k` is at `src + k·src_stride +
    /// offsets.src[e]` on the source rank, likewise on the target rank.
    Period(Period<'a>),
}

/// Whole periods, one after another.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Period<'a> {
    /// Local offsets of the first period.
    src: usize,
    dst: usize,
    /// Periods.
    repeat: usize,
    /// Local offsets advance per period.
    src_stride: usize,
    dst_stride: usize,
    /// The body's per-element offsets (short stretches), or none: then its
    /// lines are copied one after another.
    offsets: Option<&'a Offsets>,
}

/// The local offsets of every element of one period, relative to the
/// period's start on each side: short stretches copied element by element
/// from a table in cache, with no per-stretch branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Offsets {
    src: Vec<u32>,
    dst: Vec<u32>,
    /// One past the largest entry of each table.
    src_span: usize,
    dst_span: usize,
}

/// Longest period (elements of one message along one dimension) kept as
/// per-element offsets.
const OFFSETS_MAX: usize = 1 << 16;

/// Average stretch length below which a period is copied by offsets.
const SHORT_STRETCH: usize = 8;

/// The program of one dimension of one message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AxisProgram {
    /// The lines of the first period.
    body: Vec<Line>,
    /// Whole periods.
    periods: usize,
    /// Local offsets advance per period.
    src_stride: usize,
    dst_stride: usize,
    /// The lines after the last whole period (absolute offsets).
    tail: Vec<Line>,
    /// Elements of the body.
    per_period: usize,
    /// Elements along this dimension.
    len: usize,
    /// Per-element offsets of the body, when its stretches are short.
    offsets: Option<Offsets>,
}

impl AxisProgram {
    /// The stretches moving from process `p` to process `q` of `plan`.
    pub fn new(plan: &AxisPlan, p: usize, q: usize) -> AxisProgram {
        let runs = plan.runs(p, q);
        let periods = plan.periods();
        let (ss, ds) = (plan.source_stride(), plan.target_stride());
        let line = |src, dst, len, count, src_step, dst_step| Line {
            src,
            dst,
            len,
            count,
            src_step,
            dst_step,
        };
        let body: Vec<Line> = runs
            .iter()
            .map(|r| line(r.src, r.dst, r.len, r.count, r.src_step, r.dst_step))
            .collect();
        let mut tail = vec![];
        for r in runs {
            let (whole, partial) = r.clipped(plan.tail());
            let (s, d) = (r.src + periods * ss, r.dst + periods * ds);
            if whole > 0 {
                tail.push(line(s, d, r.len, whole, r.src_step, r.dst_step));
            }
            if partial > 0 {
                let (s, d) = (s + whole * r.src_step, d + whole * r.dst_step);
                tail.push(line(s, d, partial, 1, partial, partial));
            }
        }
        let mut a = AxisProgram {
            body: normalise(body),
            periods,
            src_stride: ss,
            dst_stride: ds,
            tail: normalise(tail),
            per_period: 0,
            len: 0,
            offsets: None,
        };
        a.fold();
        a.per_period = a.body.iter().map(Line::elements).sum();
        a.len = a.periods * a.per_period + a.tail.iter().map(Line::elements).sum::<usize>();
        a.offsets = a.short_offsets();
        a
    }

    /// The body's per-element offsets, if copying by them pays: several
    /// periods of short stretches, small enough a table.
    fn short_offsets(&self) -> Option<Offsets> {
        let lines: usize = self.body.iter().map(|l| l.count).sum();
        if self.periods < 2
            || self.per_period > OFFSETS_MAX
            || lines < 2
            || self.per_period >= SHORT_STRETCH * lines
        {
            return None;
        }
        let mut o = Offsets {
            src: Vec::with_capacity(self.per_period),
            dst: Vec::with_capacity(self.per_period),
            src_span: 0,
            dst_span: 0,
        };
        for l in &self.body {
            for i in 0..l.count {
                for j in 0..l.len {
                    o.src.push(u32::try_from(l.src + i * l.src_step + j).ok()?);
                    o.dst.push(u32::try_from(l.dst + i * l.dst_step + j).ok()?);
                }
            }
        }
        o.src_span = o.src.iter().max().map_or(0, |&m| m as usize + 1);
        o.dst_span = o.dst.iter().max().map_or(0, |&m| m as usize + 1);
        Some(o)
    }

    /// Folds the periods into the body when a period is one line the
    /// periods repeat at a constant step; then body and tail are one list.
    fn fold(&mut self) {
        if self.periods == 0 {
            self.body.clear();
            return;
        }
        if self.periods > 1 && self.body.len() == 1 {
            let l = &mut self.body[0];
            if l.count == 1 {
                *l = Line {
                    count: self.periods,
                    src_step: self.src_stride,
                    dst_step: self.dst_stride,
                    ..*l
                };
                self.periods = 1;
            } else if self.src_stride == l.count * l.src_step
                && self.dst_stride == l.count * l.dst_step
            {
                l.count *= self.periods;
                self.periods = 1;
            }
        }
        if self.periods == 1 {
            let mut all = std::mem::take(&mut self.body);
            all.append(&mut self.tail);
            self.body = normalise(all);
            self.src_stride = 0;
            self.dst_stride = 0;
        }
    }

    /// Elements along this dimension.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Bytes held on the heap.
    fn heap_bytes(&self) -> usize {
        (self.body.capacity() + self.tail.capacity()) * size_of::<Line>()
            + self.offsets.as_ref().map_or(0, |o| {
                (o.src.capacity() + o.dst.capacity()) * size_of::<u32>()
            })
    }

    /// Calls `f(position, line)` for the lines covering the elements
    /// `u0..u1` of this dimension, in order; `position` counts elements
    /// from the start of the dimension.
    /// `f` returns whether to go on; so does `lines`.
    fn lines(&self, u0: usize, u1: usize, f: &mut impl FnMut(usize, Line) -> bool) -> bool {
        self.pieces(u0, u1, false, &mut |pos, piece| match piece {
            Piece::Line(l) => f(pos, l),
            // Not asked for; expanded all the same.
            Piece::Period(p) => {
                let mut at = pos;
                for k in 0..p.repeat {
                    let (src, dst) = (p.src + k * p.src_stride, p.dst + k * p.dst_stride);
                    for l in &self.body {
                        if !f(at, l.shifted(src, dst)) {
                            return false;
                        }
                        at += l.elements();
                    }
                }
                true
            }
        })
    }

    /// Like [`lines`](Self::lines), but whole periods of a body of short
    /// stretches come as one [`Piece::Period`] when `periods` allows it.
    fn pieces(
        &self,
        u0: usize,
        u1: usize,
        periods: bool,
        f: &mut impl FnMut(usize, Piece<'_>) -> bool,
    ) -> bool {
        let u1 = u1.min(self.len);
        if u0 >= u1 {
            return true;
        }
        let body_total = self.periods * self.per_period;
        if u0 < body_total {
            let e = self.per_period;
            // Periods lying whole inside u0..u1 go as one piece when asked.
            let (whole_from, whole_to) = if periods {
                (u0.div_ceil(e), (u1 / e).min(self.periods))
            } else {
                (0, 0)
            };
            let mut k = u0 / e;
            while k < self.periods && k * e < u1 {
                if k == whole_from && whole_from < whole_to {
                    let period = Period {
                        src: k * self.src_stride,
                        dst: k * self.dst_stride,
                        repeat: whole_to - whole_from,
                        src_stride: self.src_stride,
                        dst_stride: self.dst_stride,
                        offsets: self.offsets.as_ref(),
                    };
                    if !f(k * e, Piece::Period(period)) {
                        return false;
                    }
                    k = whole_to;
                    continue;
                }
                let (src, dst) = (k * self.src_stride, k * self.dst_stride);
                let mut pos = k * e;
                if pos >= u0 && pos + e <= u1 {
                    // A whole period: every line whole.
                    for l in &self.body {
                        if !f(pos, Piece::Line(l.shifted(src, dst))) {
                            return false;
                        }
                        pos += l.len * l.count;
                    }
                    k += 1;
                    continue;
                }
                for l in &self.body {
                    let Some(next) = clip_line(pos, l.shifted(src, dst), u0, u1, f) else {
                        return false;
                    };
                    pos = next;
                    if pos >= u1 {
                        break;
                    }
                }
                k += 1;
            }
        }
        let mut pos = body_total;
        for l in &self.tail {
            if pos >= u1 {
                break;
            }
            let Some(next) = clip_line(pos, *l, u0, u1, f) else {
                return false;
            };
            pos = next;
        }
        true
    }

    /// The dimension's only stretch, when it has exactly one.
    fn single_stretch(&self) -> Option<Line> {
        match (self.periods, &self.body[..], &self.tail[..]) {
            (1, [l], []) if l.count == 1 => Some(*l),
            _ => None,
        }
    }

    /// One past the largest local index touched on each side.
    fn ends(&self) -> (usize, usize) {
        let mut ends = (0, 0);
        self.lines(0, self.len, &mut |_, l| {
            let last = |start: usize, step: usize| start + (l.count - 1) * step + l.len;
            ends.0 = ends.0.max(last(l.src, l.src_step));
            ends.1 = ends.1.max(last(l.dst, l.dst_step));
            true
        });
        ends
    }
}

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
        }
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
        let unit = |k: usize| {
            let cut = |k: usize| u0 + (k as u128 * outer as u128 / units as u128) as usize;
            self.walk(sides, cut(k), cut(k + 1), true, buf_start, &mut |m| {
                out.apply(from, &m);
                true
            });
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
        let outer = self.axes.first().map_or(0, AxisProgram::len);
        let cut = |k: usize| (k as u128 * outer as u128 / parts.max(1) as u128) as usize;
        self.run(Sides::Direct, src, out, (cut(k), cut(k + 1)), 0);
    }

    /// The contiguous runs of the message in its source (`source == true`)
    /// or target local storage, in buffer order, as (offset, length) in
    /// elements, adjacent runs merged; `None` when that side is not
    /// contiguous along the innermost loop dimension or has more than
    /// `max_runs` runs. Costs O(`max_runs`) at most.
    pub fn runs(&self, source: bool, max_runs: usize) -> Option<Vec<(usize, usize)>> {
        let mut runs = Vec::new();
        self.each_run(source, max_runs, |off, len| runs.push((off, len)))?;
        Some(runs)
    }

    /// Calls `f(offset, length)` for each run [`runs`](Self::runs) would
    /// list, without storing them; returns how many, or `None` (having
    /// called `f` for the first `max_runs` at most) when [`runs`](Self::runs)
    /// would.
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
    /// thread alone).
    pub fn new(plan: &Plan, me: usize, unit_elements: usize) -> RankProgram {
        let mut sends = vec![];
        let mut recvs = vec![];
        let mut local = None;
        for m in plan.messages() {
            if m.len == 0 {
                continue;
            }
            if m.from == me && m.to == me {
                local = Some(Transfer::with_units(plan, me, me, me, unit_elements));
            } else if m.from == me {
                sends.push(Transfer::with_units(plan, me, m.to, m.to, unit_elements));
            } else if m.to == me {
                recvs.push(Transfer::with_units(
                    plan,
                    m.from,
                    me,
                    m.from,
                    unit_elements,
                ));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{Pair, Windowed};
    use crate::Remap;
    use dist_array::Layout;
    use mpi_harness::all_indices;
    use quickcheck::quickcheck;

    /// Flat offset of local index `l` in the local storage of `rank`.
    fn flat(layout: &Layout, rank: usize, l: &[usize]) -> usize {
        let shape = layout.local_shape(rank).unwrap();
        let s = strides(&shape, layout.storage());
        l.iter().zip(&s).map(|(i, s)| i * s).sum()
    }

    /// The oracle: for the message from `a` to `b`, every element as
    /// (source flat offset, target flat offset), scanning every index of
    /// the plan's window.
    fn pairs(plan: &Plan, a: usize, b: usize) -> Vec<(usize, usize)> {
        let (s, t, w) = (plan.source(), plan.target(), plan.window());
        let mut out = vec![];
        for i in all_indices(w.shape()) {
            let at = |origin: &[usize]| -> Vec<usize> {
                i.iter().zip(origin).map(|(i, o)| i + o).collect()
            };
            let (ra, la) = s.global_to_local(&at(w.source_origin())).unwrap();
            let (rb, lb) = t.global_to_local(&at(w.target_origin())).unwrap();
            if (ra, rb) == (a, b) {
                out.push((flat(s, a, &la), flat(t, b, &lb)));
            }
        }
        out.sort();
        out
    }

    /// Pack, unpack and the direct copy of every message of a plan agree
    /// with the oracle, and the runs cover exactly the message; with units
    /// of parallel work of `unit` elements.
    fn programs_match_scan(p: Pair, unit: usize) -> bool {
        plan_programs_match_scan(&Plan::new(&p.0, &p.1, Remap::None).unwrap(), unit)
    }

    /// [`programs_match_scan`] for any plan, windowed or whole.
    fn plan_programs_match_scan(plan: &Plan, unit: usize) -> bool {
        let (s, t) = (plan.source(), plan.target());
        for m in plan.messages() {
            let want = pairs(plan, m.from, m.to);
            let tr = Transfer::with_units(plan, m.from, m.to, m.to, unit);
            if tr.len != want.len() || tr.len != m.len {
                return false;
            }
            // The source holds its own flat offsets.
            let src: Vec<u64> = (0..s.local_len(m.from).unwrap() as u64).collect();
            let mut buf = vec![u64::MAX; tr.len];
            tr.pack(&src, &mut buf);
            // The buffer is in source memory order.
            let mut sorted = want.iter().map(|&(a, _)| a as u64).collect::<Vec<_>>();
            sorted.sort();
            if buf != sorted {
                return false;
            }
            let n = t.local_len(m.to).unwrap();
            let mut dst = vec![u64::MAX; n];
            tr.unpack(&buf, &mut dst);
            let mut direct = vec![u64::MAX; n];
            tr.copy_local(&src, &mut direct);
            let mut expect = vec![u64::MAX; n];
            for &(a, b) in &want {
                expect[b] = a as u64;
            }
            if dst != expect || direct != expect {
                return false;
            }
            for source in [true, false] {
                if let Some(runs) = tr.runs(source, usize::MAX) {
                    let mut covered: Vec<usize> =
                        runs.iter().flat_map(|&(o, l)| o..o + l).collect();
                    covered.sort();
                    let mut side: Vec<usize> = want
                        .iter()
                        .map(|&(a, b)| if source { a } else { b })
                        .collect();
                    side.sort();
                    if covered != side {
                        return false;
                    }
                }
            }
        }
        true
    }

    quickcheck! {
        fn copy_programs_match_scan(p: Pair, unit: u8) -> bool {
            programs_match_scan(p, usize::from(unit % 16) + 1)
        }

        fn windowed_copy_programs_match_scan(w: Windowed, unit: u8) -> bool {
            let plan = Plan::with_window(&w.0, &w.1, &w.2, Remap::None).unwrap();
            plan_programs_match_scan(&plan, usize::from(unit % 16) + 1)
        }
    }

    #[test]
    fn rank_program_splits_sends_receives_and_the_local_part() {
        let s = Layout::parse(&[12], "block@3").unwrap();
        let t = Layout::parse(&[12], "cyclic@3").unwrap();
        let plan = Plan::new(&s, &t, Remap::None).unwrap();
        let p = RankProgram::new(&plan, 1, 1 << 18);
        // Rank 1 holds 4..8 and keeps 4 and 7; 5 -> 2, 6 -> 0.
        assert_eq!(p.local.as_ref().map(|t| t.len), Some(2));
        assert_eq!(
            p.sends.iter().map(|t| (t.peer, t.len)).collect::<Vec<_>>(),
            vec![(0, 1), (2, 1)]
        );
        // It receives 1 from rank 0 and 10 from rank 2.
        assert_eq!(
            p.recvs.iter().map(|t| (t.peer, t.len)).collect::<Vec<_>>(),
            vec![(0, 1), (2, 1)]
        );
        assert!(programs_match_scan(Pair(s, t), 1 << 20));
    }

    /// Long extents against tiny blocks: periods of short stretches (copied
    /// through offset tables), folded periods, repeated runs, ragged tails,
    /// units of work that cut periods and lines anywhere.
    #[test]
    fn tiny_blocks_and_long_extents() {
        let mut tables = 0;
        for (shape, from, to) in [
            (vec![997], "cyclic@2", "cyclic(3)@3"),
            (vec![1000], "cyclic(5)@2", "cyclic(8)@2"),
            (vec![1201], "block@2", "cyclic@2"),
            (vec![1201], "cyclic(2)+1@3", "block@2"),
            (vec![600], "cyclic(100)@2", "cyclic(3)@2"),
            (
                vec![37, 41],
                "cyclic(2),cyclic(3)@2x1",
                "cyclic(3),cyclic@1x3",
            ),
            (vec![29, 53], "*,cyclic(5)@1x2", "cyclic(2),cyclic(8)@2x1"),
            (
                vec![9, 10, 11],
                "block,*,cyclic@2x1x2",
                "*,cyclic(2),block@1x2x2",
            ),
        ] {
            let s = Layout::parse(&shape, from).unwrap();
            for t in [
                Layout::parse(&shape, to).unwrap(),
                Layout::parse(&shape, to)
                    .unwrap()
                    .with_storage(Order::ColumnMajor),
            ] {
                let plan = Plan::new(&s, &t, Remap::None).unwrap();
                for m in plan.messages() {
                    let tr = Transfer::with_units(&plan, m.from, m.to, m.to, 1 << 18);
                    tables += tr.axes.iter().filter(|a| a.offsets.is_some()).count();
                }
                for unit in [1, 7, 64, 1 << 20] {
                    assert!(
                        programs_match_scan(Pair(s.clone(), t.clone()), unit),
                        "{from} -> {t}, units of {unit}"
                    );
                }
            }
        }
        assert!(tables > 0, "some periods go through offset tables");
    }

    /// What a rank holds for a redistribution does not grow with the extent.
    #[test]
    fn program_size_does_not_grow_with_the_extent() {
        for (from, to) in [
            ("block@2", "cyclic@2"),
            ("cyclic(5)@3", "cyclic(8)@2"),
            ("cyclic(100)@2", "cyclic(3)@2"),
            ("cyclic@4", "block@4"),
        ] {
            let size = |n: usize| {
                let s = Layout::parse(&[n], from).unwrap();
                let t = Layout::parse(&[n], to).unwrap();
                let plan = Plan::new(&s, &t, Remap::None).unwrap();
                (0..plan.source().ranks())
                    .map(|r| RankProgram::new(&plan, r, 1 << 18).heap_bytes())
                    .max()
                    .unwrap()
            };
            let small = size(1_000_000);
            for n in [1_000_000_000, 1_000_000_000_000] {
                assert!(
                    size(n) <= small,
                    "{from} -> {to}: {} bytes at n = {n}, {small} at 10^6",
                    size(n)
                );
            }
        }
    }
}
