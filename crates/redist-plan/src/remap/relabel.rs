//! The optimal relabelling of the target's ranks at any rank count.
//!
//! The volume matrix `V` (rank × target position: the elements a rank
//! holds that the position will own) is the Kronecker product of the
//! dimensions' volume matrices `V_d` (source coordinate × target
//! coordinate), so its non-zeros, its row and column maxima and any entry
//! come from the `V_d` without forming it. The relabelling keeping the most
//! data on its rank is found
//!
//! - **dense**: an exact assignment on `V` (O(R³), up to
//!   [`OPTIMAL_RANKS_MAX`](super::OPTIMAL_RANKS_MAX) ranks): the referee;
//! - **sparse**: an exact assignment on `V`'s non-zeros where they are few
//!   (at most [`SPARSE_PER_RANK`] per rank), at any rank count;
//! - **per dimension**: where `V` is dense and large, the exact optimum of
//!   each dimension composed (grids of one shape, each dimension's process
//!   count within the dense solver's reach) — exact when every dimension
//!   holds whole block cycles, not in general;
//! - **none**: where no dimension's matrix can be formed either (a 1-D
//!   all-to-all among 10^5 processes: 10^10 entries), the target's own map.
//!
//! Every relabelling comes with what it keeps and an upper bound on what
//! any relabelling keeps — `min(Σ_a max_b V[a][b], Σ_b max_a V[a][b])`, each
//! a product of the dimensions' sums of maxima (where a dimension's matrix
//! cannot be formed, of bounds on them from its block sizes) — so a user
//! sees how far from the optimum a relabelling that is not exact can be.
//! Every rank computes the same relabelling, with no communication.

use super::sparse::{assign_max_sparse, SparseMatrix};
use super::{assign_max, optimal, OPTIMAL_RANKS_MAX};
use crate::error::PlanError;
use crate::layout::axis::AxisMap;
use crate::layout::Layout;
use crate::plan::axis_plans;
use crate::plan::{AxisPlan, AxisView, Window};

/// Most non-zeros per rank for which the sparse exact assignment runs.
pub const SPARSE_PER_RANK: usize = 64;

/// How a relabelling was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// The exact assignment on the dense volume matrix.
    Dense,
    /// The exact assignment on the volume matrix's non-zeros.
    Sparse,
    /// Each dimension's exact optimum, composed.
    PerDimension,
    /// The target's own rank map.
    None,
}

/// A relabelling of the target's ranks and what it keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Relabelling {
    /// `map[position]`: the rank at the target grid position (row-major
    /// index of its coordinates).
    pub map: Vec<usize>,
    /// Elements it keeps on their rank, over all ranks.
    pub kept: u128,
    /// No relabelling keeps more than this.
    pub bound: u128,
    /// How it was found.
    pub method: Method,
}

impl Relabelling {
    /// Whether no relabelling keeps more: found by an exact method, or
    /// keeping the bound.
    pub fn is_exact(&self) -> bool {
        matches!(self.method, Method::Dense | Method::Sparse) || self.kept == self.bound
    }
}

/// One dimension's volume matrix, by source coordinate: (target
/// coordinate, volume) each, by target coordinate.
struct AxisVolumes {
    rows: Vec<Vec<(usize, u64)>>,
    row_max: Vec<u64>,
    col_max: Vec<u64>,
}

impl AxisVolumes {
    fn of(plan: &AxisPlan) -> AxisVolumes {
        let (p, q) = (plan.source().procs(), plan.target().procs());
        let mut rows = vec![Vec::new(); p];
        let mut col_max = vec![0u64; q];
        for (x, y, v) in plan.pairs() {
            let v = v as u64;
            rows[x].push((y, v));
            col_max[y] = col_max[y].max(v);
        }
        let row_max = rows
            .iter()
            .map(|r| r.iter().map(|e| e.1).max().unwrap_or(0))
            .collect();
        AxisVolumes {
            rows,
            row_max,
            col_max,
        }
    }

    fn get(&self, p: usize, q: usize) -> u64 {
        let row = &self.rows[p];
        row.binary_search_by_key(&q, |e| e.0)
            .map_or(0, |i| row[i].1)
    }

