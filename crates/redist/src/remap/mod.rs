//! Processor remapping: choosing where each target process lives so that as
//! much data as possible stays where it already is.
//!
//! A redistribution fixes *which* indices each target process owns, but the
//! target's processes are only logical: target position `q` may be placed on
//! any physical processor. A **relabelling** of a 1-D target with `Q`
//! processes is a vector `perm` of length `Q`, where `perm[q]` is the physical
//! processor on which logical target process `q` is placed. Physical ids below
//! the source process count `P` coincide with source processes; the data kept
//! local is `Σ_q volume(perm[q], q)`, where ids `≥ P` hold no source data and
//! contribute nothing ([`kept`]).
//!
//! Two tools live here:
//!
//! - the exact referee, [`assign_max`]: a maximum-weight perfect assignment
//!   (Hungarian method with potentials, O(n³)), used on the volume matrix of
//!   one dimension ([`optimal`]) or of whole ranks;
//! - the closed forms of the papers, per dimension ([`fn@closed_form`]): a
//!   relabelling computed in O(Q) from the block sizes and process counts.
//!
//! # Closed forms
//!
//! Throughout, the source is `BLOCK-CYCLIC(s)` over `P` processes and the
//! target `BLOCK-CYCLIC(t)` over `Q`, both with their first block on process 0
//! (other first processes: below).
//!
//! **Splitting blocks, `s = k·t`** ([`split_blocks`]; Hsu, Chung, Yang and
//! Dow, *A Generalized Processor Mapping Technique for Array Redistribution*,
//! IEEE TPDS 12(7), 2001 — "seed 003" — eqs. 1, 2 and 5). Source block `B`
//! lives on processor `B mod P` and is cut into the `k` target blocks
//! `kB, …, kB+k−1`, which sit on target positions `(kB + i) mod Q`. So
//! processor `p`'s first block starts on position `k·p mod Q`, and the
//! positions `(k·p + i) mod Q, i < k mod Q`, receive one block more of it than
//! the others. Place processor `p` (for `p < Q`) on
//!
//! ```text
//! pos(p) = (k·p + ⌊p·g/Q⌋) mod Q,        g = gcd(k, Q),     perm[pos(p)] = p.
//! ```
//!
//! `k·p mod Q` takes each multiple of `g` exactly once per `Q/g` consecutive
//! processors; the term `⌊p·g/Q⌋ < g ≤ k mod Q` moves the `g` processors that
//! share a start onto consecutive positions, still inside their windows (when
//! `Q | k` every position is as good), and makes `pos` a bijection of `0..Q`. The result is always a permutation of
//! `0..Q`: when `Q > P` the ids `P..Q` are processors without source data
//! (seed 003's "destination processors that are not source processors"); when
//! `Q < P` only sources `0..Q` receive a position.
//!
//! **Merging blocks, `t = k·s`** ([`merge_blocks`]; seed 003, eqs. 3, 4 and 6).
//! Target block `B` on position `B mod Q` gathers source blocks
//! `kB, …, kB+k−1`, held by processors `(kB + i) mod P`. Place target position
//! `j` on
//!
//! ```text
//! perm[j] = (k·j + ⌊j·g/P⌋) mod P,       g = gcd(k, P),     for j < min(P, Q),
//! perm[j] = j                                                for P ≤ j < Q.
//! ```
//!
//! For `P = Q` this is the inverse of the split relabelling. When `Q < P` it
//! may name processors `≥ Q`, which a caller needing a permutation of `0..Q`
//! cannot use: [`ClosedForm::is_permutation`] says so, and [`fn@closed_form`]
//! returns [`RedistError::Remap`].
//!
//! **BLOCK ↔ CYCLIC(c)** ([`block_to_cyclic`], [`cyclic_to_block`]; Kalns and
//! Ni, *Processor Mapping Techniques Toward Efficient Data Redistribution*,
//! IEEE TPDS 6(12), 1995 — "seed 004" — eq. 1 and Lemma 5). With `P` processes
//! on both sides, `BLOCK` blocks of `b` and `z = b / c` an integer, logical
//! process `i` of the block layout goes to cyclic "place holder"
//! `f(i) = i·z mod P`; when `g = gcd(z, P) > 1`, `g` processes share a place
//! holder and may take the `g` consecutive ones from `f(i)` in any order. We
//! take them in increasing order: `perm[(i·z mod P) + ⌊i·g/P⌋] = i`, which is
//! exactly the split relabelling with `k = z`. Their maximum hit ratio is
//! `c·P·⌈z/P⌉ / N` (each process keeps `c·⌈z/P⌉` of its `b` elements).
//!
//! **First processes.** With first processes `fs` (source) and `ft`
//! (target), source block `B` is on `(B + fs) mod P` and target block `b` on
//! `(b + ft) mod Q`: the same problem with processes renamed. For merges and
//! Kalns–Ni the zero-offset relabelling `perm₀` is rotated:
//! `perm[j] = σ(perm₀[(j − ft) mod Q])`, with `σ(x) = (x + fs) mod P` for
//! sources and `σ(x) = x` for ids `≥ P`; it keeps exactly as much as `perm₀`.
//! For splits we shift positions instead of ids — processor `x < Q` goes to
//! `(pos(x) + ft − k·fs) mod Q` — which keeps as much over whole cycles
//! (there only `k·(x − fs)` modulo `gcd(k·P, Q)` matters) and keeps the ids in
//! `0..Q` even when `Q < P`. Either way `block+1@3 → block@3` gets
//! `perm = [1, 2, 0]` and moves nothing.
//!
//! # What we found (checked against the exact optimum in the tests)
//!
//! The OCR of seed 003 damaged its formulas; we re-derived each one from the
//! figures and from the proofs, and let [`assign_max`] referee.
//!
//! - **Eqs. 1, 2, 5 (split).** Printed as `(j mod k)·⌈M/k⌉ + ⌈j/k⌉`,
//!   `(j mod k)·⌈Q/k⌉ = ⌊j/k⌋` and `(j mod k)·⌊Q/k⌋ + ⌊j/k⌋`. Fig. 4
//!   (`M = 5, k = 2` → sequence `0, 3, 1, 4, 2`), Fig. 5 (`Q = 8` →
//!   `0, 4, 1, 5, 2, 6, 3, 7`) and Fig. 8 fix them as
//!   `(j mod k)·⌈Q/k⌉ + ⌊j/k⌋` (position `j` → processor). Even repaired, that
//!   expression equals what the proof of Lemma 3 uses (`α(i·k mod M) = i`)
//!   only when `Q mod k ∈ {0, k−1}`. Otherwise it is no permutation
//!   (`Q = 7, k = 3` yields `0, 3, 6, 1, 4, 7, 2`), or — for every `k > Q` — it
//!   is the identity and misses the optimum Lemma 3 claims
//!   (`P = Q = 3, k = 5, r = 1, n = 15`: 5 kept, optimum 6). `pos(p)` above is
//!   the form the proofs describe, with Kalns–Ni's spreading of processes that
//!   share a start; it agrees with all three figures.
//! - **Eqs. 3, 4, 6 (merge).** Printed as `(j mod k)·⌈M/k⌉ + ⌊j·k/M⌋`, they
//!   contradict Fig. 6 (`M = 5, k = 2`: they give `0, 3, …`, the figure
//!   `0, 2, 4, 1, 3`). We derived `perm[j]` above from the sources of the
//!   target block; it can be written `(j·k) mod P + ⌊j·k / lcm(k, P)⌋`
//!   (`j < P`), perhaps what the damaged print said, and reproduces Fig. 6
//!   and its 20 → 50 elements.
//! - **Eqs. 7–15 (local data per global complete cycle, GCC =
//!   `lcm(s·P, t·Q)`).** Eq. 10 prints `⌊k/M⌋·M·r`; it must be `⌈k/M⌉·M·r`
//!   (the paper's own example `M = 50, r = 2, k = 2` has 100, not 0). Eq. 12
//!   lacks the factor `m = LCC_s / (k·r)` on `⌊k/Q⌋·P`, and eqs. 12–15 hold
//!   for `P ≤ Q` only: with `P > Q` processes `≥ Q` have no target position,
//!   and at most `⌈k/Q⌉·Q·r` can stay. Section 6.2's "`k = 4`, GCC = 500" is
//!   `k = 5` (GCC = `M·k·r`, and eqs. 7–9 then give its 12). See
//!   `kept_per_cycle_unmapped` and `kept_per_cycle_mapped` in the tests of
//!   `closed_form.rs`.
//!
//! **Where the closed forms are optimal** (equal to the optimum over all
//! relabellings with ids in `0..max(P, Q)`): every split and every merge, any
//! `k` (also `k ≥ P`), any `P`, `Q` and first processes, whenever the extent
//! is a whole number of global complete cycles — not only in seed 003's
//! "optimal type" (`Q | k·P` for a split), where the paper claims it, but in
//! its "general type" too, where it only claims a reduction. The reason: over
//! a whole cycle a processor's blocks start on every position congruent to
//! its first start modulo `h = gcd(k·P, Q)`, so what it keeps depends only on
//! its position modulo `h` (the best class: `k mod h` residues from its
//! start), and the spreading term `⌊x·g/Q⌋ < g ≤ k mod h` never leaves it
//! (when `h | k` every position is as good). Fig. 7 (`P = 4 → Q = 6, k = 2, r = 5,
//! n = 120`, general type) keeps 20 with the mapping, the identity and the
//! optimum alike — the paper's "no gain" is the optimum; Fig. 8 keeps 30 of
//! 30. Kalns–Ni's BLOCK ↔ CYCLIC(c) is optimal when `n = b·P`, as they assume.
//! Splits always give a permutation of `0..Q`, so they also equal
//! [`optimal`] then.
//!
//! **Where they fall short:**
//!
//! - **Partial cycles.** An extent that ends inside a global complete cycle —
//!   including `BLOCK` with a short last block, `n < b·P` — can lose, since
//!   the rule aims at whole cycles: `BLOCK` over 4 processes with `n = 13` or
//!   `14` (`b = 4`) → `CYCLIC(2)` keeps 6 where the optimum keeps 7 or 8
//!   (with `n = 16` both keep 8).
//! - **Merges onto fewer processes** (`Q < P`) may need processors `≥ Q`
//!   (`CYCLIC` over 4 → `CYCLIC(2)` over 2, `n = 8`: position 1 wants
//!   processor 2; 4 kept, but the best permutation of `0..2` keeps 2). No
//!   permutation of `0..Q` then: [`fn@closed_form`] refuses.
//! - Closed forms are per dimension; composing them over an n-D grid is exact
//!   only for whole cycles on grids of the same shape (see DESIGN.md).

