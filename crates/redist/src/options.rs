//! What a redistribution may do: how messages are exchanged
//! ([`Strategy`]) and the knobs of the engine ([`Options`], [`MinRun`]);
//! how the target's ranks may be relabelled ([`Remap`]) and when copies
//! stream ([`Streaming`]) are the plan's (`redist_plan::options`), and so
//! are the ghost layers around the arrays' local parts ([`Padding`],
//! `redist_plan::padding`).
//!
//! This module holds only data: the planner and the engine both read it,
//! so neither depends on the other through it.

use crate::error::RedistError;
use crate::tune::Measured;
pub use redist_plan::options::{Remap, Streaming};
pub use redist_plan::padding::Padding;
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

/// How messages are exchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Strategy {
    /// `combined` where the ranks span several nodes and every message is
    /// small, else `async`. Under the α–β model of seed 000 (eq. 12: a
    /// message of `n` bytes costs `α + β·n`), `async` costs `α·δ + β·B`
    /// (`δ` the most partners a rank has, `B` the most bytes it moves) and
    /// `alltoallv` `α·(R−1) + β·B` on `R` ranks; since `δ ≤ R − 1`, `async`
    /// is never predicted slower, whatever α and β, and it also copies
    /// straight from shared storage between ranks of a node.
    #[default]
    Auto,
    /// One `MPI_Alltoallv` (or `MPI_Alltoallw` where every message is
    /// described by datatypes).
    Alltoallv,
    /// One `MPI_Sendrecv` per contention-free step: each rank sends at most
    /// one message and receives at most one at a time, and its buffers
    /// hold the largest message in each direction rather than all of them.
    /// Never chosen by `Auto`; choose it where memory for buffers is tight
    /// (4 ranks of one node, 8192×4096 `f64` rows to columns, messages
    /// packed: 316 MB peak per rank against 382 MB with `async`), or where
    /// many senders converging on one receiver at once would congest it.
    Scheduled,
    /// Non-blocking receives and sends; unpack in arrival order.
    Async,
    /// The messages between two nodes travel as one: each rank packs its
    /// messages into shared memory, the ranks of its node unpack theirs
    /// from there, and each node's lowest rank sends every other node one
    /// message holding all of its node's messages for that node. Chosen by
    /// `Auto` where ranks span several nodes and messages are small
    /// ([`crate::tuning::COMBINED_MAX_MESSAGE_BYTES`]); needs shared memory
    /// among the ranks of each node (else building fails with
    /// [`RedistError::InvalidArgument`]).
    Combined,
}

impl FromStr for Strategy {
    type Err = RedistError;

    fn from_str(s: &str) -> Result<Strategy, RedistError> {
        match s {
            "auto" => Ok(Strategy::Auto),
            "alltoallv" => Ok(Strategy::Alltoallv),
            "scheduled" => Ok(Strategy::Scheduled),
            "async" => Ok(Strategy::Async),
            "combined" => Ok(Strategy::Combined),
            _ => Err(RedistError::InvalidArgument {
                what: "strategy",
                value: s.to_string(),
                expected: "auto, alltoallv, scheduled, async or combined".to_string(),
            }),
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Strategy::Auto => "auto",
            Strategy::Alltoallv => "alltoallv",
            Strategy::Scheduled => "scheduled",
            Strategy::Async => "async",
            Strategy::Combined => "combined",
        })
    }
}

/// A threshold on the average length of a message's runs: where a way of
/// moving a message pays depends on how long its contiguous runs are.
///
/// ```
/// use redist::MinRun;
/// assert_eq!("auto".parse::<MinRun>().unwrap(), MinRun::Auto);
/// assert_eq!("never".parse::<MinRun>().unwrap(), MinRun::Never);
/// assert_eq!("16".parse::<MinRun>().unwrap(), MinRun::Elements(16));
/// assert_eq!(MinRun::Elements(16).to_string(), "16");
/// assert!("0".parse::<MinRun>().is_err());
/// assert!("often".parse::<MinRun>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MinRun {
    /// The engine's own rule, which each option that takes a `MinRun`
    /// describes.
    #[default]
    Auto,
    /// Runs of at least this many elements on average (at least 1).
    Elements(usize),
    /// Never.
    Never,
}

impl FromStr for MinRun {
    type Err = RedistError;

    fn from_str(s: &str) -> Result<MinRun, RedistError> {
        match s {
            "auto" => Ok(MinRun::Auto),
            "never" => Ok(MinRun::Never),
            _ => match s.parse::<usize>() {
                Ok(n) if n > 0 => Ok(MinRun::Elements(n)),
                _ => Err(RedistError::InvalidArgument {
                    what: "minimum run",
                    value: s.to_string(),
                    expected: "auto, never or a positive number of elements".to_string(),
                }),
            },
        }
    }
}

impl fmt::Display for MinRun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MinRun::Auto => f.write_str("auto"),
            MinRun::Never => f.write_str("never"),
            MinRun::Elements(n) => write!(f, "{n}"),
        }
    }
}

