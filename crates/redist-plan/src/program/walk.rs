//! Walking a message program: the copies it asks for, dimension by
//! dimension, from the outermost loop dimension in, as lines (or whole
//! periods of short stretches through offset tables) in elements of local
//! storage or buffer.

use super::axis::{Line, Lines};
use super::MessageProgram;
use crate::kernel::{CopyOp, LineCopy, TableCopy, TileCopy};

/// Which two sides a copy moves between.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Sides {
    /// Source storage into the buffer.
    Pack,
    /// The buffer into target storage.
    Unpack,
    /// Source storage into target storage.
    Direct,
}

impl Sides {
    /// The reading and the writing side among the three.
    #[inline(always)]
    fn pick<X>(self, src: X, dst: X, buf: X) -> (X, X) {
        match self {
            Sides::Pack => (src, buf),
            Sides::Unpack => (buf, dst),
            Sides::Direct => (src, dst),
        }
    }

    /// A line copy between the reading and writing side of `src`, `dst`
    /// and `buf` (each where the line starts, the step between its
    /// stretches and the stride between a stretch's elements), of `count`
    /// stretches of `len`.
    #[inline(always)]
    pub(super) fn line(
        self,
        src: Stretch,
        dst: Stretch,
        buf: Stretch,
        len: usize,
        count: usize,
    ) -> CopyOp<'static> {
        let (from, to) = self.pick(src, dst, buf);
        CopyOp::Line(LineCopy {
            from: from.at,
            from_step: from.step,
            from_stride: from.stride,
            to: to.at,
            to_step: to.step,
            to_stride: to.stride,
            len,
            count,
        })
    }
}

/// Where a line of stretches lies on one side, in elements of storage or
/// buffer: its first element, the step between stretches, the stride
/// between the elements of one stretch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stretch {
    pub at: usize,
    pub step: usize,
    pub stride: usize,
}

/// What a walk is for: the two sides, whether whole periods of short
/// stretches come as offset tables, and where the walked range of the
/// buffer starts (buffer offsets are relative to it).
#[derive(Debug, Clone, Copy)]
pub(super) struct Walk {
    pub sides: Sides,
    pub tables: bool,
    pub buf_start: usize,
}

/// Offsets of the current index on the three sides: source and target
/// storage, buffer.
type Base = (usize, usize, usize);

/// The innermost dimension of one walk, its strides and base offsets taken
/// once: what turns each of its lines into a copy.
struct Innermost {
    sides: Sides,
    /// Source, target and buffer strides.
    strides: (usize, usize, usize),
    /// Source, target and buffer offsets of the current outer index.
    base: Base,
    /// Where the walked range of the buffer starts.
    buf_start: usize,
}

impl Innermost {
    /// The copy of line `l`, which starts at element `pos` of the buffer,
    /// its local offsets shifted by `shift` (source, target).
    #[inline(always)]
    fn line(&self, pos: usize, l: &Line, shift: (usize, usize)) -> CopyOp<'static> {
        let (ss, ds, bs) = self.strides;
        let src = Stretch {
            at: self.base.0 + (shift.0 + l.src) * ss,
            step: l.src_step * ss,
            stride: ss,
        };
        let dst = Stretch {
            at: self.base.1 + (shift.1 + l.dst) * ds,
            step: l.dst_step * ds,
            stride: ds,
        };
        let buf = Stretch {
            at: self.base.2 + pos * bs - self.buf_start,
            step: l.len * bs,
            stride: bs,
        };
        self.sides.line(src, dst, buf, l.len, l.count)
    }
}

