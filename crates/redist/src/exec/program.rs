//! Copy programs: how one message's elements are gathered from the source's
//! local storage into a buffer, scattered from a buffer into the target's
//! local storage, or copied straight from source to target (the local part).
//!
//! A message is the Cartesian product of per-dimension stretches
//! ([`AxisPlan::segments`](crate::AxisPlan::segments)). Its buffer holds the
//! elements in the source's memory order over that product, so both sides
//! walk the same order: the innermost loop runs along the source's fastest
//! dimension and moves whole stretches with `copy_from_slice` whenever the
//! storage on both sides is contiguous along it. Nothing is stored per
//! element: a transfer keeps one list of stretches per dimension.

use crate::Plan;
use dist_array::Order;
use rayon::prelude::*;

/// One stretch of one dimension: local offsets on both sides, a length, and
/// the position of its first index within the message along the dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stretch {
    src: usize,
    dst: usize,
    len: usize,
    pos: usize,
}

/// The copy program of one message between a source and a target rank.
#[derive(Debug, Clone)]
pub(crate) struct Transfer {
    /// The other rank (target rank for a send, source rank for a receive).
    pub peer: usize,
    /// Elements in the message.
    pub len: usize,
    /// Stretches per dimension, dimensions in loop order (slowest first).
    stretches: Vec<Vec<Stretch>>,
    /// Source local strides in loop order (elements).
    src_strides: Vec<usize>,
    /// Target local strides in loop order (elements).
    dst_strides: Vec<usize>,
    /// Buffer strides in loop order (row-major over the message box).
    buf_strides: Vec<usize>,
    /// The outermost indices as (stretch, index within it), in buffer order:
    /// the units of parallel work (empty for one dimension). Built once, so
    /// executing allocates nothing.
    units: Vec<(usize, usize)>,
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

impl Transfer {
    /// The program of the message from source rank `from` to target rank `to`.
    pub fn new(plan: &Plan, from: usize, to: usize, peer: usize) -> Transfer {
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
        let stretches: Vec<Vec<Stretch>> = order
            .iter()
            .map(|&d| {
                let mut pos = 0;
                plan.axes()[d]
                    .segments(a[d], b[d])
                    .map(|(s, t, len)| {
                        let st = Stretch {
                            src: s,
                            dst: t,
                            len,
                            pos,
                        };
                        pos += len;
                        st
                    })
                    .collect()
            })
            .collect();
        let extents: Vec<usize> = stretches
            .iter()
            .map(|v| v.iter().map(|s| s.len).sum())
            .collect();
        let mut buf_strides = vec![1usize; extents.len()];
        for d in (0..extents.len().saturating_sub(1)).rev() {
            buf_strides[d] = buf_strides[d + 1] * extents[d + 1];
        }
        let units = if stretches.len() > 1 {
            stretches[0]
                .iter()
                .enumerate()
                .flat_map(|(i, st)| (0..st.len).map(move |j| (i, j)))
                .collect()
        } else {
            vec![]
        };
        Transfer {
            peer,
            len: extents.iter().product(),
            units,
            stretches,
            src_strides: order.iter().map(|&d| ss[d]).collect(),
            dst_strides: order.iter().map(|&d| ds[d]).collect(),
            buf_strides,
        }
    }

    /// Calls `f(src_offset, dst_offset, buf_offset, len)` for every innermost
    /// stretch under outermost index `outer` = (stretch, index within it).
    /// Needs at least two dimensions.
    fn walk_outer(&self, outer: (usize, usize), f: &mut impl FnMut(usize, usize, usize, usize)) {
        let (si, j) = outer;
        let st = self.stretches[0][si];
        let base = (
            (st.src + j) * self.src_strides[0],
            (st.dst + j) * self.dst_strides[0],
            (st.pos + j) * self.buf_strides[0],
        );
        self.walk(1, base, f);
    }

