//! 1-D plans: which runs of one dimension move between which processes.
//!
//! For a dimension distributed `BLOCK-CYCLIC(s)` over `P` processes in the
//! source and `BLOCK-CYCLIC(t)` over `Q` processes in the target (each with
//! its own first process), the owner pair of a global index repeats with
//! period `L = lcm(s·P, t·Q)`: after `L` indices every source process has
//! received exactly `L/P` more local indices and every target process `L/Q`.
//! This is the basic cycle of Chung, Hsu and Bai (seed 000, §4), generalised
//! from `P = Q` to any pair of process counts. A plan stores the runs of one
//! period (maximal stretches of consecutive global indices with one source
//! block and one target block), how many whole periods fit in the extent, and
//! the strides by which local offsets advance per period; the partial last
//! period reuses the first period's runs, clipped.
//!
//! When one side's blocks are much longer than the other side's cycle (a
//! `BLOCK` dimension against a `CYCLIC(b)` one, say), the period may exceed
//! the extent while the pattern inside each long block is still periodic.
//! Such stretches are stored as one [`Run`] with a repeat count and strides,
//! so building a plan costs O(long blocks × processes + runs in one period)
//! and never grows with the extent itself.
//!
//! A plan covers every process pair, or only the pairs of one process
//! ([`AxisView`]): a rank needs the runs of its own source coordinate to
//! every target process and of its own target coordinate from every source
//! process, and finds them at the cost of those runs alone (`walk.rs`).

use crate::arith::gcd;
use crate::error::PlanError;
use crate::layout::axis::AxisMap;

mod walk;

/// `count` stretches of `len` consecutive global indices: the `i`-th starts
/// `global + i·global_step` indices into a period and is stored at local offset
/// `src + i·src_step` on its source process and `dst + i·dst_step` on its
/// target process (offsets of the first period). Most runs have `count == 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Run {
    /// Offset of the first global index within the period.
    pub global: usize,
    /// Local offset on the source process.
    pub src: usize,
    /// Local offset on the target process.
    pub dst: usize,
    /// Number of indices of each stretch.
    pub len: usize,
    /// Number of stretches.
    pub count: usize,
    /// Global distance between successive stretches.
    pub global_step: usize,
    /// Source local distance between successive stretches.
    pub src_step: usize,
    /// Target local distance between successive stretches.
    pub dst_step: usize,
}

impl Run {
    fn single(global: usize, src: usize, dst: usize, len: usize) -> Run {
        Run {
            global,
            src,
            dst,
            len,
            count: 1,
            global_step: 0,
            src_step: 0,
            dst_step: 0,
        }
    }

    /// Indices the run covers.
    pub fn elements(&self) -> usize {
        self.len * self.count
    }

    /// The `i`-th stretch as (global offset, source offset, target offset).
    fn stretch(&self, i: usize) -> (usize, usize, usize) {
        (
            self.global + i * self.global_step,
            self.src + i * self.src_step,
            self.dst + i * self.dst_step,
        )
    }

    /// The stretches within the first `limit` indices of a period: how many
    /// whole stretches, and the length of a cut-short one after them (0 if none).
    pub fn clipped(&self, limit: usize) -> (usize, usize) {
        if limit <= self.global {
            return (0, 0);
        }
        let room = limit - self.global;
        if self.count == 1 {
            return if room >= self.len { (1, 0) } else { (0, room) };
        }
        let whole = (room.saturating_sub(self.len) / self.global_step + 1).min(self.count);
        let whole = if room < self.len { 0 } else { whole };
        let partial = if whole < self.count {
            let start = whole * self.global_step;
            room.saturating_sub(start).min(self.len)
        } else {
            0
        };
        (whole, partial)
    }
}

/// Most runs one dimension's basic period may hold (in the view of it a
/// plan covers): 2^21 (128 MiB of runs), reached only by long periods of
/// coprime block sizes on a thousand processes or more.
pub const RUNS_MAX: usize = 1 << 21;

