//! The error type of the crate.

use thiserror::Error;

/// Everything that can go wrong with a layout, a grid's coordinates or a
/// plan.
///
/// Every check depends only on arguments (layouts, windows, options), so
/// ranks handed the same arguments reach the same verdict; the engine above
/// makes ranks handed different ones agree.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PlanError {
    // Layouts.
    /// A ghost update asked for what cannot be: a width beyond its axis,
    /// corners that are neither box nor star.
    #[error("ghost layers: {message}")]
    Ghosts {
        /// What was wrong and what was expected.
        message: String,
    },

    /// A ghost update on an axis that deals a rank several blocks.
    #[error("ghost layers need at most one block per rank on every axis with ghosts; axis {dim} of {layout} deals a rank up to {blocks} blocks (use block, or cyclic(b) with b at least the extent over the grid extent)")]
    SeveralBlocksPerRank {
        /// The axis.
        dim: usize,
        /// The layout.
        layout: String,
        /// Blocks a rank holds at most along it.
        blocks: usize,
    },

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

    /// A grid with more ranks than a layout supports.
    #[error("a grid of {ranks} ranks; layouts support at most {limit}")]
    TooManyRanks {
        /// Ranks of the grid.
        ranks: usize,
        /// The limit ([`MAX_RANKS`](crate::layout::spec::MAX_RANKS)).
        limit: usize,
    },

    // Grids of ranks and their coordinates.
    /// A grid needs at least one dimension.
    #[error("a process grid needs at least one dimension, got none")]
    NoGridDimensions,

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

    /// A grid rank lies outside the grid.
    #[error("rank {rank} is out of range; the grid has {size} ranks (0 <= rank < {size})")]
    RankOutOfRange {
        /// The rank as given.
        rank: usize,
        /// Number of ranks in the grid.
        size: usize,
    },

    // Plans.
    /// The source and target extents of a dimension differ.
    #[error("source extent {source_extent} and target extent {target_extent} differ; a redistribution keeps the shape")]
    ExtentMismatch {
        /// Extent in the source layout.
        source_extent: usize,
        /// Extent in the target layout.
        target_extent: usize,
    },

    /// The source and target layouts have different shapes.
    #[error("source shape {source_shape:?} and target shape {target_shape:?} differ; a redistribution keeps the shape")]
    ShapeMismatch {
        /// Shape of the source layout.
        source_shape: Vec<usize>,
        /// Shape of the target layout.
        target_shape: Vec<usize>,
    },

    /// The requested remapping cannot be applied.
    #[error("remapping {remap}: {reason}")]
    Remap {
        /// The remapping mode.
        remap: String,
        /// Why not.
        reason: String,
    },

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

    /// A broken internal invariant: a bug in this library. Please report it.
    #[error("internal error (a bug in redist-plan, please report it): {0}")]
    Internal(String),
}
