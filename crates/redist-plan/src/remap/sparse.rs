//! The exact maximum-weight assignment of a sparse matrix: each row to at
//! most one column and each column to at most one row, entries not listed
//! weighing nothing — the optimal relabelling where the volume matrix has
//! few non-zeros (a rank exchanges data with few others), at any rank count.
//!
//! Every row may stay unassigned at weight 0: think of it as holding a
//! private extra column of its own. That makes a rectangular assignment
//! (every row to one column) solved exactly by successive shortest
//! augmenting paths (the method of the dense solver, [`super::assign_max`],
//! on sparse rows): start from potentials that make each row's heaviest
//! entries tight, match greedily along tight entries, then for each row
//! left over run Dijkstra over reduced costs to the nearest free column
//! (a real one, or the private column of a row on the path), shift the
//! potentials by the distances and flip the path. Costs stay non-negative
//! throughout, so each path is a shortest one and the result is optimal.
//! Time O(augmentations × entries explored × log), memory O(entries).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A sparse matrix of non-negative weights, row by row.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SparseMatrix {
    cols: usize,
    /// Row `i`'s entries are `entries[start[i]..start[i + 1]]`.
    start: Vec<usize>,
    /// (column, weight), weights above 0.
    entries: Vec<(usize, u64)>,
}

impl SparseMatrix {
    /// An empty matrix of `cols` columns, to be filled row by row.
    pub fn new(cols: usize) -> SparseMatrix {
        SparseMatrix {
            cols,
            start: vec![0],
            entries: Vec::new(),
        }
    }

    /// Appends a row with `entries` (column, weight); zero weights are left
    /// out.
    pub fn push_row(&mut self, entries: impl IntoIterator<Item = (usize, u64)>) {
        self.entries
            .extend(entries.into_iter().filter(|&(_, w)| w > 0));
        self.start.push(self.entries.len());
    }

    /// Rows so far.
    pub fn rows(&self) -> usize {
        self.start.len() - 1
    }

    /// Row `i`'s entries.
    fn row(&self, i: usize) -> &[(usize, u64)] {
        &self.entries[self.start[i]..self.start[i + 1]]
    }
}

/// A column of the search: a real column, or row `k`'s private one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Col {
    Real(usize),
    Own(usize),
}

/// The exact maximum-weight assignment of `m`: per row the column it takes
/// (`None`: none, weight 0), no column taken twice. Deterministic.
pub(crate) fn assign_max_sparse(m: &SparseMatrix) -> Vec<Option<usize>> {
    let mut s = Solver::new(m);
    s.greedy();
    for root in 0..m.rows() {
        if s.row_col[root].is_none() {
            s.augment(root);
        }
    }
    s.row_col
        .iter()
        .map(|c| match c {
            Some(Col::Real(j)) => Some(*j),
            _ => None,
        })
        .collect()
}

/// The state of the search: potentials (reduced cost of an entry is
/// `−w − u[i] − v[j]`, of a private column `−u[i] − own[i]`, never
/// negative; zero on assigned pairs) and the assignment.
struct Solver<'a> {
    m: &'a SparseMatrix,
    u: Vec<i128>,
    v: Vec<i128>,
    own: Vec<i128>,
    /// Per row, its column (`Own(i)` for its private one), if any.
    row_col: Vec<Option<Col>>,
    /// Per real column, its row.
    col_row: Vec<Option<usize>>,
    /// Dijkstra's scratch, reset after each search: distances and
    /// predecessor rows of real columns, and which were touched.
    dist: Vec<i128>,
    pred: Vec<usize>,
    touched: Vec<usize>,
}

