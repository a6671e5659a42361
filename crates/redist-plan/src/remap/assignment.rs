//! The exact referee: a maximum-weight perfect assignment ([`assign_max`]),
//! the Hungarian method with potentials and a warm start.

use crate::error::PlanError;
use std::ops::{Add, AddAssign, Sub, SubAssign};

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

/// Bids per row allowed in the augmenting row reduction
/// ([`Solver::augmenting_row_reduction`]).
const ARR_BIDS_PER_ROW: usize = 8;

/// Marks an unmatched row or column.
const FREE: usize = usize::MAX;

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
    let mut solver = Solver::new(n, cost);
    let free_rows = solver.match_tight_pairs();
    let mut free_rows = solver.augmenting_row_reduction(free_rows);
    solver.set_row_potentials();
    // Rows that value their best column most go first: on ordered
    // ("Monge-like") matrices later rows then rarely displace earlier ones.
    free_rows.sort_by_key(|&i| (solver.row(i).iter().min().copied(), i));
    let mut search = PathSearch::new(n);
    for root in free_rows {
        solver.augment(root, &mut search);
    }
    solver.row_of
}

/// A partial assignment with its potentials: the state the steps of
/// [`min_cost_assignment`] share.
struct Solver<'a, T> {
    /// Rows and columns.
    n: usize,
    /// The `n × n` row-major cost matrix.
    cost: &'a [T],
    /// Row potentials.
    u: Vec<T>,
    /// Column potentials (prices).
    v: Vec<T>,
    /// The row matched to each column, [`FREE`] if none.
    row_of: Vec<usize>,
    /// The column matched to each row, [`FREE`] if none.
    col_of: Vec<usize>,
}

/// Scratch space of one shortest-path search, kept between searches.
struct PathSearch<T> {
    /// Distance of each column from the root, on reduced costs.
    dist: Vec<T>,
    /// The row from which each column was reached.
    pred: Vec<usize>,
    /// Columns not yet settled.
    todo: Vec<usize>,
    /// Columns settled, in order.
    done: Vec<usize>,
}

impl<T: Potential> PathSearch<T> {
    fn new(n: usize) -> Self {
        PathSearch {
            dist: vec![T::INF; n],
            pred: vec![0usize; n],
            todo: Vec::with_capacity(n),
            done: Vec::with_capacity(n),
        }
    }
}

impl<'a, T: Potential> Solver<'a, T> {
    /// Nothing matched, potentials zero.
    fn new(n: usize, cost: &'a [T]) -> Self {
        Solver {
            n,
            cost,
            u: vec![T::ZERO; n],
            v: vec![T::ZERO; n],
            row_of: vec![FREE; n],
            col_of: vec![FREE; n],
        }
    }