    fn walk(
        &self,
        d: usize,
        base: (usize, usize, usize),
        f: &mut impl FnMut(usize, usize, usize, usize),
    ) {
        let last = d + 1 == self.stretches.len();
        for st in &self.stretches[d] {
            if last {
                f(
                    base.0 + st.src * self.src_strides[d],
                    base.1 + st.dst * self.dst_strides[d],
                    base.2 + st.pos * self.buf_strides[d],
                    st.len,
                );
            } else {
                for j in 0..st.len {
                    let b = (
                        base.0 + (st.src + j) * self.src_strides[d],
                        base.1 + (st.dst + j) * self.dst_strides[d],
                        base.2 + (st.pos + j) * self.buf_strides[d],
                    );
                    self.walk(d + 1, b, f);
                }
            }
        }
    }

    /// The outermost indices of the message as (stretch, index within it):
    /// the units of parallel work, in buffer order.
    fn outer_units(&self) -> &[(usize, usize)] {
        &self.units
    }

    /// Strides (source, target) along the innermost loop dimension.
    fn inner(&self) -> (usize, usize) {
        let d = self.stretches.len() - 1;
        (self.src_strides[d], self.dst_strides[d])
    }

    /// The contiguous runs of the message in its source (`source == true`) or
    /// target local storage, in buffer order, as (offset, length) in
    /// elements, adjacent runs merged; `None` when that side is not
    /// contiguous along the innermost loop dimension or has more than
    /// `max_runs` runs. MPI derived datatypes are built from these.
    pub fn runs(&self, source: bool, max_runs: usize) -> Option<Vec<(usize, usize)>> {
        let (si, di) = self.inner();
        if (source && si != 1) || (!source && di != 1) || self.len == 0 {
            return None;
        }
        let mut runs: Vec<(usize, usize)> = Vec::new();
        let mut push = |off: usize, len: usize| -> bool {
            match runs.last_mut() {
                Some(last) if last.0 + last.1 == off => last.1 += len,
                _ => {
                    if runs.len() == max_runs {
                        return false;
                    }
                    runs.push((off, len));
                }
            }
            true
        };
        if self.stretches.len() == 1 {
            for st in &self.stretches[0] {
                let off = if source { st.src } else { st.dst }
                    * if source {
                        self.src_strides[0]
                    } else {
                        self.dst_strides[0]
                    };
                if !push(off, st.len) {
                    return None;
                }
            }
            return Some(runs);
        }
        let mut ok = true;
        for &u in self.outer_units() {
            self.walk_outer(u, &mut |s, d, _, len| {
                if ok {
                    ok = push(if source { s } else { d }, len);
                }
            });
            if !ok {
                return None;
            }
        }
        Some(runs)
    }

    /// Gathers the message from the source local storage into `buf` (exactly
    /// `self.len` elements long).
    pub fn pack<T: Copy + Send + Sync>(&self, src: &[T], buf: &mut [T]) {
        if self.len == 0 {
            return;
        }
        let (si, _) = self.inner();
        let copy = |s: usize, b: &mut [T]| {
            if si == 1 {
                b.copy_from_slice(&src[s..s + b.len()]);
            } else {
                for (i, x) in b.iter_mut().enumerate() {
                    *x = src[s + i * si];
                }
            }
        };
        if self.stretches.len() == 1 {
            for st in &self.stretches[0] {
                copy(
                    st.src * self.src_strides[0],
                    &mut buf[st.pos..st.pos + st.len],
                );
            }
            return;
        }
        let chunk = self.buf_strides[0];
        let units = self.outer_units();
        buf.par_chunks_mut(chunk)
            .zip(units.par_iter())
            .for_each(|(b, &u)| {
                let start = (self.stretches[0][u.0].pos + u.1) * chunk;
                self.walk_outer(u, &mut |s, _, o, len| {
                    copy(s, &mut b[o - start..o - start + len])
                });
            });
    }

