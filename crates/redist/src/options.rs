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

/// Default of [`Options::direct_min_run`].
pub const DIRECT_MIN_RUN: usize = 4096;

/// Default of [`Options::datatype_min_run`]: derived datatypes are off by
/// default. Measured with MPICH 4.0 on 2 ranks (4096×4096 f64,
/// `cyclic(64),cyclic(64)@1x2` → `@2x1`): packing with our own loops took
/// 22 ms per execution, an `MPI_Alltoallw` over derived datatypes 28–37 ms
/// and non-blocking sends of them 39–50 ms. That MPICH is built
/// `--without-yaksa`, its faster datatype engine. Other MPI libraries may
/// differ; set the option to try them.
pub const DATATYPE_MIN_RUN: usize = usize::MAX;

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
    /// packs. `async` always receives into a buffer.
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
        }
    }
}
