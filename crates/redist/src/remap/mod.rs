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
//!   one dimension ([`optimal`], [`optimal_unrestricted`]) or of whole ranks;
//! - the closed forms of the papers, per dimension ([`closed_form`]): a
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
//! cannot use: [`ClosedForm::is_permutation`] says so, and [`closed_form`]
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
//!   [`kept_per_cycle_unmapped`] and [`kept_per_cycle_mapped`].
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
//!   permutation of `0..Q` then: [`closed_form`] refuses.
//! - Closed forms are per dimension; composing them over an n-D grid is exact
//!   only for whole cycles on grids of the same shape (see DESIGN.md).

use crate::arith::{gcd, mul_div, mul_mod};
use crate::{AxisPlan, RedistError};
use dist_array::AxisMap;
use std::fmt;
use std::ops::{Add, AddAssign, Sub, SubAssign};

// ---------------------------------------------------------------------------
// The exact referee
// ---------------------------------------------------------------------------

/// Integer type of the potentials: `i64` when it cannot overflow, else `i128`.
trait Potential: Copy + Ord + Add<Output = Self> + Sub<Output = Self> + AddAssign + SubAssign {
    const ZERO: Self;
    const INF: Self;
    fn from_u64(x: u64) -> Self;
}

impl Potential for i64 {
    const ZERO: Self = 0;
    const INF: Self = i64::MAX;
    fn from_u64(x: u64) -> Self {
        x as i64
    }
}

impl Potential for i128 {
    const ZERO: Self = 0;
    const INF: Self = i128::MAX;
    fn from_u64(x: u64) -> Self {
        x as i128
    }
}

/// Bids per row allowed in the augmenting row reduction of
/// [`min_cost_assignment`].
const ARR_BIDS_PER_ROW: usize = 8;

/// Minimum-cost perfect assignment on the `n × n` row-major matrix `cost`
/// (entries `≥ 0`). Returns `row_of[col]`.
///
/// Invariants: `cost[i][j] − u[i] − v[j] ≥ 0` everywhere (reduced costs),
/// `= 0` on matched pairs. A cheap start (column reduction, greedy matching
/// on tight pairs, a bounded augmenting row reduction) matches most rows;
/// then each remaining row is added by a shortest augmenting path: Dijkstra
/// on reduced costs to the nearest free column, a shift of the potentials by
/// the distances, a flip of the path. O(n³) worst case, O(n²) memory.
fn min_cost_assignment<T: Potential>(n: usize, cost: &[T]) -> Vec<usize> {
    const FREE: usize = usize::MAX;
    let row = |i: usize| &cost[i * n..(i + 1) * n];
    let mut u = vec![T::ZERO; n];
    let mut v = vec![T::ZERO; n];
    let mut row_of = vec![FREE; n];
    let mut col_of = vec![FREE; n];
    // Start from potentials that already make many pairs tight (column, then
    // row reduction) and match greedily along tight pairs: rows with equal or
    // near-equal preferences then need no long searches.
    for (j, vj) in v.iter_mut().enumerate() {
        *vj = (0..n).map(|i| cost[i * n + j]).min().unwrap_or(T::ZERO);
    }
    for j in 0..n {
        if let Some(i) = (0..n).find(|&i| col_of[i] == FREE && row(i)[j] == v[j]) {
            row_of[j] = i;
            col_of[i] = j;
        }
    }
    let mut free_rows: Vec<usize> = (0..n).filter(|&i| col_of[i] == FREE).collect();
    // Augmenting row reduction (Jonker and Volgenant, 1987): a free row takes
    // its cheapest column and lowers that column's price by the gap to its
    // second cheapest, so it stays on a cheapest column; the row it displaces
    // bids next. Every matched row stays on one of its cheapest columns, so
    // the potentials below are feasible at any point, and a budget of O(n)
    // bids (O(n²) work) bounds price wars.
    let mut budget = ARR_BIDS_PER_ROW * n + 64;
    for _ in 0..2 {
        let mut queue = std::mem::take(&mut free_rows);
        let mut k = 0;
        while k < queue.len() && budget > 0 {
            budget -= 1;
            let i = queue[k];
            k += 1;
            let (mut j1, mut m1, mut j2, mut m2) = (FREE, T::INF, FREE, T::INF);
            for (j, (&c, &vj)) in row(i).iter().zip(&v).enumerate() {
                let h = c - vj;
                if h < m2 {
                    if h < m1 {
                        (j2, m2) = (j1, m1);
                        (j1, m1) = (j, h);
                    } else {
                        (j2, m2) = (j, h);
                    }
                }
            }
            let mut j = j1;
            let mut displaced = row_of[j1];
            let strict = j2 != FREE && m1 < m2;
            if strict {
                v[j1] -= m2 - m1;
            } else if displaced != FREE && j2 != FREE {
                j = j2;
                displaced = row_of[j2];
            }
            if displaced != FREE {
                col_of[displaced] = FREE;
                if strict {
                    k -= 1;
                    queue[k] = displaced;
                } else {
                    free_rows.push(displaced);
                }
            }
            row_of[j] = i;
            col_of[i] = j;
        }
        free_rows.extend_from_slice(&queue[k..]);
    }
    for i in 0..n {
        u[i] = match col_of[i] {
            FREE => row(i)
                .iter()
                .zip(&v)
                .map(|(&c, &vj)| c - vj)
                .min()
                .unwrap_or(T::ZERO),
            j => row(i)[j] - v[j],
        };
    }
    // Rows that value their best column most go first: on ordered
    // ("Monge-like") matrices later rows then rarely displace earlier ones.
    free_rows.sort_by_key(|&i| (row(i).iter().min().copied(), i));

    let mut dist = vec![T::INF; n];
    let mut pred = vec![0usize; n];
    let mut todo: Vec<usize> = Vec::with_capacity(n);
    let mut done: Vec<usize> = Vec::with_capacity(n);
    for root in free_rows {
        dist.fill(T::INF);
        todo.clear();
        todo.extend(0..n);
        done.clear();
        let (mut i, mut di) = (root, T::ZERO);
        // Dijkstra over columns; `i` is the row reached at distance `di`.
        let end = loop {
            let (costs, ui) = (row(i), u[i]);
            let mut best = 0usize; // index into `todo`
            let mut best_d = T::INF;
            for (t, &j) in todo.iter().enumerate() {
                let d = di + (costs[j] - ui - v[j]);
                if d < dist[j] {
                    dist[j] = d;
                    pred[j] = i;
                }
                // Among equal distances prefer a free column: it ends the
                // search at once (with many ties, O(n²) instead of O(n³)).
                let dj = dist[j];
                if dj < best_d || (dj == best_d && row_of[j] == FREE && row_of[todo[best]] != FREE)
                {
                    best_d = dj;
                    best = t;
                }
            }
            let j = todo.swap_remove(best);
            done.push(j);
            if row_of[j] == FREE {
                break j;
            }
            i = row_of[j];
            di = best_d;
        };
        // Shift potentials: a column reached at distance d ≤ D (the length of
        // the path found) and its row move by D − d; the root moves by D.
        let total = dist[end];
        for &j in &done {
            let shift = total - dist[j];
            v[j] -= shift;
            if row_of[j] != FREE {
                u[row_of[j]] += shift;
            }
        }
        u[root] += total;
        // Flip the path.
        let mut j = end;
        loop {
            let i = pred[j];
            let next = col_of[i];
            row_of[j] = i;
            col_of[i] = j;
            if i == root {
                break;
            }
            j = next;
        }
    }
    row_of
}

