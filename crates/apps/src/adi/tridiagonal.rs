//! The implicit half of a step: the tridiagonal systems `(I − r δ²) x = d`
//! along the lines a block holds whole, rows or columns, solved in place by
//! the Thomas algorithm with coefficients eliminated once
//! ([`thomas_coefficients`](super::kernels::thomas_coefficients)).

use super::kernels::{backward, forward};
use ndarray::{ArrayViewMut2, Axis};
use rayon::prelude::*;

/// Solves the tridiagonal systems along rows (each row a whole line), in place.
pub(super) fn solve_rows(mut d: ArrayViewMut2<'_, f64>, coef: &[(f64, f64)], r: f64) {
    d.axis_iter_mut(Axis(0))
        .into_par_iter()
        .for_each(|mut line| {
            let n = line.len();
            for i in 0..n {
                let prev = if i > 0 { line[i - 1] } else { 0.0 };
                line[i] = forward(line[i], prev, r, coef[i].1, i == 0);
            }
            for i in (0..n.saturating_sub(1)).rev() {
                line[i] = backward(line[i], coef[i].0, line[i + 1]);
            }
        });
}

/// Solves the tridiagonal systems along columns (each column a whole line),
/// in place, sweeping rows so every step reads contiguous memory.
pub(super) fn solve_columns(mut d: ArrayViewMut2<'_, f64>, coef: &[(f64, f64)], r: f64) {
    let ncols = d.ncols();
    let chunk = 64.max(ncols.div_ceil(rayon::current_num_threads().max(1) * 4));
    if ncols == 0 {
        return;
    }
    d.axis_chunks_iter_mut(Axis(1), chunk)
        .into_par_iter()
        .for_each(|mut block: ArrayViewMut2<'_, f64>| {
            let n = block.nrows();
            for i in 0..n {
                for j in 0..block.ncols() {
                    let prev = if i > 0 { block[[i - 1, j]] } else { 0.0 };
                    block[[i, j]] = forward(block[[i, j]], prev, r, coef[i].1, i == 0);
                }
            }
            for i in (0..n.saturating_sub(1)).rev() {
                for j in 0..block.ncols() {
                    block[[i, j]] = backward(block[[i, j]], coef[i].0, block[[i + 1, j]]);
                }
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adi::kernels::thomas_coefficients;
    use ndarray::Array2;

    #[test]
    fn thomas_solves_the_system() {
        let (n, r) = (9, 0.7);
        let coef = thomas_coefficients(n, r);
        let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
        // d = (I - r δ²) x
        let mut d = Array2::from_shape_fn((1, n), |(_, i)| {
            let l = if i > 0 { x[i - 1] } else { 0.0 };
            let rr = if i + 1 < n { x[i + 1] } else { 0.0 };
            (1.0 + 2.0 * r) * x[i] - r * (l + rr)
        });
        let mut dt = d.t().to_owned();
        solve_rows(d.view_mut(), &coef, r);
        solve_columns(dt.view_mut(), &coef, r);
        for i in 0..n {
            assert!((d[[0, i]] - x[i]).abs() < 1e-12);
            assert_eq!(
                d[[0, i]].to_bits(),
                dt[[i, 0]].to_bits(),
                "rows and columns agree bit for bit"
            );
        }
    }
}
