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

use crate::arith::gcd;
use crate::RedistError;
use dist_array::AxisMap;

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

/// Most (source, target) process pairs one dimension's plan keeps a list
/// for: 2^22, four million, beyond any layout of a real machine's ranks.
pub const PAIRS_MAX: usize = 1 << 22;

/// Most runs one dimension's basic period may hold: 2^21 (128 MiB of
/// runs), reached only by long periods of coprime block sizes on a thousand
/// processes or more.
pub const RUNS_MAX: usize = 1 << 21;

/// The 1-D plan of one dimension: for every (source process, target process)
/// pair, the runs of one period.
///
/// ```
/// use dist_array::AxisMap;
/// use redist::AxisPlan;
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
    /// `runs[p * Q + q]`: runs from source process p to target process q, by global offset.
    runs: Vec<Vec<Run>>,
    /// `volume[p * Q + q]`: indices moving from p to q over the whole extent.
    volume: Vec<usize>,
}

impl AxisPlan {
    /// The plan from `src` to `dst`, which must have the same extent.
    ///
    /// # Errors
    ///
    /// - [`RedistError::ExtentMismatch`] when the two extents differ;
    /// - [`RedistError::Limit`] when there are more than 2^22 (source, target) process
    ///   pairs, or one basic period holds more than 2^21 runs.
    pub fn new(src: &AxisMap, dst: &AxisMap) -> Result<AxisPlan, RedistError> {
        let n = src.extent();
        if dst.extent() != n {
            return Err(RedistError::ExtentMismatch {
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
    /// [`RedistError::InvalidArgument`] when the window does not fit inside
    /// either extent; [`RedistError::Limit`] as [`AxisPlan::new`].
    pub fn window(
        src: &AxisMap,
        src_origin: usize,
        dst: &AxisMap,
        dst_origin: usize,
        len: usize,
    ) -> Result<AxisPlan, RedistError> {
        for (map, origin, what) in [(src, src_origin, "source"), (dst, dst_origin, "target")] {
            if origin.checked_add(len).is_none_or(|end| end > map.extent()) {
                return Err(RedistError::InvalidArgument {
                    what: "window",
                    value: format!("{len} indices from {origin}"),
                    expected: format!("a window inside the {what}'s {} indices", map.extent()),
                });
            }
        }
        let n = len;
        let (so, to) = (src_origin, dst_origin);
        let (sp, tq) = (src.block() * src.procs(), dst.block() * dst.procs());
        // L = lcm(s·P, t·Q); when it overflows or exceeds the extent the
        // pattern never repeats within the array and the span is the extent.
        let lcm = (sp / gcd(sp, tq)).checked_mul(tq);
        let (span, period, periods) = match lcm {
            Some(l) if l <= n => (l, l, n / l),
            _ => (n, n.max(1), usize::from(n > 0)),
        };
        let tail = n - period * periods;
        let q_count = dst.procs();
        let pairs = src.procs().saturating_mul(q_count);
        if pairs > PAIRS_MAX {
            return Err(RedistError::Limit {
                what: "process pairs of one dimension's plan",
                value: pairs as u128,
                limit: PAIRS_MAX as u128,
            });
        }
        let mut runs: Vec<Vec<Run>> = vec![Vec::new(); pairs];
        let (s, t) = (src.block(), dst.block());
        let stored = std::cell::Cell::new(0usize);
        let mut push = |g: usize, run: Run| {
            stored.set(stored.get() + 1);
            let list = &mut runs[src.owner(so + g) * q_count + dst.owner(to + g)];
            match list.last_mut() {
                // Extend the previous run when the stretch continues everywhere.
                Some(last)
                    if last.count == 1
                        && run.count == 1
                        && last.global + last.len == run.global
                        && last.src + last.len == run.src
                        && last.dst + last.len == run.dst =>
                {
                    last.len += run.len
                }
                _ => list.push(run),
            }
        };
        // Walk the longer blocks ("outer"); inside each, the other side's
        // pattern repeats every one of its cycles ("inner"), and whole cycles
        // become one repeated run per inner block.
        let (outer_block, outer_origin, inner_block, inner_origin, inner_cycle) = if t >= s {
            (t, to, s, so, s * src.procs())
        } else {
            (s, so, t, to, t * q_count)
        };
        // The next block boundary after window index `g` of a side whose
        // window starts at global `origin`.
        let next = |g: usize, block: usize, origin: usize| {
            ((origin + g) / block + 1).saturating_mul(block) - origin
        };
        let mut x0 = 0;
        while x0 < span {
            let x1 = next(x0, outer_block, outer_origin).min(span);
            let mut g = x0;
            while g < x1 {
                if stored.get() > RUNS_MAX {
                    // A basic period this long (coprime block sizes on many
                    // processes) would take too long to scan and hold.
                    return Err(RedistError::Limit {
                        what: "runs in one basic period of a dimension",
                        value: stored.get() as u128,
                        limit: RUNS_MAX as u128,
                    });
                }
                let cycles = (x1 - g) / inner_cycle;
                if (inner_origin + g) % inner_cycle == 0 && cycles >= 2 {
                    for h in (g..g + inner_cycle).step_by(inner_block) {
                        let after = h + inner_cycle;
                        push(
                            h,
                            Run {
                                global: h,
                                src: src.local_index(so + h),
                                dst: dst.local_index(to + h),
                                len: inner_block,
                                count: cycles,
                                global_step: inner_cycle,
                                src_step: src.local_index(so + after) - src.local_index(so + h),
                                dst_step: dst.local_index(to + after) - dst.local_index(to + h),
                            },
                        );
                    }
                    g += cycles * inner_cycle;
                    continue;
                }
                let end = next(g, s, so).min(next(g, t, to)).min(x1);
                push(
                    g,
                    Run::single(g, src.local_index(so + g), dst.local_index(to + g), end - g),
                );
                g = end;
            }
            x0 = x1;
        }
        let volume = runs
            .iter()
            .map(|list| {
                list.iter()
                    .map(|r| {
                        let (whole, partial) = r.clipped(tail);
                        r.elements() * periods + whole * r.len + partial
                    })
                    .sum()
            })
            .collect();
        Ok(AxisPlan {
            src: *src,
            dst: *dst,
            span,
            period,
            periods,
            tail,
            runs,
            volume,
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

    /// Runs from source process `p` to target process `q` in one period.
    pub fn runs(&self, p: usize, q: usize) -> &[Run] {
        &self.runs[p * self.dst.procs() + q]
    }

    /// Number of runs stored (over all pairs): the plan's size. A repeated
    /// run counts once.
    pub fn stored_runs(&self) -> usize {
        self.runs.iter().map(Vec::len).sum()
    }

    /// Number of indices moving from source process `p` to target process `q`.
    pub fn volume(&self, p: usize, q: usize) -> usize {
        self.volume[p * self.dst.procs() + q]
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

#[cfg(test)]
mod tests {
    use super::*;
    use quickcheck::quickcheck;

    fn arb(n: u16, p: u8, b: u8, f: u8) -> AxisMap {
        let p = (p % 7) as usize + 1;
        AxisMap::new(n as usize % 400, p, (b % 12) as usize + 1, f as usize % p)
    }

    /// Scan every index: the (src local, dst local) pairs per process pair.
    fn oracle(src: &AxisMap, dst: &AxisMap) -> Vec<Vec<(usize, usize)>> {
        let mut out = vec![vec![]; src.procs() * dst.procs()];
        for g in 0..src.extent() {
            out[src.owner(g) * dst.procs() + dst.owner(g)]
                .push((src.local_index(g), dst.local_index(g)));
        }
        out
    }

    quickcheck! {
        fn plan_matches_scan(n: u16, p: u8, s: u8, pf: u8, q: u8, t: u8, qf: u8) -> bool {
            let src = arb(n, p, s, pf);
            let dst = AxisMap::new(src.extent(), (q % 7) as usize + 1, (t % 12) as usize + 1, 0);
            let dst = AxisMap::new(dst.extent(), dst.procs(), dst.block(), qf as usize % dst.procs());
            let plan = AxisPlan::new(&src, &dst).unwrap();
            let want = oracle(&src, &dst);
            (0..src.procs()).all(|p| (0..dst.procs()).all(|q| {
                let got: Vec<(usize, usize)> = plan
                    .segments(p, q)
                    .flat_map(|(a, b, len)| (0..len).map(move |i| (a + i, b + i)))
                    .collect();
                got == want[p * dst.procs() + q] && plan.volume(p, q) == got.len()
            }))
        }

        fn segments_are_maximal(n: u16, p: u8, s: u8, pf: u8, t: u8) -> bool {
            let src = arb(n, p, s, pf);
            let dst = AxisMap::new(src.extent(), src.procs(), (t % 12) as usize + 1, 0);
            let plan = AxisPlan::new(&src, &dst).unwrap();
            (0..src.procs()).all(|p| (0..dst.procs()).all(|q| {
                let segs: Vec<_> = plan.segments(p, q).collect();
                segs.windows(2).all(|w| !(w[0].0 + w[0].2 == w[1].0 && w[0].1 + w[0].2 == w[1].1))
            }))
        }
    }

    /// Scan every index of a window: the (src local, dst local) pairs per process pair.
    fn window_oracle(
        src: &AxisMap,
        so: usize,
        dst: &AxisMap,
        to: usize,
        len: usize,
    ) -> Vec<Vec<(usize, usize)>> {
        let mut out = vec![vec![]; src.procs() * dst.procs()];
        for g in 0..len {
            out[src.owner(so + g) * dst.procs() + dst.owner(to + g)]
                .push((src.local_index(so + g), dst.local_index(to + g)));
        }
        out
    }

    fn check_window(src: &AxisMap, so: usize, dst: &AxisMap, to: usize, len: usize) -> bool {
        let plan = AxisPlan::window(src, so, dst, to, len).unwrap();
        let want = window_oracle(src, so, dst, to, len);
        (0..src.procs()).all(|p| {
            (0..dst.procs()).all(|q| {
                let got: Vec<(usize, usize)> = plan
                    .segments(p, q)
                    .flat_map(|(a, b, n)| (0..n).map(move |i| (a + i, b + i)))
                    .collect();
                got == want[p * dst.procs() + q] && plan.volume(p, q) == got.len()
            })
        })
    }

    quickcheck! {
        fn window_plan_matches_scan(
            from: (u16, u8, u8, u8), to: (u16, u8, u8, u8), a: u16, b: u16, len: u16
        ) -> bool {
            let src = arb(from.0, from.1, from.2, from.3);
            let dst = arb(to.0, to.1, to.2, to.3);
            let len = len as usize % (src.extent().min(dst.extent()) + 1);
            let so = a as usize % (src.extent() - len + 1);
            let to = b as usize % (dst.extent() - len + 1);
            check_window(&src, so, &dst, to, len)
        }
    }

    #[test]
    fn windows_starting_inside_blocks() {
        // Long blocks on one side (repeated runs) with origins in mid-block,
        // mid-cycle and on boundaries, windows ending anywhere.
        for (s, p, fs) in [(1, 3, 2), (3, 2, 0), (5, 4, 1), (64, 2, 0)] {
            for (t, q, ft) in [(2, 2, 1), (7, 3, 0), (40, 1, 0), (150, 2, 1)] {
                let (a, b) = (AxisMap::new(700, p, s, fs), AxisMap::new(650, q, t, ft));
                for (so, to) in [(0, 0), (1, 0), (0, 3), (5, 17), (127, 149), (301, 1)] {
                    for len in [0, 1, 2, 13, 97, 300, 349] {
                        assert!(
                            check_window(&a, so, &b, to, len),
                            "{a:?}+{so} -> {b:?}+{to}, {len}"
                        );
                        assert!(
                            check_window(&b, to, &a, so, len),
                            "{b:?}+{to} -> {a:?}+{so}, {len}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn windows_of_huge_extents_stay_small() {
        let n = 1usize << 40;
        let cyclic = AxisMap::new(n, 4, 64, 0);
        let block = AxisMap::new(n, 2, n.div_ceil(2), 0);
        let plan = AxisPlan::window(&cyclic, 1_000_003, &block, 77, n - 2_000_000).unwrap();
        assert!(plan.stored_runs() <= 80, "{} runs", plan.stored_runs());
        let total: usize = (0..4)
            .flat_map(|p| (0..2).map(move |q| (p, q)))
            .map(|(p, q)| plan.volume(p, q))
            .sum();
        assert_eq!(total, n - 2_000_000);
    }

    #[test]
    fn windows_outside_the_extent_are_refused() {
        let a = AxisMap::new(10, 2, 1, 0);
        let b = AxisMap::new(20, 2, 3, 0);
        assert!(AxisPlan::window(&a, 0, &b, 10, 10).is_ok());
        for (so, to, len) in [(1, 0, 10), (0, 11, 10), (usize::MAX, 0, 1), (0, 0, 11)] {
            let err = AxisPlan::window(&a, so, &b, to, len).unwrap_err();
            assert!(
                matches!(err, RedistError::InvalidArgument { what: "window", .. }),
                "{err}"
            );
        }
    }

    #[test]
    fn exhaustive_small_cases_with_long_blocks() {
        // Long blocks on one side exercise repeated runs, ragged tails their clipping.
        for n in [0, 1, 7, 24, 37, 60, 61] {
            for (s, p, fs) in [(1, 1, 0), (1, 3, 2), (2, 2, 1), (3, 4, 0), (5, 2, 0)] {
                for (t, q, ft) in [
                    (1, 2, 1),
                    (4, 3, 0),
                    (7, 2, 1),
                    (13, 1, 0),
                    (20, 3, 2),
                    (31, 2, 0),
                ] {
                    for (a, b) in [
                        (AxisMap::new(n, p, s, fs), AxisMap::new(n, q, t, ft)),
                        (AxisMap::new(n, q, t, ft), AxisMap::new(n, p, s, fs)),
                    ] {
                        let plan = AxisPlan::new(&a, &b).unwrap();
                        let want = oracle(&a, &b);
                        for x in 0..a.procs() {
                            for y in 0..b.procs() {
                                let got: Vec<(usize, usize)> = plan
                                    .segments(x, y)
                                    .flat_map(|(u, v, len)| (0..len).map(move |i| (u + i, v + i)))
                                    .collect();
                                assert_eq!(
                                    got,
                                    want[x * b.procs() + y],
                                    "{a:?} -> {b:?}, pair {x},{y}"
                                );
                                assert_eq!(plan.volume(x, y), got.len());
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn block_against_cyclic_stays_small_for_huge_extents() {
        for n in [1_000usize, 1_000_000, 1_000_000_000, 1 << 40] {
            let cyclic = AxisMap::new(n, 4, 64, 0);
            let block = AxisMap::new(n, 2, n.div_ceil(2), 0);
            for plan in [
                AxisPlan::new(&cyclic, &block).unwrap(),
                AxisPlan::new(&block, &cyclic).unwrap(),
            ] {
                assert!(
                    plan.stored_runs() <= 64,
                    "n = {n}: {} runs",
                    plan.stored_runs()
                );
                let total: usize = (0..plan.source().procs())
                    .flat_map(|p| (0..plan.target().procs()).map(move |q| (p, q)))
                    .map(|(p, q)| plan.volume(p, q))
                    .sum();
                assert_eq!(total, n);
            }
        }
    }

    #[test]
    fn identity_is_one_run_per_process() {
        let a = AxisMap::new(1000, 4, 7, 1);
        let plan = AxisPlan::new(&a, &a).unwrap();
        for p in 0..4 {
            let segs: Vec<_> = plan.segments(p, p).collect();
            assert_eq!(segs, vec![(0, 0, a.local_extent(p))]);
            for q in (0..4).filter(|&q| q != p) {
                assert_eq!(plan.volume(p, q), 0);
            }
        }
    }

    #[test]
    fn plan_size_does_not_depend_on_extent() {
        let small = AxisPlan::new(
            &AxisMap::new(1_000, 72, 5, 0),
            &AxisMap::new(1_000, 72, 8, 0),
        )
        .unwrap();
        let big = AxisPlan::new(
            &AxisMap::new(1 << 40, 72, 5, 0),
            &AxisMap::new(1 << 40, 72, 8, 0),
        )
        .unwrap();
        // lcm(5·72, 8·72) = 2880 indices per period.
        assert_eq!(big.period(), 2880);
        assert!(big.stored_runs() <= 2880 / 5 + 2880 / 8);
        assert!(small.stored_runs() <= big.stored_runs());
        let total: usize = (0..72)
            .flat_map(|p| (0..72).map(move |q| (p, q)))
            .map(|(p, q)| big.volume(p, q))
            .sum();
        assert_eq!(total, 1 << 40);
    }

    #[test]
    fn mismatched_extents_are_refused() {
        assert!(matches!(
            AxisPlan::new(&AxisMap::new(10, 2, 1, 0), &AxisMap::new(11, 2, 1, 0)),
            Err(RedistError::ExtentMismatch {
                source_extent: 10,
                target_extent: 11
            })
        ));
    }
}
