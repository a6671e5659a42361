//! n-dimensional block-cyclic layouts and their index maps.

pub mod axis;
pub mod spec;

use crate::coords::{coords_to_rank, rank_to_coords, Order};
use crate::error::PlanError;
use axis::AxisMap;
use spec::LayoutSpec;
use std::fmt;
use std::ops::Range;

/// Where every element of an n-dimensional array lives: the global shape, one
/// distribution per dimension over a process grid of the same rank, the rank
/// map from grid coordinates to ranks, and the memory order of local storage.
///
/// All index maps are O(1) per dimension; building a layout checks that none
/// of them can overflow, so a layout of a 2^40-element array is legal and cheap.
///
/// ```
/// use redist_plan::Layout;
/// // 8x8 over a 2x3 grid, blocks of 2 in both dimensions.
/// let layout = Layout::parse(&[8, 8], "cyclic(2),cyclic(2)@2x3").unwrap();
/// assert_eq!(layout.ranks(), 6);
/// assert_eq!(layout.owner(&[2, 6]).unwrap(), 3);       // grid coordinates (1, 0)
/// let (rank, local) = layout.global_to_local(&[2, 6]).unwrap();
/// assert_eq!((rank, local.clone()), (3, vec![0, 2]));
/// assert_eq!(layout.local_to_global(rank, &local).unwrap(), vec![2, 6]);
/// assert_eq!(layout.local_shape(0).unwrap(), vec![4, 4]);
/// assert_eq!(layout.local_shape(5).unwrap(), vec![4, 2]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Layout {
    shape: Vec<usize>,
    spec: LayoutSpec,
    axes: Vec<AxisMap>,
    storage: Order,
    /// Which rank sits at which grid coordinates.
    ranks: RankMap,
}

/// Which rank sits at which grid coordinates: ranks numbered in a
/// coordinate order (held as that order alone, whatever the rank count), or
/// an explicit permutation. A map given explicitly that numbers the ranks in
/// a coordinate order is held as that order, so equal maps compare equal.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum RankMap {
    /// Ranks numbered in this order of the grid coordinates.
    Ordered(Order),
    /// Ranks numbered with the grid dimensions of extent above 1 in this
    /// sequence, the slowest first: what a row- or column-major numbering
    /// becomes when the grid's dimensions are reordered
    /// ([`Layout::select_axes`]). Never row- or column-major itself (those
    /// are [`Ordered`](Self::Ordered)).
    Dims(Vec<usize>),
    /// `map[i]` is the rank at the grid coordinates whose row-major index is
    /// `i`; `index` is its inverse.
    Explicit { map: Vec<usize>, index: Vec<usize> },
}

/// One rectangular block of a rank's local part: the global index ranges it
/// covers and the local index ranges where it is stored, per dimension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalBlock {
    /// Global index range per dimension.
    pub global: Vec<Range<usize>>,
    /// Local index range per dimension (same lengths as `global`).
    pub local: Vec<Range<usize>>,
}

impl Layout {
    /// The layout of an array of `shape` distributed as `spec`, with row-major
    /// rank map and row-major local storage.
    ///
    /// # Errors
    ///
    /// - [`PlanError::RankMismatch`] when `shape` does not have one extent per distribution;
    /// - [`PlanError::Overflow`] when the element count overflows `usize`, or so does a
    ///   dimension's block size times its process count, doubled, plus its extent.
    pub fn new(shape: &[usize], spec: &LayoutSpec) -> Result<Layout, PlanError> {
        if shape.len() != spec.ndim() {
            return Err(PlanError::RankMismatch {
                what: "array dimensions for the layout's distributions",
                expected: spec.ndim(),
                got: shape.len(),
            });
        }
        let overflow = |what: String| PlanError::Overflow {
            shape: shape.to_vec(),
            what,
        };
        shape
            .iter()
            .try_fold(1usize, |acc, &n| acc.checked_mul(n))
            .filter(|&n| u64::try_from(n).is_ok())
            .ok_or_else(|| overflow("the element count does not fit in usize".into()))?;
        let mut axes = Vec::with_capacity(shape.len());
        for (dim, ((&n, d), &p)) in shape.iter().zip(spec.dists()).zip(spec.grid()).enumerate() {
            let b = d.block_size(n, p);
            b.checked_mul(p)
                .and_then(|bp| bp.checked_mul(2))
                .and_then(|bp| bp.checked_add(n))
                .ok_or_else(|| {
                    overflow(format!("dimension {dim}: block {b} times {p} processes"))
                })?;
            axes.push(AxisMap::new(n, p, b, d.first()));
        }
        Ok(Layout {
            shape: shape.to_vec(),
            spec: spec.clone(),
            axes,
            storage: Order::RowMajor,
            ranks: RankMap::Ordered(Order::RowMajor),
        })
    }

