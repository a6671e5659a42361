//! `--batch K`: K arrays of the same layouts moved in one exchange
//! (`execute_batch_into`; with `--batch-types`, arrays of several element
//! types through `execute_mixed_batch`), timed next to K separate
//! executions of the same arrays in the same run, and verified array by
//! array.

use super::args::ElementArg;
use super::timing::{max_over_each, Progress};
use super::values::{self, IndexValue};
use crate::error::CliError;
use dist_array::{Complex, DistArray, Layout};
use mpi::topology::SimpleCommunicator;
use procgrid::ProcGrid;
use redist::{MixedBatch, Redistribution};

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

/// One array of a mixed batch with its target, its element type erased.
trait MixedPair {
    /// Adds the pair to `batch`.
    fn push_into<'a>(&'a mut self, batch: &mut MixedBatch<'a>);
    /// Whether the target holds array `j`'s values, on every rank.
    /// Collective.
    fn verified(
        &self,
        comm: &SimpleCommunicator,
        shape: &[usize],
        p: Option<&[usize]>,
        j: usize,
    ) -> bool;
}

impl<U: IndexValue> MixedPair for (DistArray<U>, DistArray<U>) {
    fn push_into<'a>(&'a mut self, batch: &mut MixedBatch<'a>) {
        let (src, dst) = (&self.0, &mut self.1);
        batch.push(src, dst);
    }

    fn verified(
        &self,
        comm: &SimpleCommunicator,
        shape: &[usize],
        p: Option<&[usize]>,
        j: usize,
    ) -> bool {
        values::all_as_expected(comm, &self.1, (shape, None, p), (&|v| v, j))
    }
}

/// Array `j` of a mixed batch, of element type `ty`, with its target.
fn mixed_pair(
    ty: ElementArg,
    (grid_a, from): (&ProcGrid, &Layout),
    (grid_b, to): (&ProcGrid, &Layout),
    j: usize,
) -> Result<Box<dyn MixedPair>, CliError> {
    fn pair<U: IndexValue>(
        (grid_a, from): (&ProcGrid, &Layout),
        (grid_b, to): (&ProcGrid, &Layout),
        j: usize,
    ) -> Result<Box<dyn MixedPair>, CliError> {
        let src = values::source::<U>(grid_a, from, j)?;
        let dst = values::target::<U>(grid_b, to, None, false)?;
        Ok(Box::new((src, dst)))
    }
    let (a, b) = ((grid_a, from), (grid_b, to));
    match ty {
        ElementArg::F32 => pair::<f32>(a, b, j),
        ElementArg::F64 => pair::<f64>(a, b, j),
        ElementArg::C64 => pair::<Complex<f64>>(a, b, j),
        ElementArg::I32 => pair::<i32>(a, b, j),
        ElementArg::U8 => pair::<u8>(a, b, j),
    }
}

/// As [`run`] for a mixed batch (`--batch-types`): array `j` of type
/// `types[j % types.len()]`, all moved by one `execute_mixed_batch`; the
/// separate executions are one mixed batch of one array each.
#[allow(clippy::too_many_arguments)]
pub(super) fn run_mixed<T: IndexValue>(
    comm: &SimpleCommunicator,
    r: &mut Redistribution<T>,
    (grid_a, from): (&ProcGrid, &Layout),
    grid_b: &ProcGrid,
    ((k, reps, verify), types): ((usize, usize, bool), &[ElementArg]),
    permutation: Option<&[usize]>,
    progress: &Progress,
) -> Result<Batched, CliError> {
    let to = r.target_layout().clone();
    let mut pairs: Vec<Box<dyn MixedPair>> = (0..k)
        .map(|j| mixed_pair(types[j % types.len()], (grid_a, from), (grid_b, &to), j))
        .collect::<Result<_, _>>()?;
    let once = |r: &mut Redistribution<T>, pairs: &mut [Box<dyn MixedPair>]| {
        let mut batch = MixedBatch::new();
        pairs.iter_mut().for_each(|p| p.push_into(&mut batch));
        r.execute_mixed_batch(&mut batch)
    };
    let separate = |r: &mut Redistribution<T>, pairs: &mut [Box<dyn MixedPair>]| {
        pairs.iter_mut().try_for_each(|p| {
            let mut batch = MixedBatch::new();
            p.push_into(&mut batch);
            r.execute_mixed_batch(&mut batch)
        })
    };
    // Warm-ups: buffers, connections.
    once(r, &mut pairs)?;
    separate(r, &mut pairs)?;
    let exec = max_over_each(comm, reps, progress, "mixed batch", || {
        Ok(once(r, &mut pairs)?)
    })?;
    let sep = max_over_each(comm, reps, progress, "separate executions", || {
        Ok(separate(r, &mut pairs)?)
    })?;
    once(r, &mut pairs)?;
    let verified = verify.then(|| {
        (pairs.iter().enumerate()).all(|(j, p)| p.verified(comm, from.shape(), permutation, j))
    });
    Ok(Batched {
        exec,
        separate: sep,
        verified,
    })
}
