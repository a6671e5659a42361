//! `redist run`: execute a redistribution under `mpirun`, time it, verify it,
//! and compare it with a bare `MPI_Alltoallv` of the same bytes.
//!
//! Every element of the source holds a value derived from its global linear
//! index, so `--verify` can check every element of the result on the rank
//! that holds it. Times are the maximum over ranks of each repetition;
//! the report gives the median and the minimum.
//!
//! `run_typed` reads as the order of events of a run; each step lives in
//! the file of its concern:
//!
//! - [`args`]: [`RunArgs`], the command line of `redist run`;
//! - [`setup`]: before the arrays exist — the rank count, the layouts, the
//!   grids, the redistribution built with its options, the memory check;
//! - [`window`]: the window the run moves, from the window arguments;
//! - [`values`]: what every element of the source and the target holds,
//!   and `--verify`'s check of the result;
//! - [`timing`]: the timed executions, `memcpy` and bare `MPI_Alltoallv`,
//!   with progress on stderr;
//! - [`pattern`]: `--baseline pattern`, the same runs copied by a plain
//!   loop per rank (the access pattern alone), checked and timed;
//! - [`report`]: what rank 0 reports, as the JSON line of `--json` or the
//!   readable summary.

pub(crate) mod args;
mod batch;
mod pattern;
mod report;
pub(crate) mod setup;
pub(crate) mod timing;
pub(crate) mod values;
mod window;

pub use args::RunArgs;

use crate::collective::{agree_on_output, on_any_rank, sum_over};
use crate::error::CliError;
use args::{Baseline, ElementArg};
use dist_array::Complex;
use dist_array::DistArray;
use mpi::topology::{Communicator, SimpleCommunicator};
use redist::{RedistError, Redistribution, Update};
use report::{Measured, Report};
use setup::Job;
use std::io::Write;
pub(crate) use timing::median;
use timing::Progress;
use values::{IndexValue, Updated};

/// Runs `redist run` on `world`: every rank takes part; rank 0 writes to `out`.
pub fn run(
    args: &RunArgs,
    world: &SimpleCommunicator,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    match args.element {
        ElementArg::F32 => run_updating::<f32>(args, world, out),
        ElementArg::F64 => run_updating::<f64>(args, world, out),
        ElementArg::C64 => run_updating::<Complex<f64>>(args, world, out),
        ElementArg::I32 if !args.updates() => run_typed::<i32>(args, world, out, &Plain),
        ElementArg::U8 if !args.updates() => run_typed::<u8>(args, world, out, &Plain),
        ElementArg::I32 | ElementArg::U8 => Err(CliError::Unsupported {
            what: "--alpha, --beta or --conjugate",
            expected: "--type f32, f64 or c64".to_string(),
        }),
    }
}

/// How a run's executions write the target, and what each moved value
/// becomes there.
trait Writes<T: IndexValue>: Sync {
    /// One execution of `r` from `src` into `dst`.
    fn execute(
        &self,
        r: &mut Redistribution<T>,
        src: &DistArray<T>,
        dst: &mut DistArray<T>,
    ) -> Result<(), RedistError>;
    /// What a moved value `v` becomes in a target as [`values::target`] made it.
    fn stored(&self, v: T) -> T;
    /// Whether the target is updated (read) rather than overwritten.
    fn updates(&self) -> bool;
}

/// Executions that overwrite the target.
struct Plain;

impl<T: IndexValue> Writes<T> for Plain {
    fn execute(
        &self,
        r: &mut Redistribution<T>,
        src: &DistArray<T>,
        dst: &mut DistArray<T>,
    ) -> Result<(), RedistError> {
        r.execute_into(src, dst)
    }
    fn stored(&self, v: T) -> T {
        v
    }
    fn updates(&self) -> bool {
        false
    }
}

impl<T: Updated> Writes<T> for Update<T> {
    fn execute(
        &self,
        r: &mut Redistribution<T>,
        src: &DistArray<T>,
        dst: &mut DistArray<T>,
    ) -> Result<(), RedistError> {
        r.execute_update_into(src, dst, *self)
    }
    fn stored(&self, v: T) -> T {
        self.apply(T::untouched(), v)
    }
    fn updates(&self) -> bool {
        true
    }
}

/// A run of an element type that can be updated: with `--alpha`, `--beta`
/// or `--conjugate`, every execution updates the target.
fn run_updating<T: Updated>(
    args: &RunArgs,
    world: &SimpleCommunicator,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    if !args.updates() {
        return run_typed::<T>(args, world, out, &Plain);
    }
    let update = Update {
        alpha: T::real(args.alpha.unwrap_or(1.0)),
        beta: T::real(args.beta.unwrap_or(0.0)),
        conjugate: args.conjugate,
    };
    run_typed::<T>(args, world, out, &update)
}