/// The exact maximum-weight perfect assignment of a square matrix:
/// `weights[row][col]` is the value of putting `row` (a physical rank) on
/// `col` (a target position); the result is `assignment[col] = row`,
/// maximising `Σ_col weights[assignment[col]][col]`.
///
/// This is the Hungarian method in its shortest-augmenting-path form (one row
/// at a time, Dijkstra on reduced costs kept non-negative by row and column
/// potentials), O(n³) time and O(n²) memory. Arithmetic is exact for any
/// `u64` weights (potentials in `i64` when `n · max weight` leaves room, in
/// `i128` otherwise). Ties are broken deterministically. A warm start
/// (column reduction, greedy matching, Jonker–Volgenant's augmenting row
/// reduction) matches most rows before the augmenting paths: at n = 2000,
/// random weights up to 2^40 and rank-level volume matrices take 0.02–0.3 s;
/// adversarially ordered matrices such as `w[p][q] = p·q`, where every new
/// row reshuffles the others, approach the O(n³) bound (about 5 s).
///
/// Errors with [`RedistError::InvalidArgument`] when the matrix is not square.
///
/// ```
/// use redist::remap::assign_max;
/// // Rows are ranks, columns target positions.
/// let w = vec![vec![1, 9, 0], vec![8, 1, 0], vec![0, 0, 5]];
/// assert_eq!(assign_max(&w).unwrap(), vec![1, 0, 2]); // 8 + 9 + 5
/// assert!(assign_max(&[vec![1, 2]]).is_err());
/// ```
pub fn assign_max(weights: &[Vec<u64>]) -> Result<Vec<usize>, RedistError> {
    let n = weights.len();
    if let Some((i, row)) = weights.iter().enumerate().find(|(_, r)| r.len() != n) {
        return Err(RedistError::InvalidArgument {
            what: "weight matrix",
            value: format!("{n} rows, row {i} with {} entries", row.len()),
            expected: "a square matrix (as many entries per row as rows)".to_string(),
        });
    }
    let max = weights.iter().flatten().copied().max().unwrap_or(0);
    // Costs `max - w` are in 0..=max; potentials stay within a few times
    // n·max in magnitude, so i64 is safe while that leaves room.
    let fits_i64 = (max as u128) * (64 * n as u128 + 1024) < i64::MAX as u128;
    Ok(if fits_i64 {
        let cost: Vec<i64> = weights
            .iter()
            .flatten()
            .map(|&w| i64::from_u64(max - w))
            .collect();
        min_cost_assignment(n, &cost)
    } else {
        let cost: Vec<i128> = weights
            .iter()
            .flatten()
            .map(|&w| i128::from_u64(max - w))
            .collect();
        min_cost_assignment(n, &cost)
    })
}

/// The data a relabelling keeps local: `Σ_q volume(perm[q], q)` over the
/// positions `q` whose physical id `perm[q]` is a source process
/// (`perm[q] < sources`); other ids hold no source data.
///
/// ```
/// use dist_array::AxisMap;
/// use redist::{remap::kept, AxisPlan};
/// // Seed 003, Fig. 4: BLOCK-CYCLIC(10) -> BLOCK-CYCLIC(5) on 5 processors, n = 100.
/// let plan = AxisPlan::new(&AxisMap::new(100, 5, 10, 0), &AxisMap::new(100, 5, 5, 0)).unwrap();
/// let v = |p, q| plan.volume(p, q) as u64;
/// assert_eq!(kept(v, &[0, 1, 2, 3, 4], 5), 20);
/// assert_eq!(kept(v, &[0, 3, 1, 4, 2], 5), 50);
/// ```
pub fn kept(volume: impl Fn(usize, usize) -> u64, perm: &[usize], sources: usize) -> u64 {
    perm.iter()
        .enumerate()
        .filter(|&(_, &x)| x < sources)
        .map(|(q, &x)| volume(x, q))
        .sum()
}

/// The data `perm` keeps local in the 1-D plan `plan` ([`kept`] on its volumes).
pub fn plan_kept(plan: &AxisPlan, perm: &[usize]) -> u64 {
    kept(|p, q| plan.volume(p, q) as u64, perm, plan.source().procs())
}

/// The square volume matrix of a 1-D plan over `R = max(P, Q)` physical ids:
/// `m[p][q] = plan.volume(p, q)`, zero for ids `p ≥ P` (no source data) and
/// for padding columns `q ≥ Q`.
pub fn volume_matrix(plan: &AxisPlan) -> Vec<Vec<u64>> {
    let (p, q) = (plan.source().procs(), plan.target().procs());
    let r = p.max(q);
    (0..r)
        .map(|x| {
            (0..r)
                .map(|j| {
                    if x < p && j < q {
                        plan.volume(x, j) as u64
                    } else {
                        0
                    }
                })
                .collect()
        })
        .collect()
}

/// The best relabelling of a 1-D target that is a permutation of `0..Q`: the
/// exact optimum of [`kept`] over all of them (an assignment on the `Q × Q`
/// volume matrix, rows `≥ P` zero).
///
/// ```
/// use dist_array::AxisMap;
/// use redist::{remap::{optimal, plan_kept}, AxisPlan};
/// // block+1@3 -> block@3 on 9 indices: a rotation, nothing needs to move.
/// let plan = AxisPlan::new(&AxisMap::new(9, 3, 3, 1), &AxisMap::new(9, 3, 3, 0)).unwrap();
/// let perm = optimal(&plan).unwrap();
/// assert_eq!(perm, vec![1, 2, 0]);
/// assert_eq!(plan_kept(&plan, &perm), 9);
/// ```
pub fn optimal(plan: &AxisPlan) -> Result<Vec<usize>, RedistError> {
    let (p, q) = (plan.source().procs(), plan.target().procs());
    let w: Vec<Vec<u64>> = (0..q)
        .map(|x| {
            (0..q)
                .map(|j| if x < p { plan.volume(x, j) as u64 } else { 0 })
                .collect()
        })
        .collect();
    assign_max(&w)
}

/// The best relabelling of a 1-D target when target positions may be placed
/// on any of `max(P, Q)` physical processors (seed 003's model): `perm[q] <
/// max(P, Q)`, distinct. Equals [`optimal`] when `Q ≥ P`; when `Q < P` it may
/// name processors `≥ Q`.
pub fn optimal_unrestricted(plan: &AxisPlan) -> Result<Vec<usize>, RedistError> {
    let q = plan.target().procs();
    let mut a = assign_max(&volume_matrix(plan))?;
    a.truncate(q);
    Ok(a)
}

// ---------------------------------------------------------------------------
// Closed forms
// ---------------------------------------------------------------------------

