//! `redist`: the ndcyclic diagnostic and benchmark tool.
//!
//! `main` parses the command line with clap and hands each subcommand to its
//! module; the library `redist` does the work. Usage errors (clap's and ours)
//! exit with code 2 and a message on stderr; failures to write the output
//! exit with code 1.
//!
//! - [`shape`]: the `--shape` argument ([`shape::Shape`]) and the layout it
//!   gives with a spec string;
//! - [`show`]: `redist show`, who owns what in one layout;
//! - [`plan_args`]: the arguments of `redist plan`, which both its reports read;
//! - [`plan_report`]: `redist plan`, a plan's summary, schedule table and JSON;
//! - [`rank_report`]: `redist plan --rank`, what one rank builds, at any
//!   number of ranks;
//! - [`measure`]: `redist run`, timing and verifying an execution next to a
//!   bare `MPI_Alltoallv` of the same bytes (a folder: its arguments, set-up,
//!   window, element values and check, timing, and report);
//! - [`memory`]: the bytes a rank of `redist run` needs and may use;
//! - [`pdgemr2d`]: `--baseline pdgemr2d`, ScaLAPACK's redistribution timed
//!   on the same layouts (feature `scalapack`);
//! - [`pblas`]: `--baseline pdtran` and `--baseline pdgeadd`, PBLAS's
//!   transposition and matrix addition timed on the same arrays (feature
//!   `scalapack`);
//! - [`chart`]: `redist chart`, the benchmark table as a PNG bar chart;
//! - [`collective`]: the small collectives `run` and its baselines share
//!   (maxima and sums over ranks, agreeing on whether the report was written);
//! - [`error`]: [`CliError`], the tool's error type and exit codes.
//!
//! What those baselines call — BLACS contexts, descriptors, `pdgemr2d`,
//! `pdtran` and `pdgeadd` on ndcyclic's arrays — is the module `scalapack`
//! of this package's library (`src/lib.rs`, `redist_cli::scalapack`),
//! which `tests/mpi_scalapack.rs` checks against ndcyclic.
//!
//! Under `mpirun`, every rank parses the same command line and reaches the
//! same verdict; rank 0 alone prints an error, and every rank exits with its
//! code after finalizing MPI.

mod chart;
mod collective;
mod error;
mod file_io;
mod halo;
mod measure;
mod memory;
mod pblas;
mod pdgemr2d;
mod plan_args;
mod plan_report;
mod rank_report;
mod shape;
mod show;
mod tune;

use clap::{Parser, Subcommand};
use error::CliError;
use mpi::topology::{Communicator, SimpleCommunicator};
use std::io;
use std::process::ExitCode;

/// Diagnostics and benchmarks for block-cyclic redistribution.
///
/// Shapes are extents joined by `x` (`4096x4096`); layouts are spec strings
/// `DIST{,DIST}@P{xP}` with `DIST := (block | cyclic | cyclic(N))[+K] | *`,
/// e.g. `cyclic(2),block@2x3`.
#[derive(Debug, Parser)]
#[command(name = "redist", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// One variant per subcommand; each is handled by the `run` function of its module.
#[derive(Debug, Subcommand)]
enum Command {
    /// Draw who owns what in a layout (no MPI needed).
    Show(show::ShowArgs),
    /// Build a redistribution plan without moving data and report it (no MPI needed).
    Plan(plan_args::PlanArgs),
    /// Execute, time and verify a redistribution (under `mpirun -n P`).
    Run(Box<measure::RunArgs>),
    /// Refresh ghost layers of one layout, timed and checked, next to hand-written
    /// exchanges (under `mpirun -n P`).
    Halo(Box<halo::HaloArgs>),
    /// Measure every admissible way of one redistribution on real arrays, beside
    /// `auto`'s, and keep the fastest in a wisdom file (under `mpirun -n P`).
    Tune(Box<tune::TuneArgs>),
    /// Draw `redist run --json` lines as a PNG bar chart of the ratios to the baselines (no MPI needed).
    Chart(chart::ChartArgs),
    /// Save and load distributed arrays in .npy and HDF5 files, timed and checked
    /// (`write` and `read` under `mpirun -n P`; `info` without).
    #[command(subcommand)]
    Io(file_io::IoCommand),
}