/// What the timed executions measured: seconds per execution (per batch
/// with `--batch`), with `--batch` the seconds of the separate executions
/// of a batch, and with `--verify` whether the result was right.
struct Executed {
    exec: Vec<f64>,
    first: Vec<f64>,
    separate: Option<Vec<f64>>,
    verified: Option<bool>,
}

/// The timed executions of `job` (a batch's with `--batch`, from arrays
/// of its own; else from `src` into `dst`) and, with `--verify`, the check
/// of their result. Collective.
fn executions<T: IndexValue>(
    args: &RunArgs,
    writes: &dyn Writes<T>,
    job: &mut Job<T>,
    src: &DistArray<T>,
    dst: &mut DistArray<T>,
    progress: &Progress,
) -> Result<Executed, CliError> {
    if let Some(k) = args.batch {
        return batch_executions(args, k, job, progress);
    }
    let Job {
        r,
        window,
        from,
        grid_a,
        grid_b,
        ..
    } = job;
    let window = window.as_ref();
    let comm = grid_a.communicator();
    let execute =
        |r: &mut Redistribution<T>, s: &DistArray<T>, d: &mut DistArray<T>| writes.execute(r, s, d);
    let execute = &execute as timing::Execute<'_, T>;
    let timing::Executions { first, timed: exec } =
        timing::time_executions(comm, &mut *r, execute, src, dst, args.reps, progress)?;
    if !args.verify {
        return Ok(Executed {
            exec,
            first,
            separate: None,
            verified: None,
        });
    }
    if writes.updates() {
        // Updated reps + 1 times: once more from the target's first values.
        *dst = values::target::<T>(grid_b, r.target_layout(), window, true)?;
        writes.execute(r, src, dst)?;
    }
    let permutation = args.permutation();
    let moved = values::Moved {
        shape: from.shape(),
        window,
        permutation: permutation.as_deref(),
    };
    let verified = values::all_as_expected(comm, dst, moved, &|v| writes.stored(v), 0);
    Ok(Executed {
        exec,
        first,
        separate: None,
        verified: Some(verified),
    })
}

/// With `--batch K`: the timed executions of batches of `arrays` arrays
/// of `job`'s layouts, made for the batch ([`batch`]). Collective.
fn batch_executions<T: IndexValue>(
    args: &RunArgs,
    arrays: usize,
    job: &mut Job<T>,
    progress: &Progress,
) -> Result<Executed, CliError> {
    let comm = job.grid_a.communicator();
    let permutation = args.permutation();
    let run = batch::BatchRun {
        arrays,
        types: &args.batch_types,
        reps: args.reps,
        verify: args.verify,
        permutation: permutation.as_deref(),
    };
    let source = batch::Side {
        grid: &job.grid_a,
        layout: &job.from,
    };
    let (r, grid_b) = (&mut job.r, &job.grid_b);
    let b = if run.types.is_empty() {
        batch::run(comm, r, source, grid_b, &run, progress)?
    } else {
        batch::run_mixed(comm, r, source, grid_b, &run, progress)?
    };
    Ok(Executed {
        exec: b.exec,
        first: Vec::new(),
        separate: Some(b.separate),
        verified: b.verified,
    })
}

/// What the baselines measured, each timed after the executions.
struct Baselines {
    memcpy: Vec<f64>,
    alltoallv: timing::Yardstick,
    pdgemr2d: Option<crate::pdgemr2d::Timing>,
    pblas: Vec<crate::pblas::PblasTiming>,
    pattern: Option<pattern::PatternMeasured>,
}

/// Times the baselines `args` asks for (and the `memcpy` of the local
/// source part) on `job`'s redistribution from `src` into `dst` in turn,
/// the bare `MPI_Alltoallv` `bare` built before the arrays; the pattern last, as it starts the target again, which
/// `pdgemr2d`'s check reads. Collective.
fn time_baselines<T: IndexValue>(
    args: &RunArgs,
    writes: &dyn Writes<T>,
    job: &mut Job<T>,
    src: &DistArray<T>,
    dst: &mut DistArray<T>,
    bare: Option<Bare<T>>,
    progress: &Progress,
) -> Result<Baselines, CliError> {
    let Job {
        r,
        from,
        window,
        grid_a,
        grid_b,
        ..
    } = job;
    let window = window.as_ref();
    let grids = crate::pblas::Grids {
        source: grid_a,
        target: grid_b,
    };
    let comm = grids.source.communicator();
    let root = comm.rank() == 0;
    let memcpy = timing::time_memcpy(comm, src, args.reps);
    let alltoallv = timing::time_alltoallv(comm, bare, args.reps, progress, root)?;
    let pdgemr2d = (args.baseline.contains(&Baseline::Pdgemr2d))
        .then(|| timing::time_pdgemr2d(r, src, dst, grids, args.reps, progress))
        .transpose()?;
    let pblas = timing::time_pblas(args, writes, r, src, grids, progress)?;
    let permutation = args.permutation();
    let pattern = (args.baseline.contains(&Baseline::Pattern))
        .then(|| {
            let run = pattern::PatternRun {
                r,
                src,
                dst,
                target_grid: grids.target,
                moved: values::Moved {
                    shape: from.shape(),
                    window,
                    permutation: permutation.as_deref(),
                },
            };
            pattern::time_pattern(run, args.reps, args.verify, progress)
        })
        .transpose()?;
    Ok(Baselines {
        memcpy,
        alltoallv,
        pdgemr2d,
        pblas,
        pattern,
    })
}

