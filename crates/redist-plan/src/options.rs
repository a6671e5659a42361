//! What a plan may do besides moving data: how the target's ranks may be
//! relabelled ([`Remap`]) and when copies into target storage stream
//! ([`Streaming`]). Data only: the planner and the copy programs read it.

use crate::error::PlanError;
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
    type Err = PlanError;

    fn from_str(s: &str) -> Result<Remap, PlanError> {
        match s {
            "none" => Ok(Remap::None),
            "closed-form" => Ok(Remap::ClosedForm),
            "optimal" => Ok(Remap::Optimal),
            _ => Err(PlanError::InvalidArgument {
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

/// When copies into a rank's target storage use streaming (non-temporal)
/// stores for long stretches (copies straight from source storage only
/// where their source runs are long too; see [`crate::tuning`]). Streamed
/// stores write memory without first reading each cache line in — a third
/// less memory traffic for a copy — but leave the target out of cache, so
/// they pay where the target is larger than the cache would keep anyway.
/// What was measured: `docs/TUNING.md`.
///
/// ```
/// use redist_plan::Streaming;
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
    /// least [`STREAM_AUTO_MIN_BYTES`](crate::tuning::STREAM_AUTO_MIN_BYTES)).
    #[default]
    Auto,
    /// Never: ordinary stores only.
    Never,
    /// Where a rank writes at least this many bytes of target; `Above(0)`
    /// always streams.
    Above(usize),
}

impl FromStr for Streaming {
    type Err = PlanError;

    fn from_str(s: &str) -> Result<Streaming, PlanError> {
        match s {
            "auto" => Ok(Streaming::Auto),
            "never" => Ok(Streaming::Never),
            "always" => Ok(Streaming::Above(0)),
            _ => s
                .parse()
                .map(Streaming::Above)
                .map_err(|_| PlanError::InvalidArgument {
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
