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
/// assert_eq!(m, Measured { strategy: Strategy::Async, typed: true, node_direct: true });
/// assert_eq!(m.to_string(), "async,typed,node-direct");
/// assert_eq!("alltoallv,packed,messages".parse::<Measured>().unwrap().node_direct, false);
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
}

impl fmt::Display for Measured {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let routes = if self.typed { "typed" } else { "packed" };
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
            expected: "STRATEGY,ROUTES,NODE: async, alltoallv or combined; typed or packed; \
                       node-direct or messages (such as async,typed,node-direct)"
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
        let typed = match *routes {
            "typed" => true,
            "packed" => false,
            _ => return Err(invalid()),
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
                    let m = Measured {
                        strategy,
                        typed,
                        node_direct,
                    };
                    assert_eq!(m.to_string().parse::<Measured>().unwrap(), m);
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
        ] {
            assert!(bad.parse::<Measured>().is_err(), "{bad:?}");
        }
    }
}
