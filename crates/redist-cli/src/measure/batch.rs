//! `--batch K`: K arrays of the same layouts moved in one exchange
//! (`execute_batch_into`), timed next to K separate executions of the same
//! arrays in the same run, and verified array by array.

use super::timing::{max_over_each, Progress};
use super::values::{self, IndexValue};
use crate::error::CliError;
use dist_array::{DistArray, Layout};
use mpi::topology::SimpleCommunicator;
use procgrid::ProcGrid;
use redist::Redistribution;

/// What a batch run measured: seconds per repetition of the batch and of
/// the K separate executions (the slowest rank's), and whether every array
/// arrived as it should (when asked).
pub(super) struct Batched {
    pub exec: Vec<f64>,
    pub separate: Vec<f64>,
    pub verified: Option<bool>,
}

/// Times `reps` batches of `k` arrays laid out as `from` on `grid_a` into
/// arrays laid out as `r`'s target on `grid_b`, then `reps` times the same
/// arrays one execution each, and verifies the batch's result (axes
/// permuted as `permutation` says). Collective over `comm`.
#[allow(clippy::too_many_arguments)]
pub(super) fn run<T: IndexValue>(
    comm: &SimpleCommunicator,
    r: &mut Redistribution<T>,
    (grid_a, from): (&ProcGrid, &Layout),
    grid_b: &ProcGrid,
    (k, reps, verify): (usize, usize, bool),
    permutation: Option<&[usize]>,
    progress: &Progress,
) -> Result<Batched, CliError> {
    let srcs: Vec<DistArray<T>> = (0..k)
        .map(|j| values::source::<T>(grid_a, from, j))
        .collect::<Result<_, _>>()?;
    let mut dsts: Vec<DistArray<T>> = (0..k)
        .map(|_| values::target::<T>(grid_b, r.target_layout(), None, false))
        .collect::<Result<_, _>>()?;
    let s: Vec<&DistArray<T>> = srcs.iter().collect();
    let once = |r: &mut Redistribution<T>, dsts: &mut [DistArray<T>]| {
        let mut d: Vec<&mut DistArray<T>> = dsts.iter_mut().collect();
        r.execute_batch_into(&s, &mut d)
    };
    let separate = |r: &mut Redistribution<T>, dsts: &mut [DistArray<T>]| {
        (srcs.iter().zip(dsts.iter_mut())).try_for_each(|(a, b)| r.execute_into(a, b))
    };
    // Warm-ups: buffers, connections.
    once(r, &mut dsts)?;
    separate(r, &mut dsts)?;
    let exec = max_over_each(comm, reps, progress, "batch", || Ok(once(r, &mut dsts)?))?;
    let sep = max_over_each(comm, reps, progress, "separate executions", || {
        Ok(separate(r, &mut dsts)?)
    })?;
    // The batch's result, checked array by array.
    once(r, &mut dsts)?;
    let verified = verify.then(|| {
        (dsts.iter().enumerate()).all(|(j, d)| {
            let at = (from.shape(), None, permutation);
            values::all_as_expected(comm, d, at, (&|v| v, j))
        })
    });
    Ok(Batched {
        exec,
        separate: sep,
        verified,
    })
}
