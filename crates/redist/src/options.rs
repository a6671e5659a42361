//! What a redistribution may do: how the target's ranks may be relabelled
//! ([`Remap`]), how messages are exchanged ([`Strategy`]), and the knobs of
//! the engine ([`Options`]).
//!
//! This module holds only data: the planner, the engine and the cost model
//! all read it, so none of them depends on another through it.

use crate::RedistError;
use std::fmt;
use std::str::FromStr;

/// How the target's ranks may be relabelled to keep data where it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Remap {
    /// Keep the target layout's rank map as given.
    #[default]
    None,
    /// Per-dimension closed-form relabelling (seeds 003 and 004), where one
    /// applies; an error where none does.
    ClosedForm,
    /// The exact optimum over all relabellings of the target's ranks: a
    /// linear-assignment solve on the volume matrix.
    Optimal,
}

impl FromStr for Remap {
    type Err = RedistError;

    fn from_str(s: &str) -> Result<Remap, RedistError> {
        match s {
            "none" => Ok(Remap::None),
            "closed-form" => Ok(Remap::ClosedForm),
            "optimal" => Ok(Remap::Optimal),
            _ => Err(RedistError::InvalidArgument {
                what: "remap",
                value: s.to_string(),
                expected: "none, closed-form or optimal".to_string(),
            }),
        }
    }
}

impl fmt::Display for Remap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Remap::None => "none",
            Remap::ClosedForm => "closed-form",
            Remap::Optimal => "optimal",
        })
    }
}

/// How messages are exchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Strategy {
    /// Chosen by the α–β cost model ([`crate::cost`]).
    #[default]
    Auto,
    /// One `MPI_Alltoallv`.
    Alltoallv,
    /// One `MPI_Sendrecv` per contention-free step.
    Scheduled,
    /// Non-blocking receives and sends; unpack in arrival order.
    Async,
}

impl FromStr for Strategy {
    type Err = RedistError;

    fn from_str(s: &str) -> Result<Strategy, RedistError> {
        match s {
            "auto" => Ok(Strategy::Auto),
            "alltoallv" => Ok(Strategy::Alltoallv),
            "scheduled" => Ok(Strategy::Scheduled),
            "async" => Ok(Strategy::Async),
            _ => Err(RedistError::InvalidArgument {
                what: "strategy",
                value: s.to_string(),
                expected: "auto, alltoallv, scheduled or async".to_string(),
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
        })
    }
}

/// When copies into a rank's target storage use streaming (non-temporal)
/// stores for stretches of at least 64 bytes (copies straight from source
/// storage only where their source runs average at least 64 KiB).
/// Streamed stores write memory without first reading each cache line in —
/// a third less memory traffic for a copy — but leave the target out of
/// cache, so they pay where the target is larger than the cache would keep
/// anyway.
///
/// Measured with `redist run` on the development machine (2 ranks, AMD
/// EPYC, 32 MiB last-level cache shared by both cores), f64
/// `cyclic(64),cyclic(64)@1x2` → `@2x1`, ordinary against streamed stores:
/// 4 MiB per rank 0.18 against 0.30 ms (the target stays in cache), 8 MiB
/// 1.3 against 0.64 ms, 64 MiB 12.1 against 5.5 ms.
///
/// ```
/// use redist::Streaming;
/// assert_eq!("auto".parse::<Streaming>().unwrap(), Streaming::Auto);
/// assert_eq!("always".parse::<Streaming>().unwrap(), Streaming::Above(0));
/// assert_eq!("8388608".parse::<Streaming>().unwrap(), Streaming::Above(8 << 20));
/// assert_eq!(Streaming::Never.to_string(), "never");
/// assert!("sometimes".parse::<Streaming>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Streaming {
    /// Where a rank writes more target than its share of the node's
    /// last-level cache (half of it, divided among the node's ranks; at
    /// least 1 MiB): 8 MiB for 2 ranks on the development machine.
    #[default]
    Auto,
    /// Never: ordinary stores only.
    Never,
    /// Where a rank writes at least this many bytes of target; `Above(0)`
    /// always streams.
    Above(usize),
}

impl FromStr for Streaming {
    type Err = RedistError;