    fn non_zeros(&self) -> usize {
        self.rows.iter().map(Vec::len).sum()
    }
}

/// The relabelling [`Remap::Optimal`](crate::Remap::Optimal) chooses for
/// moving `window` of arrays laid out as `source` onto arrays laid out as
/// `target`.
///
/// # Errors
///
/// [`PlanError::Limit`] or [`PlanError::InvalidArgument`] from the
/// dimensions' plans (a window that does not fit).
pub fn optimal_relabelling(
    source: &Layout,
    target: &Layout,
    window: &Window,
) -> Result<Relabelling, PlanError> {
    let n = target.ranks();
    let whole = match axis_plans(source, target, window, |_| AxisView::All) {
        Ok(axes) => axes,
        Err(PlanError::Limit { .. }) => return Ok(without_matrices(source, target, window)),
        Err(e) => return Err(e),
    };
    let dims: Vec<AxisVolumes> = whole.iter().map(AxisVolumes::of).collect();
    let non_zeros = dims
        .iter()
        .fold(1usize, |k, d| k.saturating_mul(d.non_zeros()));
    let (map, method) = if n <= OPTIMAL_RANKS_MAX {
        (dense(source, target, &dims)?, Method::Dense)
    } else if non_zeros <= SPARSE_PER_RANK.saturating_mul(n) {
        (sparse(source, target, &dims), Method::Sparse)
    } else if let Some(map) = per_dimension(source, target, &whole)? {
        (map, Method::PerDimension)
    } else {
        (target.rank_map(), Method::None)
    };
    let kept = kept_by(source, target, &map, |d, p, q| dims[d].get(p, q));
    let bound = bound_by(source, target, |d| (&dims[d].row_max, &dims[d].col_max));
    Ok(Relabelling {
        map,
        kept,
        bound,
        method,
    })
}

/// Rank `r`'s source coordinates, when it holds source data.
fn source_coords(source: &Layout, r: usize) -> Option<Vec<usize>> {
    source
        .position_of(r)
        .and_then(|_| source.coords_of_rank(r).ok())
}

/// The coordinates of target grid position `pos`.
fn position_coords(target: &Layout, pos: usize) -> Vec<usize> {
    crate::coords::rank_to_coords(pos, target.grid_extents(), crate::coords::Order::RowMajor)
        .expect("a position of the grid")
}

/// Rank `r`'s row of `V`: (target position, volume) for every position it
/// sends to.
fn row_of(source: &Layout, target: &Layout, dims: &[AxisVolumes], r: usize) -> Vec<(usize, u64)> {
    let Some(a) = source_coords(source, r) else {
        return Vec::new();
    };
    let grid = target.grid_extents();
    let mut row = vec![(0usize, 1u64)];
    for (d, vol) in dims.iter().enumerate() {
        row = (row.iter())
            .flat_map(|&(pos, w)| {
                vol.rows[a[d]]
                    .iter()
                    .map(move |&(q, v)| (pos * grid[d] + q, w * v))
            })
            .collect();
    }
    row
}

/// The exact optimum on the dense matrix.
fn dense(source: &Layout, target: &Layout, dims: &[AxisVolumes]) -> Result<Vec<usize>, PlanError> {
    let n = target.ranks();
    let weights: Vec<Vec<u64>> = (0..n)
        .map(|r| {
            let mut w = vec![0u64; n];
            for (pos, v) in row_of(source, target, dims, r) {
                w[pos] = v;
            }
            w
        })
        .collect();
    assign_max(&weights)
}

/// The exact optimum on the non-zeros.
fn sparse(source: &Layout, target: &Layout, dims: &[AxisVolumes]) -> Vec<usize> {
    let n = target.ranks();
    let mut m = SparseMatrix::new(n);
    for r in 0..n {
        m.push_row(row_of(source, target, dims, r));
    }
    let assigned = assign_max_sparse(&m);
    let mut map = vec![usize::MAX; n];
    let mut free_ranks = Vec::new();
    for (r, pos) in assigned.into_iter().enumerate() {
        match pos {
            Some(pos) => map[pos] = r,
            None => free_ranks.push(r),
        }
    }
    // Positions no rank keeps data at take the other ranks, in order.
    let mut free = free_ranks.into_iter();
    for slot in map.iter_mut().filter(|m| **m == usize::MAX) {
        *slot = free.next().expect("as many ranks as positions");
    }
    map
}