impl<'a> Solver<'a> {
    fn new(m: &'a SparseMatrix) -> Solver<'a> {
        let rows = m.rows();
        // Row potentials make each row's heaviest entries (or its private
        // column, weight 0) tight.
        let u = (0..rows)
            .map(|i| -(m.row(i).iter().map(|&(_, w)| w).max().unwrap_or(0) as i128))
            .collect();
        Solver {
            m,
            u,
            v: vec![0; m.cols],
            own: vec![0; rows],
            row_col: vec![None; rows],
            col_row: vec![None; m.cols],
            dist: vec![i128::MAX; m.cols],
            pred: vec![0; m.cols],
            touched: Vec::new(),
        }
    }

    fn reduced(&self, i: usize, j: usize, w: u64) -> i128 {
        -(w as i128) - self.u[i] - self.v[j]
    }

    /// Assigns rows to free tight columns in row order.
    fn greedy(&mut self) {
        for i in 0..self.m.rows() {
            let tight = (self.m.row(i).iter())
                .find(|&&(j, w)| self.col_row[j].is_none() && self.reduced(i, j, w) == 0);
            match tight {
                Some(&(j, _)) => {
                    self.row_col[i] = Some(Col::Real(j));
                    self.col_row[j] = Some(i);
                }
                None if self.u[i] == 0 => self.row_col[i] = Some(Col::Own(i)),
                None => {}
            }
        }
    }

    /// Adds row `root` by a shortest augmenting path.
    fn augment(&mut self, root: usize) {
        let mut heap = BinaryHeap::new();
        let mut settled: Vec<usize> = Vec::new();
        self.offer(root, 0, &mut heap);
        let (end, total) = loop {
            let Some(Reverse((d, col))) = heap.pop() else {
                unreachable!("a row's own column ends every search");
            };
            match col {
                Col::Own(k) => break (Col::Own(k), d),
                Col::Real(j) if d > self.dist[j] => continue,
                Col::Real(j) => {
                    settled.push(j);
                    match self.col_row[j] {
                        None => break (Col::Real(j), d),
                        // The matched entry back is tight: its row sits at d.
                        Some(k) => self.offer(k, d, &mut heap),
                    }
                }
            }
        };
        // Shift potentials: a column settled at d ≤ total and its row move
        // by total − d; the root by total.
        for &j in &settled {
            let shift = total - self.dist[j];
            self.v[j] -= shift;
            if let Some(k) = self.col_row[j] {
                self.u[k] += shift;
            }
        }
        self.u[root] += total;
        if let Col::Own(k) = end {
            // Its row moved by total − (d at the row); the column follows
            // so that the new pair is tight.
            self.own[k] = -self.u[k];
        }
        self.flip(root, end);
        for &j in &self.touched {
            self.dist[j] = i128::MAX;
        }
        self.touched.clear();
    }

    /// Row `i`, reached at distance `d`, offers its entries and its own
    /// column.
    fn offer(&mut self, i: usize, d: i128, heap: &mut BinaryHeap<Reverse<(i128, Col)>>) {
        for &(j, w) in self.m.row(i) {
            let dj = d + self.reduced(i, j, w);
            if dj < self.dist[j] {
                if self.dist[j] == i128::MAX {
                    self.touched.push(j);
                }
                self.dist[j] = dj;
                self.pred[j] = i;
                heap.push(Reverse((dj, Col::Real(j))));
            }
        }
        if self.row_col[i] != Some(Col::Own(i)) {
            heap.push(Reverse((d - self.u[i] - self.own[i], Col::Own(i))));
        }
    }

    /// Flips the path from `root` to the free column `end`.
    fn flip(&mut self, root: usize, end: Col) {
        let mut col = end;
        loop {
            let row = match col {
                Col::Own(k) => k,
                Col::Real(j) => self.pred[j],
            };
            let previous = self.row_col[row];
            self.row_col[row] = Some(col);
            if let Col::Real(j) = col {
                self.col_row[j] = Some(row);
            }
            if row == root {
                break;
            }
            match previous {
                Some(c @ Col::Real(_)) => col = c,
                _ => unreachable!("a row inside a path came by its real column"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remap::assign_max;
    use quickcheck::quickcheck;

    /// The weight of an assignment.
    fn weight(m: &SparseMatrix, a: &[Option<usize>]) -> u64 {
        a.iter()
            .enumerate()
            .filter_map(|(i, c)| c.map(|j| (i, j)))
            .map(|(i, j)| m.row(i).iter().find(|e| e.0 == j).map_or(0, |e| e.1))
            .sum()
    }

    /// The same matrix dense, square.
    fn dense(m: &SparseMatrix) -> Vec<Vec<u64>> {
        let n = m.rows().max(m.cols);
        let mut d = vec![vec![0; n]; n];
        for (i, row) in d.iter_mut().enumerate().take(m.rows()) {
            for &(j, w) in m.row(i) {
                row[j] = w;
            }
        }
        d
    }

    fn agrees_with_dense(m: &SparseMatrix) -> bool {
        let a = assign_max_sparse(m);
        let mut used = vec![false; m.cols];
        let valid = a
            .iter()
            .flatten()
            .all(|&j| !std::mem::replace(&mut used[j], true));
        let d = dense(m);
        let best: u64 = assign_max(&d)
            .unwrap()
            .iter()
            .enumerate()
            .map(|(col, &row)| d[row][col])
            .sum();
        valid && weight(m, &a) == best
    }

    quickcheck! {
        fn sparse_assignment_is_the_dense_optimum(
            n: u8, density: u8, seed: Vec<(u8, u8, u16)>
        ) -> bool {
            let n = usize::from(n % 24) + 1;
            let mut rows = vec![Vec::new(); n];
            for (i, (r, c, w)) in seed.into_iter().enumerate() {
                if i % (usize::from(density % 4) + 1) == 0 {
                    let w = u64::from(w % 9);
                    rows[usize::from(r) % n].push((usize::from(c) % n, w));
                }
            }
            let mut m = SparseMatrix::new(n);
            for mut row in rows {
                row.sort();
                row.dedup_by_key(|e| e.0);
                m.push_row(row);
            }
            agrees_with_dense(&m)
        }
    }

    /// Equal weights on a regular pattern (every tie at once), a Kronecker
    /// product of two such, and a matrix with more columns than rows.
    #[test]
    fn ties_products_and_rectangles() {
        let pattern = |n: usize, k: usize, w: u64| {
            let mut m = SparseMatrix::new(n);
            for i in 0..n {
                m.push_row((0..k).map(|x| ((2 * i + x) % n, w)));
            }
            m
        };
        for (n, k) in [(8, 2), (9, 3), (16, 4), (7, 1)] {
            assert!(agrees_with_dense(&pattern(n, k, 5)), "{n}, {k}");
        }
        let (a, b) = (pattern(4, 2, 3), pattern(6, 3, 2));
        let mut k = SparseMatrix::new(24);
        for i in 0..4 {
            for x in 0..6 {
                k.push_row(
                    a.row(i)
                        .iter()
                        .flat_map(|&(j, w)| b.row(x).iter().map(move |&(y, v)| (j * 6 + y, w * v))),
                );
            }
        }
        assert!(agrees_with_dense(&k));
        let mut wide = SparseMatrix::new(10);
        for i in 0..4 {
            wide.push_row([(i, 1), (9 - i, 2 + i as u64)]);
        }
        assert!(agrees_with_dense(&wide));
    }
}
