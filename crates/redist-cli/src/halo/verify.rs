//! `redist halo --verify`: after an update of fresh values, every padded
//! cell holds the value of the global index it should, and every ghost no
//! update writes still holds its rank's sentinel (one per rank, so that a
//! ghost copied from another rank's untouched ghost shows) — checked by the
//! same [`check_ghosts`] as the yardsticks.

use crate::collective::on_every_rank;
use crate::error::CliError;
use crate::measure::values::IndexValue;
use dist_array::{DistArray, Layout};
use mpi::topology::SimpleCommunicator;
use procgrid::ProcGrid;
use redist::ghost::{GhostSpec, GhostUpdate};
use redist_cli::halo_baseline::check_ghosts;

/// The row-major linear index of `g` in an array of `shape`.
pub(super) fn linear(shape: &[usize], g: &[usize]) -> usize {
    g.iter().zip(shape).fold(0, |i, (&x, &n)| i * n + x)
}

/// The value a cell of global index `g` holds.
pub(super) fn value_of<T: IndexValue>(shape: &[usize], g: &[usize]) -> T {
    T::index_value(linear(shape, g))
}

/// Rank `rank`'s sentinel: a value past every index's.
pub(super) fn sentinel<T: IndexValue>(layout: &Layout, rank: usize) -> T {
    T::index_value(layout.len() + 1 + rank)
}

/// An array of `layout` with the widths of `spec` whose interior holds
/// [`value_of`] its global indices and whose ghosts hold this rank's
/// [`sentinel`].
pub(super) fn values<T: IndexValue>(
    grid: &ProcGrid,
    layout: &Layout,
    spec: &GhostSpec,
) -> Result<DistArray<T>, CliError> {
    let shape = layout.shape().to_vec();
    let a = DistArray::from_fn(grid, layout.clone(), |g| value_of::<T>(&shape, g))?;
    let plain = a.clone();
    let rank = a.rank().unwrap_or(layout.ranks());
    let mut a = a.into_shared().with_ghosts(spec.widths())?;
    a.padded_mut().fill(sentinel::<T>(layout, rank));
    a.local_mut().assign(&plain.local());
    Ok(a)
}

/// Updates a fresh array (see [`values`]) with `update` and checks every
/// padded cell; true on every rank when every rank's cells are right.
/// Collective.
pub(super) fn after_update<T: IndexValue>(
    world: &SimpleCommunicator,
    grid: &ProcGrid,
    layout: &Layout,
    spec: &GhostSpec,
    update: &mut GhostUpdate<T>,
) -> Result<bool, CliError> {
    let mut a: DistArray<T> = values(grid, layout, spec)?;
    update.update(&mut a)?;
    let right = match a.rank() {
        None => true,
        Some(rank) => {
            let shape = layout.shape().to_vec();
            let check = check_ghosts(
                layout,
                rank,
                spec,
                a.local_slice(),
                |g| value_of::<T>(&shape, g),
                sentinel::<T>(layout, rank),
            )?;
            check.is_right()
        }
    };
    Ok(on_every_rank(world, right))
}