    fn from_str(s: &str) -> Result<Streaming, RedistError> {
        match s {
            "auto" => Ok(Streaming::Auto),
            "never" => Ok(Streaming::Never),
            "always" => Ok(Streaming::Above(0)),
            _ => s
                .parse()
                .map(Streaming::Above)
                .map_err(|_| RedistError::InvalidArgument {
                    what: "streaming",
                    value: s.to_string(),
                    expected: "auto, never, always or a number of bytes".to_string(),
                }),
        }
    }
}

impl fmt::Display for Streaming {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Streaming::Auto => f.write_str("auto"),
            Streaming::Never => f.write_str("never"),
            Streaming::Above(0) => f.write_str("always"),
            Streaming::Above(n) => write!(f, "{n}"),
        }
    }
}

/// Default of [`Options::direct_min_run`].
pub const DIRECT_MIN_RUN: usize = 4096;

/// Default of [`Options::datatype_min_run`]: `0`, meaning runs of at least
/// [`DATATYPE_MIN_RUN_BYTES`] on average.
pub const DATATYPE_MIN_RUN: usize = 0;

/// Shortest average run, in bytes, that the default
/// [`Options::datatype_min_run`] describes to MPI by a derived datatype.
/// Measured with MPICH 4.0.2 (ch4:ucx, built without yaksa) on 2 ranks,
/// 4096×4096 f64 `cyclic(k),cyclic(k)@1x2` → `@2x1` exchanged as messages,
/// packed against datatypes: runs of 64 bytes 23.4 against 25.4 ms, of
/// 128 bytes 24.3 against 18.8 ms, of 512 bytes 24.9 against 16.9 ms. Its
/// datatype engine walks runs one by one, so runs of a few elements cost
/// far more (4096² `cyclic(5)` → `cyclic(8)`: 25.7 ms packed, 2.7 s as
/// datatypes).
pub const DATATYPE_MIN_RUN_BYTES: usize = 128;

/// Options of a [`Redistribution`](crate::Redistribution).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// How the target's ranks may be relabelled.
    pub remap: Remap,
    /// How messages are exchanged.
    pub strategy: Strategy,
    /// Largest number of elements in one point-to-point MPI message; longer
    /// messages are split. MPI counts are `i32`, so at most `i32::MAX`.
    pub max_message_elements: usize,
    /// Shortest average run (elements) for which one side of a message is
    /// described to MPI by a derived datatype over local storage instead of
    /// being packed into (or unpacked from) a buffer; `usize::MAX` always
    /// packs, `0` (the default) takes runs of at least
    /// [`DATATYPE_MIN_RUN_BYTES`] and, where either side of a message
    /// repeats a period of several different runs, describes only its
    /// receiving side (MPICH sends such typed messages more slowly than
    /// they are packed). A
    /// message described so on both sides moves with no copy of ours: MPI
    /// reads the source and writes the target.
    pub datatype_min_run: usize,
    /// Shortest average source run (elements) for which `async` sends a
    /// message as one MPI message per contiguous run straight from source
    /// storage, skipping the pack; `usize::MAX` always packs. Measured with
    /// MPICH on 2 ranks (4096×4096 f64, `cyclic(64),cyclic(64)@1x2` →
    /// `@2x1`): 22 ms packed, 18.5 ms sent run by run.
    pub direct_min_run: usize,
    /// Whether `async` lets a receiver on the sender's node copy a message
    /// straight from the sender's source storage, when that storage is
    /// shared ([`DistArray::shared_storage`](dist_array::DistArray::shared_storage)):
    /// one pass over the data instead of pack, transfer and unpack. Falls
    /// back to messages on every rank if any rank cannot map its peers'
    /// storage.
    pub node_direct: bool,
    /// When copies into target storage use streaming (non-temporal) stores.
    pub streaming: Streaming,
}

impl Options {
    /// The shortest average run, in elements of `elem_bytes` bytes, that is
    /// described by a derived datatype; `None` when datatypes are off.
    pub fn min_typed_run(&self, elem_bytes: usize) -> Option<usize> {
        match self.datatype_min_run {
            usize::MAX => None,
            0 => Some(DATATYPE_MIN_RUN_BYTES.div_ceil(elem_bytes.max(1)).max(1)),
            n => Some(n),
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            remap: Remap::None,
            strategy: Strategy::Auto,
            max_message_elements: i32::MAX as usize,
            datatype_min_run: DATATYPE_MIN_RUN,
            direct_min_run: DIRECT_MIN_RUN,
            node_direct: true,
            streaming: Streaming::Auto,
        }
    }
}