/// Which process pairs a 1-D plan covers: every pair, or only those of one
/// process — its *row* (a source process and every target process) or its
/// *column* (a target process and every source process). A rank builds the
/// row of its source coordinate and the column of its target coordinate,
/// at the cost of their runs alone; the runs of a pair are the same in
/// every view that covers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AxisView {
    /// Every (source, target) pair.
    All,
    /// The pairs of this source process.
    Source(usize),
    /// The pairs of this target process.
    Target(usize),
    /// This one pair: (source process, target process).
    Pair(usize, usize),
}

/// The runs and volume of one (source, target) pair with data.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PairRuns {
    p: usize,
    q: usize,
    /// Its runs: `runs[start..end]` of the plan.
    start: usize,
    end: usize,
    /// Indices moving from `p` to `q` over the whole extent.
    volume: usize,
}

/// The 1-D plan of one dimension: for every (source process, target
/// process) pair with data — or those of one process, see [`AxisView`] —
/// the runs of one period.
///
/// ```
/// use redist_plan::AxisMap;
/// use redist_plan::AxisPlan;
/// // 24 indices, cyclic(3) over 2 processes -> cyclic(2) over 2 (seed 000, Fig. 2).
/// let plan = AxisPlan::new(&AxisMap::new(24, 2, 3, 0), &AxisMap::new(24, 2, 2, 0)).unwrap();
/// assert_eq!(plan.period(), 12);
/// assert_eq!(plan.periods(), 2);
/// assert_eq!(plan.volume(0, 0), 6); // of process 0's 12 indices, 6 stay on process 0
/// let runs: Vec<_> = plan.segments(1, 0).collect();
/// // Process 1 holds 3,4,5, 9,10,11, ...; target process 0 holds 0,1, 4,5, 8,9, ...
/// // so global 4,5 (source local 1,2 -> target local 2,3), 9, 16,17 and 21 move.
/// assert_eq!(runs, vec![(1, 2, 2), (3, 5, 1), (7, 8, 2), (9, 11, 1)]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AxisPlan {
    src: AxisMap,
    dst: AxisMap,
    /// Length of the period scanned (`min(L, extent)`).
    span: usize,
    /// `L` when whole periods fit, else `span`.
    period: usize,
    /// Whole periods in the extent.
    periods: usize,
    /// Indices after the last whole period.
    tail: usize,
    /// The pairs covered.
    view: AxisView,
    /// The pairs with data among them, by (source, target).
    pairs: Vec<PairRuns>,
    /// The runs of every pair, pair after pair, each pair's by global offset.
    runs: Vec<Run>,
    /// For a row or column: per process of the other side, 1 + the index of
    /// its pair in `pairs`, or 0 when it has none (empty for `All`).
    index: Vec<u32>,
}

impl AxisPlan {
    /// The plan from `src` to `dst`, which must have the same extent.
    ///
    /// # Errors
    ///
    /// - [`PlanError::ExtentMismatch`] when the two extents differ;
    /// - [`PlanError::Limit`] when one basic period holds more than 2^21 runs.
    pub fn new(src: &AxisMap, dst: &AxisMap) -> Result<AxisPlan, PlanError> {
        let n = src.extent();
        if dst.extent() != n {
            return Err(PlanError::ExtentMismatch {
                source_extent: n,
                target_extent: dst.extent(),
            });
        }
        AxisPlan::window(src, 0, dst, 0, n)
    }

