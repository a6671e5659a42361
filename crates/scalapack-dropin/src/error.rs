//! The errors of the drop-in library.

use thiserror::Error;

/// What went wrong in a call.
#[derive(Debug, Error)]
pub enum DropinError {
    /// An argument ScaLAPACK would refuse: `position` is its `INFO` code
    /// (the argument's position, or `100 · position + entry` for an entry
    /// of a descriptor), as `pxerbla` reports it.
    #[error("argument {position} of {routine}: {what}")]
    Argument {
        /// The routine, in capitals (`PDGEMR2D`).
        routine: &'static str,
        /// ScaLAPACK's position code of the argument.
        position: i32,
        /// What was wrong and what was expected.
        what: String,
    },
    /// The BLACS are not in the process (ScaLAPACK not loaded), or lack a
    /// routine this library needs.
    #[error("BLACS routine {0} not found: link ScaLAPACK (libscalapack) into the program")]
    NoBlacs(&'static str),
    /// A case this library does not take over (and ScaLAPACK's own routine
    /// was not found to run it).
    #[error("{0}")]
    Unsupported(String),
    /// An error of ndcyclic's redistribution.
    #[error(transparent)]
    Redist(#[from] redist::RedistError),
    /// An error building a grid.
    #[error(transparent)]
    Grid(#[from] procgrid::GridError),
    /// An error building a layout or array.
    #[error(transparent)]
    Dist(#[from] dist_array::DistError),
    /// An error of a layout.
    #[error(transparent)]
    Layout(#[from] dist_array::PlanError),
}