    /// Parses `spec` (see [`LayoutSpec`]) and builds the layout for `shape`.
    ///
    /// # Errors
    ///
    /// - [`PlanError::Parse`] when `spec` does not follow the grammar, including a block
    ///   size of 0, a number too large for `usize`, and a distribution count that is
    ///   not the grid extent count;
    /// - [`PlanError::ZeroExtent`], [`PlanError::TooManyRanks`],
    ///   [`PlanError::CollapsedOnDistributed`] or [`PlanError::FirstOutOfRange`] when
    ///   the parsed spec is invalid (see [`LayoutSpec::new`]);
    /// - [`PlanError::RankMismatch`] or [`PlanError::Overflow`] when the spec does not
    ///   fit `shape` (see [`new`](Self::new)).
    pub fn parse(shape: &[usize], spec: &str) -> Result<Layout, PlanError> {
        Layout::new(shape, &spec.parse()?)
    }

    /// The same layout with ranks assigned to grid coordinates in `order`
    /// (row-major: the last coordinate varies fastest).
    pub fn with_grid_order(mut self, order: Order) -> Layout {
        self.ranks = RankMap::Ordered(self.canonical(order));
        self
    }

    /// `order`, or row-major where the two orders number the grid alike (at
    /// most one extent above 1).
    fn canonical(&self, order: Order) -> Order {
        if self.spec.grid().iter().filter(|&&p| p > 1).count() <= 1 {
            Order::RowMajor
        } else {
            order
        }
    }

    /// Whether `map` numbers the ranks in `order` of the grid coordinates.
    fn numbers_in(&self, map: &[usize], order: Order) -> bool {
        let grid = self.spec.grid();
        map.iter().enumerate().all(|(i, &r)| {
            rank_to_coords(i, grid, Order::RowMajor)
                .ok()
                .and_then(|c| coords_to_rank(&c, grid, order).ok())
                == Some(r)
        })
    }

    /// The same layout with an explicit rank map: `map[i]` is the rank at the
    /// grid coordinates whose row-major index is `i`. Processor remapping
    /// produces such maps. `map` must be a permutation of `0..ranks()`.
    ///
    /// ```
    /// use redist_plan::Layout;
    /// let l = Layout::parse(&[6], "block@3").unwrap().with_rank_map(vec![2, 0, 1]).unwrap();
    /// assert_eq!(l.owner(&[0]).unwrap(), 2);
    /// assert_eq!(l.coords_of_rank(0).unwrap(), vec![1]);
    /// assert!(Layout::parse(&[6], "block@3").unwrap().with_rank_map(vec![0, 0, 1]).is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// - [`PlanError::BadRankMap`] when `map` is not a permutation of `0..ranks()` (wrong
    ///   length, a rank out of range, or a rank twice).
    pub fn with_rank_map(mut self, map: Vec<usize>) -> Result<Layout, PlanError> {
        let ranks = self.ranks();
        let mut inverse = vec![usize::MAX; ranks];
        let bad = || PlanError::BadRankMap {
            map: map.clone(),
            ranks,
        };
        if map.len() != ranks {
            return Err(bad());
        }
        for (i, &r) in map.iter().enumerate() {
            if r >= ranks || inverse[r] != usize::MAX {
                return Err(bad());
            }
            inverse[r] = i;
        }
        self.ranks = match [Order::RowMajor, Order::ColumnMajor]
            .into_iter()
            .find(|&o| self.numbers_in(&map, o))
        {
            Some(order) => RankMap::Ordered(self.canonical(order)),
            None => RankMap::Explicit {
                map,
                index: inverse,
            },
        };
        Ok(self)
    }

