//! [`HaloError`]: why a ghosted layout, a halo or a padded storage cannot
//! be served by the hand-written ghost updates (or checked).
//!
//! Every refusal but [`HaloError::StorageSize`] depends on the layout and
//! the halo alone, which every rank is handed alike: all ranks reach the
//! same verdict without communicating.

use dist_array::PlanError;
use mpi_extras::MpiError;
use thiserror::Error;

/// What went wrong in building, running or checking a ghost update.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum HaloError {
    /// Widths or periodic flags not one per axis of the layout.
    #[error("{given} {what} for a layout of {ndim} dimension(s); expected one per dimension")]
    PerAxis {
        /// `widths` or `periodic flags`.
        what: &'static str,
        /// How many were given.
        given: usize,
        /// The layout's dimensions.
        ndim: usize,
    },

    /// A layout in which some rank holds more than one block along an axis:
    /// its local part is not one box of the array, so it has no ghosts.
    #[error(
        "layout {layout}: axis {axis} has {blocks} blocks for {procs} process(es); a ghosted \
         layout holds at most one block per process and axis (`block`, or `cyclic(b)` with \
         b × processes at least the extent)"
    )]
    NotOneBlockPerAxis {
        /// The layout.
        layout: String,
        /// The axis.
        axis: usize,
        /// Its number of blocks.
        blocks: usize,
        /// Its grid extent.
        procs: usize,
    },

    /// A ghost width wider than a neighbour's part along its axis, which the
    /// hand-written updates do not serve (their faces come from one
    /// neighbour each).
    #[error(
        "ghost width {width} on axis {axis} exceeds the {extent} index(es) that grid coordinate \
         {coordinate} holds there, and it is a neighbour's part; the hand-written baselines \
         need every width at most each neighbour's local extent"
    )]
    WidthBeyondNeighbour {
        /// The axis.
        axis: usize,
        /// The width asked for.
        width: usize,
        /// The neighbour's grid coordinate along the axis.
        coordinate: usize,
        /// Its local extent there.
        extent: usize,
    },

    /// A padded extent beyond what `usize` holds (or, for the hand-written
    /// updates, MPI's `int`).
    #[error(
        "the padded extent of axis {axis} overflows: local extent {extent} + 2 × width {width}"
    )]
    Overflow {
        /// The axis.
        axis: usize,
        /// The local extent.
        extent: usize,
        /// The ghost width.
        width: usize,
    },

    /// A padded storage whose bytes overflow `usize` (`cells` is
    /// `usize::MAX` where the cells overflow too).
    #[error(
        "a padded storage of {cells} cells of {element_bytes} bytes overflows the address space"
    )]
    StorageOverflow {
        /// Its cells.
        cells: usize,
        /// Bytes per element.
        element_bytes: usize,
    },

    /// A layout of more ranks than the communicator the update runs on.
    #[error(
        "a layout of {ranks} ranks on a communicator of {size}; expected at most as many ranks \
         as the communicator has"
    )]
    TooFewRanks {
        /// The layout's ranks.
        ranks: usize,
        /// The communicator's size.
        size: usize,
    },

    /// Storage handed to an update or a check that is not the rank's padded
    /// local part.
    #[error(
        "rank {rank}'s padded storage holds {given} bytes; expected {expected} (its local \
         extents plus twice the widths, multiplied, times the element size)"
    )]
    StorageSize {
        /// The rank.
        rank: usize,
        /// Bytes handed over.
        given: usize,
        /// Bytes of its padded local part.
        expected: usize,
    },

    /// An element size of zero bytes.
    #[error("element size 0; expected at least 1 byte")]
    ZeroElement,

    /// A layout's own error (a rank or coordinates outside it).
    #[error(transparent)]
    Layout(#[from] PlanError),

    /// An MPI call's error.
    #[error(transparent)]
    Mpi(#[from] MpiError),
}
