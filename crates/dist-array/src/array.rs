//! The distributed array: a layout, a process grid, and this rank's local part.

use crate::error::DistError;
use crate::padding::Padding;
use crate::storage::{SharedStorage, Storage};
use ndarray::{ArrayD, ArrayViewD, ArrayViewMutD, Dimension, IxDyn, ShapeBuilder};
use procgrid::{Order, ProcGrid};
use rayon::prelude::*;
use redist_plan::element::Element;
use redist_plan::layout::Layout;
use std::mem::MaybeUninit;

/// Elements per parallel work item in bulk loops: large enough to amortise
/// scheduling, small enough to balance.
pub(crate) const PIECE: usize = 1 << 14;

/// The memory of one rank's local part, taken out of a [`DistArray`]
/// ([`DistArray::into_storage`]) to be given to another of the same local
/// length ([`DistArray::from_storage`]): heap memory, or a shared-memory
/// file the node's other ranks can map.
pub struct LocalStorage<T>(Storage<T>);

impl<T: Element> LocalStorage<T> {
    /// Elements held.
    pub fn len(&self) -> usize {
        self.0.as_slice().len()
    }

    /// Whether it holds no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the memory is shared with the node's other ranks.
    pub fn is_shared(&self) -> bool {
        self.0.shared().is_some()
    }
}

/// An n-dimensional array distributed block-cyclically over a process grid.
///
/// Each rank holds its local part contiguously in the layout's storage order
/// (row-major unless the layout says column-major) and lends it out as
/// ndarray views, so every ndarray habit works on [`local`](Self::local) and
/// [`local_mut`](Self::local_mut). Ranks of the grid's communicator that are
/// not in the layout's grid hold an empty local part. Large local parts live
/// in memory other processes of the node can map
/// ([`shared_storage`](Self::shared_storage)), so redistributions can copy
/// them straight into another rank's storage.
///
/// ```
/// use dist_array::{DistArray, Layout};
/// use procgrid::ProcGrid;
/// use mpi::topology::Communicator;
///
/// let universe = procgrid::init().unwrap();
/// let world = universe.world();
/// let p = world.size() as usize;
/// let grid = ProcGrid::new(&world, &[p, 1]).unwrap();
/// let layout = Layout::parse(&[7, 5], &format!("cyclic(2),*@{p}x1")).unwrap();
/// let mut a = DistArray::from_fn(&grid, layout, |g| (g[0] * 10 + g[1]) as f64).unwrap();
/// a.map_inplace(|x| *x *= 2.0);
/// assert_eq!(a.sum().unwrap(), 2.0 * (0..7).flat_map(|i| (0..5).map(move |j| (i * 10 + j) as f64)).sum::<f64>());
/// let whole = a.gather(0).unwrap();
/// if world.rank() == 0 {
///     assert_eq!(whole.unwrap()[[6, 4]], 128.0);
/// }
/// ```
pub struct DistArray<T> {
    layout: Layout,
    grid: ProcGrid,
    rank: Option<usize>,
    /// The local shape (the interior's, where there are ghosts).
    dim: IxDyn,
    /// The storage's geometry: the local part and its ghost layers.
    padding: Padding,
    /// The local part, ghosts included.
    storage: Storage<T>,
}

impl<T: Element> Clone for DistArray<T> {
    fn clone(&self) -> Self {
        DistArray {
            layout: self.layout.clone(),
            grid: self.grid.clone(),
            rank: self.rank,
            dim: self.dim.clone(),
            padding: self.padding.clone(),
            storage: self.storage.clone(),
        }
    }
}

impl<T: Element> DistArray<T> {
    pub(crate) fn check(grid: &ProcGrid, layout: &Layout) -> Result<Option<usize>, DistError> {
        if grid.extents() != layout.grid_extents() {
            return Err(DistError::GridMismatch {
                layout_grid: layout.grid_extents().to_vec(),
                grid: grid.extents().to_vec(),
            });
        }
        use mpi::topology::Communicator;
        let r = grid.communicator().rank() as usize;
        Ok((r < layout.ranks()).then_some(r))
    }

    pub(crate) fn local_dim_of(layout: &Layout, rank: Option<usize>) -> IxDyn {
        let shape = match rank {
            Some(r) => layout.local_shape(r).expect("member rank is in the layout"),
            None => vec![0; layout.ndim()],
        };
        IxDyn(&shape)
    }

