//! Ghost layers: a local part stored padded by `w_d` cells on both sides of
//! each axis `d`, for stencil solvers.
//!
//! Padding is a property of the storage, not of the layout (as ScaLAPACK's
//! leading dimension may exceed the local rows): the layout's index maps
//! are unchanged, the local part is the interior, and every operation
//! that is not about ghosts — reductions, `gather`, files, redistributions
//! — sees the array without them. The ghost cells are for the stencil
//! update (`redist::ghost`) to fill from the neighbours' interiors, and for
//! the caller to read, or to set where they are a boundary condition.
//!
//! ```
//! use dist_array::{DistArray, Layout};
//! use procgrid::ProcGrid;
//! use mpi::topology::Communicator;
//!
//! let universe = procgrid::init().unwrap();
//! let world = universe.world();
//! let p = world.size() as usize;
//! let grid = ProcGrid::new(&world, &[p, 1]).unwrap();
//! let layout = Layout::parse(&[4 * p, 6], &format!("block,block@{p}x1")).unwrap();
//! let a = DistArray::from_fn(&grid, layout, |g| (10 * g[0] + g[1]) as f64).unwrap();
//! let a = a.with_ghosts(&[1, 2]).unwrap();
//! assert_eq!(a.local().shape(), &[4, 6]); // the interior
//! assert_eq!(a.padded().shape(), &[6, 10]); // and its ghosts around it
//! assert_eq!(a.padded()[[1, 2]], a.local()[[0, 0]]);
//! assert_eq!(a.sum().unwrap(), a.clone().without_ghosts().sum().unwrap());
//! ```

use crate::array::DistArray;
use crate::error::DistError;
use crate::padding::Padding;
use crate::storage::Storage;
use ndarray::{ArrayViewD, ArrayViewMutD, Dimension, IxDyn, ShapeBuilder, Slice};
use procgrid::ProcGrid;
use rayon::prelude::*;
use redist_plan::coords::Order;
use redist_plan::element::Element;
use redist_plan::layout::Layout;

impl<T: Element> DistArray<T> {
    /// The same array with `widths[d]` ghost layers on both sides of axis
    /// `d`: its local part copied into padded storage (shared with the
    /// node's other ranks where large enough), ghosts zero. Widths of 0 are
    /// allowed; all zero gives the array without ghosts. Not collective.
    ///
    /// # Errors
    ///
    /// - [`DistError::GhostWidths`] when `widths` does not have one width
    ///   per axis;
    /// - [`DistError::OutOfMemory`] when the system cannot give the padded
    ///   storage.
    pub fn with_ghosts(self, widths: &[usize]) -> Result<DistArray<T>, DistError> {
        let padding = self.padding_for(widths)?;
        if padding == *self.padding() {
            return Ok(self);
        }
        let mut out = self.rebuilt(padding)?;
        out.local_mut().assign(&self.local());
        Ok(out)
    }

    /// An array of zeros, ghosts included, with `widths[d]` ghost layers on
    /// both sides of axis `d`. Not collective.
    ///
    /// # Errors
    ///
    /// As [`DistArray::zeros`], and [`DistError::GhostWidths`] when
    /// `widths` does not have one width per axis.
    pub fn zeros_with_ghosts(
        grid: &ProcGrid,
        layout: Layout,
        widths: &[usize],
    ) -> Result<DistArray<T>, DistError> {
        let rank = DistArray::<T>::check(grid, &layout)?;
        let local = DistArray::<T>::local_dim_of(&layout, rank);
        let padding = padding_for(&layout, rank, local.slice(), widths)?;
        let storage = Storage::zeros(padding.len(), true)?;
        Ok(DistArray::assemble(layout, grid, rank, storage, padding))
    }

    /// The same array without ghost layers (its interior copied into
    /// storage of its own). Not collective.
    pub fn without_ghosts(self) -> DistArray<T> {
        if !self.has_ghosts() {
            return self;
        }
        let padding = Padding::new(
            self.local_dim().slice(),
            &vec![0; self.layout().ndim()],
            self.layout().storage(),
        );
        match self.rebuilt(padding) {
            Ok(mut out) => {
                out.local_mut().assign(&self.local());
                out
            }
            // The interior is smaller than the padded storage that exists.
            Err(_) => {
                let local = self.local().to_owned();
                let (grid, layout) = (self.grid().clone(), self.layout().clone());
                DistArray::from_local(&grid, layout, local).unwrap_or(self)
            }
        }
    }

    /// Ghost widths per axis (all 0 for an array without ghosts): the
    /// widths the array was made with, the same on every rank, also on a
    /// rank that holds no part of it (and so no ghosts either).
    pub fn ghost_widths(&self) -> &[usize] {
        self.padding().declared()
    }

    /// Whether the array has ghost layers: some width is not 0 (the same
    /// on every rank; [`padded_shape`](Self::padded_shape) says what this
    /// rank stores).
    pub fn has_ghosts(&self) -> bool {
        self.ghost_widths().iter().any(|&w| w > 0)
    }

    /// The shape of the padded local storage, ghosts included, per axis:
    /// the local extent plus twice the width. The local shape on an array
    /// without ghosts, and on a rank that holds no part of the array.
    pub fn padded_shape(&self) -> Vec<usize> {
        self.padding().padded()
    }

