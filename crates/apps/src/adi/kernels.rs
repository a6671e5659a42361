//! The point-wise kernels shared by the serial and distributed solvers.

/// `c + r (l − 2c + rr)`: one explicit second-difference update.
#[inline]
pub fn explicit(l: f64, c: f64, rr: f64, r: f64) -> f64 {
    c + r * (l - 2.0 * c + rr)
}

/// The eliminated coefficients of the tridiagonal system with diagonal
/// `1 + 2r` and off-diagonals `−r`: (c′ᵢ, mᵢ) with mᵢ the pivot.
pub fn thomas_coefficients(n: usize, r: f64) -> Vec<(f64, f64)> {
    let (a, b, c) = (-r, 1.0 + 2.0 * r, -r);
    let mut out = Vec::with_capacity(n);
    let mut cp = 0.0;
    for i in 0..n {
        let m = if i == 0 { b } else { b - a * cp };
        cp = c / m;
        out.push((cp, m));
    }
    out
}

/// Forward elimination of element `i` of a line: (dᵢ − a d′ᵢ₋₁) / mᵢ.
#[inline]
pub fn forward(d: f64, prev: f64, r: f64, m: f64, first: bool) -> f64 {
    if first {
        d / m
    } else {
        (d + r * prev) / m
    }
}

/// Back substitution: d′ᵢ − c′ᵢ xᵢ₊₁.
#[inline]
pub fn backward(dp: f64, cp: f64, next: f64) -> f64 {
    dp - cp * next
}
