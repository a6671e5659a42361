//! One dimension of a block-cyclic distribution, resolved against its extent
//! and process count: the O(1) index maps of ScaLAPACK (`numroc`, `indxg2p`,
//! `indxg2l`, `indxl2g`), in 0-based `usize` arithmetic.

use std::ops::Range;

/// A 1-D block-cyclic distribution of `extent` indices over `procs` processes
/// with block size `block`, the first block on process `first`.
///
/// Global index `g` lies in global block `B = g / block`, on process
/// `(B + first) mod procs`, at local index `(B / procs) * block + g mod block`.
/// Every map is O(1); building an `AxisMap` through a
/// [`Layout`](crate::Layout) checks that none of them can overflow.
///
/// ```
/// use redist_plan::AxisMap;
/// // 10 indices, blocks of 3, over 2 processes starting at process 1:
/// // blocks [0..3) -> p1, [3..6) -> p0, [6..9) -> p1, [9..10) -> p0.
/// let a = AxisMap::new(10, 2, 3, 1);
/// assert_eq!(a.owner(4), 0);
/// assert_eq!(a.local_index(7), 4);
/// assert_eq!(a.global_index(1, 4), 7);
/// assert_eq!((a.local_extent(0), a.local_extent(1)), (4, 6));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AxisMap {
    extent: usize,
    procs: usize,
    block: usize,
    first: usize,
}

impl AxisMap {
    /// The map of `extent` indices in blocks of `block` over `procs` processes,
    /// first block on process `first`.
    ///
    /// The caller guarantees `procs >= 1`, `block >= 1`, `first < procs` and
    /// that `extent + block * procs` fits in `usize`;
    /// [`Layout`](crate::Layout) checks all of it.
    pub const fn new(extent: usize, procs: usize, block: usize, first: usize) -> Self {
        AxisMap {
            extent,
            procs,
            block,
            first,
        }
    }

    /// Number of global indices.
    pub const fn extent(&self) -> usize {
        self.extent
    }

    /// Number of processes along this dimension.
    pub const fn procs(&self) -> usize {
        self.procs
    }

    /// Block size.
    pub const fn block(&self) -> usize {
        self.block
    }

    /// Process holding the first block.
    pub const fn first(&self) -> usize {
        self.first
    }

    /// Number of global blocks (the last may be partial).
    pub const fn global_blocks(&self) -> usize {
        self.extent.div_ceil(self.block)
    }

    /// Distance of process `p` from the first process, going round.
    const fn distance(&self, p: usize) -> usize {
        (p + self.procs - self.first) % self.procs
    }

    /// Process owning global index `g` (`indxg2p`).
    pub const fn owner(&self, g: usize) -> usize {
        (g / self.block + self.first) % self.procs
    }

    /// Local index of global index `g` on its owner (`indxg2l`).
    pub const fn local_index(&self, g: usize) -> usize {
        (g / self.block / self.procs) * self.block + g % self.block
    }

    /// Global index of local index `l` on process `p` (`indxl2g`).
    pub const fn global_index(&self, p: usize, l: usize) -> usize {
        ((l / self.block) * self.procs + self.distance(p)) * self.block + l % self.block
    }

    /// Number of indices process `p` holds (`numroc`).
    pub const fn local_extent(&self, p: usize) -> usize {
        let whole = self.extent / self.block;
        let mut n = (whole / self.procs) * self.block;
        let extra = whole % self.procs;
        let d = self.distance(p);
        if d < extra {
            n += self.block;
        } else if d == extra {
            n += self.extent % self.block;
        }
        n
    }

    /// Number of (possibly partial) blocks process `p` holds.
    pub const fn local_blocks(&self, p: usize) -> usize {
        let d = self.distance(p);
        let total = self.global_blocks();
        if d < total {
            (total - d).div_ceil(self.procs)
        } else {
            0
        }
    }

    /// The `k`-th block of process `p`: its global range and the local offset
    /// where it starts. `k < local_blocks(p)`.
    pub const fn block_of(&self, p: usize, k: usize) -> (Range<usize>, usize) {
        let b = k * self.procs + self.distance(p);
        let start = b * self.block;
        let end = if start + self.block < self.extent {
            start + self.block
        } else {
            self.extent
        };
        (start..end, k * self.block)
    }

