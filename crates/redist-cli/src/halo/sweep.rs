//! The sweep `redist halo --overlap` hides an update behind: what a
//! stencil solver computes from the interior while the ghosts move.

use dist_array::{Complex, DistArray, Element};
use ndarray::{ArrayViewD, Slice};

/// A sweep over the interior of `a` into `b` (same layout and widths),
/// reading no ghost.
pub(super) trait Sweep: Element {
    /// The sweep: a copy of the interior, for element types without
    /// arithmetic here.
    fn sweep(a: &DistArray<Self>, b: &mut DistArray<Self>) {
        b.local_mut().assign(&a.local());
    }
}

impl Sweep for f32 {}
impl Sweep for Complex<f64> {}
impl Sweep for i32 {}
impl Sweep for u8 {}

impl Sweep for f64 {
    /// The 2·d+1-point average of every interior cell whose neighbours are
    /// all interior: what a Jacobi step computes before its ghosts arrive.
    fn sweep(a: &DistArray<f64>, b: &mut DistArray<f64>) {
        let a = a.local();
        if a.shape().iter().any(|&m| m < 3) {
            return;
        }
        let n = a.ndim();
        let shifted = |d: usize, by: isize| -> ArrayViewD<'_, f64> {
            a.slice_each_axis(|ax| {
                let m = ax.len as isize;
                let s = if ax.axis.index() == d { by } else { 0 };
                Slice::from(1 + s..m - 1 + s)
            })
        };
        let mut out = b.local_mut();
        let mut inner = out.slice_each_axis_mut(|ax| Slice::from(1..ax.len as isize - 1));
        let c = 1.0 / (2 * n + 1) as f64;
        inner.zip_mut_with(&shifted(0, 0), |x, &y| *x = c * y);
        for d in 0..n {
            for by in [-1, 1] {
                inner.zip_mut_with(&shifted(d, by), |x, &y| *x += c * y);
            }
        }
    }
}
