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
/// assert_eq!(m, Measured { strategy: Strategy::Async, typed: true, node_direct: true, min_run: None, direct_run: None });
/// assert_eq!(m.to_string(), "async,typed,node-direct");
/// assert_eq!("alltoallv,packed,messages".parse::<Measured>().unwrap().node_direct, false);
/// // A datatype threshold measured near auto's: runs of 8 elements and more.
/// let t: Measured = "async,typed(8),messages".parse().unwrap();
/// assert_eq!(t.min_run, Some(8));
/// assert_eq!(t.to_string(), "async,typed(8),messages");
/// // Messages sent straight from source runs of 2048 elements and more.
/// let d: Measured = "async,packed,messages,direct(2048)".parse().unwrap();
/// assert_eq!(d.direct_run, Some(2048));
/// assert_eq!(d.to_string(), "async,packed,messages,direct(2048)");
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
    /// Under `async`, the shortest average source run, in elements, of a
    /// message sent run by run straight from source storage, where a
    /// threshold near `auto`'s was measured faster (as
    /// [`Options::direct_min_run`](crate::Options::direct_min_run) =
    /// [`MinRun::Elements`](crate::MinRun::Elements); text: a fourth field
    /// `direct(N)`); `None`: `auto`'s own.
    pub direct_run: Option<usize>,
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
        write!(f, "{},{routes},{node}", self.strategy)?;
        match self.direct_run {
            Some(n) => write!(f, ",direct({n})"),
            None => Ok(()),
        }
    }
}

impl FromStr for Measured {
    type Err = RedistError;

    fn from_str(s: &str) -> Result<Measured, RedistError> {
        let invalid = || RedistError::InvalidArgument {
            what: "measured choice",
            value: s.to_string(),
            expected: "STRATEGY,ROUTES,NODE[,direct(N)]: async, alltoallv or combined; \
                       typed, typed(N) (N elements, N > 0) or packed; node-direct or messages \
                       (such as async,typed,node-direct or async,packed,messages,direct(2048))"
                .to_string(),
        };
        let parts: Vec<&str> = s.trim().split(',').map(str::trim).collect();
        let (strategy, routes, node, direct) = match parts.as_slice() {
            [s, r, n] => (s, r, n, None),
            [s, r, n, d] => (s, r, n, Some(*d)),
            _ => return Err(invalid()),
        };
        let direct_run = match direct.map(|d| parenthesised(d, "direct")) {
            None => None,
            Some(Some(n)) => Some(n),
            Some(None) => return Err(invalid()),
        };
        let strategy = match strategy.parse::<Strategy>() {
            Ok(s @ (Strategy::Async | Strategy::Alltoallv | Strategy::Combined)) => s,
            _ => return Err(invalid()),
        };
        let (typed, min_run) = match *routes {
            "typed" => (true, None),
            "packed" => (false, None),
            r => match parenthesised(r, "typed") {
                Some(n) => (true, Some(n)),
                None => return Err(invalid()),
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
            direct_run,
        })
    }
}

/// The positive count `N` of `word(N)`, if `s` is that.
fn parenthesised(s: &str, word: &str) -> Option<usize> {
    (s.strip_prefix(word))
        .and_then(|r| r.strip_prefix('('))
        .and_then(|r| r.strip_suffix(')'))
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|&n| n > 0)
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
                        for direct_run in [None, Some(2048)] {
                            let m = Measured {
                                strategy,
                                typed,
                                node_direct,
                                min_run,
                                direct_run,
                            };
                            assert_eq!(m.to_string().parse::<Measured>().unwrap(), m);
                        }
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
            "async,packed,messages,direct(0)",
            "async,packed,messages,direct",
            "async,packed,messages,typed(4)",
            "async,packed,messages,direct(4),x",
        ] {
            assert!(bad.parse::<Measured>().is_err(), "{bad:?}");
        }
    }
}