    /// The plan of a window: `len` indices from `src_origin` of `src` to
    /// `dst_origin` of `dst`, both inside their extents. Index `g` of the
    /// window is global index `src_origin + g` of the source and
    /// `dst_origin + g` of the target; the window may start inside a block on either
    /// side. Runs, periods and strides are those of the window (the owner
    /// pattern still repeats every `lcm(s·P, t·Q)` indices); local offsets
    /// are those of the whole arrays.
    ///
    /// # Errors
    ///
    /// [`PlanError::InvalidArgument`] when the window does not fit inside
    /// either extent; [`PlanError::Limit`] as [`AxisPlan::new`].
    pub fn window(
        src: &AxisMap,
        src_origin: usize,
        dst: &AxisMap,
        dst_origin: usize,
        len: usize,
    ) -> Result<AxisPlan, PlanError> {
        AxisPlan::view(src, src_origin, dst, dst_origin, len, AxisView::All)
    }

    /// The view `view` of the plan of a window ([`window`](Self::window)):
    /// the runs of one process's pairs, found at the cost of those runs.
    ///
    /// ```
    /// use redist_plan::AxisMap;
    /// use redist_plan::{AxisPlan, AxisView};
    /// let (a, b) = (AxisMap::new(1000, 4, 64, 0), AxisMap::new(1000, 3, 5, 1));
    /// let whole = AxisPlan::window(&a, 0, &b, 0, 1000).unwrap();
    /// let row = AxisPlan::view(&a, 0, &b, 0, 1000, AxisView::Source(2)).unwrap();
    /// for q in 0..3 {
    ///     assert_eq!(row.runs(2, q), whole.runs(2, q));
    /// }
    /// assert!(row.runs(1, 0).is_empty()); // not in the view
    /// ```
    ///
    /// # Errors
    ///
    /// As [`window`](Self::window), and [`PlanError::InvalidArgument`]
    /// when the view names a process the distribution does not have.
    pub fn view(
        src: &AxisMap,
        src_origin: usize,
        dst: &AxisMap,
        dst_origin: usize,
        len: usize,
        view: AxisView,
    ) -> Result<AxisPlan, PlanError> {
        check_window(src, src_origin, dst, dst_origin, len, view)?;
        let n = len;
        let (sp, tq) = (src.block() * src.procs(), dst.block() * dst.procs());
        // L = lcm(s·P, t·Q); when it overflows or exceeds the extent the
        // pattern never repeats within the array and the span is the extent.
        let lcm = (sp / gcd(sp, tq)).checked_mul(tq);
        let (span, period, periods) = match lcm {
            Some(l) if l <= n => (l, l, n / l),
            _ => (n, n.max(1), usize::from(n > 0)),
        };
        let tail = n - period * periods;
        let walk = || walk::PeriodWalk::new(src, src_origin, dst, dst_origin, span);
        let pair_of = |g| walk_pair(src, src_origin, dst, dst_origin, g);
        let (mut pairs, runs, index) = match view {
            AxisView::All => {
                let mut found: Vec<(usize, usize, Run)> = Vec::new();
                walk().walk(view, &mut |run| {
                    let (p, q) = pair_of(run.global);
                    found.push((p, q, run));
                })?;
                let (pairs, runs) = by_pair(found);
                (pairs, runs, Vec::new())
            }
            AxisView::Source(p) => by_other(
                dst.procs(),
                |f| walk().walk(view, &mut |run| f(pair_of(run.global).1, run)),
                |q| (p, q),
            )?,
            AxisView::Target(q) => by_other(
                src.procs(),
                |f| walk().walk(view, &mut |run| f(pair_of(run.global).0, run)),
                |p| (p, q),
            )?,
            AxisView::Pair(p, q) => {
                let mut found = Vec::new();
                walk().walk(view, &mut |run| found.push((p, q, run)))?;
                let (pairs, runs) = by_pair(found);
                (pairs, runs, Vec::new())
            }
        };
        for x in &mut pairs {
            x.volume = runs[x.start..x.end]
                .iter()
                .map(|r| {
                    let (whole, partial) = r.clipped(tail);
                    r.elements() * periods + whole * r.len + partial
                })
                .sum();
        }
        Ok(AxisPlan {
            src: *src,
            dst: *dst,
            span,
            period,
            periods,
            tail,
            view,
            pairs,
            runs,
            index,
        })
    }