mod assignment;
mod axis;
mod closed_form;
#[cfg(test)]
mod test_util;

pub use assignment::assign_max;
pub use axis::{kept, optimal};
pub use closed_form::{
    block_to_cyclic, closed_form, closed_form_mapping, cyclic_to_block, merge_blocks, split_blocks,
    ClosedForm, ClosedFormRule,
};

use crate::Remap;
use crate::{AxisPlan, RedistError};
use dist_array::Layout;
use procgrid::{coords_to_rank, rank_to_coords, Order};

/// Most target ranks [`Remap::Optimal`] solves for: 4096 (an assignment on a
/// 4096 × 4096 matrix, O(R³): seconds). Above, use a closed form or none.
pub const OPTIMAL_RANKS_MAX: usize = 1 << 12;

/// How many (source rank, target position) pairs exchange data, counted
/// from the per-dimension volumes without listing them: O(ranks × dims ×
/// processes per dimension).
pub(crate) fn message_count(source: &Layout, axes: &[AxisPlan]) -> usize {
    // Per dimension and source coordinate: target coordinates receiving anything.
    let partners: Vec<Vec<usize>> = axes
        .iter()
        .map(|plan| {
            (0..plan.source().procs())
                .map(|p| {
                    (0..plan.target().procs())
                        .filter(|&q| plan.volume(p, q) > 0)
                        .count()
                })
                .collect()
        })
        .collect();
    (0..source.ranks())
        .map(|a| {
            let coords = source.coords_of_rank(a).unwrap_or_default();
            coords
                .iter()
                .zip(&partners)
                .map(|(&p, list)| list.get(p).copied().unwrap_or(0))
                .fold(1usize, usize::saturating_mul)
        })
        .fold(0usize, usize::saturating_add)
}