/// Each dimension's exact optimum composed, where the grids have one shape
/// and every dimension's process count is within the dense solver's reach.
fn per_dimension(
    source: &Layout,
    target: &Layout,
    whole: &[AxisPlan],
) -> Result<Option<Vec<usize>>, PlanError> {
    let fits = whole
        .iter()
        .all(|a| a.source().procs() <= OPTIMAL_RANKS_MAX);
    if source.grid_extents() != target.grid_extents() || !fits {
        return Ok(None);
    }
    let perms = whole.iter().map(optimal).collect::<Result<Vec<_>, _>>()?;
    let map = (0..target.ranks())
        .map(|pos| {
            let c = position_coords(target, pos);
            let physical: Vec<usize> = c.iter().zip(&perms).map(|(&x, p)| p[x]).collect();
            source.rank_of_coords(&physical)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some(map))
}

/// What `map` keeps: `Σ_pos V[map[pos]][pos]`, with `volume(d, p, q)` the
/// dimensions' entries. O(ranks × dimensions) entries looked up.
fn kept_by(
    source: &Layout,
    target: &Layout,
    map: &[usize],
    volume: impl Fn(usize, usize, usize) -> u64,
) -> u128 {
    (0..target.ranks())
        .filter_map(|pos| {
            let a = source_coords(source, map[pos])?;
            let b = position_coords(target, pos);
            Some(
                (0..a.len())
                    .map(|d| u128::from(volume(d, a[d], b[d])))
                    .product::<u128>(),
            )
        })
        .sum()
}

/// `min(Σ_a max_b V[a][b], Σ_b max_a V[a][b])` from each dimension's row and
/// column maxima (or bounds on them): products of their sums.
fn bound_by<'a>(
    source: &Layout,
    target: &Layout,
    maxima: impl Fn(usize) -> (&'a Vec<u64>, &'a Vec<u64>),
) -> u128 {
    let sum = |v: &Vec<u64>| v.iter().map(|&x| u128::from(x)).sum::<u128>();
    let (rows, cols) = (0..source.ndim()).fold((1u128, 1u128), |(r, c), d| {
        let (row_max, col_max) = maxima(d);
        (r * sum(row_max), c * sum(col_max))
    });
    let _ = target;
    rows.min(cols)
}

/// Where no dimension's whole matrix can be formed: the target's own map,
/// what it keeps (each entry from the runs of one pair of processes) and a
/// bound from block sizes alone.
fn without_matrices(source: &Layout, target: &Layout, window: &Window) -> Relabelling {
    let map = target.rank_map();
    let axes = |d: usize| (&source.axes()[d], &target.axes()[d]);
    let pair_volume = |d: usize, p: usize, q: usize| {
        let (a, b) = axes(d);
        let (so, to, len) = (
            window.source_origin()[d],
            window.target_origin()[d],
            window.shape()[d],
        );
        AxisPlan::view(a, so, b, to, len, AxisView::Pair(p, q)).map_or(0, |x| x.volume(p, q) as u64)
    };
    let kept = kept_by(source, target, &map, pair_volume);
    let maxima: Vec<(Vec<u64>, Vec<u64>)> = (0..source.ndim())
        .map(|d| {
            let (a, b) = axes(d);
            (block_bounds(a, b), block_bounds(b, a))
        })
        .collect();
    let bound = bound_by(source, target, |d| (&maxima[d].0, &maxima[d].1));
    Relabelling {
        map,
        kept,
        bound: bound.max(kept),
        method: Method::None,
    }
}

