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
//! - [`plan_report`]: `redist plan`, a plan's summary, schedule table and JSON;
//! - [`measure`]: `redist run`, timing and verifying an execution next to a
//!   bare `MPI_Alltoallv` of the same bytes;
//! - [`memory`]: the bytes a rank of `redist run` needs and may use;
//! - [`pdgemr2d`]: `--baseline pdgemr2d`, ScaLAPACK's redistribution timed
//!   on the same layouts (feature `scalapack`);
//! - [`error`]: [`CliError`], the tool's error type and exit codes.
//!
//! Under `mpirun`, every rank parses the same command line and reaches the
//! same verdict; rank 0 alone prints an error, and every rank exits with its
//! code after finalizing MPI.

mod error;
mod measure;
mod memory;
mod pdgemr2d;
mod plan_report;
mod shape;
mod show;

use clap::{Parser, Subcommand};
use error::CliError;
use mpi::collective::CommunicatorCollectives;
use mpi::topology::Communicator;
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
    Plan(plan_report::PlanArgs),
    /// Execute, time and verify a redistribution (under `mpirun -n P`).
    Run(measure::RunArgs),
}

/// Runs the subcommand, writing to stdout. Returns its verdict and whether
/// this process reports it: always for `show` and `plan`, which run as one
/// process; on rank 0 only for `run`.
fn dispatch(command: &Command) -> (Result<(), CliError>, bool) {
    match command {
        Command::Show(args) => (show::run(args, &mut io::stdout().lock()), true),
        Command::Plan(args) => (plan_report::run(args, &mut io::stdout().lock()), true),
        Command::Run(args) => run_mpi(args),
    }
}

/// `redist run`: the only subcommand that starts MPI (with the abort-on-panic
/// hook). Returns the verdict, the same on every rank, which rank 0 has
/// already reported (so: `false`, nobody reports it again).
///
/// Every rank finalizes MPI before it returns, error or not: a rank that
/// exits without `MPI_Finalize` makes the launcher kill the whole job, rank 0
/// included, before rank 0 has printed anything.
fn run_mpi(args: &measure::RunArgs) -> (Result<(), CliError>, bool) {
    let universe = match procgrid::init() {
        Ok(universe) => universe,
        // Only a singleton started by a foreign launcher gets here (every
        // process is rank 0 of 1); the launcher's rank says who reports.
        Err(e) => return (Err(e.into()), launcher_rank() == 0),
    };
    let world = universe.world();
    let root = world.rank() == 0;
    let result = measure::run(args, &world, &mut io::stdout().lock());
    // Rank 0 reports before anyone exits: a rank that exits with an error
    // code makes Open MPI's launcher kill the others, rank 0 included,
    // whatever rank 0 was about to print.
    if let Err(e) = &result {
        if root && !e.is_broken_pipe() {
            eprintln!("error: {e}");
        }
    }
    world.barrier();
    // Every grid, communicator and array of the run is gone; finalize.
    drop(world);
    drop(universe);
    (result, false)
}

/// This process's rank as its launcher tells it (MPICH's Hydra `PMI_RANK`,
/// Open MPI's `OMPI_COMM_WORLD_RANK`, PMIx's `PMIX_RANK`), 0 when started
/// without one. Used before MPI starts, when every rank of a job would
/// otherwise print the same usage error.
fn launcher_rank() -> usize {
    ["PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"]
        .iter()
        .find_map(|k| std::env::var(k).ok()?.trim().parse().ok())
        .unwrap_or(0)
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap's usage errors (exit code 2), `--help` and `--version`
            // (0): every rank of a job parses the same command line, so
            // rank 0 alone prints.
            if launcher_rank() == 0 {
                let _ = e.print();
            }
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    let (result, report) = dispatch(&cli.command);
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => {
            if report {
                eprintln!("error: {e}");
            }
            ExitCode::from(e.exit_code())
        }
    }
}