/// Runs the subcommand, writing to stdout. Returns its verdict and whether
/// this process reports it: always for `show` and `plan`, which run as one
/// process; on rank 0 only for `run`.
fn dispatch(command: &Command) -> ExitCode {
    match command {
        Command::Show(args) => report(show::run(args, &mut io::stdout().lock()), true),
        Command::Plan(args) => report(plan_report::run(args, &mut io::stdout().lock()), true),
        Command::Run(args) => with_mpi(false, |world, out| measure::run(args, world, out)),
        Command::Halo(args) => with_mpi(false, |world, out| halo::run(args, world, out)),
        Command::Tune(args) => with_mpi(false, |world, out| tune::run(args, world, out)),
        Command::Chart(args) => report(chart::run(args), true),
        Command::Io(file_io::IoCommand::Info(args)) => {
            report(file_io::info(args, &mut io::stdout().lock()), true)
        }
        Command::Io(command) => with_mpi(true, |world, out| file_io::run(command, world, out)),
    }
}

/// Prints an error (when `printer` is set) and turns a verdict into the exit
/// code. A closed output pipe (`redist plan | head`) is not an error.
fn report(result: Result<(), CliError>, printer: bool) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => {
            if printer {
                eprintln!("error: {e}");
            }
            ExitCode::from(e.exit_code())
        }
    }
}

/// `redist run` and `redist io write|read`: the subcommands that start MPI
/// (with the abort-on-panic hook) and run `f` on the world. The verdict is
/// the same on every rank; rank 0 prints it, or every rank with
/// `every_rank_prints` (`redist io`, whose errors name files every rank
/// should see).
///
/// Rank 0 prints *before* the job ends: every rank meets in a barrier after
/// the print and only then finalizes and exits. A launcher may kill the
/// whole job as soon as one rank exits with a non-zero code (Open MPI's
/// `mpirun` does), so a rank 0 that printed after the others had exited
/// could be killed with its message unwritten.
fn with_mpi(
    every_rank_prints: bool,
    f: impl FnOnce(&SimpleCommunicator, &mut dyn io::Write) -> Result<(), CliError>,
) -> ExitCode {
    let universe = match procgrid::init() {
        Ok(universe) => universe,
        // Only a singleton started by a foreign launcher gets here (every
        // process is rank 0 of 1); the launcher's rank says who reports.
        Err(e) => return report(Err(e.into()), launcher_rank().unwrap_or(0) == 0),
    };
    let world = universe.world();
    let result = f(&world, &mut io::stdout().lock());
    let code = report(result, every_rank_prints || world.rank() == 0);
    procgrid::waits::barrier(&world);
    // Every grid, communicator and array of the run is gone; finalize.
    drop(world);
    drop(universe);
    code
}

/// This process's rank as its launcher tells it (MPICH's Hydra `PMI_RANK`,
/// Open MPI's `OMPI_COMM_WORLD_RANK`, PMIx's `PMIX_RANK`), `None` when
/// started without one. Used before MPI starts, when every rank of a job
/// would otherwise print the same usage error.
fn launcher_rank() -> Option<usize> {
    ["PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"]
        .iter()
        .find_map(|k| std::env::var(k).ok()?.trim().parse().ok())
}

/// A command line clap refused (or `--help`, `--version`): every rank of a
/// job parses the same line, so rank 0 alone prints.
///
/// Under a launcher and with a failing code, the ranks start MPI only to
/// meet in a barrier after rank 0 has printed, for the reason given at
/// [`run_mpi`]; if MPI cannot start, the launcher's rank decides who prints.
fn usage_error(e: &clap::Error) -> ExitCode {
    let code = ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
    let Some(rank) = launcher_rank() else {
        let _ = e.print();
        return code;
    };
    if e.exit_code() == 0 {
        if rank == 0 {
            let _ = e.print();
        }
        return code;
    }
    match mpi::initialize() {
        Some(universe) => {
            let world = universe.world();
            if world.rank() == 0 {
                let _ = e.print();
            }
            procgrid::waits::barrier(&world);
        }
        None if rank == 0 => {
            let _ = e.print();
        }
        None => {}
    }
    code
}

fn main() -> ExitCode {
    match Cli::try_parse() {
        Ok(cli) => dispatch(&cli.command),
        Err(e) => usage_error(&e),
    }
}