/// Per process of `a`, a bound on what it exchanges with any one process of
/// `b`: each of its blocks meets at most `⌊(s−1)/(t·Q)⌋ + 2` of that
/// process's blocks, of `t` indices each (and holds `s`).
fn block_bounds(a: &AxisMap, b: &AxisMap) -> Vec<u64> {
    let (s, t) = (a.block(), b.block());
    let per_block = s.min(((s.saturating_sub(1)) / (t * b.procs()) + 2) * t);
    (0..a.procs())
        .map(|p| {
            let local = a.local_extent(p);
            (local.div_ceil(s.max(1)) * per_block).min(local) as u64
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Pair;
    use quickcheck::quickcheck;

    /// What the dense and the sparse assignments keep, and the bound.
    fn dense_and_sparse(source: &Layout, target: &Layout) -> (u128, u128, u128) {
        let w = Window::whole(source.shape());
        let whole = axis_plans(source, target, &w, |_| AxisView::All).unwrap();
        let dims: Vec<AxisVolumes> = whole.iter().map(AxisVolumes::of).collect();
        let kept = |map: &[usize]| kept_by(source, target, map, |d, p, q| dims[d].get(p, q));
        let bound = bound_by(source, target, |d| (&dims[d].row_max, &dims[d].col_max));
        let dense = dense(source, target, &dims).unwrap();
        let sparse = sparse(source, target, &dims);
        let mut sorted = sparse.clone();
        sorted.sort_unstable();
        assert_eq!(
            sorted,
            (0..target.ranks()).collect::<Vec<_>>(),
            "a permutation"
        );
        (kept(&dense), kept(&sparse), bound)
    }

    quickcheck! {
        fn the_sparse_optimum_is_the_dense_one(p: Pair) -> bool {
            let (dense, sparse, bound) = dense_and_sparse(&p.0, &p.1);
            dense == sparse && sparse <= bound
        }
    }

    /// Block-size changes on grids up to 32×32: the sparse assignment keeps
    /// what the dense one keeps; over whole cycles, the bound.
    #[test]
    fn block_size_changes_up_to_a_thousand_ranks() {
        for (shape, from, to) in [
            (
                [4096, 4096],
                "cyclic(64),cyclic(64)@32x32",
                "cyclic(32),cyclic(128)@32x32",
            ),
            (
                [4096, 4096],
                "cyclic(64),cyclic(64)@8x16",
                "cyclic(32),cyclic(128)@8x16",
            ),
            (
                [1000, 999],
                "cyclic(3),cyclic(4)@5x7",
                "cyclic(4),cyclic(2)@5x7",
            ),
            ([512, 512], "block,block@16x16", "cyclic,cyclic@16x16"),
        ] {
            let a = Layout::parse(&shape, from).unwrap();
            let b = Layout::parse(&shape, to).unwrap();
            let (dense, sparse, bound) = dense_and_sparse(&a, &b);
            assert_eq!(dense, sparse, "{from} -> {to}");
            assert!(sparse <= bound);
            if from.starts_with("cyclic(64)") {
                assert_eq!(sparse, bound, "{from} -> {to}: whole cycles");
            }
        }
    }

    /// Past the dense solver: 131072 ranks of the 2-D block-size change,
    /// exact by the sparse assignment, keeping the bound; and a 1-D
    /// all-to-all whose matrix cannot be formed, answered with what the
    /// target's own map keeps and a bound.
    #[test]
    fn relabellings_at_131072_ranks() {
        let shape = [1 << 20, 1 << 20];
        let a = Layout::parse(&shape, "cyclic(64),cyclic(64)@256x512").unwrap();
        let b = Layout::parse(&shape, "cyclic(32),cyclic(128)@256x512").unwrap();
        let start = std::time::Instant::now();
        let r = optimal_relabelling(&a, &b, &Window::whole(&shape)).unwrap();
        assert_eq!(r.method, Method::Sparse);
        assert!(
            r.is_exact() && r.kept == r.bound,
            "{} of {}",
            r.kept,
            r.bound
        );
        assert!(start.elapsed().as_secs() < 20, "{:?}", start.elapsed());
        let n = [1usize << 40];
        let a = Layout::parse(&n, "block@131072").unwrap();
        let b = Layout::parse(&n, "cyclic(7)@131072").unwrap();
        let start = std::time::Instant::now();
        let r = optimal_relabelling(&a, &b, &Window::whole(&n)).unwrap();
        assert_eq!(r.method, Method::None);
        assert!(r.kept > 0 && r.kept <= r.bound, "{} of {}", r.kept, r.bound);
        assert!(start.elapsed().as_secs() < 20, "{:?}", start.elapsed());
    }
}
