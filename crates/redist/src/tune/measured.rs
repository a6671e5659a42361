//! A choice measured to be the fastest for one redistribution: which
//! exchange, whether messages go as derived datatypes or packed, and
//! whether ranks of a node copy straight from each other's storage. The
//! tuner measures it; wisdom keeps it for later jobs; the decision reads it
//! as one more agreed fact ([`Options::measured`](crate::Options::measured)).

use crate::error::RedistError;
use crate::options::Strategy;
use std::fmt;
use std::str::FromStr;

/// How a redistribution moves, as measured: what `auto` runs instead of its
/// rules when this is known.
///
/// ```
/// use redist::{Measured, Strategy};
/// let m: Measured = "async,typed,node-direct".parse().unwrap();
/// assert_eq!(m, Measured { strategy: Strategy::Async, typed: true, node_direct: true, min_run: None });
/// assert_eq!(m.to_string(), "async,typed,node-direct");
/// assert_eq!("alltoallv,packed,messages".parse::<Measured>().unwrap().node_direct, false);
/// // A datatype threshold measured near auto's: runs of 8 elements and more.
/// let t: Measured = "async,typed(8),messages".parse().unwrap();
/// assert_eq!(t.min_run, Some(8));
/// assert_eq!(t.to_string(), "async,typed(8),messages");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Measured {
    /// The exchange: `async`, `alltoallv` or `combined` (never `auto`;
    /// `scheduled` is chosen for its memory, not measured).
    pub strategy: Strategy,
    /// Whether messages whose runs are long enough go as derived datatypes
    /// (`auto`'s threshold, neither probed nor tried); else every message
    /// is packed.
    pub typed: bool,
    /// Whether receivers copy straight from the shared storage of senders
    /// on their node (`async`).
    pub node_direct: bool,
    /// With `typed`, the shortest average run a datatype describes, in
    /// elements, where a threshold near `auto`'s was measured faster (as
    /// [`Options::datatype_min_run`](crate::Options::datatype_min_run) =
    /// [`MinRun::Elements`](crate::MinRun::Elements)); `None`: `auto`'s
    /// own rule.
    pub min_run: Option<usize>,
}

impl fmt::Display for Measured {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let routes = match (self.typed, self.min_run) {
            (true, Some(n)) => format!("typed({n})"),
            (true, None) => "typed".to_string(),
            (false, _) => "packed".to_string(),
        };
        let node = if self.node_direct {
            "node-direct"
        } else {
            "messages"
        };
        write!(f, "{},{routes},{node}", self.strategy)
    }
}

impl FromStr for Measured {
    type Err = RedistError;

    fn from_str(s: &str) -> Result<Measured, RedistError> {
        let invalid = || RedistError::InvalidArgument {
            what: "measured choice",
            value: s.to_string(),
            expected: "STRATEGY,ROUTES,NODE: async, alltoallv or combined; typed, typed(N) \
                       (N elements, N > 0) or packed; node-direct or messages (such as \
                       async,typed,node-direct)"
                .to_string(),
        };
        let parts: Vec<&str> = s.trim().split(',').map(str::trim).collect();
        let [strategy, routes, node] = parts.as_slice() else {
            return Err(invalid());
        };
        let strategy = match strategy.parse::<Strategy>() {
            Ok(s @ (Strategy::Async | Strategy::Alltoallv | Strategy::Combined)) => s,
            _ => return Err(invalid()),
        };
        let (typed, min_run) = match *routes {
            "typed" => (true, None),
            "packed" => (false, None),
            r => match (r.strip_prefix("typed("))
                .and_then(|n| n.strip_suffix(')'))
                .and_then(|n| n.parse::<usize>().ok())
            {
                Some(n) if n > 0 => (true, Some(n)),
                _ => return Err(invalid()),
            },
        };
        let node_direct = match *node {
            "node-direct" => true,
            "messages" => false,
            _ => return Err(invalid()),
        };
        Ok(Measured {
            strategy,
            typed,
            node_direct,
            min_run,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measured_choices_read_back_as_written() {
        for strategy in [Strategy::Async, Strategy::Alltoallv, Strategy::Combined] {
            for typed in [false, true] {
                for node_direct in [false, true] {
                    for min_run in [None, Some(1), Some(32)]
                        .into_iter()
                        .filter(|m| typed || m.is_none())
                    {
                        let m = Measured {
                            strategy,
                            typed,
                            node_direct,
                            min_run,
                        };
                        assert_eq!(m.to_string().parse::<Measured>().unwrap(), m);
                    }
                }
            }
        }
        for bad in [
            "",
            "async",
            "auto,typed,messages",
            "scheduled,packed,messages",
            "async,typed",
            "async,typed,messages,x",
            "async,fast,messages",
            "async,typed(0),messages",
            "async,typed(x),messages",
            "async,typed(8,messages",
            "async,packed(8),messages",
        ] {
            assert!(bad.parse::<Measured>().is_err(), "{bad:?}");
        }
    }
}
