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

/// A batch run as the command line asks for it.
pub(super) struct BatchRun<'a> {
    /// `--batch K`: how many arrays move together.
    pub arrays: usize,
    /// `--batch-types`: array `j` is of type `types[j % types.len()]`;
    /// empty, every array is of the redistribution's element type.
    pub types: &'a [ElementArg],
    /// `--reps`: how many times the batch, and then the separate
    /// executions, are timed.
    pub reps: usize,
    /// `--verify`: whether every array of the batch's result is checked.
    pub verify: bool,
    /// How the redistribution permutes the axes (`--transpose`,
    /// `--permute`), which the check follows.
    pub permutation: Option<&'a [usize]>,
}

/// One side of a batch's redistribution: arrays laid out as `layout` on
/// `grid`.
#[derive(Clone, Copy)]
pub(super) struct Side<'a> {
    /// The grid the arrays are distributed over.
    pub grid: &'a ProcGrid,
    /// The arrays' layout.
    pub layout: &'a Layout,
}

/// Times `batch.reps` batches of `batch.arrays` arrays laid out as
/// `source` into arrays laid out as `r`'s target on `grid_b`, then as many
/// times the same arrays one execution each, and verifies the batch's
/// result when asked. Collective over `comm`.
pub(super) fn run<T: IndexValue>(
    comm: &SimpleCommunicator,
    r: &mut Redistribution<T>,
    source: Side<'_>,
    grid_b: &ProcGrid,
    batch: &BatchRun<'_>,
    progress: &Progress,
) -> Result<Batched, CliError> {
    let (grid_a, from) = (source.grid, source.layout);
    let srcs: Vec<DistArray<T>> = (0..batch.arrays)
        .map(|j| values::source::<T>(grid_a, from, j))
        .collect::<Result<_, _>>()?;
    let mut dsts: Vec<DistArray<T>> = (0..batch.arrays)
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
    let reps = batch.reps;
    let exec = max_over_each(comm, reps, progress, "batch", || Ok(once(r, &mut dsts)?))?;
    let sep = max_over_each(comm, reps, progress, "separate executions", || {
        Ok(separate(r, &mut dsts)?)
    })?;
    // The batch's result, checked array by array.
    once(r, &mut dsts)?;
    let verified = batch.verify.then(|| {
        (dsts.iter().enumerate()).all(|(j, d)| {
            let moved = values::Moved {
                shape: from.shape(),
                window: None,
                permutation: batch.permutation,
            };
            values::all_as_expected(comm, d, moved, &|v| v, j)
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
        let moved = values::Moved {
            shape,
            window: None,
            permutation: p,
        };
        values::all_as_expected(comm, &self.1, moved, &|v| v, j)
    }
}

/// Array `j` of a mixed batch, of element type `ty`, laid out as `source`,
/// with its target laid out as `target`.
fn mixed_pair(
    ty: ElementArg,
    source: Side<'_>,
    target: Side<'_>,
    j: usize,
) -> Result<Box<dyn MixedPair>, CliError> {
    fn pair<U: IndexValue>(
        source: Side<'_>,
        target: Side<'_>,
        j: usize,
    ) -> Result<Box<dyn MixedPair>, CliError> {
        let src = values::source::<U>(source.grid, source.layout, j)?;
        let dst = values::target::<U>(target.grid, target.layout, None, false)?;
        Ok(Box::new((src, dst)))
    }
    match ty {
        ElementArg::F32 => pair::<f32>(source, target, j),
        ElementArg::F64 => pair::<f64>(source, target, j),
        ElementArg::C64 => pair::<Complex<f64>>(source, target, j),
        ElementArg::I32 => pair::<i32>(source, target, j),
        ElementArg::U8 => pair::<u8>(source, target, j),
    }
}

/// As [`run`] for a mixed batch (`--batch-types`): array `j` of type
/// `batch.types[j % batch.types.len()]`, all moved by one
/// `execute_mixed_batch`; the separate executions are one mixed batch of
/// one array each.
pub(super) fn run_mixed<T: IndexValue>(
    comm: &SimpleCommunicator,
    r: &mut Redistribution<T>,
    source: Side<'_>,
    grid_b: &ProcGrid,
    batch: &BatchRun<'_>,
    progress: &Progress,
) -> Result<Batched, CliError> {
    let to = r.target_layout().clone();
    let target = Side {
        grid: grid_b,
        layout: &to,
    };
    let types = batch.types;
    let mut pairs: Vec<Box<dyn MixedPair>> = (0..batch.arrays)
        .map(|j| mixed_pair(types[j % types.len()], source, target, j))
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
    let reps = batch.reps;
    let exec = max_over_each(comm, reps, progress, "mixed batch", || {
        Ok(once(r, &mut pairs)?)
    })?;
    let sep = max_over_each(comm, reps, progress, "separate executions", || {
        Ok(separate(r, &mut pairs)?)
    })?;
    once(r, &mut pairs)?;
    let shape = source.layout.shape();
    let verified = batch.verify.then(|| {
        (pairs.iter().enumerate()).all(|(j, p)| p.verified(comm, shape, batch.permutation, j))
    });
    Ok(Batched {
        exec,
        separate: sep,
        verified,
    })
}
