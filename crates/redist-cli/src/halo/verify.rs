//! `redist halo --verify`: after an update of fresh values, every padded
//! cell holds the value of the global index it should, and every ghost no
//! update writes still holds the value it was given.

use crate::collective::on_every_rank;
use crate::error::CliError;
use crate::measure::values::IndexValue;
use dist_array::{DistArray, Layout};
use mpi::topology::SimpleCommunicator;
use ndarray::Dimension;
use procgrid::ProcGrid;
use redist::ghost::{cell_source, GhostSpec, GhostUpdate};

/// The row-major linear index of `g` in an array of `shape`.
pub(super) fn linear(shape: &[usize], g: &[usize]) -> usize {
    g.iter().zip(shape).fold(0, |i, (&x, &n)| i * n + x)
}

/// Updates a fresh array of `layout` (interior: values of the global
/// indices; ghosts: untouched) with `update` and checks every padded
/// cell; true on every rank when every rank's cells are right.
/// Collective.
pub(super) fn after_update<T: IndexValue>(
    world: &SimpleCommunicator,
    grid: &ProcGrid,
    layout: &Layout,
    spec: &GhostSpec,
    update: &mut GhostUpdate<T>,
) -> Result<bool, CliError> {
    let mut a: DistArray<T> = super::values(grid, layout, spec)?;
    update.update(&mut a)?;
    let shape = layout.shape();
    let right = match a.rank() {
        None => true,
        Some(rank) => {
            let padded = a.padded();
            let right = padded.indexed_iter().all(|(p, &v)| {
                let want = cell_source(layout, spec, rank, p.slice())
                    .map_or(T::untouched(), |g| T::index_value(linear(shape, &g)));
                v == want
            });
            right
        }
    };
    Ok(on_every_rank(world, right))
}
