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

mod args;
mod batch;
mod pattern;
mod report;
mod setup;
mod timing;
pub(crate) mod values;
mod window;

pub use args::RunArgs;

use crate::collective::{agree_on_output, on_any_rank, sum_over};
use crate::error::CliError;
use args::{Baseline, ElementArg};
use dist_array::Complex;
use dist_array::DistArray;
use mpi::topology::{Communicator, SimpleCommunicator};
use procgrid::ProcGrid;
use redist::{RedistError, Redistribution, Update};
use report::{Measured, Report};
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

/// The redistribution a run times: `r`, of `window` (the whole array when
/// `None`), from arrays on `source` to arrays on `target_grid`.
struct Timed<'a, T: dist_array::Element> {
    /// The redistribution.
    r: &'a mut Redistribution<T>,
    /// The window it moves; the whole array when `None`.
    window: Option<&'a redist::Window>,
    /// The source's grid and layout.
    source: batch::Side<'a>,
    /// The grid of the target (whose layout is `r`'s).
    target_grid: &'a ProcGrid,
}

/// The timed executions of `timed` (a batch's with `--batch`, from arrays
/// of its own; else from `src` into `dst`) and, with `--verify`, the check
/// of their result; `(times, times of the separate executions of a batch,
/// verified)`. Collective.
#[allow(clippy::type_complexity)]
fn executions<T: IndexValue>(
    args: &RunArgs,
    writes: &dyn Writes<T>,
    timed: Timed<'_, T>,
    src: &DistArray<T>,
    dst: &mut DistArray<T>,
    progress: &Progress,
) -> Result<(Vec<f64>, Option<Vec<f64>>, Option<bool>), CliError> {
    let Timed {
        r,
        window,
        source,
        target_grid: grid_b,
    } = timed;
    let (grid_a, from) = (source.grid, source.layout);
    let comm = grid_a.communicator();
    let p = args.permutation();
    if let Some(k) = args.batch {
        let run = batch::BatchRun {
            arrays: k,
            types: &args.batch_types,
            reps: args.reps,
            verify: args.verify,
            permutation: p.as_deref(),
        };
        let b = if run.types.is_empty() {
            batch::run(comm, r, source, grid_b, &run, progress)?
        } else {
            batch::run_mixed(comm, r, source, grid_b, &run, progress)?
        };
        return Ok((b.exec, Some(b.separate), b.verified));
    }
    let execute =
        |r: &mut Redistribution<T>, s: &DistArray<T>, d: &mut DistArray<T>| writes.execute(r, s, d);
    let execute = &execute as timing::Execute<'_, T>;
    let exec = timing::time_executions(comm, &mut *r, execute, src, dst, args.reps, progress)?;
    if !args.verify {
        return Ok((exec, None, None));
    }
    if writes.updates() {
        // Updated reps + 1 times: once more from the target's first values.
        *dst = values::target::<T>(grid_b, r.target_layout(), window, true)?;
        writes.execute(r, src, dst)?;
    }
    let moved = values::Moved {
        shape: from.shape(),
        window,
        permutation: p.as_deref(),
    };
    let verified = values::all_as_expected(comm, dst, moved, &|v| writes.stored(v), 0);
    Ok((exec, None, Some(verified)))
}

/// What the baselines measured, each timed after the executions.
struct Baselines {
    memcpy: Vec<f64>,
    alltoallv: timing::Yardstick,
    pdgemr2d: Option<crate::pdgemr2d::Timing>,
    pblas: Vec<crate::pblas::PblasTiming>,
    pattern: Option<pattern::PatternMeasured>,
}

/// What the baselines work on once the executions are done: the
/// redistribution, its source and target arrays, the source layout, the
/// window moved and the two grids.
struct Staged<'a, T: dist_array::Element> {
    r: &'a mut Redistribution<T>,
    src: &'a DistArray<T>,
    dst: &'a mut DistArray<T>,
    from: &'a dist_array::Layout,
    window: Option<&'a redist::Window>,
    grids: crate::pblas::Grids<'a>,
}