    /// The same layout with local storage in `order` (column-major for
    /// ScaLAPACK and Fortran interoperability).
    pub fn with_storage(mut self, order: Order) -> Layout {
        self.storage = order;
        self
    }

    /// Global shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The distributions and grid.
    pub fn spec(&self) -> &LayoutSpec {
        &self.spec
    }

    /// Process-grid extents.
    pub fn grid_extents(&self) -> &[usize] {
        self.spec.grid()
    }

    /// Number of ranks the layout distributes over.
    pub fn ranks(&self) -> usize {
        self.spec.ranks()
    }

    /// The resolved 1-D map of dimension `dim`.
    pub fn axis(&self, dim: usize) -> &AxisMap {
        &self.axes[dim]
    }

    /// The resolved 1-D maps of every dimension.
    pub fn axes(&self) -> &[AxisMap] {
        &self.axes
    }

    /// Memory order of local storage.
    pub fn storage(&self) -> Order {
        self.storage
    }

    /// The rank map: entry `i` is the rank at the grid coordinates whose
    /// row-major index is `i`. It is built on each call (one entry per
    /// rank): [`rank_at`](Self::rank_at) gives one entry.
    pub fn rank_map(&self) -> Vec<usize> {
        (0..self.ranks()).map(|i| self.rank_at(i)).collect()
    }

    /// The rank at the grid coordinates whose row-major index is
    /// `position` (below [`ranks`](Self::ranks)). O(1) for an explicit
    /// map, O(dimensions) for ranks numbered in a coordinate order.
    ///
    /// ```
    /// use redist_plan::Layout;
    /// use redist_plan::Order;
    /// let l = Layout::parse(&[4, 6], "block,block@2x3").unwrap();
    /// assert_eq!(l.rank_at(1), 1); // coordinates (0, 1)
    /// let l = l.with_grid_order(Order::ColumnMajor);
    /// assert_eq!(l.rank_at(1), 2); // coordinates (0, 1) in column-major order
    /// ```
    ///
    /// # Panics
    ///
    /// When `position` is not below [`ranks`](Self::ranks).
    pub fn rank_at(&self, position: usize) -> usize {
        assert!(
            position < self.ranks(),
            "grid position {position} of {}",
            self.ranks()
        );
        match &self.ranks {
            RankMap::Ordered(Order::RowMajor) => position,
            RankMap::Ordered(order) => {
                let grid = self.spec.grid();
                rank_to_coords(position, grid, Order::RowMajor)
                    .and_then(|c| coords_to_rank(&c, grid, *order))
                    .expect("a position within the grid")
            }
            RankMap::Dims(dims) => {
                let grid = self.spec.grid();
                let c = rank_to_coords(position, grid, Order::RowMajor)
                    .expect("a position within the grid");
                dims.iter().fold(0, |acc, &d| acc * grid[d] + c[d])
            }
            RankMap::Explicit { map, .. } => map[position],
        }
    }

    /// The row-major index of `rank`'s grid coordinates, if it is a rank of
    /// the layout: the inverse of [`rank_at`](Self::rank_at).
    pub fn position_of(&self, rank: usize) -> Option<usize> {
        if rank >= self.ranks() {
            return None;
        }
        Some(match &self.ranks {
            RankMap::Ordered(Order::RowMajor) => rank,
            RankMap::Ordered(order) => {
                let grid = self.spec.grid();
                rank_to_coords(rank, grid, *order)
                    .and_then(|c| coords_to_rank(&c, grid, Order::RowMajor))
                    .expect("a rank within the grid")
            }
            RankMap::Dims(dims) => {
                let grid = self.spec.grid();
                let mut c = vec![0; grid.len()];
                let mut rest = rank;
                for &d in dims.iter().rev() {
                    c[d] = rest % grid[d];
                    rest /= grid[d];
                }
                coords_to_rank(&c, grid, Order::RowMajor).expect("a rank within the grid")
            }
            RankMap::Explicit { index, .. } => index[rank],
        })
    }

    /// The order in which the ranks are numbered over the grid coordinates,
    /// or `None` for an explicit map that follows no such order.
    pub fn rank_order(&self) -> Option<Order> {
        match &self.ranks {
            RankMap::Ordered(order) => Some(*order),
            RankMap::Dims(_) | RankMap::Explicit { .. } => None,
        }
    }

