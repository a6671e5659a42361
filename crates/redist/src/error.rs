//! The error type of the crate.

use dist_array::DistError;
use procgrid::GridError;
use std::io;
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

    /// A value given on the command line or to a builder was not understood.
    #[error("invalid {what} {value:?}: expected {expected}")]
    InvalidArgument {
        /// Which argument.
        what: &'static str,
        /// The value given.
        value: String,
        /// What was expected.
        expected: String,
    },

    /// A `--shape` argument was empty.
    #[error("empty shape; expected extents joined by `x`, such as `8x8` or `100`")]
    EmptyShape,

    /// One extent of a `--shape` argument is not a non-negative decimal integer.
    #[error(
        "extent {position} of shape {shape:?} is `{token}`; expected a non-negative integer \
         (extents joined by `x`, such as `8x8` or `100`)"
    )]
    ShapeNotANumber {
        /// The whole argument.
        shape: String,
        /// 1-based position of the bad extent.
        position: usize,
        /// The bad extent as written (empty for `8xx8` or a trailing `x`).
        token: String,
    },

    /// One extent of a `--shape` argument does not fit in `usize`.
    #[error("extent {position} of shape {shape:?} is `{token}`, which is too large")]
    ShapeTooLarge {
        /// The whole argument.
        shape: String,
        /// 1-based position of the bad extent.
        position: usize,
        /// The extent as written.
        token: String,
    },

    /// A layout with a different number of dimensions than the shape.
    #[error(
        "layout {spec} has {spec_dims} dimension(s) but shape {shape} has {shape_dims}; \
         give one distribution and one grid extent per array dimension"
    )]
    DimensionMismatch {
        /// The layout as given (canonical form).
        spec: String,
        /// Its number of dimensions.
        spec_dims: usize,
        /// The shape as given.
        shape: String,
        /// Its number of dimensions.
        shape_dims: usize,
    },

    /// A layout that does not fit the shape given on the command line.
    #[error("layout {spec} for shape {shape}: {source}")]
    Layout {
        /// The layout as given (canonical form).
        spec: String,
        /// The shape as given.
        shape: String,
        /// What is wrong.
        source: Box<DistError>,
    },

    /// Writing output failed.
    #[error("cannot write output: {message}")]
    Io {
        /// The kind of I/O failure.
        kind: io::ErrorKind,
        /// The failure as the system described it.
        message: String,
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

    /// A broken internal invariant: a bug in this library. Please report it.
    #[error("internal error (a bug in redist, please report it): {0}")]
    Internal(String),

    /// An error from a layout or distributed array.
    #[error(transparent)]
    Dist(#[from] DistError),

    /// An error from the process grid.
    #[error(transparent)]
    Grid(#[from] GridError),
}

impl From<io::Error> for RedistError {
    fn from(e: io::Error) -> Self {
        RedistError::Io {
            kind: e.kind(),
            message: e.to_string(),
        }
    }
}

impl RedistError {
    /// The process exit code for this error in the `redist` tool: 2 for bad
    /// input (as clap uses for usage errors), 1 for failures of the
    /// environment such as I/O.
    ///
    /// ```
    /// use redist::RedistError;
    /// let e = RedistError::from(std::io::Error::other("disk full"));
    /// assert_eq!(e.exit_code(), 1);
    /// assert_eq!(RedistError::EmptyShape.exit_code(), 2);
    /// ```
    pub fn exit_code(&self) -> u8 {
        match self {
            RedistError::Io { .. } => 1,
            _ => 2,
        }
    }

    /// Whether this is a write to a closed pipe (`redist show ... | head`),
    /// which the tool treats as a normal end.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, RedistError::Io { kind, .. } if *kind == io::ErrorKind::BrokenPipe)
    }
}
