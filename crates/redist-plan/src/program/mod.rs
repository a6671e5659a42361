//! Copy programs: how one message's elements are gathered from the source's
//! local storage into a buffer, scattered from a buffer into the target's
//! local storage, or copied straight from source to target.
//!
//! A message is the Cartesian product of per-dimension stretch sets
//! ([`AxisPlan`]). Per dimension, its program keeps what the plan keeps:
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
//! by index, the innermost line by line through the [`kernel`](crate::kernel)s.
//! Parallel work is cut by bytes: ranges of the outermost dimension's
//! indices holding about [`UNIT_BYTES`](crate::tuning::UNIT_BYTES) each.
//!
//! Every copy covers a range of the message's elements in buffer order
//! made of whole outermost indices: the whole message, a *piece* (one MPI
//! message's worth) or a *portion* of a pass that does several copies
//! together ([`MessageProgram::portion`]).

use super::kernel::{CopyOp, Out, Plain, Store};
use crate::coords::Order;
use crate::layout::Layout;
use crate::padding::Padding;
use crate::plan::{AxisPlan, Run};
use rayon::prelude::*;
use std::collections::HashSet;
use std::mem::size_of;
use std::ops::Range;
use std::sync::Arc;

mod axis;
mod listed;
mod merged;
mod pushed;
mod rank;
mod runs;
#[cfg(test)]
mod tests;
mod tree;
mod walk;

use axis::AxisProgram;
use listed::ListedLine;
pub use merged::MergeScratch;
pub use pushed::PushPass;
pub use rank::RankProgram;
pub use tree::TypeTree;
use walk::{Sides, Walk};

/// Strides of a local array of `shape` stored in `order` (the storage
/// of ghost layers is laid out alike).
fn strides(shape: &[usize], order: Order) -> Vec<usize> {
    crate::ghost::copy::padded_strides(shape, order)
}

/// The copy program of one message between a source and a target rank: its
/// shape, shared with the rank's other messages of the same shape, and
/// where it lies in each dimension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageProgram {
    /// The other rank (target rank for a send, source rank for a receive).
    pub peer: usize,
    /// Elements in the message.
    pub len: usize,
    /// Its dimensions' programs, strides and copy settings.
    shape: Arc<Shape>,
    /// Per dimension in loop order, the source and target local index where
    /// its program starts.
    at: Places,
    /// The whole message's lines, listed once where the message is small
    /// (`listed`): copied from the list instead of walked.
    listed: Option<Arc<[ListedLine]>>,
}

/// Where each dimension's program of a message starts: held in place for
/// up to two dimensions (the messages of a rank are many; each one
/// allocation fewer counts).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Places {
    Few([(usize, usize); 2]),
    Many(Box<[(usize, usize)]>),
}

impl Places {
    fn new(at: &[(usize, usize)]) -> Places {
        match at.len() {
            n @ 0..=2 => {
                let mut few = [(0, 0); 2];
                few[..n].copy_from_slice(at);
                Places::Few(few)
            }
            _ => Places::Many(at.into()),
        }
    }

    /// Bytes held on the heap.
    fn heap_bytes(&self) -> usize {
        match self {
            Places::Few(_) => 0,
            Places::Many(all) => all.len() * size_of::<(usize, usize)>(),
        }
    }
}

impl std::ops::Index<usize> for Places {
    type Output = (usize, usize);

    fn index(&self, d: usize) -> &(usize, usize) {
        match self {
            Places::Few(few) => &few[d],
            Places::Many(all) => &all[d],
        }
    }
}

/// What a message program is apart from where it lies: many messages of a
/// rank (a transpose's receives, say) differ only in that.
#[derive(Debug, PartialEq, Eq, Hash)]
struct Shape {
    /// Per dimension, in loop order (slowest in source memory first).
    axes: Box<[Arc<AxisProgram>]>,
    /// Per dimension in loop order, the source, target and buffer strides
    /// (elements), three by three.
    strides: Box<[usize]>,
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
    /// of parallel work of about `unit_elements` elements; `peer` is the
    /// rank at the other end.
    pub fn new(
        axes: &[AxisPlan],
        source: &Layout,
        target: &Layout,
        from: usize,
        to: usize,
        peer: usize,
        unit_elements: usize,
    ) -> MessageProgram {
        Builder::new(source, target, unit_elements).message(axes, from, to, peer, None)
    }

    /// Loop dimension `d`'s program.
    fn axis(&self, d: usize) -> &AxisProgram {
        &self.shape.axes[d]
    }

    /// Loop dimensions.
    fn ndim(&self) -> usize {
        self.shape.axes.len()
    }