    fn build(
        layout: Layout,
        grid: &ProcGrid,
        rank: Option<usize>,
        storage: Storage<T>,
    ) -> DistArray<T> {
        let dim = Self::local_dim_of(&layout, rank);
        let padding = Padding::new(dim.slice(), &vec![0; dim.ndim()], layout.storage());
        Self::assemble(layout, grid, rank, storage, padding)
    }

    /// An array of `storage` with `padding` (whose interior is `rank`'s
    /// local shape).
    pub(crate) fn assemble(
        layout: Layout,
        grid: &ProcGrid,
        rank: Option<usize>,
        storage: Storage<T>,
        padding: Padding,
    ) -> DistArray<T> {
        let dim = Self::local_dim_of(&layout, rank);
        assert_eq!(
            padding.len(),
            storage.as_slice().len(),
            "storage of the padded local size"
        );
        DistArray {
            layout,
            grid: grid.clone(),
            rank,
            dim,
            padding,
            storage,
        }
    }

    /// The local shape (the interior's).
    pub(crate) fn local_dim(&self) -> &IxDyn {
        &self.dim
    }

    /// The storage's geometry.
    pub(crate) fn padding(&self) -> &Padding {
        &self.padding
    }

    /// The local shape with the layout's storage order.
    fn shape_in_order(&self) -> ndarray::Shape<IxDyn> {
        self.dim
            .clone()
            .set_f(self.layout.storage() == Order::ColumnMajor)
    }

    /// An array of zeros. Not collective: every rank builds its own part.
    ///
    /// The layout's ranks are the ranks of `grid`'s communicator, and its
    /// grid extents must be `grid`'s.
    ///
    /// # Errors
    ///
    /// - [`DistError::GridMismatch`] when `grid`'s extents are not the layout's;
    /// - [`DistError::OutOfMemory`] when the system cannot give this rank's
    ///   local part.
    pub fn zeros(grid: &ProcGrid, layout: Layout) -> Result<DistArray<T>, DistError> {
        let rank = Self::check(grid, &layout)?;
        let len = Self::local_dim_of(&layout, rank).size();
        Ok(Self::build(layout, grid, rank, Storage::zeros(len, true)?))
    }

    /// An array of `layout` on `grid` in memory taken from another array
    /// ([`into_storage`](Self::into_storage)), holding whatever that array
    /// held: the local part is the storage's elements, read in the layout's
    /// order. Not collective. Lets a caller that makes arrays of one local
    /// size again and again (staging buffers) keep the memory, pages and
    /// shared file included, instead of paying for new pages each time.
    ///
    /// ```
    /// use dist_array::{DistArray, Layout};
    /// use procgrid::ProcGrid;
    ///
    /// let universe = procgrid::init().unwrap();
    /// let world = universe.world();
    /// let grid = ProcGrid::balanced(&world, 1).unwrap();
    /// let p = grid.size();
    /// let a = DistArray::from_fn(&grid, Layout::parse(&[4 * p], &format!("block@{p}")).unwrap(), |g| g[0] as f64).unwrap();
    /// let storage = a.into_storage();
    /// let b = DistArray::from_storage(&grid, Layout::parse(&[4 * p], &format!("cyclic@{p}")).unwrap(), storage).unwrap();
    /// assert_eq!(b.local_slice().len(), 4);
    /// ```
    ///
    /// # Errors
    ///
    /// - [`DistError::GridMismatch`] when `grid`'s extents are not the layout's;
    /// - [`DistError::ShapeMismatch`] when the storage holds another number
    ///   of elements than the local part the layout gives this rank (`got`
    ///   is the storage's length).
    pub fn from_storage(
        grid: &ProcGrid,
        layout: Layout,
        storage: LocalStorage<T>,
    ) -> Result<DistArray<T>, DistError> {
        let rank = Self::check(grid, &layout)?;
        let dim = Self::local_dim_of(&layout, rank);
        if dim.size() != storage.len() {
            return Err(DistError::ShapeMismatch {
                expected: dim.slice().to_vec(),
                got: vec![storage.len()],
            });
        }
        Ok(Self::build(layout, grid, rank, storage.0))
    }

