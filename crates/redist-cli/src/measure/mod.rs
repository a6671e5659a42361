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
//! - [`report`]: what rank 0 reports, as the JSON line of `--json` or the
//!   readable summary.

mod args;
mod report;
mod setup;
mod timing;
mod values;
mod window;

pub use args::RunArgs;

use crate::collective::{agree_on_output, on_any_rank};
use crate::error::CliError;
use args::{Baseline, ElementArg};
use dist_array::Complex;
use mpi::topology::{Communicator, SimpleCommunicator};
use report::{Measured, Report};
use std::io::Write;
use timing::Progress;
use values::IndexValue;

/// Runs `redist run` on `world`: every rank takes part; rank 0 writes to `out`.
pub fn run(
    args: &RunArgs,
    world: &SimpleCommunicator,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    match args.element {
        ElementArg::F32 => run_typed::<f32>(args, world, out),
        ElementArg::F64 => run_typed::<f64>(args, world, out),
        ElementArg::C64 => run_typed::<Complex<f64>>(args, world, out),
        ElementArg::I32 => run_typed::<i32>(args, world, out),
        ElementArg::U8 => run_typed::<u8>(args, world, out),
    }
}

/// A run with elements of type `T`, in the order of events: set up and
/// build, check memory, fill the arrays, time the executions, verify, time
/// the baselines, report on rank 0, and return the verdict every rank
/// agrees on.
fn run_typed<T: IndexValue>(
    args: &RunArgs,
    world: &SimpleCommunicator,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let ranks = setup::check_rank_count(args, world)?;
    let (from, to) = setup::layouts::<T>(args)?;
    let window = window::window_for(args, from.shape(), to.shape())?;
    let (grid_a, grid_b) = setup::grids(&from, &to, world)?;
    let (mut r, cost) =
        setup::build_redistribution::<T>(args, (&grid_a, &from), (&grid_b, &to), window.as_ref())?;
    let comm = grid_a.communicator();
    // Collective; before the arrays, so that its buffers count in the memory check.
    let bare = args
        .baseline
        .contains(&Baseline::Alltoallv)
        .then(|| redist::BareAlltoallv::new(&r));
    setup::check_memory::<T>(comm, &from, r.target_layout(), bare.as_ref())?;
    let src = values::source::<T>(&grid_a, &from)?;
    let mut dst = values::target::<T>(&grid_b, r.target_layout(), window.as_ref())?;
    let root = world.rank() == 0;
    let progress = Progress::new(root && !args.json, args.reps);
    let exec = timing::time_executions(comm, &mut r, &src, &mut dst, args.reps, &progress)?;
    let verified = args.verify.then(|| {
        let p = args.permutation();
        values::all_as_expected(comm, &dst, from.shape(), window.as_ref(), p.as_deref())
    });
    let memcpy = timing::time_memcpy(comm, &src, args.reps);
    let alltoallv = timing::time_alltoallv(comm, bare, args.reps, &progress, root)?;
    let pdgemr2d = args
        .baseline
        .contains(&Baseline::Pdgemr2d)
        .then(|| timing::time_pdgemr2d(&r, &src, &dst, (&grid_a, &grid_b), args.reps, &progress))
        .transpose()?;
    let measured = Measured {
        exec,
        memcpy,
        verified,
        alltoallv,
        pdgemr2d,
        node_direct: r.reads_shared_sources() && src.shared_storage().is_some(),
        streamed: on_any_rank(comm, r.streams()),
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