    /// The source distribution.
    pub fn source(&self) -> &AxisMap {
        &self.src
    }

    /// The target distribution.
    pub fn target(&self) -> &AxisMap {
        &self.dst
    }

    /// Length of the repeating period in global indices: `lcm(s·P, t·Q)`, or
    /// the extent when the pattern does not repeat within it.
    pub fn period(&self) -> usize {
        self.period
    }

    /// Number of whole periods in the extent.
    pub fn periods(&self) -> usize {
        self.periods
    }

    /// Indices after the last whole period.
    pub fn tail(&self) -> usize {
        self.tail
    }

    /// The pairs this plan covers.
    pub fn covers(&self) -> AxisView {
        self.view
    }

    /// The pair `(p, q)`, if it has data and the plan covers it.
    fn pair(&self, p: usize, q: usize) -> Option<&PairRuns> {
        let at = |x: usize| {
            let i = *self.index.get(x)? as usize;
            i.checked_sub(1).map(|i| &self.pairs[i])
        };
        match self.view {
            AxisView::Source(me) if !self.index.is_empty() => at(q).filter(|_| p == me),
            AxisView::Target(me) if !self.index.is_empty() => at(p).filter(|_| q == me),
            _ => self
                .pairs
                .binary_search_by_key(&(p, q), |x| (x.p, x.q))
                .ok()
                .map(|i| &self.pairs[i]),
        }
    }

    /// Runs from source process `p` to target process `q` in one period
    /// (none when they exchange nothing, or the plan does not cover them).
    pub fn runs(&self, p: usize, q: usize) -> &[Run] {
        self.pair(p, q).map_or(&[], |x| &self.runs[x.start..x.end])
    }

    /// Number of runs stored (over all pairs covered): the plan's size. A
    /// repeated run counts once.
    pub fn stored_runs(&self) -> usize {
        self.runs.len()
    }

    /// Number of indices moving from source process `p` to target process
    /// `q` (0 when the plan does not cover them).
    pub fn volume(&self, p: usize, q: usize) -> usize {
        self.pair(p, q).map_or(0, |x| x.volume)
    }

    /// Every covered pair with data, as `(source process, target process,
    /// volume)`, by source then target process.
    pub fn pairs(&self) -> impl Iterator<Item = (usize, usize, usize)> + '_ {
        self.pairs.iter().map(|x| (x.p, x.q, x.volume))
    }

    /// The target processes source process `p` sends to, with volumes, in
    /// order (those the plan covers).
    pub fn targets_of(&self, p: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        let from = self.pairs.partition_point(|x| x.p < p);
        let to = self.pairs.partition_point(|x| x.p <= p);
        self.pairs[from..to].iter().map(|x| (x.q, x.volume))
    }

    /// Bytes the plan holds on the heap.
    pub fn heap_bytes(&self) -> usize {
        self.pairs.capacity() * std::mem::size_of::<PairRuns>()
            + self.runs.capacity() * std::mem::size_of::<Run>()
            + self.index.capacity() * std::mem::size_of::<u32>()
    }

    /// Source local offset advance per period (`L / P`).
    pub fn source_stride(&self) -> usize {
        self.period / self.src.procs()
    }

    /// Target local offset advance per period (`L / Q`).
    pub fn target_stride(&self) -> usize {
        self.period / self.dst.procs()
    }

    /// Every stretch moving from `p` to `q` over the whole extent, as
    /// `(source local offset, target local offset, length)`, in increasing
    /// offset order, with stretches that continue each other merged.
    pub fn segments(&self, p: usize, q: usize) -> Segments<'_> {
        Segments {
            runs: self.runs(p, q),
            periods: self.periods,
            tail: self.tail,
            src_stride: self.source_stride(),
            dst_stride: self.target_stride(),
            k: 0,
            i: 0,
            j: 0,
            pending: None,
        }
    }

    /// Length of the scanned period (`min(L, extent)`); `span == period` unless
    /// the extent is zero.
    pub fn span(&self) -> usize {
        self.span
    }
}

