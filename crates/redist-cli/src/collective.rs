//! Small collectives `redist run` and its baselines share: reductions of one
//! value over the ranks of a communicator, and the agreement on whether
//! rank 0 wrote its report. Each is called by every rank of the
//! communicator, in the same order.

use crate::error::CliError;
use mpi::collective::SystemOperation;
use mpi::datatype::Equivalence;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::Root;
use std::io;

/// The maximum of `x` over the ranks of `comm`.
pub(crate) fn max_over<T: Equivalence + Default>(comm: &SimpleCommunicator, x: T) -> T {
    let mut m = T::default();
    procgrid::waits::all_reduce_into(comm, &x, &mut m, SystemOperation::max());
    m
}

/// The sum of `x` over the ranks of `comm`.
pub(crate) fn sum_over<T: Equivalence + Default>(comm: &SimpleCommunicator, x: T) -> T {
    let mut total = T::default();
    procgrid::waits::all_reduce_into(comm, &x, &mut total, SystemOperation::sum());
    total
}

/// Whether `holds` is true on every rank of `comm`.
pub(crate) fn on_every_rank(comm: &SimpleCommunicator, holds: bool) -> bool {
    let mut all = 0i32;
    procgrid::waits::all_reduce_into(comm, &i32::from(holds), &mut all, SystemOperation::min());
    all == 1
}

/// Whether `holds` is true on any rank of `comm`.
pub(crate) fn on_any_rank(comm: &SimpleCommunicator, holds: bool) -> bool {
    max_over(comm, i32::from(holds)) == 1
}

/// Tells every rank whether rank 0 wrote its report (`written` on rank 0;
/// ignored elsewhere) and returns the same verdict on every rank: `Ok`, a
/// broken pipe (which the tool treats as a normal end) or an I/O error.
pub(crate) fn agree_on_output(
    comm: &SimpleCommunicator,
    written: Result<(), CliError>,
) -> Result<(), CliError> {
    let mut code: i32 = match &written {
        Ok(()) => 0,
        Err(e) if e.is_broken_pipe() => 1,
        Err(_) => 2,
    };
    comm.process_at_rank(0).broadcast_into(&mut code);
    if comm.rank() == 0 {
        return written;
    }
    match code {
        0 => Ok(()),
        1 => Err(io::Error::from(io::ErrorKind::BrokenPipe).into()),
        _ => Err(io::Error::other("rank 0 could not write the report").into()),
    }
}

/// Rank 0 writes the report (`write` is called there only); then every
/// rank agrees that it was written ([`agree_on_output`]) and returns the
/// run's verdict: [`CliError::VerificationFailed`] where the check
/// (`verified`, the same on every rank) found a wrong element. Collective.
pub(crate) fn report_and_verdict(
    comm: &SimpleCommunicator,
    write: impl FnOnce() -> Result<(), CliError>,
    verified: Option<bool>,
) -> Result<(), CliError> {
    let written = if comm.rank() == 0 { write() } else { Ok(()) };
    agree_on_output(comm, written)?;
    match verified {
        Some(false) => Err(CliError::VerificationFailed),
        _ => Ok(()),
    }
}