    /// The memory of this rank's local part, for
    /// [`from_storage`](Self::from_storage). Memory the array borrowed
    /// ([`from_raw_parts`](Self::from_raw_parts)) comes out copied.
    pub fn into_storage(self) -> LocalStorage<T> {
        match self.storage {
            Storage::Borrowed(_) => LocalStorage(Storage::Heap(self.storage.into_vec())),
            owned => LocalStorage(owned),
        }
    }

    /// An array whose element at global index `g` is `f(g)`. Not collective.
    /// The local part is filled in parallel with rayon; `f` sees global indices.
    ///
    /// # Errors
    ///
    /// - [`DistError::GridMismatch`] when `grid`'s extents are not the layout's;
    /// - [`DistError::OutOfMemory`] when the system cannot give this rank's
    ///   local part.
    pub fn from_fn<F>(grid: &ProcGrid, layout: Layout, f: F) -> Result<DistArray<T>, DistError>
    where
        F: Fn(&[usize]) -> T + Sync + Send,
    {
        let rank = Self::check(grid, &layout)?;
        let Some(r) = rank else {
            return Ok(Self::build(layout, grid, rank, Storage::Heap(vec![])));
        };
        let walk = GlobalWalk::new(&layout, r)?;
        let mut storage = Storage::zeros(walk.len(), true)?;
        let data = storage.as_mut_slice();
        // SAFETY: MaybeUninit<T> has T's layout; every slot is written below
        // with an initialised value.
        let slots = unsafe { &mut *(data as *mut [T] as *mut [MaybeUninit<T>]) };
        slots
            .par_chunks_mut(PIECE)
            .enumerate()
            .for_each(|(piece, chunk)| {
                walk.visit(piece * PIECE, chunk.len(), |i, g| {
                    chunk[i].write(f(g));
                })
            });
        Ok(Self::build(layout, grid, rank, storage))
    }

    /// An array from this rank's local part, which must have the local shape
    /// the layout gives this rank. Not collective: a wrong shape is reported on
    /// the rank that passed it.
    ///
    /// # Errors
    ///
    /// - [`DistError::GridMismatch`] when `grid`'s extents are not the layout's;
    /// - [`DistError::ShapeMismatch`] when `local`'s shape is not the local shape the
    ///   layout gives this rank (all zeros on a rank outside the layout's grid).
    pub fn from_local(
        grid: &ProcGrid,
        layout: Layout,
        local: ArrayD<T>,
    ) -> Result<DistArray<T>, DistError> {
        let rank = Self::check(grid, &layout)?;
        let expected = Self::local_dim_of(&layout, rank);
        if local.shape() != expected.slice() {
            return Err(DistError::ShapeMismatch {
                expected: expected.slice().to_vec(),
                got: local.shape().to_vec(),
            });
        }
        let f = layout.storage() == Order::ColumnMajor;
        let in_order = if f {
            local.t().is_standard_layout()
        } else {
            local.is_standard_layout()
        };
        let len = expected.size();
        let data = if in_order {
            match local.into_raw_vec_and_offset() {
                (v, Some(0)) if v.len() == len => v,
                (v, offset) => {
                    let o = offset.unwrap_or(0);
                    v[o..o + len].to_vec()
                }
            }
        } else {
            let mut copy = ArrayD::from_elem(expected.set_f(f), T::zeroed());
            copy.assign(&local);
            copy.into_raw_vec_and_offset().0
        };
        Ok(Self::build(layout, grid, rank, Storage::Heap(data)))
    }