/// Iterator over the stretches of one process pair; see [`AxisPlan::segments`].
#[derive(Debug, Clone)]
pub struct Segments<'a> {
    runs: &'a [Run],
    periods: usize,
    tail: usize,
    src_stride: usize,
    dst_stride: usize,
    /// Current period (== periods for the tail).
    k: usize,
    /// Current run within the period.
    i: usize,
    /// Next stretch within the current run.
    j: usize,
    pending: Option<(usize, usize, usize)>,
}

impl Segments<'_> {
    /// The next raw stretch, unmerged.
    fn raw(&mut self) -> Option<(usize, usize, usize)> {
        loop {
            if self.k > self.periods || self.runs.is_empty() {
                return None;
            }
            if self.i == self.runs.len() {
                self.i = 0;
                self.j = 0;
                self.k += 1;
                continue;
            }
            let r = &self.runs[self.i];
            let len = if self.k < self.periods {
                (self.j < r.count).then_some(r.len)
            } else {
                // The partial last period: whole stretches, then maybe a short one.
                let (whole, partial) = r.clipped(self.tail);
                if whole == 0 && partial == 0 {
                    // Runs are ordered by global offset: the rest of the tail is empty too.
                    self.k += 1;
                    continue;
                }
                if self.j < whole {
                    Some(r.len)
                } else if self.j == whole && partial > 0 {
                    Some(partial)
                } else {
                    None
                }
            };
            let Some(len) = len else {
                self.i += 1;
                self.j = 0;
                continue;
            };
            let (_, a, b) = r.stretch(self.j);
            self.j += 1;
            return Some((
                a + self.k * self.src_stride,
                b + self.k * self.dst_stride,
                len,
            ));
        }
    }
}

impl Iterator for Segments<'_> {
    type Item = (usize, usize, usize);

    fn next(&mut self) -> Option<(usize, usize, usize)> {
        let mut cur = match self.pending.take() {
            Some(c) => c,
            None => self.raw()?,
        };
        while let Some(n) = self.raw() {
            if cur.0 + cur.2 == n.0 && cur.1 + cur.2 == n.1 {
                cur.2 += n.2;
            } else {
                self.pending = Some(n);
                break;
            }
        }
        Some(cur)
    }
}

/// Checks that the window lies inside both extents and the view names a
/// process of its side.
fn check_window(
    src: &AxisMap,
    src_origin: usize,
    dst: &AxisMap,
    dst_origin: usize,
    len: usize,
    view: AxisView,
) -> Result<(), PlanError> {
    for (map, origin, what) in [(src, src_origin, "source"), (dst, dst_origin, "target")] {
        if origin.checked_add(len).is_none_or(|end| end > map.extent()) {
            return Err(PlanError::InvalidArgument {
                what: "window",
                value: format!("{len} indices from {origin}"),
                expected: format!("a window inside the {what}'s {} indices", map.extent()),
            });
        }
    }
    let (process, procs, side) = match view {
        AxisView::All => return Ok(()),
        AxisView::Source(p) => (p, src.procs(), "source"),
        AxisView::Target(q) => (q, dst.procs(), "target"),
        AxisView::Pair(_, q) if q >= dst.procs() => (q, dst.procs(), "target"),
        AxisView::Pair(p, _) => (p, src.procs(), "source"),
    };
    if process >= procs {
        return Err(PlanError::InvalidArgument {
            what: "view",
            value: format!("{side} process {process}"),
            expected: format!("one of the {procs} {side} processes"),
        });
    }
    Ok(())
}

