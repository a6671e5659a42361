//! [`CliError`], the one error type of the `redist` tool, and its exit codes.
//!
//! The library's errors ([`RedistError`], [`DistError`], [`GridError`]) come
//! in through `?`; the variants here are the tool's own: command-line
//! arguments that do not fit together, a failed `--verify`, and I/O.

use dist_array::DistError;
use procgrid::GridError;
use redist::{PlanError, RedistError};
use redist_cli::halo_baseline::HaloError;
use std::io;
use thiserror::Error;

/// Everything that can go wrong in a `redist` subcommand.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CliError {
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

    /// One index of a `--from-window`/`--to-window` origin is not a
    /// non-negative decimal integer that fits in `usize`.
    #[error(
        "index {position} of origin {origin:?} is `{token}`; expected a non-negative integer \
         (0-based indices joined by `,`, such as `3,0`)"
    )]
    OriginNotAnIndex {
        /// The whole argument.
        origin: String,
        /// 1-based position of the bad index.
        position: usize,
        /// The bad index as written.
        token: String,
    },

    /// A request this build or these arguments cannot serve.
    #[error("{what} needs {expected}")]
    Unsupported {
        /// What was asked for.
        what: &'static str,
        /// What it needs.
        expected: String,
    },

    /// Window arguments of `redist run` that do not fit the arrays.
    #[error("{what}: {value}; expected {expected}")]
    BadWindow {
        /// Which argument.
        what: &'static str,
        /// What was given.
        value: String,
        /// What would fit.
        expected: String,
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
        source: Box<PlanError>,
    },

    /// `redist run` was given grids larger than the MPI job.
    #[error(
        "invalid grids {grids:?}: expected grids of at most {ranks} ranks (the job's size); \
         start more ranks with mpirun -n"
    )]
    TooFewRanks {
        /// The two layouts, `FROM and TO`.
        grids: String,
        /// The job's size.
        ranks: usize,
    },

    /// A layout with more ranks than the tool handles: listing them (or the
    /// rank map the library builds for them) would take gigabytes.
    #[error(
        "invalid layout {spec}: {ranks} ranks; expected at most {limit} ranks \
         (the most the redist tool lists or plans for)"
    )]
    TooManyRanks {
        /// The layout as given (canonical form).
        spec: String,
        /// Its number of ranks.
        ranks: usize,
        /// The largest number of ranks accepted.
        limit: usize,
    },

    /// `redist run` would need more memory per rank than the node has.
    #[error(
        "not enough memory: a rank needs {} for {what}, but {available} bytes ({}) are \
         available per rank (MemAvailable of /proc/meminfo shared among the ranks of a \
         node); use a smaller --shape or --type, or more nodes",
        needed_bytes(*.needed),
        crate::memory::human(*.available)
    )]
    OutOfMemory {
        /// The largest number of bytes a rank needs.
        needed: u64,
        /// The smallest number of bytes a rank may use.
        available: u64,
        /// What the bytes are for.
        what: String,
    },

    /// `redist run --verify` found elements that differ from their expected value.
    #[error(
        "invalid result \"mismatched elements\": expected every element equal to the value of \
         its global index (verification failed)"
    )]
    VerificationFailed,

    /// A line of `redist chart`'s input that is not a `redist run --json` record.
    #[error(
        "{input}, line {line}: {reason}; expected the JSON lines `redist run --json` \
         prints, one per run"
    )]
    BadRecord {
        /// The file (or `standard input`).
        input: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong with it.
        reason: String,
    },

    /// `redist plan --rank` named a rank of neither layout.
    #[error(
        "rank {rank} is in neither layout; expected a rank below {ranks} (the larger of the \
         two layouts' rank counts)"
    )]
    NoSuchRank {
        /// The rank asked for.
        rank: usize,
        /// The larger of the two rank counts.
        ranks: usize,
    },

    /// `redist chart` was given no record at all.
    #[error("the input holds no record; expected the JSON lines `redist run --json` prints")]
    NoRecords,

    /// A file named on the command line could not be read or written.
    #[error("{path}: {message}")]
    File {
        /// The file as named.
        path: String,
        /// The failure as the system described it.
        message: String,
    },

    /// Writing output failed.
    #[error("cannot write output: {message}")]
    Io {
        /// The kind of I/O failure.
        kind: io::ErrorKind,
        /// The failure as the system described it.
        message: String,
    },

    /// An error from saving or loading a file.
    #[error(transparent)]
    Storage(#[from] dist_io::IoError),

    /// An error from planning or executing a redistribution.
    #[error("{}", in_cli_terms(.0))]
    Redist(#[from] RedistError),

    /// An error from a layout or distributed array.
    #[error(transparent)]
    Dist(#[from] DistError),

    /// An error from the process grid.
    #[error(transparent)]
    Grid(#[from] GridError),

    /// A ghosted layout or halo the hand-written ghost updates (`redist
    /// halo --baseline sendrecv,neighbor`) do not serve, or their failure.
    #[error(transparent)]
    Halo(#[from] HaloError),
}

/// `needed` bytes for [`CliError::OutOfMemory`]: `u64::MAX` stands for any
/// larger number (the sums saturate).
fn needed_bytes(needed: u64) -> String {
    let human = crate::memory::human(needed);
    if needed == u64::MAX {
        format!("at least {needed} bytes ({human})")
    } else {
        format!("{needed} bytes ({human})")
    }
}

/// The library's message for `e`, with its advice given as the tool's flag:
/// the library names the API (`Remap::Optimal`), the tool names `--remap optimal`.
fn in_cli_terms(e: &RedistError) -> String {
    let message = e.to_string();
    match e {
        RedistError::Plan(PlanError::Remap { .. }) => {
            message.replace("Remap::Optimal", "--remap optimal")
        }
        _ => message,
    }
}

impl From<PlanError> for CliError {
    /// A plan's or a layout's error, as the engine reports it.
    fn from(e: PlanError) -> Self {
        CliError::Redist(e.into())
    }
}

impl From<io::Error> for CliError {
    fn from(e: io::Error) -> Self {
        CliError::Io {
            kind: e.kind(),
            message: e.to_string(),
        }
    }
}

impl CliError {
    /// The process exit code for this error: 2 for bad input (as clap uses
    /// for usage errors), 1 for failures of the environment such as I/O.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Io { .. } | CliError::File { .. } => 1,
            _ => 2,
        }
    }

    /// Whether this is a write to a closed pipe (`redist show ... | head`),
    /// which the tool treats as a normal end.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, CliError::Io { kind, .. } if *kind == io::ErrorKind::BrokenPipe)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Formerly the doc example of `RedistError::exit_code`.
    #[test]
    fn exit_codes() {
        let e = CliError::from(io::Error::other("disk full"));
        assert_eq!(e.exit_code(), 1);
        assert!(!e.is_broken_pipe());
        assert_eq!(CliError::EmptyShape.exit_code(), 2);
        assert_eq!(CliError::VerificationFailed.exit_code(), 2);
        assert!(CliError::from(io::Error::from(io::ErrorKind::BrokenPipe)).is_broken_pipe());
    }

    #[test]
    fn library_errors_keep_their_message_and_exit_2() {
        let e = CliError::from(PlanError::ExtentMismatch {
            source_extent: 4,
            target_extent: 5,
        });
        assert_eq!(e.exit_code(), 2);
        assert_eq!(
            e.to_string(),
            "source extent 4 and target extent 5 differ; a redistribution keeps the shape"
        );
    }

    #[test]
    fn remap_advice_names_the_flag() {
        let e = CliError::from(PlanError::Remap {
            remap: "closed-form".into(),
            reason: "no closed form covers dimension 0; use Remap::Optimal".into(),
        });
        assert_eq!(
            e.to_string(),
            "remapping closed-form: no closed form covers dimension 0; use --remap optimal"
        );
    }

    #[test]
    fn messages_of_the_tool_variants() {
        let e = CliError::TooFewRanks {
            grids: "block@4 and cyclic@4".into(),
            ranks: 2,
        };
        assert_eq!(
            e.to_string(),
            "invalid grids \"block@4 and cyclic@4\": expected grids of at most 2 ranks \
             (the job's size); start more ranks with mpirun -n"
        );
        let e = CliError::OutOfMemory {
            needed: 2_000_000_000_000,
            available: 6 << 30,
            what: "the local parts".into(),
        };
        assert_eq!(e.exit_code(), 2);
        assert_eq!(
            e.to_string(),
            "not enough memory: a rank needs 2000000000000 bytes (1.8 TiB) for the \
             local parts, but 6442450944 bytes (6.0 GiB) are available per rank (MemAvailable \
             of /proc/meminfo shared among the ranks of a node); use a smaller --shape or \
             --type, or more nodes"
        );
        let e = CliError::OutOfMemory {
            needed: u64::MAX,
            available: 1 << 30,
            what: "the local parts".into(),
        };
        assert!(
            e.to_string()
                .contains("a rank needs at least 18446744073709551615 bytes (16.0 EiB) for"),
            "{e}"
        );
        assert_eq!(
            CliError::VerificationFailed.to_string(),
            "invalid result \"mismatched elements\": expected every element equal to the value \
             of its global index (verification failed)"
        );
    }
}
