//! Walking one basic period of a dimension to find its runs: all of them,
//! or only those of one source or one target process.
//!
//! The side whose blocks are longer is the *outer* side. The walk goes
//! through the outer blocks of the period; inside each, the other (*inner*)
//! side's pattern repeats every one of its cycles, so whole cycles become
//! one repeated run per inner block and only the stretches before the
//! first and after the last whole cycle go one by one.
//!
//! The runs of one process come out exactly as the whole walk gives them
//! (the same runs, split the same way, in the same order), at the cost of
//! that process's runs alone: a process of the outer side walks its own
//! blocks; a process of the inner side steps from outer block to outer
//! block, or from its own block to its own block when the outer blocks are
//! shorter than an inner cycle (each outer block then holds at most a piece
//! of one of its blocks).

use super::{AxisView, Run, RUNS_MAX};
use crate::error::PlanError;
use crate::layout::axis::AxisMap;

/// One side of a window of a dimension: the distribution and where the
/// window starts in it. Positions are window indices (0 = the origin).
#[derive(Debug, Clone, Copy)]
struct Side<'a> {
    map: &'a AxisMap,
    origin: usize,
}

impl Side<'_> {
    fn block(&self) -> usize {
        self.map.block()
    }

    /// Indices of one cycle: one block on every process.
    fn cycle(&self) -> usize {
        self.map.block() * self.map.procs()
    }

    /// The process holding window index `g`.
    fn owner(&self, g: usize) -> usize {
        self.map.owner(self.origin + g)
    }

    /// The local index of window index `g`.
    fn local(&self, g: usize) -> usize {
        self.map.local_index(self.origin + g)
    }

    /// The first block boundary after window index `g`.
    fn next_boundary(&self, g: usize) -> usize {
        ((self.origin + g) / self.block() + 1).saturating_mul(self.block()) - self.origin
    }

    /// The blocks of process `x` within window indices `from..to`, clipped
    /// to it, in order.
    fn blocks_of(&self, x: usize, from: usize, to: usize) -> impl Iterator<Item = (usize, usize)> {
        let (b, procs, origin) = (self.block(), self.map.procs(), self.origin);
        // The block holding `from`, then the first of those that `x` owns.
        let first = (origin + from) / b;
        let owner = self.map.owner(first * b);
        let mine = first + (x + procs - owner) % procs;
        (0..)
            .map(move |k| mine + k * procs)
            .map(move |block| (block * b, (block + 1) * b))
            .take_while(move |&(start, _)| start < origin + to)
            .map(move |(start, end)| {
                (
                    start.saturating_sub(origin).max(from),
                    (end - origin).min(to),
                )
            })
    }
}

/// The walk of one period of a window: the two sides, which is outer, and
/// the indices walked.
pub(super) struct PeriodWalk<'a> {
    src: Side<'a>,
    dst: Side<'a>,
    span: usize,
    /// Whether the target's blocks are the outer (longer) ones.
    target_outer: bool,
    /// Runs found so far (for the limit).
    found: usize,
}

impl<'a> PeriodWalk<'a> {
    /// The walk of `span` indices from `so` of `src` and `to` of `dst`.
    pub fn new(src: &'a AxisMap, so: usize, dst: &'a AxisMap, to: usize, span: usize) -> Self {
        PeriodWalk {
            src: Side {
                map: src,
                origin: so,
            },
            dst: Side {
                map: dst,
                origin: to,
            },
            span,
            target_outer: dst.block() >= src.block(),
            found: 0,
        }
    }

