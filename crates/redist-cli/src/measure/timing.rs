//! The timed parts of a run: the redistribution's executions, one `memcpy`
//! of the local source data (the floor for an identity redistribution),
//! the bare `MPI_Alltoallv` baseline and the `pdgemr2d` one, each after a
//! warm-up where it has one, with [`Progress`] on rank 0's stderr meanwhile.
//!
//! Every repetition starts with a barrier and counts the slowest rank's
//! time; the report takes the [`median`] of the repetitions.

use super::values::IndexValue;
use crate::collective::{max_over, on_every_rank};
use crate::error::CliError;
use crate::pblas::Grids;
use crate::pdgemr2d::Timing;
use dist_array::{DistArray, Element};
use mpi::topology::SimpleCommunicator;
use redist::{BareAlltoallv, RedistError, Redistribution};
use std::time::Instant;

/// The largest local source part (elements) `redist run` copies once with
/// `memcpy` for `memcpy_ms_median`; larger parts are not copied.
pub(super) const MEMCPY_MAX_ELEMENTS: usize = 1 << 28;

/// One execution of a run: `execute_into`, or an update of the target.
pub(super) type Execute<'a, T> =
    &'a dyn Fn(&mut Redistribution<T>, &DistArray<T>, &mut DistArray<T>) -> Result<(), RedistError>;

/// Times `reps` executions (`execute`) of `r` from `src` into `dst`, after
/// untimed warm-ups: one (buffers, connections), and more while `r` tries
/// two ways of routing its messages (at most seven:
/// [`Redistribution::trying_routes`], the same on every rank), so that the
/// times are those of the routes it keeps. Collective over `comm`.
pub(super) fn time_executions<T: Element>(
    comm: &SimpleCommunicator,
    r: &mut Redistribution<T>,
    execute: Execute<'_, T>,
    src: &DistArray<T>,
    dst: &mut DistArray<T>,
    reps: usize,
    progress: &Progress,
) -> Result<Executions, CliError> {
    let mut first = vec![slowest(comm, || execute(r, src, dst))?]; // warm-up: buffers, connections
    while r.trying_routes() {
        first.push(slowest(comm, || execute(r, src, dst))?);
    }
    let timed = max_over_each(comm, reps, progress, "redistribution", || {
        Ok(execute(r, src, dst)?)
    })?;
    Ok(Executions { first, timed })
}

/// The executions of a run: the untimed first ones (the warm-up, and those
/// that try routes) and the timed ones, each the slowest rank's seconds.
pub(super) struct Executions {
    /// The warm-up and the executions trying routes, in order.
    pub first: Vec<f64>,
    /// The timed executions.
    pub timed: Vec<f64>,
}

/// The slowest rank's seconds of one call of `f`, after a barrier.
/// Collective over `comm`.
fn slowest(
    comm: &SimpleCommunicator,
    f: impl FnOnce() -> Result<(), RedistError>,
) -> Result<f64, CliError> {
    procgrid::waits::barrier(comm);
    let t = mpi::time();
    f()?;
    Ok(max_over(comm, mpi::time() - t))
}

/// Times `reps` runs of `what` (`f`), each after a barrier, as the slowest
/// rank's seconds; `name` for the progress line. Collective over `comm`.
pub(crate) fn max_over_each(
    comm: &SimpleCommunicator,
    reps: usize,
    progress: &Progress,
    name: &str,
    mut f: impl FnMut() -> Result<(), CliError>,
) -> Result<Vec<f64>, CliError> {
    let mut times = Vec::with_capacity(reps);
    for rep in 0..reps {
        procgrid::waits::barrier(comm);
        let t = mpi::time();
        f()?;
        times.push(max_over(comm, mpi::time() - t));
        progress.tick(name, rep + 1);
    }
    Ok(times)
}

/// Times `reps` copies (at least one) of the local source data into a
/// buffer of its own; none when some rank's part is larger than
/// [`MEMCPY_MAX_ELEMENTS`], to spare memory. Collective over `comm`.
pub(super) fn time_memcpy<T: Element>(
    comm: &SimpleCommunicator,
    src: &DistArray<T>,
    reps: usize,
) -> Vec<f64> {
    let small = src.local_slice().len() <= MEMCPY_MAX_ELEMENTS;
    let mut memcpy = Vec::with_capacity(reps);
    if on_every_rank(comm, small) {
        let mut copy_target = src.local_slice().to_vec();
        for _ in 0..reps.max(1) {
            procgrid::waits::barrier(comm);
            let t = mpi::time();
            copy_target.copy_from_slice(src.local_slice());
            memcpy.push(max_over(comm, mpi::time() - t));
        }
        std::hint::black_box(&copy_target);
    }
    memcpy
}

/// How a yardstick timed in the same run went: the bare `MPI_Alltoallv`
/// or the access pattern.
pub(super) enum Yardstick {
    /// Its `--baseline` was not given.
    NotAsked,
    /// It could not run: why (rank 0 has printed it on stderr).
    Skipped(String),
    /// Seconds per repetition, the slowest rank's.
    Timed(Vec<f64>),
}