    /// The grid dimensions in the order the ranks are numbered over them,
    /// the slowest first, counting only dimensions of extent above 1 —
    /// `None` for an explicit map that follows no such order. Row-major
    /// numbering gives the dimensions in increasing order.
    ///
    /// ```
    /// use redist_plan::Layout;
    /// let l = Layout::parse(&[4, 6, 8], "block,block,block@2x1x3").unwrap();
    /// assert_eq!(l.rank_dims(), Some(vec![0, 2]));
    /// // The grid's dimensions taken as (2, 0, 1): ranks still count the
    /// // old dimension 0 slowest, which is now dimension 1.
    /// assert_eq!(l.select_axes(&[2, 0, 1]).unwrap().rank_dims(), Some(vec![1, 0]));
    /// ```
    pub fn rank_dims(&self) -> Option<Vec<usize>> {
        let grid = self.spec.grid();
        let big = |d: &usize| grid[*d] > 1;
        match &self.ranks {
            RankMap::Ordered(Order::RowMajor) => Some((0..grid.len()).filter(big).collect()),
            RankMap::Ordered(Order::ColumnMajor) => {
                Some((0..grid.len()).rev().filter(big).collect())
            }
            RankMap::Dims(dims) => Some(dims.clone()),
            RankMap::Explicit { .. } => None,
        }
    }

    /// The layout of the array whose dimension `j` is this array's dimension
    /// `order[j]` (an array with its axes permuted): shape, distributions,
    /// grid extents and first processes taken in that order, every rank
    /// keeping the same elements. Local storage keeps this layout's order
    /// (`storage()`), which describes the permuted array's own local parts.
    ///
    /// ```
    /// use redist_plan::Layout;
    /// let l = Layout::parse(&[6, 4], "cyclic(2),block@3x2").unwrap();
    /// let t = l.select_axes(&[1, 0]).unwrap();
    /// assert_eq!(t.shape(), &[4, 6]);
    /// assert_eq!(t.spec().to_string(), "block,cyclic(2)@2x3");
    /// // Element (i, j) of the array is element (j, i) of its transpose, on the same rank.
    /// assert_eq!(l.owner(&[5, 1]).unwrap(), t.owner(&[1, 5]).unwrap());
    /// assert!(l.select_axes(&[0, 0]).is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// - [`PlanError::BadAxisOrder`] when `order` is not a permutation of
    ///   `0..ndim()`.
    pub fn select_axes(&self, order: &[usize]) -> Result<Layout, PlanError> {
        let k = self.ndim();
        let mut seen = vec![false; k];
        let valid = order.len() == k
            && order
                .iter()
                .all(|&d| d < k && !std::mem::replace(&mut seen[d], true));
        if !valid {
            return Err(PlanError::BadAxisOrder {
                order: order.to_vec(),
                ndim: k,
            });
        }
        let pick = |v: &[usize]| -> Vec<usize> { order.iter().map(|&d| v[d]).collect() };
        let dists = order.iter().map(|&d| self.spec.dists()[d]).collect();
        let spec = LayoutSpec::new(dists, pick(self.spec.grid()))?;
        let mut out = Layout::new(&pick(&self.shape), &spec)?;
        out.storage = self.storage;
        // Where each old dimension went.
        let mut new_of = vec![0; k];
        for (j, &d) in order.iter().enumerate() {
            new_of[d] = j;
        }
        out.ranks = match &self.ranks {
            RankMap::Explicit { map, .. } => {
                let grid = self.spec.grid();
                let new_map = (0..self.ranks())
                    .map(|p| {
                        let c = rank_to_coords(p, out.spec.grid(), Order::RowMajor)
                            .expect("a position within the grid");
                        let old: Vec<usize> = (0..k).map(|d| c[new_of[d]]).collect();
                        let at = coords_to_rank(&old, grid, Order::RowMajor)
                            .expect("coordinates within the grid");
                        map[at]
                    })
                    .collect();
                return out.with_rank_map(new_map);
            }
            _ => {
                let dims = self.rank_dims().expect("an ordered rank map");
                out.ranks_in(dims.iter().map(|&d| new_of[d]).collect())
            }
        };
        Ok(out)
    }

