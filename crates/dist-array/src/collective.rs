//! Collective operations on distributed arrays: reductions, gather, scatter.
//!
//! All of them are collective over the grid's communicator (every rank of
//! it, members of the layout's grid or not) and give the same result on
//! every rank. Reductions combine the ranks' partial results in rank order on
//! every rank, so a result is reproducible bit for bit for a given layout.

use crate::array::DistArray;
use crate::error::DistError;
use bytemuck::Zeroable;
use mpi::collective::{CommunicatorCollectives, Root};
use mpi::datatype::{Partition, PartitionMut};
use mpi::topology::Communicator;
use mpi::Count;
use ndarray::{ArrayD, ArrayViewD, ArrayViewMutD, IxDyn, ShapeBuilder, Slice};
use procgrid::{Order, ProcGrid};
use rayon::prelude::*;
use redist_plan::element::Element;
use redist_plan::layout::Layout;

/// Largest byte count one MPI call can carry (counts are `i32`).
const MPI_LIMIT: u128 = i32::MAX as u128;

impl<T: Element> DistArray<T> {
    /// Sum of all elements, accumulated in [`Element::Sum`]. Collective.
    ///
    /// # Errors
    ///
    /// None: it always returns `Ok`. (An MPI error aborts the job: the grid's
    /// communicator is the library's duplicate, whose MPI errors are fatal.)
    pub fn sum(&self) -> Result<T::Sum, DistError> {
        let partials: Vec<T::Sum> = self
            .interior_pieces()
            .map(|(_, c)| c.iter().fold(T::Sum::zeroed(), |s, &x| T::add(s, x)))
            .collect();
        let mine = partials.into_iter().fold(T::Sum::zeroed(), T::combine);
        let all = all_gather(self.grid(), mine);
        Ok(all.into_iter().fold(T::Sum::zeroed(), T::combine))
    }

    /// Largest absolute value (modulus) of any element; 0 for an empty array.
    /// Collective.
    ///
    /// # Errors
    ///
    /// None: it always returns `Ok`. (An MPI error aborts the job: the grid's
    /// communicator is the library's duplicate, whose MPI errors are fatal.)
    pub fn max_abs(&self) -> Result<f64, DistError> {
        let mine = self
            .interior_pieces()
            .map(|(_, c)| c.iter().fold(0.0f64, |m, &x| m.max(x.modulus())))
            .reduce(|| 0.0, f64::max);
        Ok(all_gather(self.grid(), mine)
            .into_iter()
            .fold(0.0, f64::max))
    }

    /// Euclidean norm: the square root of the sum of squared moduli. Collective.
    ///
    /// # Errors
    ///
    /// None: it always returns `Ok`. (An MPI error aborts the job: the grid's
    /// communicator is the library's duplicate, whose MPI errors are fatal.)
    pub fn norm2(&self) -> Result<f64, DistError> {
        let partials: Vec<f64> = self
            .interior_pieces()
            .map(|(_, c)| c.iter().map(|&x| x.modulus() * x.modulus()).sum::<f64>())
            .collect();
        let mine: f64 = partials.into_iter().sum();
        Ok(all_gather(self.grid(), mine)
            .into_iter()
            .sum::<f64>()
            .sqrt())
    }

    /// The whole array on rank `root` of the grid's communicator (row-major),
    /// `None` on the other ranks. Collective.
    ///
    /// # Errors
    ///
    /// - [`DistError::BadRoot`] when `root` is not a rank of the grid's communicator;
    /// - [`DistError::TooLarge`] when the whole array holds more than `i32::MAX` bytes.
    ///
    /// Both are decided before any communication from `root` and the layout
    /// alone: local to the rank, the same on every rank when all pass the
    /// same `root` and arrays of the same layout.
    pub fn gather(&self, root: usize) -> Result<Option<ArrayD<T>>, DistError> {
        let comm = self.grid().communicator();
        let (counts, displs) =
            byte_partition::<T>("gather", self.layout(), comm.size() as usize, root)?;
        let spare = [0u8; 1];
        let interior = self.interior_contiguous();
        let send = at_real_address(bytemuck::cast_slice(&interior), &spare);
        let root_process = comm.process_at_rank(rank_of(root));
        if comm.rank() as usize != root {
            root_process.gather_varcount_into(send);
            return Ok(None);
        }
        let total: usize = self.layout().len();
        let mut recv = vec![T::zeroed(); total];
        {
            let mut spare = [0u8; 1];
            let bytes = at_real_address_mut(bytemuck::cast_slice_mut(&mut recv), &mut spare);
            let mut part = PartitionMut::new(bytes, &counts[..], &displs[..]);
            root_process.gather_varcount_into_root(send, &mut part);
        }
        let layout = self.layout();
        let mut whole = ArrayD::from_elem(IxDyn(layout.shape()), T::zeroed());
        let mut offset = 0;
        for r in 0..layout.ranks() {
            let n = layout.local_len(r)?;
            let local = local_view(layout, r, &recv[offset..offset + n])?;
            for b in layout.local_blocks(r)? {
                copy_block(whole.view_mut(), &b.global, local.view(), &b.local);
            }
            offset += n;
        }
        Ok(Some(whole))
    }