/// Times `reps` runs of the bare `MPI_Alltoallv` `bare` (`None` when not
/// asked for), after one untimed warm-up; `root` says a refused baseline
/// on stderr. Collective over `comm`.
pub(super) fn time_alltoallv<T: IndexValue>(
    comm: &SimpleCommunicator,
    bare: Option<Result<BareAlltoallv<T>, RedistError>>,
    reps: usize,
    progress: &Progress,
    root: bool,
) -> Result<Yardstick, CliError> {
    let bare = match bare {
        None => return Ok(Yardstick::NotAsked),
        // Checked on every rank before any buffer is allocated.
        Some(Err(e)) => {
            if root {
                eprintln!("baseline skipped: {e}");
            }
            return Ok(Yardstick::Skipped(e.to_string()));
        }
        Some(Ok(bare)) => bare,
    };
    // Real data in every page: an untouched zero-filled buffer would be
    // read from the kernel's shared zero page and flatter the baseline.
    let send: Vec<T> = (0..bare.send_len()).map(T::index_value).collect();
    let mut recv: Vec<T> = (0..bare.recv_len()).map(T::index_value).collect();
    bare.run(&send, &mut recv)?; // warm-up
    let mut times = Vec::with_capacity(reps);
    for rep in 0..reps {
        procgrid::waits::barrier(comm);
        let t = mpi::time();
        bare.run(&send, &mut recv)?;
        times.push(max_over(comm, mpi::time() - t));
        progress.tick("baseline", rep + 1);
    }
    Ok(Yardstick::Timed(times))
}

/// Times the `pdgemr2d` baseline on the window `r` moves, from `src` into
/// an array laid out as `dst`, and compares its result with `dst`
/// ([`crate::pdgemr2d::time`]). Collective over the grids' ranks.
pub(super) fn time_pdgemr2d<T: Element>(
    r: &Redistribution<T>,
    src: &DistArray<T>,
    dst: &DistArray<T>,
    grids: Grids<'_>,
    reps: usize,
    progress: &Progress,
) -> Result<Timing, CliError> {
    let tick = |rep| progress.tick("pdgemr2d", rep);
    let (grid_a, grid_b) = (grids.source, grids.target);
    crate::pdgemr2d::time(r.window(), src, dst, grid_a, grid_b, reps, &tick)
}

/// Times the PBLAS baselines `args` asks for (`pdtran`, `pdgeadd`) on the
/// window `r` moves, from `src`, against ndcyclic's result of one
/// execution (`writes`) into a target of [`IndexValue::untouched`]
/// ([`crate::pblas::time`]). Collective over the grids' ranks.
pub(super) fn time_pblas<T: super::values::IndexValue>(
    args: &super::args::RunArgs,
    writes: &dyn super::Writes<T>,
    r: &mut Redistribution<T>,
    src: &DistArray<T>,
    grids: Grids<'_>,
    progress: &Progress,
) -> Result<Vec<crate::pblas::PblasTiming>, CliError> {
    use super::args::Baseline;
    use crate::pblas::Routine;
    let asked: Vec<Routine> = [
        (Baseline::Pdtran, Routine::Tran),
        (Baseline::Pdgeadd, Routine::Geadd),
    ]
    .into_iter()
    .filter(|(b, _)| args.baseline.contains(b))
    .map(|(_, r)| r)
    .collect();
    if asked.is_empty() {
        return Ok(Vec::new());
    }
    let mut reference =
        DistArray::from_fn(grids.target, r.target_layout().clone(), |_| T::untouched())?;
    writes.execute(r, src, &mut reference)?;
    let operation = crate::pblas::Operation {
        window: r.window(),
        transpose: args.permutation().is_some(),
        alpha: args.alpha.unwrap_or(1.0),
        beta: args.beta.unwrap_or(0.0),
        untouched: -1.0,
    };
    asked
        .into_iter()
        .map(|routine| {
            let tick = |rep| progress.tick(routine.name(), rep);
            crate::pblas::time(
                routine, &operation, src, &reference, grids, args.reps, &tick,
            )
        })
        .collect()
}

/// The median of `v` (the upper one for an even count); 0 when empty.
pub(crate) fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    s[s.len() / 2]
}

/// Progress on rank 0's stderr for runs longer than a few seconds.
pub(crate) struct Progress {
    /// Whether to print at all (rank 0, without `--json`).
    on: bool,
    /// Repetitions of each timed part.
    total: usize,
    start: Instant,
    /// Seconds since `start` at the last line printed.
    last: std::cell::Cell<f64>,
}

impl Progress {
    /// Progress on `total` repetitions from now, printed when `on`.
    pub(crate) fn new(on: bool, total: usize) -> Progress {
        Progress {
            on,
            total,
            start: Instant::now(),
            last: std::cell::Cell::new(0.0),
        }
    }

    /// Says, at most every 2 s and after the first 3 s, that `done`
    /// repetitions of `what` are over.
    pub(crate) fn tick(&self, what: &str, done: usize) {
        let t = self.start.elapsed().as_secs_f64();
        if !self.on || t < 3.0 || t - self.last.get() < 2.0 {
            return;
        }
        self.last.set(t);
        let rate = done as f64 / t;
        let eta = (self.total - done) as f64 / rate.max(1e-9);
        eprintln!(
            "  {what}: {done}/{} reps, {t:.0} s elapsed, {rate:.2} reps/s, ETA {eta:.0} s",
            self.total
        );
    }
}
