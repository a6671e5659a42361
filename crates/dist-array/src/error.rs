//! The error type of the crate.

use procgrid::GridError;
use thiserror::Error;

/// Everything that can go wrong with a layout or a distributed array.
///
/// Errors that concern collective operations are decided from arguments every
/// rank holds identically (or after the root has told every rank its verdict),
/// so all ranks return the same error and none is left in a collective.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DistError {
    /// A layout spec string could not be parsed.
    #[error("cannot parse layout spec {spec:?}: {message} at column {column} (found {found:?})")]
    Parse {
        /// The whole spec string.
        spec: String,
        /// 1-based column of the offending token.
        column: usize,
        /// The offending token (empty at the end of the input).
        found: String,
        /// What was wrong and what was expected.
        message: String,
    },

    /// A block size of zero.
    #[error("block size of dimension {dim} is 0; block sizes must be at least 1")]
    ZeroBlock {
        /// The array dimension.
        dim: usize,
    },

    /// The number of distributions, grid extents and array dimensions disagree.
    #[error("{what}: expected {expected}, got {got}")]
    RankMismatch {
        /// What was counted.
        what: &'static str,
        /// The count the layout needs.
        expected: usize,
        /// The count supplied.
        got: usize,
    },

    /// A `*` (not distributed) dimension on a grid dimension with more than one process.
    #[error(
        "dimension {dim} is not distributed (`*`) but its grid extent is {extent}; \
         a `*` dimension needs grid extent 1"
    )]
    CollapsedOnDistributed {
        /// The array dimension.
        dim: usize,
        /// The grid extent.
        extent: usize,
    },

    /// The first-process offset `+K` is not a coordinate of its grid dimension.
    #[error("dimension {dim} starts on grid coordinate {first}, but the grid extent is {extent}; expected 0 <= K < {extent}")]
    FirstOutOfRange {
        /// The array dimension.
        dim: usize,
        /// The offset as given.
        first: usize,
        /// The grid extent.
        extent: usize,
    },

    /// Index arithmetic for the layout would overflow.
    #[error("layout of shape {shape:?} overflows the index arithmetic: {what}")]
    Overflow {
        /// The array shape.
        shape: Vec<usize>,
        /// What overflowed.
        what: String,
    },

    /// A layout needs at least one dimension.
    #[error("a layout needs at least one dimension")]
    NoDimensions,

    /// A global index lies outside the array.
    #[error("global index {index:?} is outside the array of shape {shape:?}")]
    GlobalOutOfRange {
        /// The index as given.
        index: Vec<usize>,
        /// The array shape.
        shape: Vec<usize>,
    },

    /// A local index lies outside the local part of a rank.
    #[error("local index {index:?} is outside rank {rank}'s local shape {local_shape:?}")]
    LocalOutOfRange {
        /// The index as given.
        index: Vec<usize>,
        /// The rank.
        rank: usize,
        /// That rank's local shape.
        local_shape: Vec<usize>,
    },

    /// A rank that does not exist in the layout.
    #[error("rank {rank} is not in the layout, which has {ranks} ranks")]
    NoSuchRank {
        /// The rank as given.
        rank: usize,
        /// Number of ranks in the layout.
        ranks: usize,
    },

    /// A rank map that is not a permutation of the layout's ranks.
    #[error("rank map {map:?} is not a permutation of 0..{ranks}")]
    BadRankMap {
        /// The map as given.
        map: Vec<usize>,
        /// Number of ranks in the layout.
        ranks: usize,
    },

    /// An order of axes that is not a permutation of the array's dimensions.
    #[error("axis order {order:?} is not a permutation of 0..{ndim} (one entry per dimension, each once)")]
    BadAxisOrder {
        /// The order as given.
        order: Vec<usize>,
        /// Number of dimensions of the array.
        ndim: usize,
    },

    /// The layout and the process grid do not fit each other.
    #[error("layout grid {layout_grid:?} does not match the process grid {grid:?}")]
    GridMismatch {
        /// The layout's grid extents.
        layout_grid: Vec<usize>,
        /// The process grid's extents.
        grid: Vec<usize>,
    },

    /// Two arrays that must share a layout do not.
    #[error("layouts differ: {left} vs {right}")]
    LayoutMismatch {
        /// The first layout.
        left: String,
        /// The second layout.
        right: String,
    },

    /// An array whose shape is not the one expected.
    #[error("array of shape {got:?} given where shape {expected:?} was expected")]
    ShapeMismatch {
        /// The shape the layout needs.
        expected: Vec<usize>,
        /// The shape supplied.
        got: Vec<usize>,
    },

    /// A root rank outside the communicator.
    #[error("root rank {root} is outside the communicator of {size} ranks")]
    BadRoot {
        /// The root as given.
        root: usize,
        /// Size of the communicator.
        size: usize,
    },

    /// The root did not supply the array for a scatter.
    #[error("scatter: the root rank {root} did not supply an array")]
    MissingRootArray {
        /// The root rank.
        root: usize,
    },

    /// A transfer exceeds what one MPI call can count.
    #[error("{what} needs {bytes} bytes, more than one MPI call can count ({limit})")]
    TooLarge {
        /// The operation.
        what: &'static str,
        /// Bytes it would move.
        bytes: u128,
        /// The limit.
        limit: u128,
    },

    /// The system could not give a local part its memory.
    #[error("cannot allocate {bytes} bytes for a local part: the system refused (out of memory)")]
    OutOfMemory {
        /// Bytes asked for.
        bytes: u128,
    },

    /// A grid with more ranks than a layout supports.
    #[error("a grid of {ranks} ranks; layouts support at most {limit}")]
    TooManyRanks {
        /// Ranks of the grid.
        ranks: usize,
        /// The limit ([`MAX_RANKS`](crate::spec::MAX_RANKS)).
        limit: usize,
    },

    /// An error from the process grid.
    #[error(transparent)]
    Grid(#[from] GridError),
}