    /// The blocks of process `p` in local order: (global range, local start).
    pub fn blocks(&self, p: usize) -> impl Iterator<Item = (Range<usize>, usize)> + '_ {
        (0..self.local_blocks(p)).map(move |k| self.block_of(p, k))
    }

    /// The global index of every local index of process `p`, in local order.
    pub fn local_to_global_table(&self, p: usize) -> Vec<usize> {
        let mut t = Vec::with_capacity(self.local_extent(p));
        for (g, _) in self.blocks(p) {
            t.extend(g);
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quickcheck::quickcheck;

    /// Scans every index: owner and local index by counting.
    fn oracle(a: &AxisMap) -> Vec<(usize, usize)> {
        let mut next_local = vec![0; a.procs];
        (0..a.extent)
            .map(|g| {
                let p = ((g / a.block) + a.first) % a.procs;
                let l = next_local[p];
                next_local[p] += 1;
                (p, l)
            })
            .collect()
    }

    fn arb(extent: u16, procs: u8, block: u16, first: u8) -> AxisMap {
        let procs = (procs % 9) as usize + 1;
        AxisMap::new(
            extent as usize % 300,
            procs,
            block as usize % 40 + 1,
            first as usize % procs,
        )
    }

    quickcheck! {
        fn maps_match_scan(extent: u16, procs: u8, block: u16, first: u8) -> bool {
            let a = arb(extent, procs, block, first);
            let o = oracle(&a);
            let mut counts = vec![0; a.procs];
            for (g, &(p, l)) in o.iter().enumerate() {
                if a.owner(g) != p || a.local_index(g) != l || a.global_index(p, l) != g {
                    return false;
                }
                counts[p] += 1;
            }
            (0..a.procs).all(|p| a.local_extent(p) == counts[p])
        }

        fn blocks_cover_local_storage(extent: u16, procs: u8, block: u16, first: u8) -> bool {
            let a = arb(extent, procs, block, first);
            (0..a.procs).all(|p| {
                let mut next = 0;
                for (g, l) in a.blocks(p) {
                    if l != next || g.is_empty() || g.len() > a.block
                        || g.clone().any(|x| a.owner(x) != p || a.local_index(x) != l + x - g.start) {
                        return false;
                    }
                    next += g.len();
                }
                next == a.local_extent(p) && a.local_to_global_table(p).len() == next
            })
        }
    }

    #[test]
    fn figure_one_of_the_basic_cycle_paper() {
        // 18 elements over 3 processes (seed 000, Fig. 1), 0-based.
        let owners = |a: AxisMap| (0..18).map(|g| a.owner(g)).collect::<Vec<_>>();
        assert_eq!(
            owners(AxisMap::new(18, 3, 6, 0)),
            [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2]
        );
        assert_eq!(owners(AxisMap::new(18, 3, 1, 0))[..6], [0, 1, 2, 0, 1, 2]);
        assert_eq!(
            owners(AxisMap::new(18, 3, 2, 0))[..8],
            [0, 0, 1, 1, 2, 2, 0, 0]
        );
        assert_eq!(
            owners(AxisMap::new(18, 3, 3, 0))[..10],
            [0, 0, 0, 1, 1, 1, 2, 2, 2, 0]
        );
    }

    #[test]
    fn numroc_examples() {
        // ScaLAPACK's numroc(10, 3, iproc, 0, 3) = 4, 3, 3.
        let a = AxisMap::new(10, 3, 3, 0);
        assert_eq!(
            (0..3).map(|p| a.local_extent(p)).collect::<Vec<_>>(),
            [4, 3, 3]
        );
        let b = AxisMap::new(10, 3, 3, 2);
        assert_eq!(
            (0..3).map(|p| b.local_extent(p)).collect::<Vec<_>>(),
            [3, 3, 4]
        );
        let empty = AxisMap::new(0, 4, 2, 1);
        assert!((0..4).all(|p| empty.local_extent(p) == 0 && empty.local_blocks(p) == 0));
    }

    #[test]
    fn huge_extents_are_o1() {
        let n = 1usize << 40;
        let a = AxisMap::new(n, 7, 64, 3);
        let g = n - 1;
        let p = a.owner(g);
        assert_eq!(a.global_index(p, a.local_index(g)), g);
        let total: usize = (0..7).map(|p| a.local_extent(p)).sum();
        assert_eq!(total, n);
    }
}
