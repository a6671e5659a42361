//! The program of one dimension of one message: the lines of one basic
//! period, how many periods, the strides between them, the partial tail,
//! and per-element offsets where a period's stretches are short.

use crate::plan::{AxisPlan, Run};
use crate::tuning::{OFFSETS_MAX, SHORT_STRETCH};

/// `count` stretches of `len` indices of one dimension: stretch `i` starts
/// at local index `src + i·src_step` on the source rank and `dst +
/// i·dst_step` on the target rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Line {
    pub(super) src: usize,
    pub(super) dst: usize,
    pub(super) len: usize,
    pub(super) count: usize,
    pub(super) src_step: usize,
    pub(super) dst_step: usize,
}

impl Line {
    pub(super) fn elements(&self) -> usize {
        self.len * self.count
    }

    #[inline(always)]
    pub(super) fn shifted(mut self, src: usize, dst: usize) -> Line {
        self.src += src;
        self.dst += dst;
        self
    }

    /// Stretches `i..j` of the line, shortened to `a..b` within each.
    pub(super) fn sub_line(&self, i: usize, count: usize, a: usize, b: usize) -> Line {
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
    pub(super) fn clip(
        &self,
        x0: usize,
        x1: usize,
        f: &mut impl FnMut(usize, Line) -> bool,
    ) -> bool {
        if x0 >= x1 {
            return true;
        }
        let (i0, j0) = (x0 / self.len, x0 % self.len);
        let (i1, j1) = (x1 / self.len, x1 % self.len);
        if i0 == i1 {
            return f(x0, self.sub_line(i0, 1, j0, j1));
        }
        let mut first = i0;
        if j0 > 0 {
            if !f(x0, self.sub_line(i0, 1, j0, self.len)) {
                return false;
            }
            first += 1;
        }
        if i1 > first
            && !f(
                first * self.len,
                self.sub_line(first, i1 - first, 0, self.len),
            )
        {
            return false;
        }
        j1 == 0 || f(i1 * self.len, self.sub_line(i1, 1, 0, j1))
    }

    /// Whether `next` continues this single stretch on both sides.
    pub(super) fn continued_by(&self, next: &Line) -> bool {
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

/// Folds the periods into the body when a period is one line the periods
/// repeat at a constant step; then body and tail are one list.
fn fold(mut d: Draft) -> Draft {
    if d.periods == 0 {
        d.body.clear();
        return d;
    }
    if d.periods > 1 && d.body.len() == 1 {
        let l = &mut d.body[0];
        if l.count == 1 {
            *l = Line {
                count: d.periods,
                src_step: d.src_stride,
                dst_step: d.dst_stride,
                ..*l
            };
            d.periods = 1;
        } else if d.src_stride == l.count * l.src_step && d.dst_stride == l.count * l.dst_step {
            l.count *= d.periods;
            d.periods = 1;
        }
    }
    if d.periods == 1 {
        let mut all = std::mem::take(&mut d.body);
        all.append(&mut d.tail);
        d.body = normalise(all);
        d.src_stride = 0;
        d.dst_stride = 0;
    }
    d
}

/// Calls `f` with the sub-line of line `l`, which starts at element `pos`,
/// inside `u0..u1`; returns the position after the line, or `None` when `f`
/// asked to stop.
#[inline(always)]
fn clip_line(
    pos: usize,
    l: Line,
    u0: usize,
    u1: usize,
    f: &mut impl FnMut(usize, Lines<'_>) -> bool,
) -> Option<usize> {
    let n = l.elements();
    let go_on = if pos >= u0 && pos + n <= u1 {
        // The whole line: the common case, no division.
        f(pos, Lines::One(l))
    } else {
        pos + n <= u0
            || pos >= u1
            || l.clip(u0.max(pos) - pos, u1.min(pos + n) - pos, &mut |x, sub| {
                f(pos + x, Lines::One(sub))
            })
    };
    go_on.then_some(pos + n)
}

/// A stretch of a dimension handed to a copy: one line, or one whole
/// period of short stretches as per-element offsets.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Lines<'a> {
    /// One line, offsets absolute.
    One(Line),
    /// Whole periods: element `e` of period `k` is at `src + k·src_stride +
    /// offsets.src[e]` on the source rank, likewise on the target rank.
    Periods(Periods<'a>),
}

/// Whole periods, one after another.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Periods<'a> {
    /// Local offsets of the first period.
    pub(super) src: usize,
    pub(super) dst: usize,
    /// Periods.
    pub(super) repeat: usize,
    /// Local offsets advance per period.
    pub(super) src_stride: usize,
    pub(super) dst_stride: usize,
    /// The body's per-element offsets (short stretches), or none: then its
    /// lines are copied one after another.
    pub(super) offsets: Option<&'a OffsetTable>,
}

/// The local offsets of every element of one period, relative to the
/// period's start on each side: short stretches copied element by element
/// from a table in cache, with no per-stretch branch.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct OffsetTable {
    pub(super) src: Vec<u32>,
    pub(super) dst: Vec<u32>,
    /// One past the largest entry of each table.
    pub(super) src_span: usize,
    pub(super) dst_span: usize,
}

/// The program of one dimension of one message, its local offsets taken
/// from where the message starts in that dimension on each side (its
/// *placement*): messages of one rank whose stretches have the same shape
/// share one program, at different placements.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct AxisProgram {
    /// The lines of the first period.
    pub(super) body: Box<[Line]>,
    /// Whole periods.
    pub(super) periods: usize,
    /// Local offsets advance per period.
    pub(super) src_stride: usize,
    pub(super) dst_stride: usize,
    /// The lines after the last whole period (absolute offsets).
    pub(super) tail: Box<[Line]>,
    /// Elements of the body.
    pub(super) per_period: usize,
    /// Elements along this dimension.
    pub(super) len: usize,
    /// Per-element offsets of the body, when its stretches are short.
    pub(super) offsets: Option<Box<OffsetTable>>,
}

/// One period's lines and the tail, with the period count and strides:
/// what [`fold`] reshapes before they become an [`AxisProgram`].
struct Draft {
    body: Vec<Line>,
    periods: usize,
    src_stride: usize,
    dst_stride: usize,
    tail: Vec<Line>,
}

impl AxisProgram {
    /// The stretches of `runs`, one pair's runs of one period of `plan`,
    /// taken from their placement, which comes with them: the source and
    /// target local offsets of the first stretch.
    pub fn of_runs(runs: &[Run], plan: &AxisPlan) -> (AxisProgram, usize, usize) {
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
        let mut draft = fold(Draft {
            body: normalise(body),
            periods,
            src_stride: ss,
            dst_stride: ds,
            tail: normalise(tail),
        });
        let first = draft.body.first().or(draft.tail.first());
        let (src0, dst0) = first.map_or((0, 0), |l| (l.src, l.dst));
        for l in draft.body.iter_mut().chain(draft.tail.iter_mut()) {
            l.src -= src0;
            l.dst -= dst0;
        }
        let per_period = draft.body.iter().map(Line::elements).sum();
        let tail_len: usize = draft.tail.iter().map(Line::elements).sum();
        let mut a = AxisProgram {
            body: draft.body.into_boxed_slice(),
            periods: draft.periods,
            src_stride: draft.src_stride,
            dst_stride: draft.dst_stride,
            tail: draft.tail.into_boxed_slice(),
            per_period,
            len: draft.periods * per_period + tail_len,
            offsets: None,
        };
        a.offsets = a.short_offsets().map(Box::new);
        (a, src0, dst0)
    }

