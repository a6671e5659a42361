//! The explicit half of a step: `(I + r δ²) u` along the lines a block
//! holds whole, rows or columns.

use super::kernels::explicit;
use ndarray::{ArrayView2, ArrayViewMut2, Axis};
use rayon::prelude::*;

/// Explicit term along rows (dimension 1) of a block whose rows are whole.
pub(super) fn explicit_rows(src: ArrayView2<'_, f64>, mut dst: ArrayViewMut2<'_, f64>, r: f64) {
    dst.axis_iter_mut(Axis(0))
        .into_par_iter()
        .zip(src.axis_iter(Axis(0)).into_par_iter())
        .for_each(|(mut out, u)| {
            let n = u.len();
            for j in 0..n {
                let l = if j > 0 { u[j - 1] } else { 0.0 };
                let rr = if j + 1 < n { u[j + 1] } else { 0.0 };
                out[j] = explicit(l, u[j], rr, r);
            }
        });
}

/// Explicit term along columns (dimension 0) of a block whose columns are whole.
pub(super) fn explicit_columns(src: ArrayView2<'_, f64>, mut dst: ArrayViewMut2<'_, f64>, r: f64) {
    let n = src.nrows();
    dst.axis_iter_mut(Axis(0))
        .into_par_iter()
        .enumerate()
        .for_each(|(i, mut out)| {
            let c = src.row(i);
            for j in 0..c.len() {
                let l = if i > 0 { src[[i - 1, j]] } else { 0.0 };
                let rr = if i + 1 < n { src[[i + 1, j]] } else { 0.0 };
                out[j] = explicit(l, c[j], rr, r);
            }
        });
}