    /// The rank map numbering the ranks with the grid dimensions `dims`
    /// (those of extent above 1), the slowest first.
    fn ranks_in(&self, dims: Vec<usize>) -> RankMap {
        if dims.windows(2).all(|w| w[0] < w[1]) {
            RankMap::Ordered(Order::RowMajor)
        } else if dims.windows(2).all(|w| w[0] > w[1]) {
            RankMap::Ordered(Order::ColumnMajor)
        } else {
            RankMap::Dims(dims)
        }
    }

    /// Rank at grid coordinates `coords`.
    ///
    /// # Errors
    ///
    /// - [`PlanError::DimensionCount`]
    ///   when `coords` does not have one entry per dimension;
    /// - [`PlanError::CoordinateOutOfRange`] when a coordinate is not below its grid extent.
    pub fn rank_of_coords(&self, coords: &[usize]) -> Result<usize, PlanError> {
        let i = coords_to_rank(coords, self.spec.grid(), Order::RowMajor)?;
        Ok(self.rank_at(i))
    }

    /// Grid coordinates of `rank`.
    ///
    /// # Errors
    ///
    /// - [`PlanError::NoSuchRank`] when `rank` is not below [`ranks`](Self::ranks).
    pub fn coords_of_rank(&self, rank: usize) -> Result<Vec<usize>, PlanError> {
        let i = self.position_of(rank).ok_or(PlanError::NoSuchRank {
            rank,
            ranks: self.ranks(),
        })?;
        rank_to_coords(i, self.spec.grid(), Order::RowMajor)
    }

    fn check_global(&self, index: &[usize]) -> Result<(), PlanError> {
        if index.len() != self.ndim() || index.iter().zip(&self.shape).any(|(&g, &n)| g >= n) {
            return Err(PlanError::GlobalOutOfRange {
                index: index.to_vec(),
                shape: self.shape.clone(),
            });
        }
        Ok(())
    }

    /// Rank owning global index `index`.
    ///
    /// # Errors
    ///
    /// - [`PlanError::GlobalOutOfRange`] when `index` does not have one entry per
    ///   dimension or lies outside the shape.
    pub fn owner(&self, index: &[usize]) -> Result<usize, PlanError> {
        self.check_global(index)?;
        let coords: Vec<usize> = index
            .iter()
            .zip(&self.axes)
            .map(|(&g, a)| a.owner(g))
            .collect();
        self.rank_of_coords(&coords)
    }

    /// Owner of global index `index` and the local index it has there.
    ///
    /// # Errors
    ///
    /// - [`PlanError::GlobalOutOfRange`] when `index` does not have one entry per
    ///   dimension or lies outside the shape.
    pub fn global_to_local(&self, index: &[usize]) -> Result<(usize, Vec<usize>), PlanError> {
        let rank = self.owner(index)?;
        let local = index
            .iter()
            .zip(&self.axes)
            .map(|(&g, a)| a.local_index(g))
            .collect();
        Ok((rank, local))
    }

    /// Global index of local index `local` on `rank`.
    ///
    /// # Errors
    ///
    /// - [`PlanError::NoSuchRank`] when `rank` is not below [`ranks`](Self::ranks);
    /// - [`PlanError::LocalOutOfRange`] when `local` does not have one entry per
    ///   dimension or lies outside `rank`'s local shape.
    pub fn local_to_global(&self, rank: usize, local: &[usize]) -> Result<Vec<usize>, PlanError> {
        let coords = self.coords_of_rank(rank)?;
        let local_shape = self.local_shape_at(&coords);
        if local.len() != self.ndim() || local.iter().zip(&local_shape).any(|(&l, &n)| l >= n) {
            return Err(PlanError::LocalOutOfRange {
                index: local.to_vec(),
                rank,
                local_shape,
            });
        }
        Ok(local
            .iter()
            .zip(&self.axes)
            .zip(&coords)
            .map(|((&l, a), &c)| a.global_index(c, l))
            .collect())
    }

    /// Local shape of `rank` (ScaLAPACK's `numroc` per dimension).
    ///
    /// # Errors
    ///
    /// - [`PlanError::NoSuchRank`] when `rank` is not below [`ranks`](Self::ranks).
    pub fn local_shape(&self, rank: usize) -> Result<Vec<usize>, PlanError> {
        Ok(self.local_shape_at(&self.coords_of_rank(rank)?))
    }

