//! The error type of the crate.

use dist_array::DistError;
use procgrid::GridError;
use thiserror::Error;

/// Everything that can go wrong when planning or executing a redistribution.
///
/// Plans are computed from the two layouts alone, which every rank holds
/// identically, so every rank reaches the same verdict before any collective.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RedistError {
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

    /// An error from a layout or distributed array.
    #[error(transparent)]
    Dist(#[from] DistError),

    /// An error from the process grid.
    #[error(transparent)]
    Grid(#[from] GridError),
}
