//! `redist run --baseline pattern`: the same runs as the redistribution,
//! copied by one plain loop per rank from its own source part and its
//! node's peers' parts into its target part ([`PatternBaseline`]) — the
//! access pattern alone, the limit node-direct copies are held to on the
//! machine that runs them. Built, checked against the expected values
//! with `--verify`, then timed.

use super::timing::{Progress, Yardstick};
use super::values::{self, IndexValue, Moved};
use crate::collective::max_over;
use crate::error::CliError;
use dist_array::DistArray;
use procgrid::ProcGrid;
use redist::{PatternBaseline, Redistribution};

/// What the pattern baseline measured: its times (or why it was skipped),
/// its count of runs on rank 0 and, with `--verify`, whether it wrote
/// what the redistribution writes.
pub(super) struct PatternMeasured {
    pub times: Yardstick,
    pub runs: Option<usize>,
    pub verified: Option<bool>,
}

/// The arrays and run the pattern baseline repeats: from `src` into `dst`
/// (on `target_grid`), moving what `moved` says.
pub(super) struct PatternRun<'a, T: dist_array::Element> {
    pub r: &'a Redistribution<T>,
    pub src: &'a DistArray<T>,
    pub dst: &'a mut DistArray<T>,
    pub target_grid: &'a ProcGrid,
    pub moved: Moved<'a>,
}

/// Builds the pattern baseline of `run.r`, refills the target with its
/// first values, copies once and (with `verify`) checks every element,
/// then times `reps` copies, each the slowest rank's between barriers as
/// the executions'. A baseline refused on some rank is skipped on every
/// rank (rank 0 says why on stderr). Collective.
pub(super) fn time_pattern<T: IndexValue>(
    run: PatternRun<'_, T>,
    reps: usize,
    verify: bool,
    progress: &Progress,
) -> Result<PatternMeasured, CliError> {
    let comm = run.target_grid.communicator();
    let root = mpi::topology::Communicator::rank(comm) == 0;
    let pattern = match PatternBaseline::new(run.r, run.src) {
        Ok(p) => p,
        Err(e) => {
            if root {
                eprintln!("pattern baseline skipped: {e}");
            }
            return Ok(PatternMeasured {
                times: Yardstick::Skipped(e.to_string()),
                runs: None,
                verified: None,
            });
        }
    };
    // The redistribution's result is there already: start again from the
    // target's first values, so that the check sees the pattern's copy.
    let window = run.moved.window;
    *run.dst = values::target::<T>(run.target_grid, run.r.target_layout(), window, false)?;
    pattern.run(run.src, run.dst)?; // and the warm-up
    let verified = verify.then(|| values::all_as_expected(comm, run.dst, run.moved, &|v| v, 0));
    let mut times = Vec::with_capacity(reps);
    for rep in 0..reps {
        procgrid::waits::barrier(comm);
        let t = mpi::time();
        pattern.run(run.src, run.dst)?;
        times.push(max_over(comm, mpi::time() - t));
        progress.tick("pattern", rep + 1);
    }
    Ok(PatternMeasured {
        times: Yardstick::Timed(times),
        runs: Some(pattern.runs()),
        verified,
    })
}
