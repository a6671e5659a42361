//! A layout placed on a process grid: the one link between a layout, which
//! knows no MPI, and the grid its ranks live on.

use crate::error::DistError;
use procgrid::grid::ProcGrid;
use redist_plan::layout::spec::LayoutSpec;
use redist_plan::layout::Layout;

/// The layout of `shape` distributed as `spec` on `grid`: the grid's
/// extents must be the spec's, and ranks follow the grid's coordinate order.
///
/// ```no_run
/// use dist_array::{layout_on_grid, LayoutSpec, ProcGrid};
/// let universe = procgrid::init()?;
/// let grid = ProcGrid::new(&universe.world(), &[1])?;
/// let spec: LayoutSpec = "cyclic(3)@1".parse()?;
/// let layout = layout_on_grid(&[10], &spec, &grid)?;
/// assert_eq!(layout.local_shape(0)?, vec![10]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// - [`DistError::GridMismatch`] when `grid`'s extents are not the spec's;
/// - [`DistError::Layout`] when the spec does not fit `shape` (see
///   [`Layout::new`]).
pub fn layout_on_grid(
    shape: &[usize],
    spec: &LayoutSpec,
    grid: &ProcGrid,
) -> Result<Layout, DistError> {
    if grid.extents() != spec.grid() {
        return Err(DistError::GridMismatch {
            layout_grid: spec.grid().to_vec(),
            grid: grid.extents().to_vec(),
        });
    }
    Ok(Layout::new(shape, spec)?.with_grid_order(grid.order()))
}