/// Non-zero volumes `(source rank, target position, elements)` of an n-D
/// redistribution, target positions being row-major indices of the target's
/// grid coordinates (before any rank map).
pub(crate) fn position_volumes(
    source: &Layout,
    target: &Layout,
    axes: &[AxisPlan],
) -> Vec<(usize, usize, usize)> {
    let grid = target.grid_extents();
    let mut out = vec![];
    for a in 0..source.ranks() {
        let coords = source.coords_of_rank(a).expect("rank within layout");
        // Per dimension, the target coordinates receiving anything, with volumes.
        let per_dim: Vec<Vec<(usize, usize)>> = axes
            .iter()
            .zip(&coords)
            .map(|(plan, &p)| {
                (0..plan.target().procs())
                    .map(|q| (q, plan.volume(p, q)))
                    .filter(|&(_, v)| v > 0)
                    .collect()
            })
            .collect();
        let mut partial: Vec<(Vec<usize>, usize)> = vec![(vec![], 1)];
        for list in &per_dim {
            partial = partial
                .into_iter()
                .flat_map(|(c, v)| {
                    list.iter().map(move |&(q, w)| {
                        let mut c = c.clone();
                        c.push(q);
                        (c, v * w)
                    })
                })
                .collect();
        }
        for (c, v) in partial {
            let position =
                coords_to_rank(&c, grid, Order::RowMajor).expect("coordinates within grid");
            out.push((a, position, v));
        }
    }
    out
}

