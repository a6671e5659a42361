//! The Fourier mode the heat solver starts from, and its exact discrete
//! solution: on a periodic grid of `n` points per axis (spacing h = 1/n),
//! `sin(2π m_d x_d)` is an eigenvector of the second difference with
//! eigenvalue `-4 sin²(π m_d h) / h²`, so the product over the axes is an
//! eigenvector of the discrete Laplacian with the sum of those. One
//! explicit Euler step of `u_t = Δu` multiplies its amplitude by
//! `g = 1 - 4 r Σ_d sin²(π m_d h)`, `r = dt / h²`: after `k` steps the
//! field is exactly `g^k` times the first, up to rounding.

use std::f64::consts::PI;

/// The wave numbers of the mode per axis (x, y, z).
pub const WAVES: [usize; 3] = [1, 2, 3];

/// The mode's value at grid point `g` (indices along each axis) of a grid
/// of `n` points per axis.
pub fn mode(n: usize, g: &[usize]) -> f64 {
    g.iter()
        .zip(WAVES)
        .map(|(&i, m)| (2.0 * PI * (m * i) as f64 / n as f64).sin())
        .product()
}

/// The factor one step with `r = dt / h²` multiplies the mode by, in
/// `dims` dimensions on `n` points per axis.
pub fn step_factor(n: usize, dims: usize, r: f64) -> f64 {
    let h = 1.0 / n as f64;
    let sum: f64 = WAVES[..dims]
        .iter()
        .map(|&m| (PI * m as f64 * h).sin().powi(2))
        .sum();
    1.0 - 4.0 * r * sum
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One step of the stencil on the mode, computed point by point, is
    /// the factor times the mode.
    #[test]
    fn the_mode_is_an_eigenvector_of_one_step() {
        let (n, r) = (12, 0.1);
        for dims in [2, 3] {
            let g = step_factor(n, dims, r);
            let at = |p: &[isize]| {
                let q: Vec<usize> = p
                    .iter()
                    .map(|&x| x.rem_euclid(n as isize) as usize)
                    .collect();
                mode(n, &q)
            };
            for i in 0..n as isize {
                let p: Vec<isize> = (0..dims as isize)
                    .map(|d| (i * (d + 1)) % n as isize)
                    .collect();
                let mut lap = -2.0 * dims as f64 * at(&p);
                for d in 0..dims {
                    for s in [-1, 1] {
                        let mut q = p.clone();
                        q[d] += s;
                        lap += at(&q);
                    }
                }
                let next = at(&p) + r * lap;
                assert!((next - g * at(&p)).abs() < 1e-12, "{dims}-D point {p:?}");
            }
        }
    }
}