/// The (source, target) processes of window index `g`.
fn walk_pair(src: &AxisMap, so: usize, dst: &AxisMap, to: usize, g: usize) -> (usize, usize) {
    (src.owner(so + g), dst.owner(to + g))
}

/// Whether `run` continues `last` everywhere (global, source and target
/// offsets), so the two are one stretch.
fn continues(last: &Run, run: &Run) -> bool {
    last.count == 1
        && run.count == 1
        && last.global + last.len == run.global
        && last.src + last.len == run.src
        && last.dst + last.len == run.dst
}

/// The runs found, gathered by pair: each pair's runs in the order found,
/// a stretch that continues the pair's previous one everywhere merged into
/// it (volumes to be filled in).
fn by_pair(mut found: Vec<(usize, usize, Run)>) -> (Vec<PairRuns>, Vec<Run>) {
    // Stable: each pair keeps its runs in the order of the walk.
    found.sort_by_key(|&(p, q, _)| (p, q));
    let mut pairs: Vec<PairRuns> = Vec::new();
    let mut runs: Vec<Run> = Vec::with_capacity(found.len());
    for (p, q, run) in found {
        match pairs.last_mut() {
            Some(x) if (x.p, x.q) == (p, q) => {
                let last = runs.last_mut().expect("a pair has a run");
                if continues(last, &run) {
                    last.len += run.len;
                } else {
                    runs.push(run);
                    x.end += 1;
                }
            }
            _ => {
                pairs.push(PairRuns {
                    p,
                    q,
                    start: runs.len(),
                    end: runs.len() + 1,
                    volume: 0,
                });
                runs.push(run);
            }
        }
    }
    runs.shrink_to_fit();
    (pairs, runs)
}

/// Pairs, their runs, and per process of the other side 1 + the index of
/// its pair (0: none).
type Gathered = (Vec<PairRuns>, Vec<Run>, Vec<u32>);

/// The runs of one process's pairs (a row or a column), gathered by the
/// other process, without holding them twice: `walk(f)` calls `f(other,
/// run)` for every run, and is called twice — once to count each other
/// process's runs, once to put each in its place — and `pair(other)` names
/// the pair. Returns the pairs (volumes to be filled in), the runs, and
/// per other process 1 + its pair's index (0: none).
fn by_other(
    procs: usize,
    walk: impl Fn(&mut dyn FnMut(usize, Run)) -> Result<(), PlanError>,
    pair: impl Fn(usize) -> (usize, usize),
) -> Result<Gathered, PlanError> {
    let mut count = vec![0u32; procs];
    walk(&mut |other, _| count[other] += 1)?;
    // Where each other process's runs start, in process order.
    let mut start = Vec::with_capacity(procs + 1);
    let mut total = 0usize;
    for &c in &count {
        start.push(total);
        total += c as usize;
    }
    let mut runs = vec![Run::single(0, 0, 0, 0); total];
    let mut next = start.clone();
    walk(&mut |other, run| {
        runs[next[other]] = run;
        next[other] += 1;
    })?;
    // Merge each pair's stretches that continue each other, in place.
    let (mut pairs, mut index) = (Vec::new(), vec![0u32; procs]);
    let mut kept = 0;
    for other in 0..procs {
        let (from, to) = (start[other], start[other] + count[other] as usize);
        if from == to {
            continue;
        }
        let first = kept;
        for i in from..to {
            let run = runs[i];
            if kept > first && continues(&runs[kept - 1], &run) {
                runs[kept - 1].len += run.len;
            } else {
                runs[kept] = run;
                kept += 1;
            }
        }
        let (p, q) = pair(other);
        pairs.push(PairRuns {
            p,
            q,
            start: first,
            end: kept,
            volume: 0,
        });
        index[other] = u32::try_from(pairs.len()).unwrap_or(u32::MAX);
    }
    runs.truncate(kept);
    runs.shrink_to_fit();
    Ok((pairs, runs, index))
}

#[cfg(test)]
mod tests;