    /// Distributes `whole`, supplied on rank `root` of `grid`'s communicator,
    /// as `layout`. Other ranks pass `None` (anything they pass is ignored).
    /// Collective. The root checks the array's shape and tells every rank its
    /// verdict, so a bad array gives the same error everywhere.
    ///
    /// # Errors
    ///
    /// - [`DistError::BadRoot`] when `root` is not a rank of `grid`'s communicator;
    /// - [`DistError::TooLarge`] when the whole array holds more than `i32::MAX` bytes;
    /// - [`DistError::GridMismatch`] when `grid`'s extents are not the layout's;
    /// - [`DistError::MissingRootArray`] when the root passed `None`;
    /// - [`DistError::ShapeMismatch`] when the root's array does not have the layout's shape.
    ///
    /// The first three are decided before any communication and are local to
    /// the rank (the same everywhere when all pass the same arguments); the
    /// last two are the root's verdict, broadcast, so every rank returns them.
    pub fn scatter(
        grid: &ProcGrid,
        layout: Layout,
        root: usize,
        whole: Option<ArrayViewD<'_, T>>,
    ) -> Result<DistArray<T>, DistError> {
        let comm = grid.communicator();
        // Validate everything every rank can judge alike before allocating or communicating.
        let (counts, displs) = byte_partition::<T>("scatter", &layout, comm.size() as usize, root)?;
        let mut out = DistArray::zeros(grid, layout)?;
        let layout = out.layout().clone();
        let root_process = comm.process_at_rank(rank_of(root));
        let is_root = comm.rank() as usize == root;
        agree_on_root_array(&root_process, root, is_root, whole.as_ref(), layout.shape())?;
        let mut spare_recv = [0u8; 1];
        let recv = at_real_address_mut(
            bytemuck::cast_slice_mut(out.local_slice_mut()),
            &mut spare_recv,
        );
        if !is_root {
            root_process.scatter_varcount_into(recv);
            return Ok(out);
        }
        let whole = whole.expect("the root's verdict says it has the array");
        let send = pack_by_rank(&layout, &whole)?;
        let spare = [0u8; 1];
        let bytes = at_real_address(bytemuck::cast_slice(&send), &spare);
        let part = Partition::new(bytes, &counts[..], &displs[..]);
        root_process.scatter_varcount_into_root(&part, recv);
        Ok(out)
    }
}

/// The root's verdict on the array it passed to [`DistArray::scatter`]
/// (`whole` counts on the root only), broadcast from `root_process` so that
/// every rank returns the same error: none when the array has `shape`,
/// [`DistError::MissingRootArray`] when the root has no array,
/// [`DistError::ShapeMismatch`] with the root's shape otherwise. Collective.
fn agree_on_root_array<T: Element>(
    root_process: &impl Root,
    root: usize,
    is_root: bool,
    whole: Option<&ArrayViewD<'_, T>>,
    shape: &[usize],
) -> Result<(), DistError> {
    // The root's verdict: 0 ok, 1 no array, 2 wrong shape (then its shape follows).
    let mut verdict = [0u64; 2];
    let mut got_shape = vec![];
    if is_root {
        match whole {
            None => verdict[0] = 1,
            Some(w) if w.shape() != shape => {
                verdict = [2, w.ndim() as u64];
                got_shape = w.shape().iter().map(|&n| n as u64).collect();
            }
            Some(_) => {}
        }
    }
    root_process.broadcast_into(&mut verdict[..]);
    match verdict[0] {
        1 => Err(DistError::MissingRootArray { root }),
        2 => {
            got_shape.resize(usize::try_from(verdict[1]).unwrap_or(0), 0);
            root_process.broadcast_into(&mut got_shape[..]);
            Err(DistError::ShapeMismatch {
                expected: shape.to_vec(),
                got: got_shape
                    .iter()
                    .map(|&n| usize::try_from(n).unwrap_or(usize::MAX))
                    .collect(),
            })
        }
        _ => Ok(()),
    }
}

/// The elements of `whole` in the order [`DistArray::scatter`] sends them:
/// rank by rank, each rank's local part as `layout` stores it.
fn pack_by_rank<T: Element>(
    layout: &Layout,
    whole: &ArrayViewD<'_, T>,
) -> Result<Vec<T>, DistError> {
    let mut send = vec![T::zeroed(); layout.len()];
    let mut offset = 0;
    for r in 0..layout.ranks() {
        let n = layout.local_len(r)?;
        let mut local = local_view_mut(layout, r, &mut send[offset..offset + n])?;
        for b in layout.local_blocks(r)? {
            copy_block(local.view_mut(), &b.local, whole.view(), &b.global);
        }
        offset += n;
    }
    Ok(send)
}