    /// The body's per-element offsets, if copying by them pays: several
    /// periods of short stretches, small enough a table.
    pub(super) fn short_offsets(&self) -> Option<OffsetTable> {
        let lines: usize = self.body.iter().map(|l| l.count).sum();
        if self.periods < 2
            || self.per_period > OFFSETS_MAX
            || lines < 2
            || self.per_period >= SHORT_STRETCH * lines
        {
            return None;
        }
        let mut o = OffsetTable {
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

    /// Elements along this dimension.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Bytes held on the heap.
    pub(super) fn heap_bytes(&self) -> usize {
        (self.body.len() + self.tail.len()) * size_of::<Line>()
            + self.offsets.as_ref().map_or(0, |o| {
                size_of::<OffsetTable>() + (o.src.capacity() + o.dst.capacity()) * size_of::<u32>()
            })
    }

    /// Calls `f(position, line)` for the lines covering the elements
    /// `u0..u1` of this dimension, in order; `position` counts elements
    /// from the start of the dimension.
    /// `f` returns whether to go on; so does `lines`.
    pub(super) fn lines(
        &self,
        u0: usize,
        u1: usize,
        f: &mut impl FnMut(usize, Line) -> bool,
    ) -> bool {
        self.lines_or_tables(u0, u1, false, &mut |pos, piece| match piece {
            Lines::One(l) => f(pos, l),
            // Not asked for; expanded all the same.
            Lines::Periods(p) => {
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
    /// stretches come as one [`Lines::Periods`] (with their offset table)
    /// when `tables` allows it.
    pub(super) fn lines_or_tables(
        &self,
        u0: usize,
        u1: usize,
        tables: bool,
        f: &mut impl FnMut(usize, Lines<'_>) -> bool,
    ) -> bool {
        let u1 = u1.min(self.len);
        if u0 >= u1 {
            return true;
        }
        let body_total = self.periods * self.per_period;
        if u0 < body_total {
            let e = self.per_period;
            // Periods lying whole inside u0..u1 go as one piece when asked.
            let (whole_from, whole_to) = if tables {
                (u0.div_ceil(e), (u1 / e).min(self.periods))
            } else {
                (0, 0)
            };
            let mut k = u0 / e;
            while k < self.periods && k * e < u1 {
                if k == whole_from && whole_from < whole_to {
                    let period = Periods {
                        src: k * self.src_stride,
                        dst: k * self.dst_stride,
                        repeat: whole_to - whole_from,
                        src_stride: self.src_stride,
                        dst_stride: self.dst_stride,
                        offsets: self.offsets.as_deref(),
                    };
                    if !f(k * e, Lines::Periods(period)) {
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
                        if !f(pos, Lines::One(l.shifted(src, dst))) {
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
    pub(super) fn single_stretch(&self) -> Option<Line> {
        match (self.periods, &self.body[..], &self.tail[..]) {
            (1, [l], []) if l.count == 1 => Some(*l),
            _ => None,
        }
    }

    /// One past the largest local index touched on each side.
    pub(super) fn ends(&self) -> (usize, usize) {
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