/// The relabelling for splitting blocks, `BLOCK-CYCLIC(k·r)` over `P` →
/// `BLOCK-CYCLIC(r)` over `targets = Q` (first processes 0): processor `p < Q`
/// goes to position `(k·p + ⌊p·g/Q⌋) mod Q` with `g = gcd(k, Q)`.
///
/// Seed 003 (Hsu et al., 2001), eqs. 1, 2 and 5 re-derived (see the module
/// docs). The result is a permutation of `0..Q` and does not depend on `P`:
/// ids `≥ P` are processors without source data. `k = 0` is read as 1.
///
/// ```
/// use redist::remap::split_blocks;
/// assert_eq!(split_blocks(2, 5), vec![0, 3, 1, 4, 2]); // seed 003, Fig. 4
/// assert_eq!(split_blocks(2, 8), vec![0, 4, 1, 5, 2, 6, 3, 7]); // Fig. 5
/// ```
pub fn split_blocks(k: usize, targets: usize) -> Vec<usize> {
    let (k, q) = (k.max(1), targets);
    if q == 0 {
        return vec![];
    }
    let g = gcd(k, q);
    let mut perm = vec![0; q];
    for p in 0..q {
        let pos = (mul_mod(k, p, q) + mul_div(p, g, q)) % q;
        perm[pos] = p;
    }
    perm
}

/// [`split_blocks`] with first processes `fs` (source) and `ft` (target):
/// physical processor `x < Q` goes to position
/// `(k·x + ⌊x·g/Q⌋ − k·fs + ft) mod Q`, `g = gcd(k, Q)`.
///
/// Processor `x` holds the blocks of logical source rank `y = (x − fs) mod P`,
/// which start on logical positions `k·y + (multiples of h) mod Q`, with
/// `h = gcd(k·P, Q)`; since `k·P ≡ 0 (mod h)`, `k·y ≡ k·(x − fs) (mod h)`, and
/// over whole cycles only the position modulo `h` matters. Shifting
/// [`split_blocks`]'s positions by `ft − k·fs` therefore keeps every processor
/// in its best class while the ids stay `0..Q` — even when `Q < P`, where
/// rotating the ids instead would name processors `≥ Q`.
fn split_with_offsets(k: usize, q: usize, fs: usize, ft: usize) -> Vec<usize> {
    let k = k.max(1);
    if q == 0 {
        return vec![];
    }
    let shift = (ft % q + q - mul_mod(k, fs, q)) % q;
    let mut perm = vec![0; q];
    for (pos, x) in split_blocks(k, q).into_iter().enumerate() {
        perm[(pos + shift) % q] = x;
    }
    perm
}

/// The relabelling for merging blocks, `BLOCK-CYCLIC(r)` over `sources = P` →
/// `BLOCK-CYCLIC(k·r)` over `targets = Q` (first processes 0): position
/// `j < min(P, Q)` goes to processor `(k·j + ⌊j·g/P⌋) mod P` with
/// `g = gcd(k, P)`, positions `P ≤ j < Q` to processor `j`.
///
/// Seed 003 (Hsu et al., 2001), eqs. 3, 4 and 6 re-derived (see the module
/// docs). Ids are distinct and below `max(P, Q)`; when `Q < P` some may be
/// `≥ Q`. `k = 0` is read as 1.
///
/// ```
/// use redist::remap::merge_blocks;
/// assert_eq!(merge_blocks(2, 5, 5), vec![0, 2, 4, 1, 3]); // seed 003, Fig. 6
/// assert_eq!(merge_blocks(2, 4, 2), vec![0, 2]); // position 1 wants processor 2
/// ```
pub fn merge_blocks(k: usize, sources: usize, targets: usize) -> Vec<usize> {
    let (k, p, q) = (k.max(1), sources, targets);
    if p == 0 {
        return (0..q).collect();
    }
    let g = gcd(k, p);
    (0..q)
        .map(|j| {
            if j < p {
                (mul_mod(k, j, p) + mul_div(j, g, p)) % p
            } else {
                j
            }
        })
        .collect()
}

/// Kalns and Ni's relabelling for `BLOCK` → `CYCLIC(c)` on `procs = P`
/// processes with `z = b / c` cyclic blocks per `BLOCK` block: the process
/// owning block `i` takes cyclic place holder `i·z mod P`, the `g = gcd(z, P)`
/// processes sharing a place holder spread over the next `g` ones in
/// increasing order. Returns `perm[place holder] = process`.
///
/// Seed 004 (Kalns and Ni, 1995), eq. 1 and Lemma 5. It reaches their maximum
/// hit ratio `c·P·⌈z/P⌉ / N` when `N = b·P`. `z = 0` is read as 1.
///
/// ```
/// use redist::remap::block_to_cyclic;
/// // Seed 004, Fig. 5: 16 elements, BLOCK (b = 2) -> CYCLIC on 8 processors.
/// assert_eq!(block_to_cyclic(8, 2), vec![0, 4, 1, 5, 2, 6, 3, 7]);
/// ```
pub fn block_to_cyclic(procs: usize, z: usize) -> Vec<usize> {
    let (z, p) = (z.max(1), procs);
    if p == 0 {
        return vec![];
    }
    let g = gcd(z, p);
    let mut perm = vec![0; p];
    for i in 0..p {
        // f(i) = i·z mod P is a multiple of g; the group index ⌊i·g/P⌋ < g.
        perm[mul_mod(i, z, p) + mul_div(i, g, p)] = i;
    }
    perm
}

/// Kalns and Ni's relabelling for `CYCLIC(c)` → `BLOCK` on `procs = P`
/// processes, `z = b / c`: the inverse of [`block_to_cyclic`] (the process
/// holding cyclic place holder `f(i)` receives `BLOCK` block `i`).
///
/// ```
/// use redist::remap::cyclic_to_block;
/// assert_eq!(cyclic_to_block(8, 2), vec![0, 2, 4, 6, 1, 3, 5, 7]);
/// ```
pub fn cyclic_to_block(procs: usize, z: usize) -> Vec<usize> {
    let forward = block_to_cyclic(procs, z);
    let mut perm = vec![0; forward.len()];
    for (place, &i) in forward.iter().enumerate() {
        perm[i] = place;
    }
    perm
}

/// Which closed form a dimension falls under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClosedFormRule {
    /// One process on both sides (a `*` dimension): nothing to choose.
    Identity,
    /// `BLOCK` → `CYCLIC(c)` on the same process count, `z = b / c`
    /// ([`block_to_cyclic`]).
    BlockToCyclic {
        /// Cyclic blocks per `BLOCK` block.
        z: usize,
    },
    /// `CYCLIC(c)` → `BLOCK` on the same process count, `z = b / c`
    /// ([`cyclic_to_block`]).
    CyclicToBlock {
        /// Cyclic blocks per `BLOCK` block.
        z: usize,
    },
    /// `BLOCK-CYCLIC(k·r)` → `BLOCK-CYCLIC(r)` ([`split_blocks`]).
    Split {
        /// Ratio of the source block to the target block.
        k: usize,
    },
    /// `BLOCK-CYCLIC(r)` → `BLOCK-CYCLIC(k·r)` ([`merge_blocks`]).
    Merge {
        /// Ratio of the target block to the source block.
        k: usize,
    },
}