    /// An array over this rank's local part in memory the caller owns:
    /// `len` elements at `ptr`, in the layout's storage order, which the
    /// array reads and writes in place (for libraries that take arrays
    /// from C or Fortran callers). Dropping the array leaves the memory to
    /// the caller; cloning it copies the elements. Its storage is never
    /// shared with other processes. Not collective.
    ///
    /// ```
    /// use dist_array::{DistArray, Layout};
    /// use procgrid::ProcGrid;
    /// use mpi::topology::Communicator;
    ///
    /// let universe = procgrid::init().unwrap();
    /// let world = universe.world();
    /// let grid = ProcGrid::new(&world, &[world.size() as usize]).unwrap();
    /// let layout = Layout::parse(&[4 * world.size() as usize], &format!("block@{}", world.size())).unwrap();
    /// let mut mine = vec![1.5f64; 4];
    /// // SAFETY: `mine` holds 4 elements and is left alone while `a` lives.
    /// let mut a = unsafe { DistArray::from_raw_parts(&grid, layout, mine.as_mut_ptr(), 4) }.unwrap();
    /// a.local_slice_mut()[0] = 2.5;
    /// drop(a);
    /// assert_eq!(mine[0], 2.5);
    /// ```
    ///
    /// # Errors
    ///
    /// - [`DistError::GridMismatch`] when `grid`'s extents are not the layout's;
    /// - [`DistError::ShapeMismatch`] when `len` is not the number of
    ///   elements the layout gives this rank.
    ///
    /// # Safety
    ///
    /// When `len > 0`, `ptr` must be valid for reads and writes of `len`
    /// elements, aligned, and not accessed other than through the array
    /// while it lives.
    pub unsafe fn from_raw_parts(
        grid: &ProcGrid,
        layout: Layout,
        ptr: *mut T,
        len: usize,
    ) -> Result<DistArray<T>, DistError> {
        let rank = Self::check(grid, &layout)?;
        let expected = Self::local_dim_of(&layout, rank);
        if expected.size() != len {
            return Err(DistError::ShapeMismatch {
                expected: expected.slice().to_vec(),
                got: vec![len],
            });
        }
        let storage = if len == 0 {
            Storage::Heap(Vec::new())
        } else {
            Storage::Borrowed(crate::storage::Borrowed { ptr, len })
        };
        Ok(Self::build(layout, grid, rank, storage))
    }

    /// The layout.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The process grid.
    pub fn grid(&self) -> &ProcGrid {
        &self.grid
    }

    /// This rank's rank in the layout, `None` when it holds no part.
    pub fn rank(&self) -> Option<usize> {
        self.rank
    }

    /// Global shape.
    pub fn shape(&self) -> &[usize] {
        self.layout.shape()
    }

