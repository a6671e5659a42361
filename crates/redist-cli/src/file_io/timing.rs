//! Timing the runs of `redist io`: `--reps` runs of a save, a load or a
//! baseline, the slowest rank's seconds each.

use crate::collective::max_over;
use crate::error::CliError;
use mpi::topology::SimpleCommunicator;

/// Seconds of `reps` runs of `f`, each after `before` (untimed) and a
/// barrier, the slowest rank's. Collective.
pub(super) fn time_reps(
    comm: &SimpleCommunicator,
    reps: u64,
    before: impl Fn(),
    mut f: impl FnMut() -> Result<(), CliError>,
) -> Result<Vec<f64>, CliError> {
    let mut times = Vec::new();
    for _ in 0..reps {
        before();
        procgrid::waits::barrier(comm);
        let t = mpi::time();
        f()?;
        times.push(max_over(comm, mpi::time() - t));
    }
    Ok(times)
}
