//! The α–β cost model that `auto` picks an exchange strategy by.
//!
//! A message of `n` bytes costs `α + β·n`. With `R` ranks, `δ` the most
//! partners a rank sends to and `B` the most bytes a rank sends or
//! receives:
//!
//! - `alltoallv`: `α·(R−1) + β·B` (MPI implementations exchange pairwise
//!   in `R−1` rounds);
//! - `async`: `α·δ + β·B` (seed 000, eq. 12: `T = δ·T_s + (N/M)·T_d`);
//! - `scheduled`: `α·steps + β·C`, with `C` the schedule's cost (Σ over
//!   steps of the longest message) — never below `async`'s (steps ≥ δ,
//!   `C ≥ B`), so `auto` does not consider it (see
//!   [`Strategy::Scheduled`]).
//!
//! `auto` takes the strategy whose prediction is lowest for *every* α and β
//! that could be measured — one whose coefficients of α and β are both no
//! larger than every other candidate's. Since `δ ≤ R − 1`, `async` is such
//! a strategy for every redistribution: `auto` needs neither α nor β, and
//! measures neither (an earlier version measured them with a ring exchange
//! when the first redistribution of a communicator was built — several
//! collective rounds, a tenth of a second and more on a node with more
//! ranks than cores — to reach the same choice). The figures it needs come
//! with the agreement all-reduce.
//!
//! ```
//! use redist::cost::{choose, Load};
//! use redist::Strategy;
//! let load = Load { ranks: 64, max_partners: 4, max_bytes: 1 << 20 };
//! assert_eq!(choose(&load, true), Strategy::Async);
//! ```

use crate::Strategy;

/// What the model needs to know of a redistribution, over all ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Load {
    /// Ranks of the communicator.
    pub ranks: usize,
    /// The most ranks a rank sends to (`δ`).
    pub max_partners: usize,
    /// The most bytes a rank sends or receives (`B`).
    pub max_bytes: usize,
}

/// The coefficients of α and β in the predicted time of `strategy`
/// (never `Auto`, `Scheduled` predicted at its floor `α·δ + β·B`).
pub fn coefficients(strategy: Strategy, load: &Load) -> (usize, usize) {
    match strategy {
        Strategy::Alltoallv => (load.ranks.saturating_sub(1), load.max_bytes),
        Strategy::Async | Strategy::Scheduled | Strategy::Combined | Strategy::Auto => {
            (load.max_partners, load.max_bytes)
        }
    }
}

/// Predicted seconds of `strategy` under message costs `alpha` (seconds per
/// message) and `beta` (seconds per byte).
pub fn predict(strategy: Strategy, load: &Load, alpha: f64, beta: f64) -> f64 {
    let (a, b) = coefficients(strategy, load);
    alpha * a as f64 + beta * b as f64
}

/// The strategy `auto` runs: among `async` and (when one `MPI_Alltoallv`
/// can address the data, `alltoallv_fits`) `alltoallv`, the one predicted
/// no slower than the other for every α and β; `async` on ties, since it
/// also sends long contiguous runs straight from source storage and copies
/// straight from shared storage between ranks of a node.
pub fn choose(load: &Load, alltoallv_fits: bool) -> Strategy {
    let async_ = coefficients(Strategy::Async, load);
    let all = coefficients(Strategy::Alltoallv, load);
    let dominates = |x: (usize, usize), y: (usize, usize)| x.0 <= y.0 && x.1 <= y.1;
    if alltoallv_fits && dominates(all, async_) && !dominates(async_, all) {
        Strategy::Alltoallv
    } else {
        Strategy::Async
    }
}