/// The target's rank map as `remap` allows, given the volumes `by_position`
/// from [`position_volumes`]: the target layout's own map, the exact optimum
/// ([`assign_max`] on the rank × position volume matrix), or the composition
/// of per-dimension closed forms ([`fn@closed_form`]).
pub(crate) fn target_rank_map(
    source: &Layout,
    target: &Layout,
    by_position: &[(usize, usize, usize)],
    remap: Remap,
) -> Result<Vec<usize>, RedistError> {
    match remap {
        Remap::None => Ok(target.rank_map().to_vec()),
        Remap::Optimal => optimal_rank_map(source, target, by_position),
        Remap::ClosedForm => closed_form_rank_map(source, target),
    }
}

/// The rank map that keeps the most data local: a maximum-weight assignment
/// of ranks to target positions.
fn optimal_rank_map(
    source: &Layout,
    target: &Layout,
    by_position: &[(usize, usize, usize)],
) -> Result<Vec<usize>, RedistError> {
    let n = target.ranks();
    if n > OPTIMAL_RANKS_MAX {
        return Err(RedistError::Limit {
            what: "target ranks of an optimal remapping (an assignment on a ranks × ranks matrix)",
            value: n as u128,
            limit: OPTIMAL_RANKS_MAX as u128,
        });
    }
    let mut weights = vec![vec![0u64; n]; n];
    for &(rank, position, v) in by_position {
        if rank < n {
            weights[rank][position] += v as u64;
        }
    }
    let _ = source;
    assign_max(&weights)
}

/// The composition of per-dimension closed-form relabellings.
fn closed_form_rank_map(source: &Layout, target: &Layout) -> Result<Vec<usize>, RedistError> {
    let refuse = |reason: String| RedistError::Remap {
        remap: Remap::ClosedForm.to_string(),
        reason,
    };
    if source.grid_extents() != target.grid_extents() {
        return Err(refuse(format!(
            "closed forms relabel each dimension separately and need grids of the same shape, \
             not {:?} and {:?}; use Remap::Optimal",
            source.grid_extents(),
            target.grid_extents()
        )));
    }
    let mut perms = vec![];
    for (d, (s, t)) in source.axes().iter().zip(target.axes()).enumerate() {
        match closed_form(s, t)? {
            Some(p) => perms.push(p),
            None => {
                return Err(refuse(format!(
                    "no closed form covers dimension {d} ({} -> {}); they cover block sizes \
                     where one divides the other; use Remap::Optimal",
                    source.spec().dists()[d],
                    target.spec().dists()[d]
                )))
            }
        }
    }
    let grid = target.grid_extents();
    (0..target.ranks())
        .map(|position| {
            let c = rank_to_coords(position, grid, Order::RowMajor).expect("position within grid");
            let physical: Vec<usize> = c.iter().zip(&perms).map(|(&x, p)| p[x]).collect();
            Ok(source.rank_of_coords(&physical)?)
        })
        .collect()
}