    /// This rank's local part (the interior, where the array has ghost
    /// layers: [`padded`](Self::padded) is the whole block).
    pub fn local(&self) -> ArrayViewD<'_, T> {
        if self.padding.has_ghosts() {
            return self.interior_of(self.padded());
        }
        ArrayViewD::from_shape(self.shape_in_order(), self.storage.as_slice())
            .expect("storage of the local size")
    }

    /// This rank's local part, mutable (the interior, where the array has
    /// ghost layers).
    pub fn local_mut(&mut self) -> ArrayViewMutD<'_, T> {
        if self.padding.has_ghosts() {
            let (widths, local) = (self.padding.widths().to_vec(), self.dim.clone());
            return Self::interior_of_mut(&widths, local.slice(), self.padded_mut());
        }
        let shape = self.shape_in_order();
        ArrayViewMutD::from_shape(shape, self.storage.as_mut_slice())
            .expect("storage of the local size")
    }

    /// The local storage as one slice in memory order: the local part, or,
    /// where the array has ghost layers, the padded block ghosts included
    /// ([`padded_shape`](Self::padded_shape) in the layout's order).
    pub fn local_slice(&self) -> &[T] {
        self.storage.as_slice()
    }

    /// The local storage as one mutable slice in memory order (see
    /// [`local_slice`](Self::local_slice)).
    pub fn local_slice_mut(&mut self) -> &mut [T] {
        self.storage.as_mut_slice()
    }

    /// Takes the local part out of the array (copied out of shared storage,
    /// and out of the padded block where there are ghosts).
    pub fn into_local(self) -> ArrayD<T> {
        let shape = self.shape_in_order();
        if self.padding.has_ghosts() {
            let mut out = ArrayD::from_elem(shape, T::zeroed());
            out.assign(&self.local());
            return out;
        }
        ArrayD::from_shape_vec(shape, self.storage.into_vec()).expect("storage of the local size")
    }

    /// How other processes of this node can map the local storage, if it is
    /// in shared memory (local parts of at least
    /// [`shared_min_bytes`](crate::storage::shared_min_bytes), where the
    /// system allows it). Redistributions use it to copy straight from this
    /// array's storage.
    pub fn shared_storage(&self) -> Option<SharedStorage> {
        self.storage.shared()
    }

    /// The same array with its local part in shared memory whatever its size
    /// (unless the system refuses it). Not collective.
    pub fn into_shared(self) -> DistArray<T> {
        if self.storage.shared().is_some() {
            return self;
        }
        let storage = Storage::shared_copy(self.storage.as_slice());
        DistArray { storage, ..self }
    }

    /// The number of local elements `x` at global index `g` for which
    /// `pred(g, x)` holds, counted in parallel with the global indices
    /// computed block by block. Not collective.
    ///
    /// ```
    /// use dist_array::{DistArray, Layout};
    /// use procgrid::ProcGrid;
    /// use mpi::topology::Communicator;
    ///
    /// let universe = procgrid::init().unwrap();
    /// let world = universe.world();
    /// let grid = ProcGrid::new(&world, &[world.size() as usize]).unwrap();
    /// let layout = dist_array::layout_on_grid(&[10], &format!("cyclic(3)@{}", grid.size()).parse().unwrap(), &grid).unwrap();
    /// let a = DistArray::from_fn(&grid, layout, |g| g[0] as f64).unwrap();
    /// // Every element holds its global index.
    /// assert_eq!(a.count_where(|g, &x| x != g[0] as f64), 0);
    /// ```
    pub fn count_where<F>(&self, pred: F) -> usize
    where
        F: Fn(&[usize], &T) -> bool + Sync + Send,
    {
        let Some(r) = self.rank else { return 0 };
        let Ok(walk) = GlobalWalk::new(&self.layout, r) else {
            return 0;
        };
        self.interior_pieces()
            .map(|(at, chunk)| {
                let mut n = 0;
                walk.visit(at, chunk.len(), |i, g| {
                    n += usize::from(pred(g, &chunk[i]));
                });
                n
            })
            .sum()
    }

    /// Applies `f` to every local element (not to ghosts), in parallel. Not
    /// collective.
    pub fn map_inplace<F>(&mut self, f: F)
    where
        F: Fn(&mut T) + Sync + Send,
    {
        self.interior_pieces_mut()
            .for_each(|(_, c)| c.iter_mut().for_each(&f));
    }

    /// Applies `f` to every pair of local elements of `self` and `other`, in
    /// parallel. Both arrays must have the same layout. Not collective.
    ///
    /// ```
    /// use dist_array::{DistArray, Layout};
    /// use procgrid::ProcGrid;
    /// use mpi::topology::Communicator;
    ///
    /// let universe = procgrid::init().unwrap();
    /// let world = universe.world();
    /// let grid = ProcGrid::new(&world, &[world.size() as usize]).unwrap();
    /// let layout = dist_array::layout_on_grid(&[10], &format!("cyclic(3)@{}", grid.size()).parse().unwrap(), &grid).unwrap();
    /// let mut y = DistArray::from_fn(&grid, layout.clone(), |g| g[0] as f64).unwrap();
    /// let x = DistArray::from_fn(&grid, layout, |_| 1.0f64).unwrap();
    /// y.zip_with(&x, |y, x| *y += 2.0 * x).unwrap();
    /// assert_eq!(y.sum().unwrap(), 45.0 + 20.0);
    /// ```
    ///
    /// # Errors
    ///
    /// - [`DistError::LayoutMismatch`] when the two layouts differ (the grids are not
    ///   compared).
    pub fn zip_with<U, F>(&mut self, other: &DistArray<U>, f: F) -> Result<(), DistError>
    where
        U: Element,
        F: Fn(&mut T, &U) + Sync + Send,
    {
        if self.layout != other.layout {
            return Err(DistError::LayoutMismatch {
                left: self.layout.to_string(),
                right: other.layout.to_string(),
            });
        }
        if !self.has_ghosts() && !other.has_ghosts() {
            self.local_slice_mut()
                .par_chunks_mut(PIECE)
                .zip(other.local_slice().par_chunks(PIECE))
                .for_each(|(a, b)| a.iter_mut().zip(b).for_each(|(a, b)| f(a, b)));
            return Ok(());
        }
        ndarray::Zip::from(self.local_mut())
            .and(other.local())
            .par_for_each(f);
        Ok(())
    }
}

/// The global index of every local element of one rank, in memory order,
/// computed block by block: O(1) memory whatever the local size.
struct GlobalWalk<'a> {
    layout: &'a Layout,
    /// Grid coordinate of the rank along each axis.
    coords: Vec<usize>,
    /// Axes from the slowest-varying in memory to the fastest.
    axes: Vec<usize>,
    /// Local extents in that order.
    extents: Vec<usize>,
}

