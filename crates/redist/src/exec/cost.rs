//! The α–β cost model that `auto` uses to pick an exchange strategy.
//!
//! A message of `n` bytes costs `α + β·n`. α and β are measured once per
//! communicator with a ring exchange (small messages for α, 1 MiB ones for β),
//! agreed on by every rank (the maximum over ranks), and cached (one
//! all-reduce confirms every rank has it), so every
//! rank predicts the same costs and picks the same strategy. The predictions
//! use only the plan, which every rank holds identically:
//!
//! - `alltoallv`: `α·(R−1) + β·B`, with `B` the most bytes any rank sends or
//!   receives (MPI implementations exchange pairwise in `R−1` rounds);
//! - `scheduled`: `α·steps + β·C`, with `C` the schedule cost in bytes
//!   (Σ over steps of the longest message);
//! - `async`: `α·δ + β·B`, with `δ` the most partners of any rank
//!   (seed 000, eq. 12: `T = δ·T_s + (N/M)·T_d`).
//!
//! `auto` chooses between `async` and `alltoallv` only. Under this model
//! `scheduled` can never win (its steps are at least `δ` and its cost `C` at
//! least `B`), and it did not win when measured either: on one node, 2 to 8
//! ranks, it was as fast as `async` at best and up to ten times slower where
//! a grid-shape change makes every rank talk to every other (see
//! `docs/TUNING.md`). What it offers is not in the model: its buffers hold
//! one message in each direction instead of all of them, and no rank
//! receives from more than one sender at a time — reasons to choose it by
//! hand ([`Strategy::Scheduled`]).

use crate::{Plan, Strategy};
use mpi::collective::{CommunicatorCollectives, SystemOperation};
use mpi::point_to_point::{Destination, Source};
use mpi::topology::{Communicator, SimpleCommunicator};
use std::collections::HashMap;
use std::sync::Mutex;

/// Measured message costs of a communicator.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostModel {
    /// Seconds per message.
    pub alpha: f64,
    /// Seconds per byte.
    pub beta: f64,
}

impl CostModel {
    /// Predicted seconds of `strategy` for `plan` with elements of `elem` bytes.
    pub fn predict(&self, strategy: Strategy, plan: &Plan, elem: usize) -> f64 {
        let ranks = plan.source().ranks().max(plan.target().ranks());
        let (send, recv) = plan.rank_volumes();
        let most = send.iter().chain(&recv).copied().max().unwrap_or(0) as f64 * elem as f64;
        let s = plan.stats();
        if s.messages == 0 {
            return 0.0;
        }
        match strategy {
            Strategy::Alltoallv | Strategy::Auto => {
                self.alpha * (ranks.saturating_sub(1)) as f64 + self.beta * most
            }
            Strategy::Scheduled => {
                self.alpha * s.steps as f64 + self.beta * (s.schedule_cost * elem) as f64
            }
            Strategy::Async => self.alpha * s.max_partners as f64 + self.beta * most,
        }
    }
}

/// The cheaper of `async` and `alltoallv` for `plan` under `model`
/// (`alltoallv` only if it can address the data). Ties go to `async`, which
/// also sends long contiguous runs straight from source storage.
pub fn choose(model: &CostModel, plan: &Plan, elem: usize, alltoallv_fits: bool) -> Strategy {
    let mut best = (f64::INFINITY, Strategy::Async);
    let candidates: &[Strategy] = if alltoallv_fits {
        &[Strategy::Async, Strategy::Alltoallv]
    } else {
        &[Strategy::Async]
    };
    for &s in candidates {
        let t = model.predict(s, plan, elem);
        if t < best.0 {
            best = (t, s);
        }
    }
    best.1
}

/// Cached models, keyed by the communicator handle's bytes.
static MODELS: Mutex<Option<HashMap<Vec<u8>, CostModel>>> = Mutex::new(None);

/// The model of `comm`, measured on first use. Collective over `comm`: the
/// ranks agree (one all-reduce) on whether every one of them has the model
/// cached, since communicator handles are local and may be reused after a
/// communicator is freed; if any lacks it, all measure together.
pub fn model_for(comm: &SimpleCommunicator) -> CostModel {
    let k = super::mpi_raw::handle_key(comm);
    let cached = MODELS
        .lock()
        .ok()
        .and_then(|g| g.as_ref().and_then(|h| h.get(&k).copied()));
    let mine = match cached {
        Some(m) => [0.0, m.alpha, m.beta],
        None => [1.0, 0.0, 0.0],
    };
    let mut agreed = [0.0f64; 3];
    comm.all_reduce_into(&mine[..], &mut agreed[..], SystemOperation::max());
    let m = if agreed[0] == 0.0 {
        CostModel {
            alpha: agreed[1],
            beta: agreed[2],
        }
    } else {
        measure(comm)
    };
    if let Ok(mut g) = MODELS.lock() {
        g.get_or_insert_with(HashMap::new).insert(k, m);
    }
    m
}

/// Ring exchanges: small messages give α, 1 MiB ones β. Collective.
fn measure(comm: &SimpleCommunicator) -> CostModel {
    let n = comm.size();
    if n == 1 {
        return CostModel {
            alpha: 1e-6,
            beta: 1e-10,
        };
    }
    let me = comm.rank();
    let (next, prev) = ((me + 1) % n, (me + n - 1) % n);
    let time = |bytes: usize, reps: usize| -> f64 {
        let out = vec![0u8; bytes];
        let mut inp = vec![0u8; bytes];
        comm.barrier();
        let start = mpi::time();
        for _ in 0..reps {
            mpi::request::scope(|scope| {
                let r = comm
                    .process_at_rank(prev)
                    .immediate_receive_into(scope, &mut inp[..]);
                comm.process_at_rank(next).send(&out[..]);
                r.wait();
            });
        }
        (mpi::time() - start) / reps as f64
    };
    let small = time(8, 20);
    let big_bytes = 1 << 20;
    let big = time(big_bytes, 4);
    let mine = [
        small.max(1e-9),
        ((big - small) / big_bytes as f64).max(1e-13),
    ];
    let mut agreed = [0.0f64; 2];
    comm.all_reduce_into(&mine[..], &mut agreed[..], SystemOperation::max());
    CostModel {
        alpha: agreed[0],
        beta: agreed[1],
    }
}
