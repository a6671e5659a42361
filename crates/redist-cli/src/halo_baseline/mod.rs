//! The ghost-cell updates a C programmer writes by hand, the yardsticks of
//! ndcyclic's own (`redist halo --baseline sendrecv,neighbor`), and the
//! check of a ghosted array after any update.
//!
//! A ghosted block is a rank's local part of a layout holding at most one
//! block per rank and axis, stored padded ([`GhostedBlock`]): `m_d + 2 w_d`
//! cells along axis `d`, the interior at offset `w_d`, in the layout's
//! storage order. The low ghosts of axis `d` hold the `w_d` global indices
//! just before the rank's first, the high ghosts the `w_d` after its last
//! (round the extent where the axis is periodic; beyond a non-periodic
//! edge they are the user's boundary and never written). `Corners::Star`
//! fills the faces only (cells outside the interior along one axis),
//! `Corners::Box` every ghost cell.
//!
//! - [`AxisByAxisHalo`] (`--baseline sendrecv`): per axis in order,
//!   `MPI_Irecv`/`MPI_Isend` of subarray faces with the previous and the
//!   next rank, then wait; corners carried axis by axis as 2DECOMP&FFT's
//!   `halo.f90` does;
//! - [`NeighborCollectiveHalo`] (`--baseline neighbor`): one
//!   `MPI_Neighbor_alltoallw` over a distributed graph with one edge per
//!   neighbour direction, faces, edges and corners straight into the ghosts;
//! - [`fill_ghosted`] and [`check_ghosts`]: storage holding `f(global index)`
//!   inside and a sentinel in every ghost, and the verdict on it after an
//!   update, for any update.
//!
//! Both yardsticks serve widths up to each neighbour's local extent along
//! the axis (what hand-written code assumes) and refuse wider ones
//! ([`HaloError::WidthBeyondNeighbour`]). A rank whose part is empty along
//! some axis takes no part: it sends and receives nothing, its storage is
//! left as it is, and neighbours are found past it (the owner of the index
//! beyond a part's edge, [`axis_neighbour`]). Ranks of the communicator
//! beyond the layout's take no part either (they still join the collective
//! calls, with empty storage).

mod axis_by_axis;
mod check;
mod error;
mod geometry;
mod neighbor_collective;

pub use axis_by_axis::AxisByAxisHalo;
pub use check::{check_ghosts, fill_ghosted, GhostCheck};
pub use error::HaloError;
pub use geometry::{axis_neighbour, GhostedBlock, Side};
pub use neighbor_collective::NeighborCollectiveHalo;

/// The rank of this process in `comm`, and whether the layout has it.
fn member(
    comm: &impl mpi::topology::Communicator,
    layout: &dist_array::Layout,
) -> Result<Option<usize>, HaloError> {
    let size = usize::try_from(comm.size()).unwrap_or(0);
    if layout.ranks() > size {
        return Err(HaloError::TooFewRanks {
            ranks: layout.ranks(),
            size,
        });
    }
    let rank = usize::try_from(comm.rank()).unwrap_or(usize::MAX);
    Ok((rank < layout.ranks()).then_some(rank))
}

/// Bytes of `block`'s padded storage of `element_bytes`-byte elements.
fn padded_bytes(block: &GhostedBlock, element_bytes: usize) -> Result<usize, HaloError> {
    block
        .cells()
        .checked_mul(element_bytes)
        .ok_or(HaloError::StorageOverflow {
            cells: block.cells(),
            element_bytes,
        })
}

/// `Err` unless `storage` holds `expected` bytes.
fn storage_size<T>(rank: usize, storage: &[T], expected: usize) -> Result<(), HaloError> {
    let given = std::mem::size_of_val(storage);
    if given != expected {
        return Err(HaloError::StorageSize {
            rank,
            given,
            expected,
        });
    }
    Ok(())
}