impl MessageProgram {
    /// Calls `f` with every copy of the message for `walk` over the
    /// outermost indices `u0..u1`, offsets in elements of local storage or
    /// buffer; buffer offsets are taken relative to `walk.buf_start`, at
    /// most the first buffer offset of index `u0`. `f` returns whether to
    /// go on; so does `walk`.
    pub(super) fn walk(
        &self,
        walk: Walk,
        outer: (usize, usize),
        f: &mut impl FnMut(CopyOp<'_>) -> bool,
    ) -> bool {
        self.len == 0 || self.walk_dim(walk, 0, outer, (0, 0, 0), f)
    }

    /// The walk of dimension `d` (in loop order) over its indices
    /// `u0..u1`, from `base`.
    fn walk_dim(
        &self,
        walk: Walk,
        d: usize,
        (u0, u1): (usize, usize),
        base: Base,
        f: &mut impl FnMut(CopyOp<'_>) -> bool,
    ) -> bool {
        // The dimension's lines count from its placement.
        let (at_src, at_dst) = self.placed_at(d);
        let base = (base.0 + at_src, base.1 + at_dst, base.2);
        if d + 1 == self.ndim() {
            return self.walk_innermost(walk, d, (u0, u1), base, f);
        }
        if d + 2 == self.ndim() && self.transposes(walk.sides, d) {
            return self.walk_tiles(walk, d, (u0, u1), base, f);
        }
        // The last dimension one stretch on both sides: each stretch of
        // this dimension is one line of such stretches, one per index.
        if d + 2 == self.ndim() {
            if let Some(st) = self.axis(d + 1).single_stretch() {
                let (s1, d1) = self.at[d + 1];
                let st = st.shifted(s1, d1);
                return self.walk_over_stretch(walk, d, st, (u0, u1), base, f);
            }
        }
        let inner = self.axis(d + 1).len();
        let (ss, ds, bs) = self.strides_of(d);
        self.axis(d).lines(u0, u1, &mut |pos, l| {
            for i in 0..l.count {
                for j in 0..l.len {
                    let b = (
                        base.0 + (l.src + i * l.src_step + j) * ss,
                        base.1 + (l.dst + i * l.dst_step + j) * ds,
                        base.2 + (pos + i * l.len + j) * bs - walk.buf_start,
                    );
                    let inner_walk = Walk {
                        buf_start: 0,
                        ..walk
                    };
                    if !self.walk_dim(inner_walk, d + 1, (0, inner), b, f) {
                        return false;
                    }
                }
            }
            true
        })
    }

    /// Whether the copies between `sides` write dimension `d` faster than
    /// the innermost dimension `d + 1` (the target's axes permuted, or its
    /// storage order the other than the source's): then the two go tile by
    /// tile ([`walk_tiles`](Self::walk_tiles)).
    fn transposes(&self, sides: Sides, d: usize) -> bool {
        let (ss, ds, bs) = self.strides_of(d);
        let (ss1, ds1, bs1) = self.strides_of(d + 1);
        let (_, write) = sides.pick(ss, ds, bs);
        let (_, write1) = sides.pick(ss1, ds1, bs1);
        write1 != 1 && write < write1 && self.axis(d + 1).single_stretch().is_none()
    }

    /// Dimension `d` and the innermost `d + 1` when the copies write `d`
    /// faster ([`transposes`](Self::transposes)): each stretch of `d` and
    /// each line of `d + 1` are one tile, copied in square tiles by the
    /// kernel.
    fn walk_tiles(
        &self,
        walk: Walk,
        d: usize,
        (u0, u1): (usize, usize),
        base: Base,
        f: &mut impl FnMut(CopyOp<'_>) -> bool,
    ) -> bool {
        let inner = self.axis(d + 1).len();
        let (ss, ds, bs) = self.strides_of(d);
        let (from_row, to_row) = walk.sides.pick(ss, ds, bs);
        // The innermost dimension's lines count from its placement.
        let (at_src, at_dst) = self.placed_at(d + 1);
        let inner_walk = Walk {
            buf_start: 0,
            tables: false,
            ..walk
        };
        self.axis(d).lines(u0, u1, &mut |pos, l| {
            for i in 0..l.count {
                let b = (
                    base.0 + (l.src + i * l.src_step) * ss + at_src,
                    base.1 + (l.dst + i * l.dst_step) * ds + at_dst,
                    base.2 + (pos + i * l.len) * bs - walk.buf_start,
                );
                let rows = l.len;
                let go =
                    self.walk_innermost(inner_walk, d + 1, (0, inner), b, &mut |op| match op {
                        CopyOp::Line(line) => f(CopyOp::Tile(TileCopy {
                            line,
                            rows,
                            from_row,
                            to_row,
                        })),
                        other => f(other),
                    });
                if !go {
                    return false;
                }
            }
            true
        })
    }

    /// Source, target and buffer strides of dimension `d`.
    fn strides_of(&self, d: usize) -> (usize, usize, usize) {
        self.strides_at(d)
    }

    /// The innermost dimension `d`: its lines, or whole periods through
    /// offset tables when the walk takes them.
    fn walk_innermost(
        &self,
        walk: Walk,
        d: usize,
        (u0, u1): (usize, usize),
        base: Base,
        f: &mut impl FnMut(CopyOp<'_>) -> bool,
    ) -> bool {
        let (ss, ds, bs) = self.strides_of(d);
        let at = Innermost {
            sides: walk.sides,
            strides: (ss, ds, bs),
            base,
            buf_start: walk.buf_start,
        };
        let axis = self.axis(d);
        axis.lines_or_tables(u0, u1, walk.tables, &mut |pos, piece| match piece {
            Lines::One(l) => f(at.line(pos, &l, (0, 0))),
            Lines::Periods(p) => {
                let Some(o) = p.offsets else {
                    // Whole periods of longer stretches: their lines,
                    // period after period, in one tight loop.
                    let mut pos = pos;
                    for k in 0..p.repeat {
                        let shift = (p.src + k * p.src_stride, p.dst + k * p.dst_stride);
                        for l in &axis.body {
                            if !f(at.line(pos, l, shift)) {
                                return false;
                            }
                            pos += l.len * l.count;
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
                let buf = (base.2 + pos * bs - walk.buf_start, None, 0, bs, n * bs);
                let (from, to) = walk.sides.pick(src, dst, buf);
                f(CopyOp::Table(TableCopy {
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
        })
    }

    /// Dimension `d` when the dimension inside it (the innermost) is one
    /// stretch `st` on both sides: every index of `d` adds one stretch of
    /// `st`, so each stretch of `d` is a single line of them.
    fn walk_over_stretch(
        &self,
        walk: Walk,
        d: usize,
        st: Line,
        (u0, u1): (usize, usize),
        base: Base,
        f: &mut impl FnMut(CopyOp<'_>) -> bool,
    ) -> bool {
        let (ss, ds, bs) = self.strides_of(d);
        let (ss1, ds1, bs1) = self.strides_of(d + 1);
        self.axis(d).lines(u0, u1, &mut |pos, l| {
            for i in 0..l.count {
                let src = Stretch {
                    at: base.0 + (l.src + i * l.src_step) * ss + st.src * ss1,
                    step: ss,
                    stride: ss1,
                };
                let dst = Stretch {
                    at: base.1 + (l.dst + i * l.dst_step) * ds + st.dst * ds1,
                    step: ds,
                    stride: ds1,
                };
                let buf = Stretch {
                    at: base.2 + (pos + i * l.len) * bs - walk.buf_start,
                    step: bs,
                    stride: bs1,
                };
                if !f(walk.sides.line(src, dst, buf, st.len, l.len)) {
                    return false;
                }
            }
            true
        })
    }
}