/// The bare `MPI_Alltoallv` of a run, when `--baseline alltoallv` asks for
/// it: built before the arrays, timed after the executions.
type Bare<T> = Result<redist::BareAlltoallv<T>, RedistError>;

/// The bare `MPI_Alltoallv` of `job` when `args` asks for it, built before
/// the arrays so that its buffers count in the memory check, then the
/// memory check. Collective.
fn bare_then_memory_check<T: IndexValue>(
    args: &RunArgs,
    job: &Job<T>,
) -> Result<Option<Bare<T>>, CliError> {
    let bare = (args.baseline)
        .contains(&Baseline::Alltoallv)
        .then(|| redist::BareAlltoallv::new(&job.r));
    let comm = job.grid_a.communicator();
    setup::check_memory::<T>(comm, &job.from, job.r.target_layout(), bare.as_ref())?;
    Ok(bare)
}

/// How the last execution of `job` moved its messages within the node
/// (written, read), summed over the ranks; `None` without node-direct
/// copies. Collective.
fn node_copies<T: IndexValue>(job: &Job<T>) -> Option<(u64, u64)> {
    let comm = job.grid_a.communicator();
    job.r.node_copies().map(|c| {
        let count = |n: usize| sum_over(comm, u64::try_from(n).unwrap_or(u64::MAX));
        (count(c.written), count(c.read))
    })
}

/// Everything the run measured: the executions, the node-direct copies
/// counted before the baselines ran, the baselines, and what the
/// redistribution did (streaming stores, typed messages), summed over the
/// ranks. Collective.
fn measured<T: IndexValue>(
    job: &Job<T>,
    executed: Executed,
    node_copies: Option<(u64, u64)>,
    b: Baselines,
) -> Measured {
    let comm = job.grid_a.communicator();
    Measured {
        exec: executed.exec,
        first: executed.first,
        separate: executed.separate,
        pblas: b.pblas,
        memcpy: b.memcpy,
        verified: executed.verified,
        alltoallv: b.alltoallv,
        pattern: b.pattern,
        pdgemr2d: b.pdgemr2d,
        node_direct: node_copies.is_some_and(|(w, r)| w + r > 0),
        node_copies,
        streamed: on_any_rank(comm, job.r.streams()),
        typed_messages: job.r.typed_messages().map(|(sends, recvs)| {
            let count = |n: usize| sum_over(comm, u64::try_from(n).unwrap_or(u64::MAX));
            (count(sends), count(recvs))
        }),
    }
}

/// Writes the report of `job` and `measured` to `out` on rank 0 (`root`);
/// every rank learns how it went and returns the same. Collective.
fn report<T: IndexValue>(
    args: &RunArgs,
    job: &Job<T>,
    measured: &Measured,
    root: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let report = Report {
        args,
        from: &job.from,
        r: &job.r,
        ranks: job.ranks,
        cost: &job.cost,
        measured,
    };
    let written = if root { report.write(out) } else { Ok(()) };
    agree_on_output(job.grid_a.communicator(), written)
}

/// A run with elements of type `T`, in the order of events: set up and
/// build, check memory, fill the arrays, time the executions, verify, time
/// the baselines, report on rank 0, and return the verdict every rank
/// agrees on.
fn run_typed<T: IndexValue>(
    args: &RunArgs,
    world: &SimpleCommunicator,
    out: &mut dyn Write,
    writes: &dyn Writes<T>,
) -> Result<(), CliError> {
    let mut job = setup::job::<T>(args, world)?;
    let bare = bare_then_memory_check(args, &job)?;
    let src = values::source::<T>(&job.grid_a, &job.from, 0)?;
    let window = job.window.as_ref();
    let mut dst =
        values::target::<T>(&job.grid_b, job.r.target_layout(), window, writes.updates())?;
    let root = world.rank() == 0;
    let progress = Progress::new(root && !args.json, args.reps);
    let executed = executions(args, writes, &mut job, &src, &mut dst, &progress)?;
    // Before the baselines execute anything.
    let node_copies = node_copies(&job);
    let baselines = time_baselines(args, writes, &mut job, &src, &mut dst, bare, &progress)?;
    let measured = measured(&job, executed, node_copies, baselines);
    report(args, &job, &measured, root, out)?;
    measured.verdict()
}