impl fmt::Display for ClosedFormRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ClosedFormRule::Identity => write!(f, "identity (one process)"),
            ClosedFormRule::BlockToCyclic { z } => write!(f, "block -> cyclic (z = {z})"),
            ClosedFormRule::CyclicToBlock { z } => write!(f, "cyclic -> block (z = {z})"),
            ClosedFormRule::Split { k } => write!(f, "block split (k = {k})"),
            ClosedFormRule::Merge { k } => write!(f, "block merge (k = {k})"),
        }
    }
}

/// A closed-form relabelling of one dimension, before checking that it suits
/// a caller that needs a permutation of `0..Q`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClosedForm {
    /// The rule that produced it.
    pub rule: ClosedFormRule,
    /// `perm[q]`: the physical processor of target position `q`; distinct ids
    /// below `max(P, Q)`, where ids `< P` are the source processes.
    pub perm: Vec<usize>,
}

impl ClosedForm {
    /// Whether `perm` is a permutation of `0..Q`, usable as a target rank map.
    /// False only when `Q < P` and the rule names a processor `≥ Q`.
    pub fn is_permutation(&self) -> bool {
        let q = self.perm.len();
        let mut seen = vec![false; q];
        self.perm
            .iter()
            .all(|&x| x < q && !std::mem::replace(&mut seen[x], true))
    }
}

/// The closed form that applies to `src` → `dst`, with the physical ids it
/// names, or `None` when no closed form covers the pair (neither block size
/// divides the other).
///
/// Dispatch: one process on both sides → identity; the same process count
/// with one side `BLOCK`-like (every process holds at most one block) and its
/// block a multiple of the other's → Kalns–Ni ([`block_to_cyclic`],
/// [`cyclic_to_block`]); otherwise a source block a multiple of the target's →
/// [`split_blocks`], a target block a multiple of the source's →
/// [`merge_blocks`]. First processes `≠ 0` are handled by rotating the
/// relabelling (Kalns–Ni, merges) or shifting its positions (splits); see the
/// module docs.
///
/// Errors with [`RedistError::ExtentMismatch`] when the extents differ.
pub fn closed_form_mapping(
    src: &AxisMap,
    dst: &AxisMap,
) -> Result<Option<ClosedForm>, RedistError> {
    let n = src.extent();
    if dst.extent() != n {
        return Err(RedistError::ExtentMismatch {
            source_extent: n,
            target_extent: dst.extent(),
        });
    }
    let (p, q) = (src.procs(), dst.procs());
    let (s, t) = (src.block().max(1), dst.block().max(1));
    // A process holds at most one block: HPF BLOCK (block = ceil(n / P)).
    let one_block = |a: &AxisMap| a.block().checked_mul(a.procs()).is_none_or(|x| x >= n);
    let (fs, ft) = (src.first() % p.max(1), dst.first() % q.max(1));
    let (rule, logical) = if p == 1 && q == 1 {
        (ClosedFormRule::Identity, vec![0])
    } else if p == q && one_block(src) && s % t == 0 {
        let z = s / t;
        (ClosedFormRule::BlockToCyclic { z }, block_to_cyclic(p, z))
    } else if p == q && one_block(dst) && t % s == 0 {
        let z = t / s;
        (ClosedFormRule::CyclicToBlock { z }, cyclic_to_block(p, z))
    } else if s % t == 0 {
        let k = s / t;
        let perm = split_with_offsets(k, q, fs, ft);
        return Ok(Some(ClosedForm {
            rule: ClosedFormRule::Split { k },
            perm,
        }));
    } else if t % s == 0 {
        let k = t / s;
        (ClosedFormRule::Merge { k }, merge_blocks(k, p, q))
    } else {
        return Ok(None);
    };
    // Rotate: logical source x is physical (x + fs) mod P; physical position
    // j is logical position (j - ft) mod Q.
    let perm = (0..q)
        .map(|j| {
            let x = logical[(j + q - ft) % q];
            if x < p {
                (x + fs) % p
            } else {
                x
            }
        })
        .collect();
    Ok(Some(ClosedForm { rule, perm }))
}

/// The closed-form relabelling of one dimension as a permutation of `0..Q`
/// (`perm[q]` = physical processor of target position `q`), or `None` when no
/// closed form covers `src` → `dst` (see [`closed_form_mapping`] for the
/// dispatch).
///
/// Errors with [`RedistError::Remap`] when the closed form applies but names
/// a processor outside `0..Q` (a block merge onto fewer processes, or a
/// rotated source with `Q < P`); [`closed_form_mapping`] returns it anyway.
///
/// ```
/// use dist_array::AxisMap;
/// use redist::remap::closed_form;
/// // Seed 003, Fig. 4: cyclic(10) -> cyclic(5) on 5 processors.
/// let perm = closed_form(&AxisMap::new(100, 5, 10, 0), &AxisMap::new(100, 5, 5, 0)).unwrap();
/// assert_eq!(perm, Some(vec![0, 3, 1, 4, 2]));
/// // block+1@3 -> block@3: a rotation.
/// let perm = closed_form(&AxisMap::new(9, 3, 3, 1), &AxisMap::new(9, 3, 3, 0)).unwrap();
/// assert_eq!(perm, Some(vec![1, 2, 0]));
/// // cyclic(2) -> cyclic(3): no closed form.
/// assert_eq!(closed_form(&AxisMap::new(12, 2, 2, 0), &AxisMap::new(12, 2, 3, 0)).unwrap(), None);
/// ```
pub fn closed_form(src: &AxisMap, dst: &AxisMap) -> Result<Option<Vec<usize>>, RedistError> {
    match closed_form_mapping(src, dst)? {
        None => Ok(None),
        Some(cf) if cf.is_permutation() => Ok(Some(cf.perm)),
        Some(cf) => {
            let q = cf.perm.len();
            let (j, x) = cf
                .perm
                .iter()
                .copied()
                .enumerate()
                .find(|&(_, x)| x >= q)
                .expect("distinct ids that are not a permutation of 0..Q include one >= Q");
            Err(RedistError::Remap {
                remap: "closed-form".to_string(),
                reason: format!(
                    "the {} relabelling places target position {j} on processor {x}, \
                     outside the {q} target processes; use optimal",
                    cf.rule
                ),
            })
        }
    }
}

// ---------------------------------------------------------------------------
// Seed 003's model of the data kept per global complete cycle
// ---------------------------------------------------------------------------

