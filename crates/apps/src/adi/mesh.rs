//! The discretisation of a run and the checks of its numbers.

use super::kernels::thomas_coefficients;
use super::AdiError;

/// The discretisation of an `n × n` interior grid stepped by `dt`: mesh
/// width `h = 1/(n+1)`, `r = dt / (2h²)`, and the eliminated coefficients of
/// the implicit systems ([`thomas_coefficients`]).
pub(super) struct Mesh {
    /// Mesh width.
    pub(super) h: f64,
    /// dt / (2h²).
    pub(super) r: f64,
    /// The Thomas coefficients of a line of `n` points.
    pub(super) coef: Vec<(f64, f64)>,
}

impl Mesh {
    /// The mesh of `n` interior points per dimension stepped by `dt`.
    pub(super) fn new(n: usize, dt: f64) -> Mesh {
        let h = 1.0 / (n + 1) as f64;
        let r = dt / (2.0 * h * h);
        let coef = thomas_coefficients(n, r);
        Mesh { h, r, coef }
    }
}

/// Checks the numbers of a run: at least one point per dimension and a
/// positive, finite time step (`steps` may be anything, 0 included).
pub(super) fn check(n: usize, steps: usize, dt: f64) -> Result<(), AdiError> {
    if n == 0 {
        return Err(AdiError::Parameter("n must be at least 1".into()));
    }
    if !(dt.is_finite() && dt > 0.0) {
        return Err(AdiError::Parameter(format!(
            "dt must be a positive number, got {dt}"
        )));
    }
    let _ = steps;
    Ok(())
}