/// Options of a [`Redistribution`](crate::Redistribution).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// How the target's ranks may be relabelled.
    pub remap: Remap,
    /// How messages are exchanged.
    pub strategy: Strategy,
    /// Largest number of elements in one point-to-point MPI message; longer
    /// messages are split. MPI counts are `i32`, so at most `i32::MAX`.
    pub max_message_elements: usize,
    /// When one side of a message is described to MPI by a derived
    /// datatype over local storage instead of being packed into (or
    /// unpacked from) a buffer. A message described so on both sides moves
    /// with no copy of ours: MPI reads the source and writes the target.
    /// [`MinRun::Auto`] (the default) packs every message on a
    /// communicator where a measurement found datatypes slower than
    /// packing ([`datatypes_pay`](crate::exec::datatypes_pay), once per
    /// communicator); elsewhere it takes sides whose runs average at least
    /// [`DATATYPE_MIN_RUN_BYTES`](crate::tuning::DATATYPE_MIN_RUN_BYTES),
    /// except the sending side of a message where either side repeats a
    /// period of several different runs (MPICH sends such typed messages
    /// more slowly than they are packed). Under `async`, where some rank
    /// moves 256 KiB or more, the measurement's choice is then checked on
    /// the redistribution itself: where the other choice would route some
    /// message differently, executions 2 and 3 run it and execution 4 the
    /// measurement's again, and from execution 5 on the faster is kept, the
    /// slowest rank's best time of each counting — where one is
    /// [`ROUTE_TRIAL_CLEAR`](crate::tuning::ROUTE_TRIAL_CLEAR) times
    /// faster; else executions 5 to 8 try both again and the faster is kept
    /// from execution 9 on
    /// ([`Redistribution::trying_routes`](crate::Redistribution::trying_routes)).
    /// [`MinRun::Elements`] takes every side whose runs average that many
    /// elements; [`MinRun::Never`] always packs. Neither is tried against
    /// anything.
    pub datatype_min_run: MinRun,
    /// When `async` sends a message as one MPI message per contiguous run
    /// straight from source storage, skipping the pack: where its source
    /// runs average at least [`DIRECT_MIN_RUN`](crate::tuning::DIRECT_MIN_RUN)
    /// elements ([`MinRun::Auto`], the default) or the given number
    /// ([`MinRun::Elements`]), never with [`MinRun::Never`].
    pub direct_min_run: MinRun,
    /// Whether `async` lets a receiver on the sender's node copy a message
    /// straight from the sender's source storage, when that storage is
    /// shared ([`DistArray::shared_storage`](dist_array::DistArray::shared_storage)):
    /// one pass over the data instead of pack, transfer and unpack. Falls
    /// back to messages on every rank if any rank cannot map its peers'
    /// storage.
    pub node_direct: bool,
    /// When copies into target storage use streaming (non-temporal) stores.
    pub streaming: Streaming,
    /// Whether executions may update the target rather than overwrite it
    /// ([`Redistribution::execute_update_into`](crate::Redistribution::execute_update_into):
    /// `target := β·target + α·op(source)`). Every message then reaches
    /// the target through the receiving rank's own copies, which compute
    /// the update: messages arrive in buffers, never straight into target
    /// storage (no derived datatypes over the target, no pieces received in
    /// place). Off by default.
    pub updates: bool,
    /// The ghost layers around the local parts of the arrays the
    /// redistribution reads and writes ([`DistArray::ghost_widths`](dist_array::DistArray::ghost_widths)
    /// of the source and of the target, each in its own layout's axis
    /// order; none by default). It reads the source's interior and writes
    /// the target's, never a ghost cell, in the same copies as without
    /// ghosts: only their strides and offsets change. Executions refuse
    /// arrays with other ghost widths ([`RedistError::GhostMismatch`]).
    /// [`Redistribution::between`](crate::Redistribution::between) takes
    /// the widths from the arrays; elsewhere spell them:
    /// `Padding::new(src.ghost_widths(), dst.ghost_widths())`.
    pub padding: Padding,
    /// A choice measured to be the fastest for this redistribution
    /// ([`tune`](crate::tune::tune) measures it; a wisdom file keeps it):
    /// under [`Strategy::Auto`] it is run instead of `auto`'s rules where it
    /// can run here (`alltoallv` where its counts fit, `combined` across
    /// nodes), with no probe and no trial of other routes. `None` (the
    /// default): the wisdom file's, if one is named and holds this case,
    /// else the rules.
    pub measured: Option<Measured>,
    /// A wisdom file to read the measured choice from under
    /// [`Strategy::Auto`] (when `measured` is `None`), written by
    /// `redist tune --wisdom F` or [`tune`](crate::tune::tune); `None`
    /// (the default): the file `NDCYCLIC_WISDOM` names, if set; an empty
    /// path: no wisdom file, whatever the environment names. A file
    /// that is missing, unreadable, corrupt or holds no entry for this
    /// case and machine is never an error: `auto`'s rules then decide and
    /// every rank has the same warning
    /// ([`Redistribution::warnings`](crate::Redistribution::warnings)).
    pub wisdom: Option<PathBuf>,
}

impl Options {
    /// The shortest average run, in elements of `elem_bytes` bytes, that is
    /// described by a derived datatype; `None` when datatypes are off.
    pub fn min_typed_run(&self, elem_bytes: usize) -> Option<usize> {
        match self.datatype_min_run {
            MinRun::Never => None,
            MinRun::Auto => Some(
                crate::tuning::DATATYPE_MIN_RUN_BYTES
                    .div_ceil(elem_bytes.max(1))
                    .max(1),
            ),
            MinRun::Elements(n) => Some(n.max(1)),
        }
    }

    /// The shortest average source run, in elements, that `async` sends
    /// straight from source storage; `None` when it never does.
    pub fn min_direct_run(&self) -> Option<usize> {
        match self.direct_min_run {
            MinRun::Never => None,
            MinRun::Auto => Some(crate::tuning::DIRECT_MIN_RUN),
            MinRun::Elements(n) => Some(n.max(1)),
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            remap: Remap::None,
            strategy: Strategy::Auto,
            max_message_elements: i32::MAX as usize,
            datatype_min_run: MinRun::Auto,
            direct_min_run: MinRun::Auto,
            node_direct: true,
            streaming: Streaming::Auto,
            updates: false,
            padding: Padding::default(),
            measured: None,
            wisdom: None,
        }
    }
}
