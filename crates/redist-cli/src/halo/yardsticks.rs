//! The yardsticks of `redist halo --baseline`: the hand-written exchanges
//! timed in the same run as the update.

use super::args::{HaloArgs, HaloBaseline};
use super::report::Timed;
use crate::error::CliError;
use crate::measure::timing::Progress;
use crate::measure::values::IndexValue;
use dist_array::{DistArray, Layout};
use mpi::topology::SimpleCommunicator;
use redist::ghost::GhostSpec;

/// Times every yardstick `args` asks for. Collective.
pub(super) fn time_all<T: IndexValue>(
    args: &HaloArgs,
    _world: &SimpleCommunicator,
    _layout: &Layout,
    _spec: &GhostSpec,
    _array: &DistArray<T>,
    _progress: &Progress,
) -> Result<Vec<(HaloBaseline, Timed)>, CliError> {
    Ok(args
        .baseline
        .iter()
        .map(|&b| (b, Timed::Skipped("not built yet".to_string())))
        .collect())
}
