//! The MPI-IO yardstick's description of a layout: the `Darray` that
//! `MPI_Type_create_darray` builds this rank's file view from, for the
//! layouts it can describe (first blocks on grid coordinate 0, ranks
//! numbered row-major over the grid).

use dist_array::{Dist, Layout};
use mpi_extras::file::{Darray, DarrayDist};
use redist::RedistError;

/// `layout`'s part on `rank`, elements of `element_bytes` bytes, as a
/// darray.
///
/// # Errors
///
/// [`RedistError::InvalidArgument`] for layouts `MPI_Type_create_darray`
/// cannot describe.
pub(super) fn darray(
    layout: &Layout,
    rank: usize,
    element_bytes: usize,
) -> Result<Darray, RedistError> {
    let refuse = |why: &str| RedistError::InvalidArgument {
        what: "layout for MPI_Type_create_darray",
        value: layout.spec().to_string(),
        expected: why.to_string(),
    };
    if layout
        .rank_dims()
        .is_none_or(|d| d.windows(2).any(|w| w[0] > w[1]))
    {
        return Err(refuse("ranks numbered row-major over the grid"));
    }
    let dists = (layout.spec().dists().iter())
        .map(|dist| match *dist {
            Dist::Block { first: 0 } => Ok(DarrayDist::Block),
            Dist::Cyclic { block, first: 0 } => Ok(DarrayDist::Cyclic { block }),
            Dist::Collapsed => Ok(DarrayDist::Collapsed),
            _ => Err(refuse("first blocks on grid coordinate 0")),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Darray {
        shape: layout.shape().to_vec(),
        dists,
        grid: layout.grid_extents().to_vec(),
        ranks: layout.ranks(),
        rank,
        element_bytes,
        order: layout.storage(),
    })
}