    /// The source, target and buffer strides of loop dimension `d`.
    fn strides_at(&self, d: usize) -> (usize, usize, usize) {
        let s = &self.shape.strides;
        (s[3 * d], s[3 * d + 1], s[3 * d + 2])
    }

    /// Where loop dimension `d`'s program starts, in elements of source and
    /// target storage.
    fn placed_at(&self, d: usize) -> (usize, usize) {
        let (ss, ds, _) = self.strides_at(d);
        (self.at[d].0 * ss, self.at[d].1 * ds)
    }

    /// Bytes of this program's own allocations, its dimensions' shared
    /// programs aside.
    fn own_bytes(&self) -> usize {
        self.at.heap_bytes() + self.listed.as_ref().map_or(0, |l| size_of_val(&**l))
    }

    /// Lists the message's lines (see [`listed`](self::listed)) when it is
    /// small and walks into at most `max` lines; returns how many lines it
    /// listed and how many copies the attempt walked.
    fn list(&mut self, max: usize, scratch: &mut listed::ListScratch) -> (usize, usize) {
        let (lines, walked) = self.listing(max, scratch);
        let n = lines.as_ref().map_or(0, |l| l.len());
        self.listed = lines;
        (n, walked)
    }

    /// Runs `sides` over the outermost indices `u0..u1`, cut into units of
    /// work run in parallel when there are several, writing through `out`;
    /// buffer offsets are taken relative to `buf_start`.
    fn run<T: Copy + Send + Sync, S: Store<T>>(
        &self,
        sides: Sides,
        from: &[T],
        out: &Out<T>,
        (u0, u1): (usize, usize),
        buf_start: usize,
        store: S,
    ) {
        let whole = (u0, u1) == (0, self.shape.axes.first().map_or(0, |a| a.len()));
        let outer = u1.saturating_sub(u0);
        let units = units(outer * self.outer_stride(), outer, self.shape.unit_elements);
        // Only target storage streams: a packed buffer is read again at once.
        // Lines straight from source storage stream only where their source
        // runs are long; tiles wherever the target is large (they write
        // whole lines of it).
        let lines = match sides {
            Sides::Pack => false,
            Sides::Unpack => self.shape.stream_unpack,
            Sides::Direct => self.shape.stream_direct,
        };
        let stream = (lines, sides != Sides::Pack && self.shape.stream_unpack);
        if let Some(listed) = self.listed.as_deref().filter(|_| whole && buf_start == 0) {
            for l in listed {
                out.apply_with(from, &l.op(sides), stream, store);
            }
            Out::<T>::fence(stream.0 || stream.1);
            return;
        }
        let walk = Walk {
            sides,
            tables: true,
            buf_start,
        };
        let unit = |k: usize| {
            let cut = |k: usize| u0 + (k as u128 * outer as u128 / units as u128) as usize;
            self.walk(walk, (cut(k), cut(k + 1)), &mut |m| {
                out.apply_with(from, &m, stream, store);
                true
            });
            Out::<T>::fence(stream.0 || stream.1);
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
        self.shape.strides.get(2).copied().unwrap_or(1).max(1)
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

    /// Portion `k` of `portions` of the message: its outermost indices cut
    /// evenly, as a range of its elements in buffer order. Portions
    /// `0..portions` cover the message in order.
    pub fn portion(&self, k: usize, portions: usize) -> Range<usize> {
        let outer = self.shape.axes.first().map_or(0, |a| a.len());
        let cut = |k: usize| (k as u128 * outer as u128 / portions.max(1) as u128) as usize;
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
        self.run(Sides::Pack, src, &Out::new(buf), outer, range.start, Plain);
    }

    /// Scatters `buf`, the elements `range` of the message (buffer order,
    /// whole outermost indices), into the target's local storage.
    #[cfg(test)]
    pub fn unpack<T: Copy + Send + Sync>(&self, range: Range<usize>, buf: &[T], dst: &mut [T]) {
        self.unpack_with(range, buf, dst, Plain);
    }

    /// `unpack`, storing through `store`.
    pub fn unpack_with<T: Copy + Send + Sync, S: Store<T>>(
        &self,
        range: Range<usize>,
        buf: &[T],
        dst: &mut [T],
        store: S,
    ) {
        assert_eq!(buf.len(), range.len(), "a buffer for elements {range:?}");
        let outer = self.outer_range(&range);
        self.run(
            Sides::Unpack,
            buf,
            &Out::new(dst),
            outer,
            range.start,
            store,
        );
    }

    /// Copies the elements `range` of the message (buffer order, whole
    /// outermost indices) straight from the source's local storage `src`
    /// into the target's `dst`.
    #[cfg(test)]
    pub fn copy<T: Copy + Send + Sync>(&self, src: &[T], range: Range<usize>, dst: &mut [T]) {
        self.copy_with(src, range, dst, Plain);
    }

    /// `copy`, storing through `store`.
    pub fn copy_with<T: Copy + Send + Sync, S: Store<T>>(
        &self,
        src: &[T],
        range: Range<usize>,
        dst: &mut [T],
        store: S,
    ) {
        let outer = self.outer_range(&range);
        self.run(Sides::Direct, src, &Out::new(dst), outer, 0, store);
    }

    /// The message on its source (`source == true`) or target side as a
    /// tree of runs, repeats and sequences over local storage, in message
    /// order: what a derived datatype describes. O(lines per period) nodes.
    pub fn type_tree(&self, source: bool) -> TypeTree {
        let side = usize::from(!source);
        let mut tree = TypeTree::Run(1);
        for (d, axis) in self.shape.axes.iter().enumerate().rev() {
            let stride = self.shape.strides[3 * d + side];
            let at = if source { self.at[d].0 } else { self.at[d].1 };
            tree = TypeTree::seq([(at * stride, axis.type_tree(source, stride, &tree))]);
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
        let last = self.ndim().checked_sub(1)?;
        let inner = self.shape.strides[3 * last + usize::from(!source)];
        if inner != 1 || self.len == 0 {
            return None;
        }
        let mut pending: Option<(usize, usize)> = None;
        let mut emitted = 0;
        let mut ok = true;
        let outer = self.axis(0).len();
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

/// Builds the programs of one rank's messages: each dimension's program of
/// a pair of coordinates built once, programs and message shapes of the
/// same content shared, the rank's own side of every message (its
/// coordinates, local shape and strides) worked out once.
struct Builder<'a> {
    source: &'a Layout,
    target: &'a Layout,
    unit_elements: usize,
    /// The loop order: array dimensions, slowest in source memory first.
    order: Vec<usize>,
    /// Per array dimension, the last pair of coordinates asked for
    /// (messages in rank order repeat the slower dimensions' pairs, and
    /// move the faster ones' runs along).
    last: Vec<Option<Last>>,
    /// Dimension programs by content.
    programs: HashSet<Arc<AxisProgram>>,
    /// Message shapes by content, and the last one made.
    shapes: HashSet<Arc<Shape>>,
    last_shape: Option<Arc<Shape>>,
    /// Coordinates and strides of the two ranks of the message being
    /// built, per array dimension: (source, target).
    coords: (Vec<usize>, Vec<usize>),
    strides: (Vec<usize>, Vec<usize>),
    /// The rank whose coordinates and strides `coords` and `strides` hold,
    /// per side.
    ranks: (Option<usize>, Option<usize>),
    /// Room reused from one message to the next.
    scratch: Scratch,
    /// Where the target is seen with its axes permuted: per dimension of
    /// the plan's target, the real target's dimension (see
    /// [`RankProgram::new`]).
    target_axes: Option<Vec<usize>>,
    /// The ghost layers around both sides' local parts, the target's seen
    /// in the plan's axis order (as `target_axes` sees the target): they
    /// widen the strides and move every local start into the interior.
    padding: Padding,
}

/// Room a [`Builder`] reuses from one message to the next.
#[derive(Default)]
struct Scratch {
    programs: Vec<Arc<AxisProgram>>,
    strides: Vec<usize>,
}

impl<'a> Builder<'a> {
    fn new(source: &'a Layout, target: &'a Layout, unit_elements: usize) -> Builder<'a> {
        let order: Vec<usize> = match source.storage() {
            Order::RowMajor => (0..source.ndim()).collect(),
            Order::ColumnMajor => (0..source.ndim()).rev().collect(),
        };
        Builder {
            source,
            target,
            unit_elements,
            order,
            last: vec![None; source.ndim()],
            programs: HashSet::new(),
            shapes: HashSet::new(),
            last_shape: None,
            coords: (Vec::new(), Vec::new()),
            strides: (Vec::new(), Vec::new()),
            ranks: (None, None),
            scratch: Scratch::default(),
            target_axes: None,
            padding: Padding::default(),
        }
    }

    /// Sets `coords` and `strides` of one side to those of `rank` in
    /// `layout` (nothing to do when they are its already), its local part
    /// stored padded by `widths[d]` on both sides of dimension `d` (empty:
    /// unpadded); with `axes`, the strides of the real array whose
    /// dimension `axes[d]` is the layout's dimension `d`, taken in the
    /// layout's order.
    fn side(
        layout: &Layout,
        rank: usize,
        held: &mut Option<usize>,
        coords: &mut Vec<usize>,
        strides: &mut Vec<usize>,
        (axes, widths): (Option<&[usize]>, &[usize]),
    ) {
        if *held == Some(rank) {
            return;
        }
        let grid = layout.grid_extents();
        let mut position = layout.position_of(rank).expect("a rank of the layout");
        coords.clear();
        coords.resize(grid.len(), 0);
        for d in (0..grid.len()).rev() {
            coords[d] = position % grid[d];
            position /= grid[d];
        }
        // The storage's extents: the local part's and its ghosts.
        let shape: Vec<usize> = (layout.axes().iter().zip(coords.iter()).enumerate())
            .map(|(d, (a, &c))| a.local_extent(c) + 2 * widths.get(d).copied().unwrap_or(0))
            .collect();
        *strides = match axes {
            None => self::strides(&shape, layout.storage()),
            Some(axes) => {
                let mut real = vec![0; shape.len()];
                for (d, &a) in axes.iter().enumerate() {
                    real[a] = shape[d];
                }
                let real = self::strides(&real, layout.storage());
                axes.iter().map(|&a| real[a]).collect()
            }
        };
        *held = Some(rank);
    }

    /// Dimension `d`'s program between coordinates `p` and `q`, from the
    /// runs of `axes[d]`, and where it starts. Where the pair's runs are the
    /// last pair's moved by the same amount on each side (and no partial
    /// period can cut them differently), the last program serves as it is.
    fn placed(
        &mut self,
        axes: &[AxisPlan],
        d: usize,
        (p, q): (usize, usize),
    ) -> (Arc<AxisProgram>, (usize, usize)) {
        let plan = &axes[d];
        let runs = plan.runs(p, q);
        if let Some(last) = &mut self.last[d] {
            if last.pair == (p, q) {
                return (Arc::clone(&last.program), last.at);
            }
            if plan.tail() == 0 && translated(&last.runs, runs) {
                last.pair = (p, q);
                last.at = runs.first().map_or((0, 0), |r| (r.src, r.dst));
                last.runs.clear();
                last.runs.extend_from_slice(runs);
                return (Arc::clone(&last.program), last.at);
            }
        }
        let (program, src, dst) = AxisProgram::of_runs(runs, plan);
        let program = share(&mut self.programs, program);
        self.last[d] = Some(Last {
            pair: (p, q),
            runs: runs.to_vec(),
            program: Arc::clone(&program),
            at: (src, dst),
        });
        (program, (src, dst))
    }

    /// The program of the message from source rank `from` to target rank
    /// `to`, `axes` holding its runs (see [`MessageProgram::new`]); copies
    /// into the target stream as [`Shape`] says for `stream`: unpacking
    /// when it is `Some`, straight copies when their source runs average
    /// at least its number of elements.
    fn message(
        &mut self,
        axes: &[AxisPlan],
        from: usize,
        to: usize,
        peer: usize,
        stream: Option<usize>,
    ) -> MessageProgram {
        let (src, dst) = (self.source, self.target);
        Self::side(
            src,
            from,
            &mut self.ranks.0,
            &mut self.coords.0,
            &mut self.strides.0,
            (None, self.padding.source()),
        );
        Self::side(
            dst,
            to,
            &mut self.ranks.1,
            &mut self.coords.1,
            &mut self.strides.1,
            (self.target_axes.as_deref(), self.padding.target()),
        );
        let order = std::mem::take(&mut self.order);
        let mut programs = std::mem::take(&mut self.scratch.programs);
        let mut strides = std::mem::take(&mut self.scratch.strides);
        programs.clear();
        strides.clear();
        let mut at = Vec::with_capacity(order.len());
        for &d in &order {
            let (program, (s, t)) = self.placed(axes, d, (self.coords.0[d], self.coords.1[d]));
            programs.push(program);
            // Local indices count from the interior's first cell.
            let pad = &self.padding;
            at.push((s + pad.source_width(d), t + pad.target_width(d)));
        }
        let pad = &self.padding;
        debug_assert!(order.iter().enumerate().all(|(i, &d)| {
            let (s, t) = programs[i].ends();
            let extent = |l: &Layout, c: usize| l.axes()[d].local_extent(c);
            at[i].0 + s <= pad.source_width(d) + extent(src, self.coords.0[d])
                && at[i].1 + t <= pad.target_width(d) + extent(dst, self.coords.1[d])
        }));
        // Buffer strides: the elements of the dimensions inside each.
        let mut inner = 1;
        for (i, &d) in order.iter().enumerate().rev() {
            strides.extend([inner, self.strides.1[d], self.strides.0[d]]);
            inner *= programs[i].len();
        }
        strides.reverse();
        let len = inner;
        let at = Places::new(&at);
        self.order = order;
        let stream_direct = stream.filter(|&n| len >= n).is_some_and(|n| {
            // A message shorter than `n` has no run of `n`: no tree to build.
            let probe = self.shape(&programs, &strides, false, false);
            let t = MessageProgram {
                peer,
                len,
                shape: probe,
                at: at.clone(),
                listed: None,
            };
            len / t.type_tree(true).leaf_runs().max(1) >= n
        });
        let shape = self.shape(&programs, &strides, stream.is_some(), stream_direct);
        self.scratch.programs = programs;
        self.scratch.strides = strides;
        MessageProgram {
            peer,
            len,
            shape,
            at,
            listed: None,
        }
    }

    /// The shape of these programs and strides with these stream settings:
    /// the last one made, one made before, or a new one.
    fn shape(
        &mut self,
        programs: &[Arc<AxisProgram>],
        strides: &[usize],
        stream_unpack: bool,
        stream_direct: bool,
    ) -> Arc<Shape> {
        if let Some(last) = &self.last_shape {
            let same = (last.axes.iter().zip(programs)).all(|(a, b)| Arc::ptr_eq(a, b))
                && last.axes.len() == programs.len()
                && *last.strides == *strides
                && (last.stream_unpack, last.stream_direct) == (stream_unpack, stream_direct)
                && last.unit_elements == self.unit_elements;
            if same {
                return Arc::clone(last);
            }
        }
        let shape = Shape {
            axes: programs.into(),
            strides: strides.into(),
            unit_elements: self.unit_elements,
            stream_unpack,
            stream_direct,
        };
        let shared = share(&mut self.shapes, shape);
        self.last_shape = Some(Arc::clone(&shared));
        shared
    }
}

/// Reorders the loop order `order` (the source's dimensions, slowest in
/// source memory first) for a target whose axes are permuted as `axes`
/// says and stored in `storage`: the source dimension that lands on the
/// target's fastest dimension moves next to the innermost, so that the two
/// innermost loop dimensions are each side's fastest and copies into the
/// target go tile by tile (`walk.rs`). Sender and receiver compute the
/// same order from the same layouts, so both walk a message alike.
fn transposing_order(order: &mut Vec<usize>, axes: &[usize], storage: Order) {
    let k = order.len();
    if k < 3 {
        return; // two dimensions are the two innermost already
    }
    let fastest = match storage {
        Order::RowMajor => k - 1,
        Order::ColumnMajor => 0,
    };
    let Some(d) = axes.iter().position(|&a| a == fastest) else {
        return;
    };
    if order[k - 1] != d {
        order.retain(|&x| x != d);
        order.insert(k - 2, d);
    }
}

/// The last pair of coordinates a [`Builder`] made a dimension's program
/// for: the pair, its runs, the program and where it starts.
#[derive(Clone)]
struct Last {
    pair: (usize, usize),
    runs: Vec<Run>,
    program: Arc<AxisProgram>,
    at: (usize, usize),
}

/// Whether `runs` are `last` moved along, each by the same amounts on the
/// source and on the target side (their positions in the period aside).
fn translated(last: &[Run], runs: &[Run]) -> bool {
    let (Some(a), Some(b)) = (last.first(), runs.first()) else {
        return false;
    };
    last.len() == runs.len()
        && last.iter().zip(runs).all(|(x, y)| {
            x.src.wrapping_sub(a.src) == y.src.wrapping_sub(b.src)
                && x.dst.wrapping_sub(a.dst) == y.dst.wrapping_sub(b.dst)
                && (x.len, x.count, x.src_step, x.dst_step)
                    == (y.len, y.count, y.src_step, y.dst_step)
        })
}

/// `value`, or the equal value `set` holds already, as a shared pointer
/// held in `set`.
fn share<T: Eq + std::hash::Hash>(set: &mut HashSet<Arc<T>>, value: T) -> Arc<T> {
    if let Some(shared) = set.get(&value) {
        return Arc::clone(shared);
    }
    let shared = Arc::new(value);
    set.insert(Arc::clone(&shared));
    shared
}

/// Bytes of one dimension program, its reference counts included.
fn axis_bytes(a: &AxisProgram) -> usize {
    a.heap_bytes() + size_of::<AxisProgram>() + 2 * size_of::<usize>()
}
