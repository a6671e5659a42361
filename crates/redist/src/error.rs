//! The error type of the crate.

use dist_array::DistError;
use mpi_extras::MpiError;
use procgrid::GridError;
use redist_plan::error::PlanError;
use thiserror::Error;

/// Everything that can go wrong when planning or executing a redistribution.
///
/// Plans are computed from the two layouts alone, which every rank holds
/// identically, so every rank reaches the same verdict before any collective.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RedistError {
    /// A value given to a parser or a builder was not understood.
    #[error("invalid {what} {value:?}: expected {expected}")]
    InvalidArgument {
        /// Which argument.
        what: &'static str,
        /// The value given.
        value: String,
        /// What was expected.
        expected: String,
    },

    /// A size beyond what the library or MPI can address.
    #[error("{what} is {value}, above the limit of {limit}")]
    Limit {
        /// What is too large.
        what: &'static str,
        /// Its value.
        value: u128,
        /// The largest value allowed.
        limit: u128,
    },

    /// An MPI call returned an error (only when an error handler lets MPI
    /// return errors instead of aborting).
    #[error("{call} failed with MPI error {code}: {message}")]
    Mpi {
        /// The MPI function.
        call: &'static str,
        /// MPI's error code.
        code: i32,
        /// MPI's description of the error.
        message: String,
    },

    /// Ranks were handed arguments that differ where they must match.
    #[error("{what}: {detail}; every rank must pass the same")]
    Disagreement {
        /// The operation.
        what: &'static str,
        /// What differs.
        detail: String,
    },

    /// Another rank could not go on (this rank's own arguments were fine);
    /// that rank returns the full error.
    #[error("{what}: rank {rank} refused ({kind}); see its error")]
    OtherRank {
        /// The operation.
        what: &'static str,
        /// The lowest rank that failed.
        rank: usize,
        /// The kind of its error.
        kind: &'static str,
    },

    /// An array whose ghost layers are not those the redistribution was
    /// planned for ([`Options::padding`](crate::Options::padding)): its
    /// copies would read or write the wrong cells of its storage.
    #[error("the {side} array has ghost widths {got:?}, but the redistribution was planned for {planned:?} (Options::padding, or Redistribution::between)")]
    GhostMismatch {
        /// Which array: "source" or "target".
        side: &'static str,
        /// The widths planned for (empty: none).
        planned: Vec<usize>,
        /// The array's widths.
        got: Vec<usize>,
    },

    /// A wisdom file could not be written (reading one never fails: see
    /// [`Options::wisdom`](crate::Options::wisdom)).
    #[error("wisdom file {path}: {reason}")]
    Wisdom {
        /// The file.
        path: String,
        /// What went wrong.
        reason: String,
    },

    /// A broken internal invariant: a bug in this library. Please report it.
    #[error("internal error (a bug in redist, please report it): {0}")]
    Internal(String),

    /// An error from a layout or distributed array.
    #[error(transparent)]
    Dist(#[from] DistError),

    /// An error from the process grid.
    #[error(transparent)]
    Grid(#[from] GridError),

    /// An error of the plan: layouts whose shapes differ, a remapping that
    /// cannot be applied, a window outside the arrays, a plan too large.
    #[error(transparent)]
    Plan(PlanError),
}

/// A planning error: the invalid arguments, limits and internal errors
/// the planning crate shares with the engine become the engine's own
/// variants (one variant per kind of error, wherever it was found); the
/// planning crate's own kinds stay [`RedistError::Plan`].
impl From<PlanError> for RedistError {
    fn from(e: PlanError) -> RedistError {
        match e {
            PlanError::InvalidArgument {
                what,
                value,
                expected,
            } => RedistError::InvalidArgument {
                what,
                value,
                expected,
            },
            PlanError::Limit { what, value, limit } => RedistError::Limit { what, value, limit },
            PlanError::Internal(detail) => RedistError::Internal(format!("planning: {detail}")),
            other => RedistError::Plan(other),
        }
    }
}

/// An error of a call into MPI's C interface, as the engine's own variant
/// of the same kind.
impl From<MpiError> for RedistError {
    fn from(e: MpiError) -> RedistError {
        match e {
            MpiError::InvalidArgument {
                what,
                value,
                expected,
            } => RedistError::InvalidArgument {
                what,
                value,
                expected,
            },
            MpiError::Limit { what, value, limit } => RedistError::Limit { what, value, limit },
            MpiError::Mpi {
                call,
                code,
                message,
            } => RedistError::Mpi {
                call,
                code,
                message,
            },
            MpiError::Internal(detail) => RedistError::Internal(detail),
            other => RedistError::Internal(other.to_string()),
        }
    }
}

/// The kinds of error, in the order of their codes (code 0 is unknown).
const KINDS: [&str; 14] = [
    "an error",
    "extents differ",
    "shapes differ",
    "remapping refused",
    "an invalid argument",
    "a size above a limit",
    "an MPI error",
    "an internal error",
    "a layout or array error",
    "a grid error",
    "arguments that differ between ranks",
    "another rank's error",
    "its arrays do not fit this redistribution",
    "a wisdom file it could not write",
];

impl RedistError {
    /// A small number naming the kind of error, sent to the other ranks
    /// when this rank cannot go on.
    pub(crate) fn kind_code(&self) -> u64 {
        match self {
            RedistError::Plan(PlanError::ExtentMismatch { .. }) => 1,
            RedistError::Plan(PlanError::ShapeMismatch { .. }) => 2,
            RedistError::Plan(PlanError::Remap { .. }) => 3,
            RedistError::Plan(_) => 8,
            RedistError::InvalidArgument { .. } => 4,
            RedistError::Limit { .. } => 5,
            RedistError::Mpi { .. } => 6,
            RedistError::Internal(_) => 7,
            RedistError::Dist(DistError::LayoutMismatch { .. }) => 12,
            RedistError::GhostMismatch { .. } => 12,
            RedistError::Dist(_) => 8,
            RedistError::Grid(_) => 9,
            RedistError::Disagreement { .. } => 10,
            RedistError::OtherRank { .. } => 11,
            RedistError::Wisdom { .. } => 13,
        }
    }

    /// The name of the kind of error `code` names.
    pub(crate) fn kind_name(code: u64) -> &'static str {
        usize::try_from(code)
            .ok()
            .and_then(|c| KINDS.get(c))
            .copied()
            .unwrap_or(KINDS[0])
    }
}