    /// Scatters `buf` (the packed message) into the target local storage.
    pub fn unpack<T: Copy + Send + Sync>(&self, buf: &[T], dst: &mut [T]) {
        if self.len == 0 {
            return;
        }
        let (_, di) = self.inner();
        let out = SharedMut::new(dst);
        // SAFETY: every target element belongs to exactly one stretch of one
        // message, so concurrent writes never overlap.
        let copy = |d: usize, b: &[T]| unsafe { out.write(d, di, b) };
        if self.stretches.len() == 1 {
            for st in &self.stretches[0] {
                copy(st.dst * self.dst_strides[0], &buf[st.pos..st.pos + st.len]);
            }
            return;
        }
        let chunk = self.buf_strides[0];
        let units = self.outer_units();
        buf.par_chunks(chunk)
            .zip(units.par_iter())
            .for_each(|(b, &u)| {
                let start = (self.stretches[0][u.0].pos + u.1) * chunk;
                self.walk_outer(u, &mut |_, d, o, len| {
                    copy(d, &b[o - start..o - start + len])
                });
            });
    }

    /// Copies the message straight from source to target local storage.
    pub fn copy_local<T: Copy + Send + Sync>(&self, src: &[T], dst: &mut [T]) {
        if self.len == 0 {
            return;
        }
        let (si, di) = self.inner();
        let out = SharedMut::new(dst);
        let copy = |s: usize, d: usize, len: usize| {
            if si == 1 {
                // SAFETY: as in `unpack`: target stretches never overlap.
                unsafe { out.write(d, di, &src[s..s + len]) }
            } else {
                for i in 0..len {
                    // SAFETY: as above.
                    unsafe { out.write(d + i * di, 1, &[src[s + i * si]]) }
                }
            }
        };
        if self.stretches.len() == 1 {
            for st in &self.stretches[0] {
                copy(
                    st.src * self.src_strides[0],
                    st.dst * self.dst_strides[0],
                    st.len,
                );
            }
            return;
        }
        self.outer_units().par_iter().for_each(|&u| {
            self.walk_outer(u, &mut |s, d, _, len| copy(s, d, len));
        });
    }
}

/// A mutable slice shared by rayon tasks that write disjoint parts of it.
struct SharedMut<T> {
    ptr: *mut T,
    len: usize,
}

// SAFETY: tasks write disjoint elements only (see the callers).
unsafe impl<T: Send> Sync for SharedMut<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Send for SharedMut<T> {}

impl<T: Copy> SharedMut<T> {
    fn new(s: &mut [T]) -> Self {
        SharedMut {
            ptr: s.as_mut_ptr(),
            len: s.len(),
        }
    }

