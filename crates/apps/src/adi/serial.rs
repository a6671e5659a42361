//! The serial reference: the same steps on one process with plain arrays.

use super::exact::initial;
use super::explicit::{explicit_columns, explicit_rows};
use super::mesh::{check, Mesh};
use super::tridiagonal::{solve_columns, solve_rows};
use super::AdiError;
use ndarray::Array2;

/// The same computation on one process with plain arrays: the reference the
/// distributed solver must match bit for bit.
///
/// # Errors
///
/// - [`AdiError::Parameter`] when `n` is 0 or `dt` is not a positive finite number.
pub fn solve_serial(
    n: usize,
    steps: usize,
    dt: f64,
    two_modes: bool,
) -> Result<Array2<f64>, AdiError> {
    check(n, steps, dt)?;
    let Mesh { h, r, coef } = Mesh::new(n, dt);
    let mut u = Array2::from_shape_fn((n, n), |(i, j)| {
        initial((i + 1) as f64 * h, (j + 1) as f64 * h, two_modes)
    });
    let mut w = Array2::zeros((n, n));
    for _ in 0..steps {
        explicit_rows(u.view(), w.view_mut(), r);
        solve_columns(w.view_mut(), &coef, r);
        explicit_columns(w.view(), u.view_mut(), r);
        solve_rows(u.view_mut(), &coef, r);
    }
    Ok(u)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adi::exact::exact;

    /// Max-norm error of the serial solver against the exact solution.
    fn error(n: usize, steps: usize, dt: f64) -> f64 {
        let u = solve_serial(n, steps, dt, false).unwrap();
        let h = 1.0 / (n + 1) as f64;
        let t = steps as f64 * dt;
        u.indexed_iter()
            .map(|((i, j), v)| (v - exact((i + 1) as f64 * h, (j + 1) as f64 * h, t, false)).abs())
            .fold(0.0, f64::max)
    }

    #[test]
    fn second_order_convergence() {
        // Halving h and dt together cuts the error by 4 ± 1.
        let e = [
            error(15, 10, 4e-3),
            error(31, 20, 2e-3),
            error(63, 40, 1e-3),
        ];
        for w in e.windows(2) {
            let ratio = w[0] / w[1];
            assert!((3.0..=5.0).contains(&ratio), "errors {e:?}, ratio {ratio}");
        }
    }

    #[test]
    fn two_modes_decay_at_their_rates() {
        let (n, steps, dt) = (31, 20, 2e-3);
        let u = solve_serial(n, steps, dt, true).unwrap();
        let h = 1.0 / (n + 1) as f64;
        let t = steps as f64 * dt;
        let e = u
            .indexed_iter()
            .map(|((i, j), v)| (v - exact((i + 1) as f64 * h, (j + 1) as f64 * h, t, true)).abs())
            .fold(0.0, f64::max);
        assert!(e < 2e-3, "{e}");
    }

    #[test]
    fn bad_parameters() {
        assert!(solve_serial(0, 1, 1e-3, false).is_err());
        assert!(solve_serial(4, 1, 0.0, false).is_err());
        assert!(solve_serial(4, 1, f64::NAN, false).is_err());
    }
}