/// Elements kept local per global complete cycle (GCC = `r·lcm(k·P, Q)`) by
/// the identity relabelling of `BLOCK-CYCLIC(k·r)` over `P` →
/// `BLOCK-CYCLIC(r)` over `Q` (first processes 0).
///
/// Seed 003, eqs. 7–9 (`P = Q`) and 12–14, corrected: the cycle holds `m·P`
/// source blocks (`m = lcm(k·P, Q)/(k·P)`); source block `i`, on processor
/// `i mod P`, keeps `r·⌊k/Q⌋` plus `r` more when
/// `((i mod P) − i·k) mod Q < k mod Q` — counted only when `i mod P < Q` (a
/// processor without a target position keeps nothing). For
/// `BLOCK-CYCLIC(r)` over `P` → `BLOCK-CYCLIC(k·r)` over `Q`, swap `P` and
/// `Q` (the volume matrix is the transpose). Zero when `P` or `Q` is zero.
/// Costs O(m·P).
///
/// ```
/// use redist::remap::kept_per_cycle_unmapped;
/// // Seed 003, §6.2: M = 50 processors, r = 2: k = 2 keeps 4 of 200, k = 5 keeps 12 of 500.
/// assert_eq!(kept_per_cycle_unmapped(2, 2, 50, 50), 4);
/// assert_eq!(kept_per_cycle_unmapped(5, 2, 50, 50), 12);
/// ```
pub fn kept_per_cycle_unmapped(k: usize, r: usize, p: usize, q: usize) -> u64 {
    if p == 0 || q == 0 {
        return 0;
    }
    let k = k.max(1);
    let kp = k * p;
    let blocks = kp / gcd(kp, q) * q / k; // m·P source blocks per cycle
    let full = (k / q) as u64;
    let extra = k % q;
    let mut total = 0u64;
    for i in 0..blocks {
        let owner = i % p;
        if owner >= q {
            continue;
        }
        let start = mul_mod(i, k, q);
        let hit = (owner + q - start) % q < extra;
        total += full + u64::from(hit);
    }
    total * r as u64
}

