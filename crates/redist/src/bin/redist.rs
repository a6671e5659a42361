//! `redist`: the ndcyclic diagnostic and benchmark tool.
//!
//! Thin: parses the command line with clap and hands each subcommand to its
//! function in the `redist` library. Usage errors (clap's and ours) exit with
//! code 2 and a message on stderr.

use clap::{Parser, Subcommand};
use redist::RedistError;
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

/// One variant per subcommand; each is handled by a function in the library.
#[derive(Debug, Subcommand)]
enum Command {
    /// Draw who owns what in a layout (no MPI needed).
    Show(redist::show::ShowArgs),
    /// Build a redistribution plan without moving data and report it (no MPI needed).
    Plan(redist::report::PlanArgs),
    /// Execute, time and verify a redistribution (under `mpirun -n P`).
    Run(redist::measure::RunArgs),
}

fn dispatch(command: &Command) -> Result<(), RedistError> {
    let stdout = io::stdout();
    let mut out = stdout.lock();
    match command {
        Command::Show(args) => redist::show::run(args, &mut out),
        Command::Plan(args) => redist::report::run(args, &mut out),
        Command::Run(args) => run_mpi(args, &mut out),
    }
}

/// `redist run`: the only subcommand that starts MPI (with the abort-on-panic hook).
fn run_mpi(
    args: &redist::measure::RunArgs,
    out: &mut dyn std::io::Write,
) -> Result<(), RedistError> {
    let universe = procgrid::init()?;
    let world = universe.world();
    let result = redist::measure::run(args, &world, out);
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