    /// Number of elements `rank` holds.
    ///
    /// # Errors
    ///
    /// - [`PlanError::NoSuchRank`] when `rank` is not below [`ranks`](Self::ranks).
    pub fn local_len(&self, rank: usize) -> Result<usize, PlanError> {
        Ok(self.local_shape(rank)?.iter().product())
    }

    /// Local shape of the process at grid coordinates `coords` (assumed valid).
    pub(crate) fn local_shape_at(&self, coords: &[usize]) -> Vec<usize> {
        self.axes
            .iter()
            .zip(coords)
            .map(|(a, &c)| a.local_extent(c))
            .collect()
    }

    /// Local shape of every rank, in rank order.
    pub fn local_shapes(&self) -> Vec<Vec<usize>> {
        (0..self.ranks())
            .map(|r| self.local_shape(r).expect("rank within layout"))
            .collect()
    }

    /// The blocks of `rank`'s local part, as (global ranges, local ranges)
    /// pairs, in row-major order of their local position. Bulk code walks
    /// these instead of calling a per-element map.
    ///
    /// ```
    /// use redist_plan::Layout;
    /// let l = Layout::parse(&[5, 4], "cyclic(2),block@2x1").unwrap();
    /// let blocks: Vec<_> = l.local_blocks(0).unwrap().collect();
    /// assert_eq!(blocks.len(), 2);
    /// assert_eq!(blocks[1].global, vec![4..5, 0..4]);
    /// assert_eq!(blocks[1].local, vec![2..3, 0..4]);
    /// ```
    ///
    /// # Errors
    ///
    /// - [`PlanError::NoSuchRank`] when `rank` is not below [`ranks`](Self::ranks).
    pub fn local_blocks(&self, rank: usize) -> Result<LocalBlocks, PlanError> {
        let coords = self.coords_of_rank(rank)?;
        let counts: Vec<usize> = self
            .axes
            .iter()
            .zip(&coords)
            .map(|(a, &c)| a.local_blocks(c))
            .collect();
        let next = if counts.iter().all(|&c| c > 0) {
            Some(vec![0; counts.len()])
        } else {
            None
        };
        Ok(LocalBlocks {
            axes: self.axes.clone(),
            coords,
            counts,
            next,
        })
    }
}

impl fmt::Display for Layout {
    /// `8x8 cyclic(2),cyclic(2)@2x3`, plus the rank map when it is not the identity
    /// and the storage order when it is column-major.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shape: Vec<String> = self.shape.iter().map(|n| n.to_string()).collect();
        write!(f, "{} {}", shape.join("x"), self.spec)?;
        if self.ranks != RankMap::Ordered(Order::RowMajor) {
            write!(f, " ranks {:?}", self.rank_map())?;
        }
        if self.storage == Order::ColumnMajor {
            write!(f, " column-major")?;
        }
        Ok(())
    }
}

/// Iterator over a rank's [`LocalBlock`]s; see [`Layout::local_blocks`].
#[derive(Debug, Clone)]
pub struct LocalBlocks {
    axes: Vec<AxisMap>,
    coords: Vec<usize>,
    counts: Vec<usize>,
    next: Option<Vec<usize>>,
}

impl Iterator for LocalBlocks {
    type Item = LocalBlock;

    fn next(&mut self) -> Option<LocalBlock> {
        let k = self.next.as_mut()?;
        let mut global = Vec::with_capacity(k.len());
        let mut local = Vec::with_capacity(k.len());
        for ((a, &c), &kd) in self.axes.iter().zip(&self.coords).zip(k.iter()) {
            let (g, l) = a.block_of(c, kd);
            local.push(l..l + g.len());
            global.push(g);
        }
        // Advance the odometer, last dimension fastest.
        let mut d = k.len();
        loop {
            if d == 0 {
                self.next = None;
                break;
            }
            d -= 1;
            k[d] += 1;
            if k[d] < self.counts[d] {
                break;
            }
            k[d] = 0;
        }
        Some(LocalBlock { global, local })
    }
}

#[cfg(test)]
mod tests;
