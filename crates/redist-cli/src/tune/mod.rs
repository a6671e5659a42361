//! `redist tune`: choices measured on real arrays and kept in a wisdom
//! file, where later jobs find them.
//!
//! - `exchange.rs`: `redist tune --shape … --from … --to …`, every
//!   admissible way of one redistribution timed beside `auto`'s
//!   (`redist::tune::tune`);
//! - `grid.rs`: `redist tune grid --shape … --phases …`, the process grid
//!   of a job of redistributions chosen on whole steps
//!   (`redist::tune::choose_grid`);
//! - `phases.rs`: the phases as `--phases` spells them — pure;
//! - `redist tune ghosts` (a ghost update's two ways) lives beside
//!   `redist halo`, whose arguments it takes (`halo/tuned.rs`).

mod exchange;
mod grid;
mod phases;

use crate::error::CliError;
use crate::measure::RunArgs;
use clap::{Args, Subcommand};
use mpi::topology::SimpleCommunicator;
use std::io::Write;

/// Arguments of `redist tune`: one redistribution's, or a subcommand.
#[derive(Debug, Clone, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct TuneArgs {
    /// What else to tune.
    #[command(subcommand)]
    pub job: Option<TuneJob>,
    /// The redistribution to tune, as `redist run` takes it (`--wisdom F`:
    /// the wisdom file the result is added to).
    #[command(flatten)]
    pub run: Option<RunArgs>,
    /// Executions of each choice before the timed ones (`auto`'s own: at
    /// least 9, past its trial of routes).
    #[arg(long, default_value_t = 3)]
    pub warmups: usize,
}

/// What `redist tune` tunes besides one redistribution.
#[derive(Debug, Clone, Subcommand)]
pub enum TuneJob {
    /// Choose the process grid of a job of redistributions (`--phases "block,*@G ->
    /// *,block@G"`) by timing whole steps on each candidate grid, and keep it in a
    /// wisdom file.
    Grid(grid::GridArgs),
    /// Measure a ghost update (as `redist halo` takes it) with node-direct reads and
    /// with messages, and keep the faster in a wisdom file.
    Ghosts(crate::halo::tuned::GhostsArgs),
}

/// One redistribution to tune: `redist run`'s arguments and the warm-ups.
pub(crate) struct ExchangeArgs<'a> {
    /// The redistribution, as `redist run` takes it.
    pub run: &'a RunArgs,
    /// Executions of each choice before the timed ones.
    pub warmups: usize,
}

/// Runs `redist tune` on `world`: every rank takes part; rank 0 writes to
/// `out`.
///
/// # Errors
///
/// As the subcommand's; [`CliError::Unsupported`] for neither a
/// redistribution nor a subcommand.
pub fn run(
    args: &TuneArgs,
    world: &SimpleCommunicator,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    match (&args.job, &args.run) {
        (Some(TuneJob::Grid(g)), _) => grid::run(g, world, out),
        (Some(TuneJob::Ghosts(g)), _) => crate::halo::tuned::run(g, world, out),
        (None, Some(run)) => {
            let e = ExchangeArgs {
                run,
                warmups: args.warmups,
            };
            exchange::run(&e, world, out)
        }
        (None, None) => Err(CliError::Unsupported {
            what: "redist tune",
            expected: "a redistribution (--shape, --from, --to) or `redist tune grid`".to_string(),
        }),
    }
}
