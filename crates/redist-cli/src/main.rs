//! `redist`: the ndcyclic diagnostic and benchmark tool.
//!
//! `main` parses the command line with clap and hands each subcommand to its
//! module; the library `redist` does the work. Usage errors (clap's and ours)
//! exit with code 2 and a message on stderr.
//!
//! - [`shape`]: the `--shape` argument ([`shape::Shape`]) and the layout it
//!   gives with a spec string;
//! - [`show`]: `redist show`, who owns what in one layout;
//! - [`plan_report`]: `redist plan`, a plan's summary, schedule table and JSON;
//! - [`measure`]: `redist run`, timing and verifying an execution next to a
//!   bare `MPI_Alltoallv` of the same bytes;
//! - [`error`]: [`CliError`], the tool's error type and exit codes.

mod error;
mod measure;
mod plan_report;
mod shape;
mod show;

use clap::{Parser, Subcommand};
use error::CliError;
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

fn dispatch(command: &Command) -> Result<(), CliError> {
    let stdout = io::stdout();
    let mut out = stdout.lock();
    match command {
        Command::Show(args) => show::run(args, &mut out),
        Command::Plan(args) => plan_report::run(args, &mut out),
        Command::Run(args) => run_mpi(args, &mut out),
    }
}

/// `redist run`: the only subcommand that starts MPI (with the abort-on-panic hook).
fn run_mpi(args: &measure::RunArgs, out: &mut dyn std::io::Write) -> Result<(), CliError> {
    let universe = procgrid::init()?;
    let world = universe.world();
    let result = measure::run(args, &world, out);
    if let Err(e) = &result {
        // Every rank reaches the same verdict; rank 0 reports it.
        use mpi::topology::Communicator;
        if world.rank() != 0 {
            std::process::exit(i32::from(e.exit_code()));
        }
    }
    result
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match dispatch(&cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