/// `bytes`, or for an empty `bytes` an empty slice of `spare`. Rust places
/// empty slices of bytes at address 1, which is Open MPI's `MPI_IN_PLACE`:
/// a gather or scatter handed one would refuse it (`MPI_ERR_ARG`) or take
/// it for "in place".
fn at_real_address<'a>(bytes: &'a [u8], spare: &'a [u8; 1]) -> &'a [u8] {
    if bytes.is_empty() {
        &spare[..0]
    } else {
        bytes
    }
}

/// [`at_real_address`] of a writable slice.
fn at_real_address_mut<'a>(bytes: &'a mut [u8], spare: &'a mut [u8; 1]) -> &'a mut [u8] {
    if bytes.is_empty() {
        &mut spare[..0]
    } else {
        bytes
    }
}

/// Rank `r` of a communicator, which `byte_partition` checked is below its
/// (`i32`) size.
fn rank_of(r: usize) -> mpi::Rank {
    mpi::Rank::try_from(r).unwrap_or(mpi::Rank::MAX)
}

/// Every rank's `value`, in rank order of the grid's communicator.
fn all_gather<S: bytemuck::Pod>(grid: &ProcGrid, value: S) -> Vec<S> {
    let comm = grid.communicator();
    let mut all = vec![S::zeroed(); comm.size() as usize];
    let send = [value];
    comm.all_gather_into(
        bytemuck::cast_slice::<S, u8>(&send[..]),
        bytemuck::cast_slice_mut::<S, u8>(&mut all[..]),
    );
    all
}

/// Byte counts and displacements of every rank's local part, checked against
/// MPI's `i32` counts. Pure, so every rank reaches the same verdict.
fn byte_partition<T>(
    what: &'static str,
    layout: &Layout,
    comm_size: usize,
    root: usize,
) -> Result<(Vec<Count>, Vec<Count>), DistError> {
    if root >= comm_size {
        return Err(DistError::BadRoot {
            root,
            size: comm_size,
        });
    }
    let size = std::mem::size_of::<T>() as u128;
    let total = layout.len() as u128 * size;
    if total > MPI_LIMIT {
        return Err(DistError::TooLarge {
            what,
            bytes: total,
            limit: MPI_LIMIT,
        });
    }
    let mut counts = vec![0 as Count; comm_size];
    let mut displs = vec![0 as Count; comm_size];
    let mut offset = 0u128;
    for r in 0..layout.ranks() {
        let bytes = layout.local_len(r)? as u128 * size;
        // Both below MPI_LIMIT, checked above.
        counts[r] = Count::try_from(bytes).unwrap_or(Count::MAX);
        displs[r] = Count::try_from(offset).unwrap_or(Count::MAX);
        offset += bytes;
    }
    for d in displs.iter_mut().skip(layout.ranks()) {
        *d = Count::try_from(offset).unwrap_or(Count::MAX);
    }
    Ok((counts, displs))
}

fn local_dim(layout: &Layout, rank: usize) -> Result<ndarray::StrideShape<IxDyn>, DistError> {
    let shape = layout.local_shape(rank)?;
    Ok(IxDyn(&shape)
        .set_f(layout.storage() == Order::ColumnMajor)
        .into())
}

fn local_view<'a, T>(
    layout: &Layout,
    rank: usize,
    data: &'a [T],
) -> Result<ArrayViewD<'a, T>, DistError> {
    Ok(ArrayViewD::from_shape(local_dim(layout, rank)?, data)
        .expect("buffer length is the local size"))
}

fn local_view_mut<'a, T>(
    layout: &Layout,
    rank: usize,
    data: &'a mut [T],
) -> Result<ArrayViewMutD<'a, T>, DistError> {
    Ok(ArrayViewMutD::from_shape(local_dim(layout, rank)?, data)
        .expect("buffer length is the local size"))
}

/// Copies the block `src[src_ranges]` into `dst[dst_ranges]` (same lengths).
fn copy_block<T: Copy>(
    mut dst: ArrayViewMutD<'_, T>,
    dst_ranges: &[std::ops::Range<usize>],
    src: ArrayViewD<'_, T>,
    src_ranges: &[std::ops::Range<usize>],
) {
    let s = src.slice_each_axis(|ax| Slice::from(src_ranges[ax.axis.index()].clone()));
    dst.slice_each_axis_mut(|ax| Slice::from(dst_ranges[ax.axis.index()].clone()))
        .assign(&s);
}