    fn outer(&self) -> Side<'a> {
        if self.target_outer {
            self.dst
        } else {
            self.src
        }
    }

    fn inner(&self) -> Side<'a> {
        if self.target_outer {
            self.src
        } else {
            self.dst
        }
    }

    /// Calls `push` with every run of `view` in the period, in the order of
    /// the whole walk.
    ///
    /// # Errors
    ///
    /// [`PlanError::Limit`] when the runs found pass [`RUNS_MAX`].
    pub fn walk(&mut self, view: AxisView, push: &mut impl FnMut(Run)) -> Result<(), PlanError> {
        let (outer, inner) = (self.outer(), self.inner());
        let fixed = match (view, self.target_outer) {
            (AxisView::All, _) => None,
            (AxisView::Source(p), true) | (AxisView::Target(p), false) => Some((false, p)),
            (AxisView::Source(p), false) | (AxisView::Target(p), true) => Some((true, p)),
            (AxisView::Pair(p, q), target_outer) => {
                let (x, y) = if target_outer { (q, p) } else { (p, q) };
                return self.pair(x, y, push);
            }
        };
        match fixed {
            None => {
                let mut x0 = 0;
                while x0 < self.span {
                    let x1 = outer.next_boundary(x0).min(self.span);
                    self.outer_block(x0, x1, push)?;
                    x0 = x1;
                }
            }
            Some((true, x)) => {
                for (x0, x1) in outer.blocks_of(x, 0, self.span) {
                    self.outer_block(x0, x1, push)?;
                }
            }
            Some((false, y)) if outer.block() >= inner.cycle() => {
                let mut x0 = 0;
                while x0 < self.span {
                    let x1 = outer.next_boundary(x0).min(self.span);
                    self.outer_block_for(y, x0, x1, push)?;
                    x0 = x1;
                }
            }
            Some((false, y)) => {
                // Outer blocks shorter than an inner cycle hold no whole
                // cycle: every run is a single stretch, one of y's blocks
                // (or a piece of it) within one outer block.
                for (b0, b1) in inner.blocks_of(y, 0, self.span) {
                    let mut g = b0;
                    while g < b1 {
                        let end = outer.next_boundary(g).min(b1);
                        self.push_single(g, end, push)?;
                        g = end;
                    }
                }
            }
        }
        Ok(())
    }

    /// The runs between outer process `x` and inner process `y`: in each of
    /// `x`'s outer blocks, `y`'s pieces as
    /// [`outer_block_for`](Self::outer_block_for) (or, where an outer block
    /// is shorter than an inner cycle, [`pieces_of`](Self::pieces_of)) finds
    /// them. O(`x`'s blocks in the period).
    fn pair(&mut self, x: usize, y: usize, push: &mut impl FnMut(Run)) -> Result<(), PlanError> {
        let (outer, inner) = (self.outer(), self.inner());
        for (x0, x1) in outer.blocks_of(x, 0, self.span) {
            if outer.block() >= inner.cycle() {
                self.outer_block_for(y, x0, x1, push)?;
            } else {
                self.pieces_of(y, x0, x1, push)?;
            }
        }
        Ok(())
    }

    /// Every run of the outer block `x0..x1`: whole inner cycles as
    /// repeated runs, one per inner block, the rest stretch by stretch.
    fn outer_block(
        &mut self,
        x0: usize,
        x1: usize,
        push: &mut impl FnMut(Run),
    ) -> Result<(), PlanError> {
        let inner = self.inner();
        let cycle = inner.cycle();
        let mut g = x0;
        while g < x1 {
            let cycles = (x1 - g) / cycle;
            if (inner.origin + g).is_multiple_of(cycle) && cycles >= 2 {
                for h in (g..g + cycle).step_by(inner.block()) {
                    self.push_repeated(h, cycles, push)?;
                }
                g += cycles * cycle;
                continue;
            }
            let end = self
                .src
                .next_boundary(g)
                .min(self.dst.next_boundary(g))
                .min(x1);
            self.push_single(g, end, push)?;
            g = end;
        }
        Ok(())
    }

    /// The runs of inner process `y` in the outer block `x0..x1`, as
    /// [`outer_block`](Self::outer_block) finds them: the pieces of its
    /// blocks before the first whole cycle, one repeated run for the whole
    /// cycles (when there are two or more), the pieces after them. O(1).
    fn outer_block_for(
        &mut self,
        y: usize,
        x0: usize,
        x1: usize,
        push: &mut impl FnMut(Run),
    ) -> Result<(), PlanError> {
        let inner = self.inner();
        let cycle = inner.cycle();
        let aligned = x0 + (cycle - (inner.origin + x0) % cycle) % cycle;
        if aligned >= x1 || (x1 - aligned) / cycle < 2 {
            return self.pieces_of(y, x0, x1, push);
        }
        self.pieces_of(y, x0, aligned, push)?;
        let cycles = (x1 - aligned) / cycle;
        let procs = inner.map.procs();
        let k = (y + procs - inner.owner(aligned)) % procs;
        self.push_repeated(aligned + k * inner.block(), cycles, push)?;
        self.pieces_of(y, aligned + cycles * cycle, x1, push)
    }

    /// The pieces of inner process `y`'s blocks within `g0..g1`, which lies
    /// inside one outer block, as single runs.
    fn pieces_of(
        &mut self,
        y: usize,
        g0: usize,
        g1: usize,
        push: &mut impl FnMut(Run),
    ) -> Result<(), PlanError> {
        if g0 >= g1 {
            return Ok(());
        }
        for (b0, b1) in self.inner().blocks_of(y, g0, g1) {
            self.push_single(b0, b1, push)?;
        }
        Ok(())
    }

    /// Pushes the single stretch `g..end`.
    fn push_single(
        &mut self,
        g: usize,
        end: usize,
        push: &mut impl FnMut(Run),
    ) -> Result<(), PlanError> {
        self.count()?;
        push(Run::single(
            g,
            self.src.local(g),
            self.dst.local(g),
            end - g,
        ));
        Ok(())
    }

    /// Pushes the inner block at `h` repeated over `cycles` inner cycles.
    fn push_repeated(
        &mut self,
        h: usize,
        cycles: usize,
        push: &mut impl FnMut(Run),
    ) -> Result<(), PlanError> {
        self.count()?;
        let inner = self.inner();
        let after = h + inner.cycle();
        push(Run {
            global: h,
            src: self.src.local(h),
            dst: self.dst.local(h),
            len: inner.block(),
            count: cycles,
            global_step: inner.cycle(),
            src_step: self.src.local(after) - self.src.local(h),
            dst_step: self.dst.local(after) - self.dst.local(h),
        });
        Ok(())
    }

    /// Counts one more run; a basic period this long (coprime block sizes
    /// on many processes) would take too long to scan and hold.
    fn count(&mut self) -> Result<(), PlanError> {
        self.found += 1;
        if self.found > RUNS_MAX {
            return Err(PlanError::Limit {
                what: "runs in one basic period of a dimension",
                value: self.found as u128,
                limit: RUNS_MAX as u128,
            });
        }
        Ok(())
    }
}
