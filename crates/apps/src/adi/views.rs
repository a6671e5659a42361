//! The local parts of the solver's 2-D arrays as ndarray views.

use dist_array::DistArray;
use ndarray::{ArrayView2, ArrayViewMut2, Ix2};

/// The local part of the 2-D array `a`.
pub(super) fn view2(a: &DistArray<f64>) -> ArrayView2<'_, f64> {
    a.local()
        .into_dimensionality::<Ix2>()
        .expect("2-D local part")
}

/// The local part of the 2-D array `a`, writable.
pub(super) fn view2_mut(a: &mut DistArray<f64>) -> ArrayViewMut2<'_, f64> {
    a.local_mut()
        .into_dimensionality::<Ix2>()
        .expect("2-D local part")
}
