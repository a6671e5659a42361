//! [`choose_pencil_grid`]: the `P1 × P2` grid of a 3-D FFT chosen by timing
//! whole forward + inverse transforms on each candidate
//! ([`redist::tune::choose_grid`]), kept in a wisdom file for later jobs.

use super::{Extents, Fft3d, FftError, PencilGrid, C64};
use dist_array::DistArray;
use mpi::topology::{Communicator, SimpleCommunicator};
use redist::tune::{choose_grid, grids, GridChoice, GridSettings};
use redist::Strategy;

/// The candidate grids of `ranks` ranks: every `P1 × P2 = ranks`, the
/// untuned default ([`PencilGrid::balanced`]) first.
///
/// ```
/// use apps::fft3d::{pencil_candidates, PencilGrid};
/// let c = pencil_candidates(4);
/// assert_eq!(c[0], PencilGrid::balanced(4).unwrap());
/// assert_eq!(c.len(), 3);
/// ```
pub fn pencil_candidates(ranks: usize) -> Vec<PencilGrid> {
    grids(ranks, 2)
        .into_iter()
        .map(|g| PencilGrid { p1: g[0], p2: g[1] })
        .collect()
}

/// The name a wisdom file keeps the choice under: the extents, the element
/// type and the strategy.
fn job_name(extents: Extents, strategy: Strategy) -> String {
    let [nx, ny, nz] = extents;
    format!("fft3d {nx}x{ny}x{nz} c64 forward+inverse strategy {strategy}")
}

/// Chooses the fastest pencil grid for transforms of `extents` on the ranks
/// of `world`: each candidate ([`pencil_candidates`]) set up — plans,
/// redistributions and arrays — and timed on whole forward + inverse
/// transforms (FFTs and exchanges both), the slowest rank's median
/// counting; a grid the wisdom file of `settings` holds for this job and
/// machine is taken without measuring. Collective.
///
/// # Errors
///
/// The errors of [`Fft3d::new`] and its transforms, on every rank alike.
pub fn choose_pencil_grid(
    world: &SimpleCommunicator,
    extents: Extents,
    strategy: Strategy,
    settings: &GridSettings,
) -> Result<GridChoice, FftError> {
    let ranks = usize::try_from(world.size()).expect("a communicator has a positive size");
    let candidates: Vec<Vec<usize>> = pencil_candidates(ranks)
        .iter()
        .map(|g| vec![g.p1, g.p2])
        .collect();
    choose_grid(
        world,
        &job_name(extents, strategy),
        &candidates,
        settings,
        |g: &[usize]| {
            let grid = PencilGrid { p1: g[0], p2: g[1] };
            let mut fft = Fft3d::new(world, extents, Some(grid), strategy)?;
            let mut x = DistArray::<C64>::zeros(fft.grid(), fft.x_layout().clone())?;
            let mut spectrum = DistArray::<C64>::zeros(fft.grid(), fft.z_layout().clone())?;
            x.map_inplace(|v| *v = C64::new(1.0, 0.5));
            Ok(move || -> Result<(), FftError> {
                fft.forward(&mut x, &mut spectrum)?;
                fft.inverse(&mut spectrum, &mut x)?;
                Ok(())
            })
        },
    )
}
