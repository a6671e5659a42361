//! The error type of the crate.

use procgrid::GridError;
use redist_plan::PlanError;
use thiserror::Error;

/// Everything that can go wrong with a layout or a distributed array.
///
/// Errors that concern collective operations are decided from arguments every
/// rank holds identically (or after the root has told every rank its verdict),
/// so all ranks return the same error and none is left in a collective.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DistError {
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

    /// Ghost widths that are not one per axis.
    #[error("ghost widths {got:?} given for an array of {ndim} axes: one width per axis expected")]
    GhostWidths {
        /// The array's axes.
        ndim: usize,
        /// The widths as given.
        got: Vec<usize>,
    },

    /// An error from the process grid.
    #[error(transparent)]
    Grid(#[from] GridError),

    /// An error of a layout: its spec, its index maps, its rank map.
    #[error(transparent)]
    Layout(#[from] PlanError),
}