/// Times the baselines `args` asks for (and the `memcpy` of the local
/// source part) in turn, the bare `MPI_Alltoallv` `bare` built before the
/// arrays; the pattern last, as it starts the target again, which
/// `pdgemr2d`'s check reads. Collective.
fn time_baselines<T: IndexValue>(
    args: &RunArgs,
    writes: &dyn Writes<T>,
    on: Staged<'_, T>,
    bare: Option<Result<redist::BareAlltoallv<T>, RedistError>>,
    progress: &Progress,
) -> Result<Baselines, CliError> {
    let Staged {
        r,
        src,
        dst,
        from,
        window,
        grids,
    } = on;
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
    let ranks = setup::check_rank_count(args, world)?;
    let (from, to) = setup::layouts::<T>(args)?;
    let window = window::window_for(args, from.shape(), to.shape())?;
    let (grid_a, grid_b) = setup::grids(&from, &to, world)?;
    let (mut r, cost) = setup::build_redistribution::<T>(
        args,
        batch::Side {
            grid: &grid_a,
            layout: &from,
        },
        batch::Side {
            grid: &grid_b,
            layout: &to,
        },
        window.as_ref(),
    )?;
    let comm = grid_a.communicator();
    // Collective; before the arrays, so that its buffers count in the memory check.
    let bare = args
        .baseline
        .contains(&Baseline::Alltoallv)
        .then(|| redist::BareAlltoallv::new(&r));
    setup::check_memory::<T>(comm, &from, r.target_layout(), bare.as_ref())?;
    let src = values::source::<T>(&grid_a, &from, 0)?;
    let updates = writes.updates();
    let mut dst = values::target::<T>(&grid_b, r.target_layout(), window.as_ref(), updates)?;
    let root = world.rank() == 0;
    let progress = Progress::new(root && !args.json, args.reps);
    let timed = Timed {
        r: &mut r,
        window: window.as_ref(),
        source: batch::Side {
            grid: &grid_a,
            layout: &from,
        },
        target_grid: &grid_b,
    };
    let (exec, separate, verified) = executions(args, writes, timed, &src, &mut dst, &progress)?;
    // How the last execution moved its messages within the node, summed
    // over the ranks (before the baselines execute anything).
    let node_copies = r.node_copies().map(|c| {
        let count = |n: usize| sum_over(comm, u64::try_from(n).unwrap_or(u64::MAX));
        (count(c.written), count(c.read))
    });
    let on = Staged {
        r: &mut r,
        src: &src,
        dst: &mut dst,
        from: &from,
        window: window.as_ref(),
        grids: crate::pblas::Grids {
            source: &grid_a,
            target: &grid_b,
        },
    };
    let b = time_baselines(args, writes, on, bare, &progress)?;
    let measured = Measured {
        exec,
        separate,
        pblas: b.pblas,
        memcpy: b.memcpy,
        verified,
        alltoallv: b.alltoallv,
        pattern: b.pattern,
        pdgemr2d: b.pdgemr2d,
        node_direct: node_copies.is_some_and(|(w, r)| w + r > 0),
        node_copies,
        streamed: on_any_rank(comm, r.streams()),
        typed_messages: r.typed_messages().map(|(sends, recvs)| {
            let count = |n: usize| sum_over(comm, u64::try_from(n).unwrap_or(u64::MAX));
            (count(sends), count(recvs))
        }),
    };
    let report = Report {
        args,
        from: &from,
        r: &r,
        ranks,
        cost: &cost,
        measured: &measured,
    };
    let written = if root { report.write(out) } else { Ok(()) };
    // Only rank 0 writes: every rank learns how it went and returns the same.
    agree_on_output(comm, written)?;
    measured.verdict()
}
