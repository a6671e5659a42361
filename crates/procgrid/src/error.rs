//! The error type of the crate.

use redist_plan::PlanError;
use thiserror::Error;

/// Everything that can go wrong when building or querying a process grid.
///
/// Validation happens before any collective call and depends only on arguments
/// that every rank passes identically, so every rank reaches the same verdict
/// and no rank is left waiting in a collective.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum GridError {
    /// A grid needs at least one dimension.
    #[error("a process grid needs at least one dimension, got none")]
    NoDimensions,

    /// A grid extent was zero.
    #[error("grid extent of dimension {dim} is 0; every extent must be at least 1 (extents {extents:?})")]
    ZeroExtent {
        /// The offending dimension.
        dim: usize,
        /// All extents as given.
        extents: Vec<usize>,
    },

    /// The product of the extents does not fit in the address space.
    #[error("the product of grid extents {extents:?} overflows")]
    ExtentOverflow {
        /// All extents as given.
        extents: Vec<usize>,
    },

    /// The grid needs exactly as many ranks as the communicator has, but the counts differ.
    #[error(
        "grid extents {extents:?} need {needed} ranks but the communicator has {available}; \
         the product of the extents must equal the rank count (or build a subset grid)"
    )]
    SizeMismatch {
        /// All extents as given.
        extents: Vec<usize>,
        /// Product of the extents.
        needed: usize,
        /// Size of the communicator.
        available: usize,
    },

    /// A subset grid needs more ranks than the communicator has.
    #[error(
        "grid extents {extents:?} need {needed} ranks but the communicator has only {available}"
    )]
    TooFewRanks {
        /// All extents as given.
        extents: Vec<usize>,
        /// Product of the extents.
        needed: usize,
        /// Size of the communicator.
        available: usize,
    },

    /// A per-dimension argument has the wrong length.
    #[error("{what} has {got} entries but the grid has {expected} dimensions")]
    DimensionCount {
        /// Which argument was wrong.
        what: &'static str,
        /// Number of grid dimensions.
        expected: usize,
        /// Number of entries supplied.
        got: usize,
    },

    /// A coordinate lies outside the grid.
    #[error(
        "coordinate {coord} in dimension {dim} is out of range; expected 0 <= coord < {extent}"
    )]
    CoordinateOutOfRange {
        /// The dimension.
        dim: usize,
        /// The coordinate as given.
        coord: usize,
        /// The grid extent of that dimension.
        extent: usize,
    },

    /// A grid dimension index is outside the grid.
    #[error("dimension {dim} does not exist; the grid has {ndims} dimensions")]
    NoSuchDimension {
        /// The dimension as given.
        dim: usize,
        /// Number of grid dimensions.
        ndims: usize,
    },

    /// A grid rank lies outside the grid.
    #[error("rank {rank} is out of range; the grid has {size} ranks (0 <= rank < {size})")]
    RankOutOfRange {
        /// The rank as given.
        rank: usize,
        /// Number of ranks in the grid.
        size: usize,
    },

    /// A fixed extent passed to [`balanced_extents`](crate::balanced_extents) does not divide
    /// the rank count.
    #[error(
        "cannot split {ranks} ranks over {ndims} dimensions with fixed extents {fixed:?}: \
         {reason}"
    )]
    NoFactorisation {
        /// The rank count to factor.
        ranks: usize,
        /// Number of dimensions requested.
        ndims: usize,
        /// Fixed extents (0 = free).
        fixed: Vec<usize>,
        /// Why it failed.
        reason: &'static str,
    },

    /// An operation that needs a 2-D grid was called on a grid of another rank.
    #[error("{what} needs a 2-D grid, but this grid has {ndims} dimensions")]
    NotTwoDimensional {
        /// The operation.
        what: &'static str,
        /// Number of grid dimensions.
        ndims: usize,
    },

    /// MPI was already initialised, or could not be.
    #[error("MPI is already initialised in this process; initialise it once per process")]
    AlreadyInitialized,

    /// The process was started by a launcher of another MPI implementation.
    #[error(
        "the launcher started {launcher_size} processes ({variable}={launcher_size}) but MPI sees \
         a world of 1: this binary is linked to {linked} and was probably started by another \
         MPI's mpirun (MPICH's and Open MPI's launchers are not interchangeable); run it with \
         the mpirun of {linked}"
    )]
    WrongLauncher {
        /// The environment variable that reported the launcher's process count.
        variable: &'static str,
        /// Process count that variable reported.
        launcher_size: usize,
        /// The MPI library this binary is linked to.
        linked: String,
    },

    /// An error of coordinate arithmetic that none of the variants above
    /// names (the planning crate's own).
    #[error(transparent)]
    Plan(PlanError),
}

impl From<PlanError> for GridError {
    /// The coordinate arithmetic's errors (`redist_plan::coords`) as the
    /// grid's own variants, with the same text.
    fn from(e: PlanError) -> GridError {
        match e {
            PlanError::NoGridDimensions => GridError::NoDimensions,
            PlanError::ZeroExtent { dim, extents } => GridError::ZeroExtent { dim, extents },
            PlanError::ExtentOverflow { extents } => GridError::ExtentOverflow { extents },
            PlanError::DimensionCount {
                what,
                expected,
                got,
            } => GridError::DimensionCount {
                what,
                expected,
                got,
            },
            PlanError::CoordinateOutOfRange { dim, coord, extent } => {
                GridError::CoordinateOutOfRange { dim, coord, extent }
            }
            PlanError::RankOutOfRange { rank, size } => GridError::RankOutOfRange { rank, size },
            other => GridError::Plan(other),
        }
    }
}
