//! Balanced grid extents for a rank count, as `MPI_Dims_create` chooses them.

use crate::error::GridError;

/// Splits `ranks` processes over `fixed.len()` grid dimensions.
///
/// Entries of `fixed` that are non-zero are kept as given; the zero entries are
/// filled so that the product of all extents equals `ranks` and the filled
/// extents are as close to each other as possible: among all factorisations,
/// the one whose filled extents, sorted in decreasing order, are
/// lexicographically smallest. The filled extents appear in non-increasing
/// order, as `MPI_Dims_create` returns them.
///
/// ```
/// use procgrid::balanced_extents;
/// assert_eq!(balanced_extents(12, &[0, 0]).unwrap(), vec![4, 3]);
/// assert_eq!(balanced_extents(24, &[0, 0, 0]).unwrap(), vec![4, 3, 2]);
/// assert_eq!(balanced_extents(7, &[0, 0]).unwrap(), vec![7, 1]);
/// assert_eq!(balanced_extents(12, &[0, 2]).unwrap(), vec![6, 2]);
/// assert!(balanced_extents(12, &[5, 0]).is_err());
/// ```
///
/// # Errors
///
/// - [`GridError::NoDimensions`] when `fixed` is empty;
/// - [`GridError::NoFactorisation`] when `ranks` is 0, or the non-zero entries of
///   `fixed` overflow, do not divide `ranks`, or (all entries fixed) multiply to
///   another number than `ranks`.
pub fn balanced_extents(ranks: usize, fixed: &[usize]) -> Result<Vec<usize>, GridError> {
    let fail = |reason| GridError::NoFactorisation {
        ranks,
        ndims: fixed.len(),
        fixed: fixed.to_vec(),
        reason,
    };
    if fixed.is_empty() {
        return Err(GridError::NoDimensions);
    }
    if ranks == 0 {
        return Err(fail("the rank count must be at least 1"));
    }
    let mut fixed_product = 1usize;
    for &f in fixed.iter().filter(|&&f| f > 0) {
        fixed_product = fixed_product
            .checked_mul(f)
            .ok_or(fail("the fixed extents overflow"))?;
    }
    if !ranks.is_multiple_of(fixed_product) {
        return Err(fail("the fixed extents do not divide the rank count"));
    }
    let free = fixed.iter().filter(|&&f| f == 0).count();
    let rest = ranks / fixed_product;
    if free == 0 {
        return if rest == 1 {
            Ok(fixed.to_vec())
        } else {
            Err(fail(
                "all extents are fixed and their product differs from the rank count",
            ))
        };
    }
    let best = smallest_factorisation(rest, free, rest).ok_or(fail("no factorisation exists"))?;
    let mut filled = best.into_iter();
    Ok(fixed
        .iter()
        .map(|&f| if f > 0 { f } else { filled.next().unwrap_or(1) })
        .collect())
}

/// The lexicographically smallest non-increasing factorisation of `n` into
/// `slots` factors, each at most `cap`.
///
/// Depth-first in increasing order of the leading factor, so the first complete
/// factorisation found is the smallest. The leading factor of a non-increasing
/// factorisation is at least the `slots`-th root of `n`, which is where the
/// scan starts.
fn smallest_factorisation(n: usize, slots: usize, cap: usize) -> Option<Vec<usize>> {
    if slots == 1 {
        return (n <= cap).then(|| vec![n]);
    }
    let mut f = 1;
    while !pow_at_least(f, slots, n) {
        f += 1;
    }
    while f <= cap.min(n) {
        if n.is_multiple_of(f) {
            if let Some(mut rest) = smallest_factorisation(n / f, slots - 1, f) {
                rest.insert(0, f);
                return Some(rest);
            }
        }
        f += 1;
    }
    None
}

/// Whether `f^k >= n`, without overflow.
fn pow_at_least(f: usize, k: usize, n: usize) -> bool {
    let mut acc = 1usize;
    for _ in 0..k {
        match acc.checked_mul(f) {
            Some(a) if a < n => acc = a,
            _ => return true,
        }
    }
    acc >= n
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every non-increasing factorisation of n into k factors, by brute force.
    fn all_factorisations(n: usize, k: usize, cap: usize) -> Vec<Vec<usize>> {
        if k == 1 {
            return if n <= cap { vec![vec![n]] } else { vec![] };
        }
        let mut out = vec![];
        for f in (1..=cap.min(n)).rev() {
            if n.is_multiple_of(f) {
                for mut rest in all_factorisations(n / f, k - 1, f) {
                    rest.insert(0, f);
                    out.push(rest);
                }
            }
        }
        out
    }

    #[test]
    fn matches_brute_force_for_1_to_64_ranks() {
        for ranks in 1..=64 {
            for ndims in 1..=4 {
                let got = balanced_extents(ranks, &vec![0; ndims]).unwrap();
                let best = all_factorisations(ranks, ndims, ranks)
                    .into_iter()
                    .min()
                    .unwrap();
                assert_eq!(got, best, "ranks {ranks}, ndims {ndims}");
                assert_eq!(got.iter().product::<usize>(), ranks);
                assert!(got.windows(2).all(|w| w[0] >= w[1]));
            }
        }
    }

    #[test]
    fn known_values() {
        assert_eq!(balanced_extents(1, &[0, 0]).unwrap(), vec![1, 1]);
        assert_eq!(balanced_extents(6, &[0, 0]).unwrap(), vec![3, 2]);
        assert_eq!(balanced_extents(16, &[0, 0]).unwrap(), vec![4, 4]);
        assert_eq!(balanced_extents(24, &[0, 0]).unwrap(), vec![6, 4]);
        assert_eq!(balanced_extents(64, &[0, 0, 0]).unwrap(), vec![4, 4, 4]);
        assert_eq!(balanced_extents(30, &[0, 0, 0]).unwrap(), vec![5, 3, 2]);
        assert_eq!(balanced_extents(13, &[0, 0, 0]).unwrap(), vec![13, 1, 1]);
    }

    #[test]
    fn fixed_entries() {
        assert_eq!(balanced_extents(24, &[0, 4, 0]).unwrap(), vec![3, 4, 2]);
        assert_eq!(balanced_extents(8, &[1, 0]).unwrap(), vec![1, 8]);
        assert_eq!(balanced_extents(6, &[2, 3]).unwrap(), vec![2, 3]);
        assert!(balanced_extents(6, &[2, 2]).is_err());
        assert!(balanced_extents(6, &[4, 0]).is_err());
        assert!(balanced_extents(0, &[0]).is_err());
        assert_eq!(balanced_extents(4, &[]), Err(GridError::NoDimensions));
    }
}