    /// The whole padded local block, ghosts included: the local part
    /// ([`local`](Self::local)) is its interior, offset by the widths.
    pub fn padded(&self) -> ArrayViewD<'_, T> {
        let shape = self.padded_in_order();
        ArrayViewD::from_shape(shape, self.local_slice()).expect("storage of the padded size")
    }

    /// The whole padded local block, mutable: the way to set the ghosts
    /// an update leaves alone (non-periodic outer ghosts: the boundary).
    pub fn padded_mut(&mut self) -> ArrayViewMutD<'_, T> {
        let shape = self.padded_in_order();
        ArrayViewMutD::from_shape(shape, self.local_slice_mut())
            .expect("storage of the padded size")
    }

    /// The padded shape with the layout's storage order.
    fn padded_in_order(&self) -> ndarray::Shape<IxDyn> {
        IxDyn(&self.padding().padded()).set_f(self.layout().storage() == Order::ColumnMajor)
    }

    /// The interior of the padded storage `view` (of this array's padding).
    pub(crate) fn interior_of<'a>(&self, view: ArrayViewD<'a, T>) -> ArrayViewD<'a, T> {
        let (w, m) = (self.padding().widths(), self.local_dim());
        let mut view = view;
        view.slice_each_axis_inplace(|ax| {
            let d = ax.axis.index();
            Slice::from(w[d]..w[d] + m[d])
        });
        view
    }

    /// [`interior_of`](Self::interior_of), mutable.
    pub(crate) fn interior_of_mut<'a>(
        widths: &[usize],
        local: &[usize],
        view: ArrayViewMutD<'a, T>,
    ) -> ArrayViewMutD<'a, T> {
        let mut view = view;
        view.slice_each_axis_inplace(|ax| {
            let d = ax.axis.index();
            Slice::from(widths[d]..widths[d] + local[d])
        });
        view
    }

    /// The padding of this array's local part with `widths`, checked.
    fn padding_for(&self, widths: &[usize]) -> Result<Padding, DistError> {
        padding_for(self.layout(), self.rank(), self.local_dim().slice(), widths)
    }

    /// An array of this one's layout and grid in new zeroed storage of
    /// `padding`, shared with the node where this array's is.
    fn rebuilt(&self, padding: Padding) -> Result<DistArray<T>, DistError> {
        let storage = match self.shared_storage() {
            Some(_) => Storage::shared_zeros(padding.len())?,
            None => Storage::zeros(padding.len(), true)?,
        };
        Ok(DistArray::assemble(
            self.layout().clone(),
            self.grid(),
            self.rank(),
            storage,
            padding,
        ))
    }

    /// The pieces of the interior in memory order, in parallel: large
    /// chunks of the storage without ghosts, the interior's lines with them.
    /// With each, the interior offset (in memory order) where it starts.
    pub(crate) fn interior_pieces(&self) -> impl IndexedParallelIterator<Item = (usize, &[T])> {
        let chunk = crate::array::PIECE;
        let lines = self.padding().lines();
        let ghosted = self.padding().has_ghosts();
        let step = if ghosted { lines.line.max(1) } else { chunk };
        let span = lines.interior.len();
        self.local_slice()
            .par_chunks(step)
            .enumerate()
            .map(move |(k, piece)| match ghosted {
                false => (k * chunk, piece),
                true => match lines.interior_line(k) {
                    Some(i) => (i * span, &piece[lines.interior.clone()]),
                    None => (0, &piece[..0]),
                },
            })
    }

    /// [`interior_pieces`](Self::interior_pieces), mutable.
    pub(crate) fn interior_pieces_mut(
        &mut self,
    ) -> impl IndexedParallelIterator<Item = (usize, &mut [T])> {
        let chunk = crate::array::PIECE;
        let lines = self.padding().lines();
        let ghosted = self.padding().has_ghosts();
        let step = if ghosted { lines.line.max(1) } else { chunk };
        let span = lines.interior.len();
        self.local_slice_mut()
            .par_chunks_mut(step)
            .enumerate()
            .map(move |(k, piece)| match ghosted {
                false => (k * chunk, piece),
                true => match lines.interior_line(k) {
                    Some(i) => (i * span, &mut piece[lines.interior.clone()]),
                    None => (0, &mut piece[..0]),
                },
            })
    }

    /// The interior in memory order as one slice: borrowed without ghosts,
    /// copied with them.
    pub(crate) fn interior_contiguous(&self) -> std::borrow::Cow<'_, [T]> {
        if !self.padding().has_ghosts() {
            return std::borrow::Cow::Borrowed(self.local_slice());
        }
        let mut out = vec![T::zeroed(); self.local_dim().size()];
        let span = self.padding().lines().interior.len();
        for (at, piece) in self.interior_pieces().collect::<Vec<_>>() {
            if !piece.is_empty() {
                out[at..at + span].copy_from_slice(piece);
            }
        }
        std::borrow::Cow::Owned(out)
    }
}

/// The padding of `rank`'s `local` part of `layout` with `widths`, checked.
fn padding_for(
    layout: &Layout,
    rank: Option<usize>,
    local: &[usize],
    widths: &[usize],
) -> Result<Padding, DistError> {
    if widths.len() != layout.ndim() {
        return Err(DistError::GhostWidths {
            ndim: layout.ndim(),
            got: widths.to_vec(),
        });
    }
    Ok(match rank {
        Some(_) => Padding::new(local, widths, layout.storage()),
        // A rank outside the layout holds nothing, ghosts included; it
        // knows the widths all the same.
        None => Padding::new(local, &vec![0; widths.len()], layout.storage()).declaring(widths),
    })
}
