//! Small integer helpers shared by the plans and the remapping.

/// The greatest common divisor of `a` and `b` (`gcd(a, 0) = a`).
pub(crate) fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// `(a · b) mod m` without overflow; `m ≥ 1`.
pub(crate) fn mul_mod(a: usize, b: usize, m: usize) -> usize {
    ((a as u128 * b as u128) % m as u128) as usize
}

/// `⌊a · b / d⌋` without overflow; `d ≥ 1`, result fits (`a < d` in every use).
pub(crate) fn mul_div(a: usize, b: usize, d: usize) -> usize {
    (a as u128 * b as u128 / d as u128) as usize
}