/// Elements kept local per global complete cycle by [`split_blocks`] for
/// `BLOCK-CYCLIC(k·r)` over `P` → `BLOCK-CYCLIC(r)` over `Q`, in seed 003's
/// "optimal type" (`Q` divides `k·P`, i.e. `LCC_s = k·r`): `⌈k/Q⌉·min(P, Q)·r`,
/// which is also the maximum over all relabellings. `None` outside the
/// optimal type, where the paper gives no closed count.
///
/// Seed 003, eqs. 10 and 15, corrected (`⌈k/M⌉`, not `⌊k/M⌋`; `min(P, Q)`,
/// not `P`). For merges, swap `P` and `Q`.
///
/// ```
/// use redist::remap::kept_per_cycle_mapped;
/// assert_eq!(kept_per_cycle_mapped(2, 2, 50, 50), Some(100)); // seed 003, §6.2
/// assert_eq!(kept_per_cycle_mapped(2, 5, 4, 6), None); // Fig. 7: general type
/// ```
pub fn kept_per_cycle_mapped(k: usize, r: usize, p: usize, q: usize) -> Option<u64> {
    let k = k.max(1);
    if p == 0 || q == 0 || (k * p) % q != 0 {
        return None;
    }
    Some((k.div_ceil(q) * p.min(q) * r) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use quickcheck::{quickcheck, Arbitrary, Gen};

    fn plan(n: usize, p: usize, s: usize, fs: usize, q: usize, t: usize, ft: usize) -> AxisPlan {
        AxisPlan::new(&AxisMap::new(n, p, s, fs), &AxisMap::new(n, q, t, ft)).unwrap()
    }

    fn identity(q: usize) -> Vec<usize> {
        (0..q).collect()
    }

    /// The closed form's kept data and the unrestricted optimum's.
    fn closed_vs_best(pl: &AxisPlan) -> (u64, u64) {
        let cf = closed_form_mapping(pl.source(), pl.target())
            .unwrap()
            .unwrap();
        let best = optimal_unrestricted(pl).unwrap();
        (plan_kept(pl, &cf.perm), plan_kept(pl, &best))
    }

    fn brute_force(w: &[Vec<u64>]) -> u64 {
        fn go(w: &[Vec<u64>], col: usize, used: &mut Vec<bool>) -> u64 {
            if col == w.len() {
                return 0;
            }
            let mut best = 0;
            for row in 0..w.len() {
                if !used[row] {
                    used[row] = true;
                    best = best.max(w[row][col] + go(w, col + 1, used));
                    used[row] = false;
                }
            }
            best
        }
        go(w, 0, &mut vec![false; w.len()])
    }

    fn is_perm(a: &[usize], n: usize) -> bool {
        let mut s = a.to_vec();
        s.sort_unstable();
        s == identity(n)
    }

    #[derive(Clone, Debug)]
    struct Square(Vec<Vec<u64>>);

    impl Arbitrary for Square {
        fn arbitrary(g: &mut Gen) -> Self {
            let n = usize::arbitrary(g) % 7;
            // Small ranges make ties common; sometimes huge weights.
            let range = [3u64, 20, 1 << 40][usize::arbitrary(g) % 3];
            Square(
                (0..n)
                    .map(|_| (0..n).map(|_| u64::arbitrary(g) % range).collect())
                    .collect(),
            )
        }
    }

    quickcheck! {
        fn assign_max_matches_brute_force(m: Square) -> bool {
            let a = assign_max(&m.0).unwrap();
            let n = m.0.len();
            let got = kept(|p, q| m.0[p][q], &a, n);
            is_perm(&a, n) && got == brute_force(&m.0) && got >= kept(|p, q| m.0[p][q], &identity(n), n)
        }

        fn optimum_beats_identity_and_closed_forms(n: u16, p: u8, s: u8, fs: u8, q: u8, t: u8, ft: u8) -> bool {
            let (p, q) = (p as usize % 6 + 1, q as usize % 6 + 1);
            let pl = plan(n as usize % 200, p, s as usize % 8 + 1, fs as usize % p, q, t as usize % 8 + 1, ft as usize % q);
            let best = optimal(&pl).unwrap();
            let free = optimal_unrestricted(&pl).unwrap();
            let ok = is_perm(&best, q)
                && plan_kept(&pl, &best) >= plan_kept(&pl, &identity(q))
                && plan_kept(&pl, &free) >= plan_kept(&pl, &best);
            ok && match closed_form_mapping(pl.source(), pl.target()).unwrap() {
                None => true,
                Some(cf) => {
                    let mut ids = cf.perm.clone();
                    ids.sort_unstable();
                    ids.dedup();
                    ids.len() == q
                        && ids.iter().all(|&x| x < p.max(q))
                        && plan_kept(&pl, &cf.perm) <= plan_kept(&pl, &free)
                        && (!cf.is_permutation() || plan_kept(&pl, &cf.perm) <= plan_kept(&pl, &best))
                }
            }
        }
    }

    #[test]
    fn non_square_is_refused_and_empty_is_fine() {
        assert!(matches!(
            assign_max(&[vec![1, 2], vec![3]]),
            Err(RedistError::InvalidArgument { .. })
        ));
        assert!(assign_max(&[vec![1, 2, 3], vec![3, 4, 5]]).is_err());
        assert_eq!(assign_max(&[]).unwrap(), Vec::<usize>::new());
        assert_eq!(assign_max(&[vec![7]]).unwrap(), vec![0]);
    }

    #[test]
    fn huge_weights_are_exact() {
        let big = u64::MAX / 3;
        let w = vec![
            vec![big, big - 1, 0],
            vec![big, 0, 0],
            vec![0, big - 2, big],
        ];
        assert_eq!(assign_max(&w).unwrap(), vec![1, 0, 2]);
        let w = vec![vec![u64::MAX, 0], vec![0, u64::MAX]];
        assert_eq!(assign_max(&w).unwrap(), vec![0, 1]);
    }

    /// A plain textbook solver (no warm start), to cross-check the fast one
    /// on sizes brute force cannot reach.
    fn reference_max(w: &[Vec<u64>]) -> u64 {
        let n = w.len();
        let max = w.iter().flatten().copied().max().unwrap_or(0) as i128;
        let c = |i: usize, j: usize| max - w[i - 1][j - 1] as i128;
        let (mut u, mut v) = (vec![0i128; n + 1], vec![0i128; n + 1]);
        let (mut p, mut way) = (vec![0usize; n + 1], vec![0usize; n + 1]);
        for i in 1..=n {
            p[0] = i;
            let mut j0 = 0;
            let mut minv = vec![i128::MAX; n + 1];
            let mut used = vec![false; n + 1];
            loop {
                used[j0] = true;
                let (i0, mut delta, mut j1) = (p[j0], i128::MAX, 0);
                for j in 1..=n {
                    if !used[j] {
                        let cur = c(i0, j) - u[i0] - v[j];
                        if cur < minv[j] {
                            minv[j] = cur;
                            way[j] = j0;
                        }
                        if minv[j] < delta {
                            delta = minv[j];
                            j1 = j;
                        }
                    }
                }
                for j in 0..=n {
                    if used[j] {
                        u[p[j]] += delta;
                        v[j] -= delta;
                    } else {
                        minv[j] -= delta;
                    }
                }
                j0 = j1;
                if p[j0] == 0 {
                    break;
                }
            }
            while j0 != 0 {
                let j1 = way[j0];
                p[j0] = p[j1];
                j0 = j1;
            }
        }
        (1..=n).map(|j| w[p[j] - 1][j - 1]).sum()
    }

    #[test]
    fn assign_max_matches_a_reference_solver() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for n in [7, 10, 25, 60, 120] {
            for range in [2u64, 5, 1000, 1 << 40] {
                let w: Vec<Vec<u64>> = (0..n)
                    .map(|_| (0..n).map(|_| next() % range).collect())
                    .collect();
                let a = assign_max(&w).unwrap();
                assert!(is_perm(&a, n));
                assert_eq!(
                    kept(|p, q| w[p][q], &a, n),
                    reference_max(&w),
                    "n {n} range {range}"
                );
            }
            // Structured: ordered (Monge-like) and rank-level product volumes.
            let w: Vec<Vec<u64>> = (0..n)
                .map(|p| (0..n).map(|q| (p * q) as u64).collect())
                .collect();
            assert_eq!(
                kept(|p, q| w[p][q], &assign_max(&w).unwrap(), n),
                reference_max(&w)
            );
            let w: Vec<Vec<u64>> = (0..n)
                .map(|p| {
                    (0..n)
                        .map(|q| (q % 3) as u64 + (p % 5 == q % 5) as u64)
                        .collect()
                })
                .collect();
            assert_eq!(
                kept(|p, q| w[p][q], &assign_max(&w).unwrap(), n),
                reference_max(&w)
            );
        }
    }

    #[test]
    fn assign_max_scales() {
        // 2000 × 2000, weights up to 2^40, with a hidden permutation worth more
        // than anything else (about 0.1-0.3 s in release; smaller in debug).
        let n = if cfg!(debug_assertions) { 300 } else { 2000 };
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut w: Vec<Vec<u64>> = (0..n)
            .map(|_| (0..n).map(|_| next() % (1 << 39)).collect())
            .collect();
        let hidden: Vec<usize> = (0..n).map(|c| (c * 7 + 3) % n).collect();
        for (c, &r) in hidden.iter().enumerate() {
            w[r][c] = 1 << 40;
        }
        assert_eq!(assign_max(&w).unwrap(), hidden);
        // Ties everywhere: every assignment is optimal; must still be quick.
        let w = vec![vec![5u64; n]; n];
        assert!(is_perm(&assign_max(&w).unwrap(), n));
    }

    // --- seed 003 -----------------------------------------------------------

    #[test]
    fn seed003_fig4_cyclic10_to_cyclic5() {
        let pl = plan(100, 5, 10, 0, 5, 5, 0);
        assert_eq!(plan_kept(&pl, &identity(5)), 20);
        let perm = closed_form(pl.source(), pl.target()).unwrap().unwrap();
        assert_eq!(perm, vec![0, 3, 1, 4, 2]);
        assert_eq!(plan_kept(&pl, &perm), 50);
        assert_eq!(plan_kept(&pl, &optimal(&pl).unwrap()), 50);
    }

    #[test]
    fn seed003_fig6_cyclic5_to_cyclic10() {
        let pl = plan(100, 5, 5, 0, 5, 10, 0);
        assert_eq!(plan_kept(&pl, &identity(5)), 20);
        let perm = closed_form(pl.source(), pl.target()).unwrap().unwrap();
        assert_eq!(perm, vec![0, 2, 4, 1, 3]);
        assert_eq!(plan_kept(&pl, &perm), 50);
        assert_eq!(plan_kept(&pl, &optimal(&pl).unwrap()), 50);
    }

    #[test]
    fn seed003_fifty_processors() {
        // §6.2: M = 50, r = 2. A global complete cycle is lcm(k·r·M, r·M) = k·r·M
        // indices: 200 for k = 2, where 4 stay without mapping and 100 with it.
        // The text's "k = 4 … GCC = 500" is k = 5 (12 and 100 of 500).
        for (k, gcc, unmapped) in [(2, 200, 4), (5, 500, 12)] {
            for (s, t) in [(k * 2, 2), (2, k * 2)] {
                let pl = plan(gcc, 50, s, 0, 50, t, 0);
                assert_eq!(pl.period(), gcc);
                assert_eq!(plan_kept(&pl, &identity(50)), unmapped);
                let perm = closed_form(pl.source(), pl.target()).unwrap().unwrap();
                assert_eq!(plan_kept(&pl, &perm), 100);
                assert_eq!(plan_kept(&pl, &optimal(&pl).unwrap()), 100);
            }
            assert_eq!(kept_per_cycle_unmapped(k, 2, 50, 50), unmapped);
            assert_eq!(kept_per_cycle_mapped(k, 2, 50, 50), Some(100));
        }
    }

    #[test]
    fn seed003_fig2_block_to_cyclic() {
        // BLOCK -> BLOCK-CYCLIC(r) on 5 processors: (a) r = 10, n = 100: 20 -> 50;
        // (b) r = 10, n = 500 and (c) r = 4, n = 100: mapping gains nothing.
        for (n, r, unmapped, mapped) in [(100, 10, 20, 50), (500, 10, 100, 100), (100, 4, 20, 20)] {
            let pl = plan(n, 5, n / 5, 0, 5, r, 0);
            assert_eq!(plan_kept(&pl, &identity(5)), unmapped);
            let perm = closed_form(pl.source(), pl.target()).unwrap().unwrap();
            assert_eq!(plan_kept(&pl, &perm), mapped);
            assert_eq!(plan_kept(&pl, &optimal(&pl).unwrap()), mapped);
        }
    }

    #[test]
    fn seed003_different_processor_sets() {
        // Fig. 5: k = 2, r = 5, n = 120, P = 4 -> Q = 8 (optimal type, GCC = 40):
        // 20 kept per cycle, the maximum ratio 1 : 2.
        let pl = plan(120, 4, 10, 0, 8, 5, 0);
        let cf = closed_form_mapping(pl.source(), pl.target())
            .unwrap()
            .unwrap();
        assert_eq!(cf.perm, vec![0, 4, 1, 5, 2, 6, 3, 7]);
        assert_eq!(plan_kept(&pl, &cf.perm), 60);
        assert_eq!(plan_kept(&pl, &optimal(&pl).unwrap()), 60);
        assert_eq!(kept_per_cycle_mapped(2, 5, 4, 8), Some(20));
        // Fig. 8: P = 3 -> Q = 12 (LCC_s = 2kr): the mapping sequence
        // 0 6 1 7 2 8 3 9 4 10 5 11 beats the normal one, and is optimal here.
        let pl = plan(120, 3, 10, 0, 12, 5, 0);
        let cf = closed_form_mapping(pl.source(), pl.target())
            .unwrap()
            .unwrap();
        assert_eq!(cf.perm, vec![0, 6, 1, 7, 2, 8, 3, 9, 4, 10, 5, 11]);
        let (closed, best) = closed_vs_best(&pl);
        assert!(closed > plan_kept(&pl, &identity(12)));
        assert_eq!((closed, best), (30, 30));
        // Fig. 7: P = 4 -> Q = 6 (LCC_s = 3kr, general type): mapping and normal
        // sequence keep the same, as the paper says — and that is the optimum.
        let pl = plan(120, 4, 10, 0, 6, 5, 0);
        let cf = closed_form_mapping(pl.source(), pl.target())
            .unwrap()
            .unwrap();
        assert_eq!(cf.perm, vec![0, 3, 1, 4, 2, 5]);
        assert_eq!(plan_kept(&pl, &cf.perm), plan_kept(&pl, &identity(6)));
        assert_eq!(closed_vs_best(&pl), (20, 20));
    }

    #[test]
    fn printed_split_formula_breaks_where_derived_one_holds() {
        // Seed 003's eq. 1/2 as repaired from its figures: (j mod k)·⌈Q/k⌉ + ⌊j/k⌋.
        let printed = |k: usize, q: usize| -> Vec<usize> {
            (0..q).map(|j| (j % k) * q.div_ceil(k) + j / k).collect()
        };
        assert_eq!(printed(2, 5), split_blocks(2, 5));
        assert_eq!(printed(2, 8), split_blocks(2, 8));
        assert_eq!(printed(2, 12), split_blocks(2, 12));
        // Q = 7, k = 3: not a permutation.
        assert_eq!(printed(3, 7), vec![0, 3, 6, 1, 4, 7, 2]);
        assert!(is_perm(&split_blocks(3, 7), 7));
        // k > Q: it is the identity, which misses the optimum.
        let pl = plan(15, 3, 5, 0, 3, 1, 0);
        assert_eq!(printed(5, 3), identity(3));
        assert_eq!(plan_kept(&pl, &identity(3)), 5);
        assert_eq!(closed_vs_best(&pl), (6, 6));
        // Where Q mod k is 0 or k - 1 the two agree.
        for k in 1..6 {
            for q in 1..20 {
                if q % k == 0 || q % k == k - 1 {
                    assert_eq!(printed(k, q), split_blocks(k, q), "k {k} q {q}");
                }
            }
        }
    }

    #[test]
    fn kept_per_cycle_model_matches_plans() {
        for k in 1..7 {
            for r in 1..4 {
                for p in 1..8 {
                    for q in 1..8 {
                        let kp = k * p;
                        let gcc = r * (kp / gcd(kp, q) * q);
                        // Split, identity relabelling.
                        let pl = plan(gcc, p, k * r, 0, q, r, 0);
                        assert_eq!(pl.period(), gcc);
                        let id: Vec<usize> = (0..q).collect();
                        assert_eq!(
                            plan_kept(&pl, &id),
                            kept_per_cycle_unmapped(k, r, p, q),
                            "{k} {r} {p} {q}"
                        );
                        if let Some(m) = kept_per_cycle_mapped(k, r, p, q) {
                            let (closed, best) = closed_vs_best(&pl);
                            assert_eq!((closed, best), (m, m), "split k {k} r {r} P {p} Q {q}");
                        }
                        // Merge: swap P and Q.
                        let pl = plan(gcc, q, r, 0, p, k * r, 0);
                        let id: Vec<usize> = (0..p).collect();
                        assert_eq!(plan_kept(&pl, &id), kept_per_cycle_unmapped(k, r, p, q));
                        if let Some(m) = kept_per_cycle_mapped(k, r, p, q) {
                            let (closed, best) = closed_vs_best(&pl);
                            assert_eq!((closed, best), (m, m), "merge k {k} r {r} P {q} Q {p}");
                        }
                    }
                }
            }
        }
    }

    // --- seed 004 -----------------------------------------------------------

    #[test]
    fn seed004_fig5_block_to_cyclic_sixteen_elements() {
        // 16 elements on 8 processors: BLOCK (b = 2) -> CYCLIC. The usual order
        // keeps 2 elements, the permutation 0 4 1 5 2 6 3 7 keeps 8 (one per
        // processor), the maximum hit ratio c/b = 1/2.
        let pl = plan(16, 8, 2, 0, 8, 1, 0);
        assert_eq!(plan_kept(&pl, &identity(8)), 2);
        let cf = closed_form_mapping(pl.source(), pl.target())
            .unwrap()
            .unwrap();
        assert_eq!(cf.rule, ClosedFormRule::BlockToCyclic { z: 2 });
        assert_eq!(cf.perm, vec![0, 4, 1, 5, 2, 6, 3, 7]);
        assert_eq!(plan_kept(&pl, &cf.perm), 8);
        assert_eq!(plan_kept(&pl, &optimal(&pl).unwrap()), 8);
        // And back: CYCLIC -> BLOCK keeps the same 8.
        let back = plan(16, 8, 1, 0, 8, 2, 0);
        let cf = closed_form_mapping(back.source(), back.target())
            .unwrap()
            .unwrap();
        assert_eq!(cf.rule, ClosedFormRule::CyclicToBlock { z: 2 });
        assert_eq!(plan_kept(&back, &cf.perm), 8);
    }

    #[test]
    fn seed004_fig6_shared_place_holders() {
        // z = 4, P = 6: f(i) = 4i mod 6 sends processes 0 and 3 to q0, 2 and 5 to
        // q2, 1 and 4 to q4; each pair spreads over two place holders.
        let perm = block_to_cyclic(6, 4);
        assert_eq!(perm, vec![0, 3, 2, 5, 1, 4]);
        // n = b·P = 24, c = 1: hit ratio c·P·⌈z/P⌉ / N = 6 / 24.
        let pl = plan(24, 6, 4, 0, 6, 1, 0);
        assert_eq!(plan_kept(&pl, &perm), 6);
        assert_eq!(plan_kept(&pl, &optimal(&pl).unwrap()), 6);
    }

    #[test]
    fn kalns_ni_is_the_split_with_equal_counts_and_optimal_when_n_is_b_p() {
        for p in 1..10 {
            for z in 1..14 {
                assert_eq!(block_to_cyclic(p, z), split_blocks(z, p));
                for c in 1..4 {
                    let b = z * c;
                    for (fs, ft) in [(0, 0), (p / 2, p - 1)] {
                        let pl = plan(b * p, p, b, fs, p, c, ft);
                        let (closed, best) = closed_vs_best(&pl);
                        // Max hit ratio: c·⌈z/P⌉ per process.
                        assert_eq!(
                            (closed, best),
                            ((c * z.div_ceil(p) * p) as u64, best),
                            "P {p} z {z} c {c}"
                        );
                        assert_eq!(closed, best);
                        let back = plan(b * p, p, c, ft, p, b, fs);
                        assert_eq!(
                            plan_kept(
                                &back,
                                &closed_form(back.source(), back.target()).unwrap().unwrap()
                            ),
                            best
                        );
                    }
                }
            }
        }
    }

    // --- optimality sweeps and gaps ----------------------------------------

    /// Every split and merge over a whole number of global complete cycles,
    /// with first processes, in seed 003's optimal type (where it claims
    /// optimality) and in its general type (where it does not): the derived
    /// closed forms reach the exact optimum in every case.
    #[test]
    fn closed_forms_are_optimal_on_whole_cycles() {
        let mut general = 0;
        for k in 1..9 {
            for p in 1..9 {
                for q in 1..9 {
                    for r in [1, 3] {
                        for (fs, ft) in [(0, 0), (p - 1, 0), (0, q / 2), (p / 2, q - 1)] {
                            let kp = k * p;
                            let split_cycle = r * (kp / gcd(kp, q) * q);
                            let pl = plan(split_cycle, p, k * r, fs, q, r, ft);
                            let (closed, best) = closed_vs_best(&pl);
                            assert_eq!(
                                closed, best,
                                "split k {k} P {p} Q {q} r {r} first {fs},{ft}"
                            );
                            let cf = closed_form_mapping(pl.source(), pl.target())
                                .unwrap()
                                .unwrap();
                            assert!(cf.is_permutation(), "split k {k} P {p} Q {q}");
                            if p > q || k > 1 {
                                // The best permutation of 0..Q is as good.
                                assert_eq!(plan_kept(&pl, &optimal(&pl).unwrap()), best);
                            }
                            general += usize::from(kp % q != 0);

                            let kq = k * q;
                            let merge_cycle = r * (kq / gcd(kq, p) * p);
                            let pl = plan(2 * merge_cycle, p, r, fs, q, k * r, ft);
                            let (closed, best) = closed_vs_best(&pl);
                            assert_eq!(
                                closed, best,
                                "merge k {k} P {p} Q {q} r {r} first {fs},{ft}"
                            );
                            general += usize::from(kq % p != 0);
                        }
                    }
                }
            }
        }
        assert!(general > 1000);
    }

    #[test]
    fn closed_forms_fall_short_on_partial_cycles() {
        // BLOCK over 4 processes with the last block short: n = 13 and 14
        // (b = 4) -> CYCLIC(2). The closed form keeps 6 where the optimum keeps
        // 7 and 8: it aims at the blocks of a whole cycle, and the short last
        // block changes which position is best for its processor.
        assert_eq!(closed_vs_best(&plan(13, 4, 4, 0, 4, 2, 0)), (6, 7));
        assert_eq!(closed_vs_best(&plan(14, 4, 4, 0, 4, 2, 0)), (6, 8));
        // The same with n = b·P = 16 is optimal (Kalns–Ni's assumption).
        assert_eq!(closed_vs_best(&plan(16, 4, 4, 0, 4, 2, 0)), (8, 8));
        // Over many ragged extents the closed form is sometimes short, never better.
        let (mut short, mut cases) = (0, 0);
        for k in 1..6 {
            for p in 1..7 {
                for q in 1..7 {
                    for n in [7, 20, 45, 64, 99] {
                        let pl = plan(n, p, 2 * k, 0, q, 2, 0);
                        let (closed, best) = closed_vs_best(&pl);
                        assert!(closed <= best);
                        cases += 1;
                        short += usize::from(closed < best);
                    }
                }
            }
        }
        assert!(short > 0 && short < cases, "{short} of {cases}");
    }

    #[test]
    fn merge_onto_fewer_processes_may_not_be_a_permutation() {
        let src = AxisMap::new(8, 4, 1, 0);
        let dst = AxisMap::new(8, 2, 2, 0);
        let cf = closed_form_mapping(&src, &dst).unwrap().unwrap();
        assert_eq!(cf.rule, ClosedFormRule::Merge { k: 2 });
        assert_eq!(cf.perm, vec![0, 2]);
        assert!(!cf.is_permutation());
        assert!(matches!(
            closed_form(&src, &dst),
            Err(RedistError::Remap { .. })
        ));
        // The unrestricted optimum agrees; the best permutation of 0..2 keeps less.
        let pl = AxisPlan::new(&src, &dst).unwrap();
        assert_eq!(plan_kept(&pl, &cf.perm), 4);
        assert_eq!(plan_kept(&pl, &optimal_unrestricted(&pl).unwrap()), 4);
        assert_eq!(plan_kept(&pl, &optimal(&pl).unwrap()), 2);
        // A split onto fewer processes stays within 0..Q.
        let cf = closed_form_mapping(&dst, &src).unwrap().unwrap();
        assert!(cf.is_permutation());
    }

    #[test]
    fn design_md_rotation_moves_nothing() {
        // block+1@3 -> block@3: the first process differs (1 vs 0).
        for n in [3usize, 9, 10, 100] {
            let b = n.div_ceil(3);
            let pl = plan(n, 3, b, 1, 3, b, 0);
            assert_eq!(plan_kept(&pl, &identity(3)), 0);
            let best = optimal(&pl).unwrap();
            assert_eq!(plan_kept(&pl, &best), n as u64);
            let cf = closed_form_mapping(pl.source(), pl.target())
                .unwrap()
                .unwrap();
            assert_eq!(cf.perm, vec![1, 2, 0]);
            assert_eq!(plan_kept(&pl, &cf.perm), n as u64);
        }
    }

    #[test]
    fn collapsed_and_uncovered_dimensions() {
        // `*`: one process on both sides.
        let a = AxisMap::new(10, 1, 10, 0);
        let cf = closed_form_mapping(&a, &a).unwrap().unwrap();
        assert_eq!((cf.rule, cf.perm), (ClosedFormRule::Identity, vec![0]));
        // cyclic(2) -> cyclic(3): neither block divides the other.
        assert_eq!(
            closed_form(&AxisMap::new(30, 3, 2, 0), &AxisMap::new(30, 3, 3, 0)).unwrap(),
            None
        );
        // Extents must agree.
        assert!(matches!(
            closed_form(&AxisMap::new(30, 3, 2, 0), &AxisMap::new(31, 3, 2, 0)),
            Err(RedistError::ExtentMismatch { .. })
        ));
    }
}
