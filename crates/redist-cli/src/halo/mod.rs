//! `redist halo`: a ghost update of one layout, timed and checked, next to
//! the exchanges a C programmer writes by hand (`--baseline`), in the same
//! run. Its steps: the arguments checked, the array and its update built,
//! the update timed (after a warm-up), one `memcpy` of the same ghost
//! bytes, the yardsticks, the overlap with a sweep (`--overlap`), the
//! check of every ghost (`--verify`), the report. `tuned.rs` holds
//! `redist tune ghosts`, the same update measured both ways and kept.

mod args;
mod report;
mod sweep;
pub(crate) mod tuned;
mod verify;
mod yardsticks;

pub use args::HaloArgs;

use crate::collective::{max_over, sum_over};
use crate::error::CliError;
use crate::measure::args::ElementArg;
use crate::measure::timing::{max_over_each, Progress};
use crate::measure::values::IndexValue;
use crate::shape::{check_ranks, layout_for};
use dist_array::{Complex, DistArray, Layout};
use mpi::topology::{Communicator, SimpleCommunicator};
use procgrid::ProcGrid;
use redist::ghost::{GhostOptions, GhostSpec, GhostUpdate};
use report::{HaloReport, Overlap};
use std::io::Write;

/// Runs `redist halo` on `world`; rank 0 writes the report to `out`.
///
/// # Errors
///
/// A usage error (widths or flags not one per axis, `--overlap` without
/// `f64`) before any communication, the same on every rank; the update's
/// errors, agreed.
pub fn run(
    args: &HaloArgs,
    world: &SimpleCommunicator,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    match args.element {
        ElementArg::F64 => run_typed::<f64>(args, world, out),
        _ if args.overlap => Err(CliError::Unsupported {
            what: "--overlap",
            expected: "--type f64 (the sweep averages)".to_string(),
        }),
        ElementArg::F32 => run_typed::<f32>(args, world, out),
        ElementArg::C64 => run_typed::<Complex<f64>>(args, world, out),
        ElementArg::I32 => run_typed::<i32>(args, world, out),
        ElementArg::U8 => run_typed::<u8>(args, world, out),
    }
}

/// What one run needs: the layout and spec from the arguments.
pub(super) fn spec_of(args: &HaloArgs) -> Result<(Layout, GhostSpec), CliError> {
    check_ranks(&args.layout)?;
    let layout = layout_for(&args.shape, &args.layout)?;
    let n = layout.ndim();
    let (Some(widths), Some(periodic)) = (args.widths(n), args.periodic(n)) else {
        return Err(CliError::Unsupported {
            what: "--width or --periodic",
            expected: format!("one value, or one per axis ({n})"),
        });
    };
    Ok((
        layout,
        GhostSpec::new(&widths, &periodic, args.corners.into()),
    ))
}

fn run_typed<T: IndexValue + sweep::Sweep>(
    args: &HaloArgs,
    world: &SimpleCommunicator,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let (layout, spec) = spec_of(args)?;
    let root = world.rank() == 0;
    let grid = ProcGrid::new(world, layout.grid_extents())?;
    let mut a = verify::values::<T>(&grid, &layout, &spec)?;
    let options = GhostOptions {
        node_direct: !args.no_node_direct,
        wisdom: args.wisdom.clone(),
    };
    let t = mpi::time();
    let mut update = GhostUpdate::with_options(&a, &spec, options.clone())?;
    let build_ms = max_over(world, mpi::time() - t) * 1e3;
    let progress = Progress::new(root && !args.json, args.reps);
    update.update(&mut a)?; // warm-up: mappings, connections
    let halo = max_over_each(world, args.reps, &progress, "update", || {
        match args.unchecked {
            true => Ok(update.update_unchecked(&mut a)?),
            false => Ok(update.update(&mut a)?),
        }
    })?;
    let copies = update.copies();
    let memcpy = time_memcpy(world, update.ghost_bytes(), args.reps);
    let baselines = yardsticks::time_all::<T>(args, world, &layout, &spec, &progress)?;
    let overlap = if args.overlap {
        Some(overlapped(world, args, &mut update, &mut a, &progress)?)
    } else {
        None
    };
    let verified = if args.verify {
        Some(verify::after_update(
            world,
            &grid,
            &layout,
            &spec,
            &mut update,
        )?)
    } else {
        None
    };
    let report = HaloReport {
        args,
        layout: &layout,
        spec: &spec,
        ranks: world.size() as usize,
        elem_bytes: std::mem::size_of::<T>(),
        node_direct: options.node_direct,
        ghost_bytes: sum_over(world, update.ghost_bytes() as u64),
        ghost_bytes_max: max_over(world, update.ghost_bytes() as u64),
        read: sum_over(world, copies.read as u64),
        messages: sum_over(world, copies.messages as u64),
        mappings: sum_over(world, update.mappings_made() as u64),
        build_ms,
        program_bytes: max_over(world, update.plan_bytes() as u64),
        halo,
        memcpy,
        baselines,
        overlap,
        verified,
    };
    if root {
        report.write(out)?;
    }
    Ok(())
}

/// Times `reps` copies (at least one) of `bytes` bytes on every rank: the
/// floor of an update that moves them once.
fn time_memcpy(comm: &SimpleCommunicator, bytes: usize, reps: usize) -> Vec<f64> {
    let from = vec![1u8; bytes];
    let mut to = vec![0u8; bytes];
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps.max(1) {
        procgrid::waits::barrier(comm);
        let t = mpi::time();
        to.copy_from_slice(&from);
        times.push(max_over(comm, mpi::time() - t));
    }
    std::hint::black_box(&to);
    times
}

/// The sweep alone, then begin, sweep, finish: how much of the update the
/// sweep hides. Collective.
fn overlapped<T: IndexValue + sweep::Sweep>(
    world: &SimpleCommunicator,
    args: &HaloArgs,
    update: &mut GhostUpdate<T>,
    a: &mut DistArray<T>,
    progress: &Progress,
) -> Result<Overlap, CliError> {
    let mut b = a.clone();
    let sweep = max_over_each(world, args.reps, progress, "sweep", || {
        T::sweep(a, &mut b);
        Ok(())
    })?;
    let both = max_over_each(world, args.reps, progress, "overlap", || {
        let flight = update.begin(a)?;
        T::sweep(flight.array(), &mut b);
        Ok(flight.finish()?)
    })?;
    Ok(Overlap { sweep, both })
}
