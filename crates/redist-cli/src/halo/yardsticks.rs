//! The yardsticks of `redist halo --baseline`: the hand-written exchanges
//! of [`redist_cli::halo_baseline`], each on storage of its own padded as
//! the update's, timed in the same run (after a warm-up) and checked.

use super::args::{HaloArgs, HaloBaseline};
use super::report::Timed;
use super::verify::{sentinel, value_of};
use crate::collective::on_every_rank;
use crate::error::CliError;
use crate::measure::timing::{max_over_each, Progress};
use crate::measure::values::IndexValue;
use dist_array::Layout;
use mpi::topology::{Communicator, SimpleCommunicator};
use redist::ghost::GhostSpec;
use redist_cli::halo_baseline::{
    check_ghosts, fill_ghosted, AxisByAxisHalo, HaloError, NeighborCollectiveHalo,
};

/// One yardstick, built.
enum Yardstick {
    Sendrecv(AxisByAxisHalo),
    Neighbor(Box<NeighborCollectiveHalo>),
}

impl Yardstick {
    fn update<T: IndexValue>(&mut self, storage: &mut [T]) -> Result<(), HaloError> {
        match self {
            Yardstick::Sendrecv(y) => y.update(storage),
            Yardstick::Neighbor(y) => y.update(storage),
        }
    }
}

/// Times every yardstick `args` asks for, and checks its ghosts with
/// `--verify`. A yardstick the layout does not suit (widths beyond a
/// neighbour's part) is skipped with its reason, the same on every rank.
/// Collective.
pub(super) fn time_all<T: IndexValue>(
    args: &HaloArgs,
    world: &SimpleCommunicator,
    layout: &Layout,
    spec: &GhostSpec,
    progress: &Progress,
) -> Result<Vec<(HaloBaseline, Timed)>, CliError> {
    let rank = world.rank() as usize;
    let elem = std::mem::size_of::<T>();
    let mut out = Vec::new();
    for &which in &args.baseline {
        let built = match which {
            HaloBaseline::Sendrecv => {
                AxisByAxisHalo::new(world, layout, spec, elem).map(Yardstick::Sendrecv)
            }
            HaloBaseline::Neighbor => NeighborCollectiveHalo::new(world, layout, spec, elem)
                .map(|y| Yardstick::Neighbor(Box::new(y))),
        };
        // Refusals follow from the layout alone: every rank refuses alike.
        let mut y = match built {
            Ok(y) => y,
            Err(e) => {
                if rank == 0 && !args.json {
                    eprintln!("baseline {which:?} skipped: {e}");
                }
                out.push((which, Timed::Skipped(e.to_string())));
                continue;
            }
        };
        let shape = layout.shape().to_vec();
        let fresh = || {
            let value = |g: &[usize]| value_of::<T>(&shape, g);
            fill_ghosted(
                layout,
                rank,
                spec.widths(),
                value,
                sentinel::<T>(layout, rank),
            )
        };
        let mut storage = fresh()?;
        y.update(&mut storage)?; // warm-up
        let times = max_over_each(world, args.reps, progress, "baseline", || {
            Ok(y.update(&mut storage)?)
        })?;
        let verified = if args.verify {
            let mut fresh = fresh()?;
            y.update(&mut fresh)?;
            let check = check_ghosts(
                layout,
                rank,
                spec,
                &fresh,
                |g| value_of::<T>(&shape, g),
                sentinel::<T>(layout, rank),
            )?;
            Some(on_every_rank(world, check.is_right()))
        } else {
            None
        };
        out.push((which, Timed::Times(times, verified)));
    }
    Ok(out)
}