impl<'a> GlobalWalk<'a> {
    fn new(layout: &'a Layout, rank: usize) -> Result<GlobalWalk<'a>, DistError> {
        let coords = layout.coords_of_rank(rank)?;
        let shape = layout.local_shape(rank)?;
        let axes: Vec<usize> = match layout.storage() {
            Order::RowMajor => (0..layout.ndim()).collect(),
            Order::ColumnMajor => (0..layout.ndim()).rev().collect(),
        };
        let extents = axes.iter().map(|&d| shape[d]).collect();
        Ok(GlobalWalk {
            layout,
            coords,
            axes,
            extents,
        })
    }

    /// Local elements.
    fn len(&self) -> usize {
        self.extents.iter().product()
    }

    /// The global index of local index `l` along loop axis `k`.
    fn global(&self, k: usize, l: usize) -> usize {
        let d = self.axes[k];
        self.layout.axis(d).global_index(self.coords[d], l)
    }

    /// Calls `f(i, g)` for the `n` elements from flat memory offset `start`
    /// on, `i` counting from 0, `g` the element's global index. Walks the
    /// local index with an odometer and the innermost axis block by block:
    /// one division per block, none per element.
    fn visit(&self, start: usize, n: usize, mut f: impl FnMut(usize, &[usize])) {
        let k = self.axes.len();
        if k == 0 || n == 0 {
            return;
        }
        let mut m = vec![0usize; k];
        let mut rest = start;
        for d in (0..k).rev() {
            m[d] = rest % self.extents[d];
            rest /= self.extents[d];
        }
        let mut g = vec![0usize; self.layout.ndim()];
        for d in 0..k {
            g[self.axes[d]] = self.global(d, m[d]);
        }
        let inner = k - 1;
        let inner_axis = self.axes[inner];
        let block = self.layout.axis(inner_axis).block();
        let mut i = 0;
        while i < n {
            // Along the innermost axis, one block at a time.
            let l = m[inner];
            let run = (block - l % block).min(self.extents[inner] - l).min(n - i);
            let g0 = self.global(inner, l);
            for j in 0..run {
                g[inner_axis] = g0 + j;
                f(i + j, &g);
            }
            i += run;
            m[inner] += run;
            if m[inner] < self.extents[inner] {
                continue;
            }
            // Carry into the outer axes.
            m[inner] = 0;
            let mut d = inner;
            while d > 0 {
                d -= 1;
                m[d] += 1;
                if m[d] < self.extents[d] {
                    g[self.axes[d]] = self.global(d, m[d]);
                    break;
                }
                m[d] = 0;
                g[self.axes[d]] = self.global(d, 0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redist_plan::layout::spec::LayoutSpec;

    /// The local index of flat memory offset `i` of `rank`'s part.
    fn unflatten(layout: &Layout, rank: usize, mut i: usize) -> Vec<usize> {
        let shape = layout.local_shape(rank).unwrap();
        let mut l = vec![0; shape.len()];
        let dims: Vec<usize> = match layout.storage() {
            Order::RowMajor => (0..shape.len()).rev().collect(),
            Order::ColumnMajor => (0..shape.len()).collect(),
        };
        for d in dims {
            l[d] = i % shape[d];
            i /= shape[d];
        }
        l
    }

    #[test]
    fn global_walk_matches_the_index_maps() {
        for (shape, spec) in [
            (vec![17], "cyclic(3)+1@3"),
            (vec![10, 7], "cyclic(3),block+1@2x2"),
            (vec![9, 5, 4], "cyclic,cyclic(2),block@2x2x1"),
            (vec![6, 0], "block,cyclic@2x1"),
        ] {
            let spec: LayoutSpec = spec.parse().unwrap();
            for order in [Order::RowMajor, Order::ColumnMajor] {
                let layout = Layout::new(&shape, &spec).unwrap().with_storage(order);
                for rank in 0..layout.ranks() {
                    let walk = GlobalWalk::new(&layout, rank).unwrap();
                    for piece in [1, 2, 3, 5, 64] {
                        let mut start = 0;
                        while start < walk.len() {
                            let n = piece.min(walk.len() - start);
                            let mut seen = 0;
                            walk.visit(start, n, |i, g| {
                                let l = unflatten(&layout, rank, start + i);
                                assert_eq!(g, layout.local_to_global(rank, &l).unwrap());
                                seen += 1;
                            });
                            assert_eq!(seen, n);
                            start += n;
                        }
                    }
                }
            }
        }
    }
}