    /// Row `i` of the cost matrix.
    fn row(&self, i: usize) -> &'a [T] {
        &self.cost[i * self.n..(i + 1) * self.n]
    }

    /// The cheap start: column reduction (each column's price is its
    /// cheapest entry), then a greedy matching along tight pairs, so that
    /// rows with equal or near-equal preferences need no long searches.
    /// Returns the rows left free, in increasing order.
    fn match_tight_pairs(&mut self) -> Vec<usize> {
        let n = self.n;
        for (j, vj) in self.v.iter_mut().enumerate() {
            *vj = (0..n)
                .map(|i| self.cost[i * n + j])
                .min()
                .unwrap_or(T::ZERO);
        }
        for j in 0..n {
            if let Some(i) = (0..n).find(|&i| self.col_of[i] == FREE && self.row(i)[j] == self.v[j])
            {
                self.row_of[j] = i;
                self.col_of[i] = j;
            }
        }
        (0..n).filter(|&i| self.col_of[i] == FREE).collect()
    }

    /// Augmenting row reduction (Jonker and Volgenant, 1987), two passes
    /// over the free rows: each free row bids ([`bid`](Self::bid)); a row
    /// displaced by a strict bid bids next, one displaced otherwise waits for
    /// the next pass. A budget of O(n) bids (O(n²) work) bounds price wars.
    /// Returns the rows still free.
    fn augmenting_row_reduction(&mut self, mut free_rows: Vec<usize>) -> Vec<usize> {
        let mut budget = ARR_BIDS_PER_ROW * self.n + 64;
        for _ in 0..2 {
            let mut queue = std::mem::take(&mut free_rows);
            let mut k = 0;
            while k < queue.len() && budget > 0 {
                budget -= 1;
                let i = queue[k];
                k += 1;
                match self.bid(i) {
                    Some((displaced, true)) => {
                        k -= 1;
                        queue[k] = displaced;
                    }
                    Some((displaced, false)) => free_rows.push(displaced),
                    None => {}
                }
            }
            free_rows.extend_from_slice(&queue[k..]);
        }
        free_rows
    }

    /// One bid of free row `i`: it takes its cheapest column and lowers that
    /// column's price by the gap to its second cheapest, so it stays on a
    /// cheapest column (a strict bid). Without a gap it takes the second
    /// cheapest column instead when the cheapest is matched. Every matched
    /// row stays on one of its cheapest columns, so the row potentials of
    /// [`set_row_potentials`](Self::set_row_potentials) are feasible at any
    /// point. Returns the row displaced, if any, and whether the bid was
    /// strict.
    fn bid(&mut self, i: usize) -> Option<(usize, bool)> {
        let (j1, m1, j2, m2) = self.two_cheapest(i);
        let mut j = j1;
        let mut displaced = self.row_of[j1];
        let strict = j2 != FREE && m1 < m2;
        if strict {
            self.v[j1] -= m2 - m1;
        } else if displaced != FREE && j2 != FREE {
            j = j2;
            displaced = self.row_of[j2];
        }
        let out = if displaced != FREE {
            self.col_of[displaced] = FREE;
            Some((displaced, strict))
        } else {
            None
        };
        self.row_of[j] = i;
        self.col_of[i] = j;
        out
    }

    /// The cheapest and second cheapest columns of row `i` at the current
    /// prices, `(j1, m1, j2, m2)`, first index on ties; `j2` is [`FREE`]
    /// when the row has one column.
    fn two_cheapest(&self, i: usize) -> (usize, T, usize, T) {
        let (mut j1, mut m1, mut j2, mut m2) = (FREE, T::INF, FREE, T::INF);
        for (j, (&c, &vj)) in self.row(i).iter().zip(&self.v).enumerate() {
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
        (j1, m1, j2, m2)
    }

    /// Row potentials that make every reduced cost non-negative and matched
    /// pairs tight: a matched row's reduced cost on its column, a free row's
    /// cheapest reduced cost.
    fn set_row_potentials(&mut self) {
        for i in 0..self.n {
            self.u[i] = match self.col_of[i] {
                FREE => self
                    .row(i)
                    .iter()
                    .zip(&self.v)
                    .map(|(&c, &vj)| c - vj)
                    .min()
                    .unwrap_or(T::ZERO),
                j => self.row(i)[j] - self.v[j],
            };
        }
    }

    /// Adds free row `root` to the matching: the shortest augmenting path
    /// ([`shortest_path`](Self::shortest_path)), the shift of the potentials
    /// along it, the flip of the path.
    fn augment(&mut self, root: usize, search: &mut PathSearch<T>) {
        let end = self.shortest_path(root, search);
        // Shift potentials: a column reached at distance d ≤ D (the length of
        // the path found) and its row move by D − d; the root moves by D.
        let total = search.dist[end];
        for &j in &search.done {
            let shift = total - search.dist[j];
            self.v[j] -= shift;
            if self.row_of[j] != FREE {
                self.u[self.row_of[j]] += shift;
            }
        }
        self.u[root] += total;
        // Flip the path.
        let mut j = end;
        loop {
            let i = search.pred[j];
            let next = self.col_of[i];
            self.row_of[j] = i;
            self.col_of[i] = j;
            if i == root {
                break;
            }
            j = next;
        }
    }

    /// Dijkstra over columns on reduced costs from free row `root` to the
    /// nearest free column, which it returns; `search` holds the distances,
    /// the predecessors and the columns settled.
    fn shortest_path(&self, root: usize, search: &mut PathSearch<T>) -> usize {
        search.dist.fill(T::INF);
        search.todo.clear();
        search.todo.extend(0..self.n);
        search.done.clear();
        // `i` is the row reached at distance `di`.
        let (mut i, mut di) = (root, T::ZERO);
        loop {
            let (costs, ui) = (self.row(i), self.u[i]);
            let mut best = 0usize; // index into `todo`
            let mut best_d = T::INF;
            for (t, &j) in search.todo.iter().enumerate() {
                let d = di + (costs[j] - ui - self.v[j]);
                if d < search.dist[j] {
                    search.dist[j] = d;
                    search.pred[j] = i;
                }
                // Among equal distances prefer a free column: it ends the
                // search at once (with many ties, O(n²) instead of O(n³)).
                let dj = search.dist[j];
                if dj < best_d
                    || (dj == best_d
                        && self.row_of[j] == FREE
                        && self.row_of[search.todo[best]] != FREE)
                {
                    best_d = dj;
                    best = t;
                }
            }
            let j = search.todo.swap_remove(best);
            search.done.push(j);
            if self.row_of[j] == FREE {
                return j;
            }
            i = self.row_of[j];
            di = best_d;
        }
    }
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
/// ```
/// use redist_plan::remap::assign_max;
/// // Rows are ranks, columns target positions.
/// let w = vec![vec![1, 9, 0], vec![8, 1, 0], vec![0, 0, 5]];
/// assert_eq!(assign_max(&w).unwrap(), vec![1, 0, 2]); // 8 + 9 + 5
/// assert!(assign_max(&[vec![1, 2]]).is_err());
/// ```
///
/// # Errors
///
/// - [`PlanError::InvalidArgument`] when the matrix is not square (a row whose
///   length is not the number of rows).
pub fn assign_max(weights: &[Vec<u64>]) -> Result<Vec<usize>, PlanError> {
    let n = weights.len();
    if let Some((i, row)) = weights.iter().enumerate().find(|(_, r)| r.len() != n) {
        return Err(PlanError::InvalidArgument {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remap::kept;
    use crate::remap::test_util::{identity, is_perm};
    use quickcheck::{quickcheck, Arbitrary, Gen};

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
    }

    #[test]
    fn non_square_is_refused_and_empty_is_fine() {
        assert!(matches!(
            assign_max(&[vec![1, 2], vec![3]]),
            Err(PlanError::InvalidArgument { .. })
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
}