    /// Writes `values` at `offset`, `offset + stride`, ...
    ///
    /// # Safety
    /// No other task may access the same elements concurrently.
    unsafe fn write(&self, offset: usize, stride: usize, values: &[T]) {
        if values.is_empty() {
            return;
        }
        assert!(
            offset + (values.len() - 1) * stride < self.len,
            "write within the local storage"
        );
        // SAFETY: every element written is below `self.len` (checked
        // above); the caller guarantees no concurrent access to them.
        unsafe {
            if stride == 1 {
                std::ptr::copy_nonoverlapping(values.as_ptr(), self.ptr.add(offset), values.len());
            } else {
                for (i, v) in values.iter().enumerate() {
                    *self.ptr.add(offset + i * stride) = *v;
                }
            }
        }
    }
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
    pub fn new(plan: &Plan, me: usize) -> RankProgram {
        let mut sends = vec![];
        let mut recvs = vec![];
        let mut local = None;
        for m in plan.messages() {
            if m.len == 0 {
                continue;
            }
            if m.from == me && m.to == me {
                local = Some(Transfer::new(plan, me, me, me));
            } else if m.from == me {
                sends.push(Transfer::new(plan, me, m.to, m.to));
            } else if m.to == me {
                recvs.push(Transfer::new(plan, m.from, me, m.from));
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Remap;
    use dist_array::{Dist, Layout, LayoutSpec};
    use mpi_harness::all_indices;
    use quickcheck::{quickcheck, Arbitrary, Gen};

    /// A random layout of `shape`: block, cyclic(1..5) or collapsed per
    /// dimension, random first processes, rank map and storage order.
    fn random_layout(g: &mut Gen, shape: &[usize]) -> Layout {
        let mut dists = vec![];
        let mut grid = vec![];
        for _ in shape {
            let p = usize::arbitrary(g) % 3 + 1;
            let first = usize::arbitrary(g) % p;
            dists.push(match u8::arbitrary(g) % 4 {
                0 if p == 1 => Dist::Collapsed,
                0 | 1 => Dist::block().starting_at(first),
                _ => Dist::cyclic(usize::arbitrary(g) % 5 + 1).starting_at(first),
            });
            grid.push(p);
        }
        let mut l = Layout::new(shape, &LayoutSpec::new(dists, grid).unwrap()).unwrap();
        let mut map: Vec<usize> = (0..l.ranks()).collect();
        for i in (1..map.len()).rev() {
            map.swap(i, usize::arbitrary(g) % (i + 1));
        }
        l = l.with_rank_map(map).unwrap();
        if bool::arbitrary(g) {
            l = l.with_storage(Order::ColumnMajor);
        }
        l
    }

    #[derive(Clone, Debug)]
    struct Pair(Layout, Layout);

    impl Arbitrary for Pair {
        fn arbitrary(g: &mut Gen) -> Self {
            let ndim = usize::arbitrary(g) % 3 + 1;
            let max = [40, 12, 6][ndim - 1];
            let shape: Vec<usize> = (0..ndim).map(|_| usize::arbitrary(g) % max + 1).collect();
            Pair(random_layout(g, &shape), random_layout(g, &shape))
        }
    }

    /// Flat offset of local index `l` in the local storage of `rank`.
    fn flat(layout: &Layout, rank: usize, l: &[usize]) -> usize {
        let shape = layout.local_shape(rank).unwrap();
        let s = strides(&shape, layout.storage());
        l.iter().zip(&s).map(|(i, s)| i * s).sum()
    }

    /// The oracle: for the message from `a` to `b`, every element as
    /// (source flat offset, target flat offset), scanning every global index.
    fn pairs(plan: &Plan, a: usize, b: usize) -> Vec<(usize, usize)> {
        let (s, t) = (plan.source(), plan.target());
        let mut out = vec![];
        for g in all_indices(s.shape()) {
            let (ra, la) = s.global_to_local(&g).unwrap();
            let (rb, lb) = t.global_to_local(&g).unwrap();
            if (ra, rb) == (a, b) {
                out.push((flat(s, a, &la), flat(t, b, &lb)));
            }
        }
        out.sort();
        out
    }

    /// Pack, unpack and the direct copy of every message of a plan agree
    /// with the oracle, and the runs cover exactly the message.
    fn programs_match_scan(p: Pair) -> bool {
        let plan = Plan::new(&p.0, &p.1, Remap::None).unwrap();
        let (s, t) = (plan.source(), plan.target());
        for m in plan.messages() {
            let want = pairs(&plan, m.from, m.to);
            let tr = Transfer::new(&plan, m.from, m.to, m.to);
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
        fn copy_programs_match_scan(p: Pair) -> bool {
            programs_match_scan(p)
        }
    }

    #[test]
    fn rank_program_splits_sends_receives_and_the_local_part() {
        let s = Layout::parse(&[12], "block@3").unwrap();
        let t = Layout::parse(&[12], "cyclic@3").unwrap();
        let plan = Plan::new(&s, &t, Remap::None).unwrap();
        let p = RankProgram::new(&plan, 1);
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
        assert!(programs_match_scan(Pair(s, t)));
    }
}
