//! Plane waves with a known spectrum ([`Wave`]), the error measures the
//! distributed transform is checked with, and the serial reference
//! ([`fft2_serial`]).

#[cfg(doc)]
use super::{run::run, Fft2d};
use super::{view2, FftError, C64};
use dist_array::DistArray;
use mpi::collective::{CommunicatorCollectives, SystemOperation};
use ndarray::{Array2, ArrayView2};
use rayon::prelude::*;
use rustfft::FftPlanner;
use std::f64::consts::PI;

/// One plane wave `amplitude · exp(2πi(k0·x/n + k1·y/m))`; its forward 2-D
/// transform is one spike of `n·m·amplitude` at `(k0 mod n, k1 mod m)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Wave {
    /// Frequency along dimension 0 (any sign; taken modulo `n`).
    pub k0: i64,
    /// Frequency along dimension 1 (any sign; taken modulo `m`).
    pub k1: i64,
    /// Complex amplitude.
    pub amplitude: C64,
}

/// `k mod n` in `0..n`.
pub(crate) fn wrap(k: i64, n: usize) -> usize {
    let n = i128::try_from(n).expect("an extent fits i128");
    usize::try_from(i128::from(k).rem_euclid(n)).expect("a remainder below an extent")
}

/// The plane waves [`run`] transforms: a constant, a low mode, a negative
/// frequency and a mode near the middle of the spectrum, with four different
/// complex amplitudes (modes that coincide on small arrays add up).
///
/// ```
/// let waves = apps::fft2d::default_waves(30, 21);
/// assert_eq!(waves.len(), 4);
/// ```
pub fn default_waves(n: usize, m: usize) -> Vec<Wave> {
    let half = |k: usize| i64::try_from(k / 2).unwrap_or(0);
    let third = |k: usize| i64::try_from(k / 3).unwrap_or(0);
    vec![
        Wave {
            k0: 0,
            k1: 0,
            amplitude: C64::new(1.0, 0.0),
        },
        Wave {
            k0: 1,
            k1: 2,
            amplitude: C64::new(0.5, -0.25),
        },
        Wave {
            k0: -3,
            k1: 5,
            amplitude: C64::new(0.0, 0.75),
        },
        Wave {
            k0: half(n),
            k1: -third(m),
            amplitude: C64::new(-0.3, 0.2),
        },
    ]
}

/// The value at `(x, y)` of the sum of `waves` on an `n × m` array. Phases
/// are reduced modulo the extents in integers first, so they stay exact.
pub fn wave_value(waves: &[Wave], n: usize, m: usize, x: usize, y: usize) -> C64 {
    let phase = |k: usize, i: usize, len: usize| {
        let r = (k as u128 * i as u128) % len as u128;
        r as f64 / len as f64
    };
    waves
        .iter()
        .map(|w| {
            let t = phase(wrap(w.k0, n), x, n) + phase(wrap(w.k1, m), y, m);
            w.amplitude * C64::from_polar(1.0, 2.0 * PI * t)
        })
        .sum()
}

/// The forward transform of the sum of `waves` at `(k, l)`: `n·m` times the
/// sum of the amplitudes of the waves of that frequency, zero elsewhere.
pub fn expected_spectrum(waves: &[Wave], n: usize, m: usize, k: usize, l: usize) -> C64 {
    let nm = n as f64 * m as f64;
    waves
        .iter()
        .filter(|w| wrap(w.k0, n) == k && wrap(w.k1, m) == l)
        .map(|w| w.amplitude * nm)
        .sum()
}

/// Largest `|a − b|` over all elements (collective): `f(g)` gives `b` at
/// global index `g` of `a`'s layout.
fn max_error_against<F>(a: &DistArray<C64>, f: F) -> Result<f64, FftError>
where
    F: Fn(usize, usize) -> C64 + Sync,
{
    let mut mine = 0.0f64;
    if let Some(rank) = a.rank() {
        let layout = a.layout();
        let coords = layout.coords_of_rank(rank)?;
        let gi = layout.axis(0).local_to_global_table(coords[0]);
        let gj = layout.axis(1).local_to_global_table(coords[1]);
        let v = view2(a);
        mine = gi
            .par_iter()
            .enumerate()
            .map(|(li, &i)| {
                gj.iter()
                    .enumerate()
                    .map(|(lj, &j)| (v[[li, lj]] - f(i, j)).norm())
                    .fold(0.0, f64::max)
            })
            .reduce(|| 0.0, f64::max);
    }
    let mut all = 0.0f64;
    a.grid()
        .communicator()
        .all_reduce_into(&mine, &mut all, SystemOperation::max());
    Ok(all)
}

/// Largest `|X[k][l] − expected|` of a spectrum laid out as an [`Fft2d`]'s
/// [`column_layout`](Fft2d::column_layout), against the spectrum of `waves`
/// ([`expected_spectrum`]). Collective; the same on every rank.
///
/// # Errors
///
/// [`FftError::Dist`] when the array's layout does not place this rank
/// (never for an array of an [`Fft2d`]'s layouts).
pub fn spectrum_error(spectrum: &DistArray<C64>, waves: &[Wave]) -> Result<f64, FftError> {
    let (n, m) = (spectrum.shape()[0], spectrum.shape()[1]);
    max_error_against(spectrum, |k, l| expected_spectrum(waves, n, m, k, l))
}

/// Largest `|a − b|` of two arrays of one layout. Collective.
///
/// # Errors
///
/// [`FftError::Dist`] (`LayoutMismatch`) when the two layouts differ.
pub fn max_difference(a: &DistArray<C64>, b: &DistArray<C64>) -> Result<f64, FftError> {
    if a.layout() != b.layout() {
        return Err(dist_array::DistError::LayoutMismatch {
            left: a.layout().to_string(),
            right: b.layout().to_string(),
        }
        .into());
    }
    let mine = a
        .local_slice()
        .par_iter()
        .zip(b.local_slice().par_iter())
        .map(|(x, y)| (x - y).norm())
        .reduce(|| 0.0, f64::max);
    let mut all = 0.0f64;
    a.grid()
        .communicator()
        .all_reduce_into(&mine, &mut all, SystemOperation::max());
    Ok(all)
}

/// The forward 2-D FFT of `a` on one process with plain arrays and rustfft:
/// every row, then every column through a scratch buffer. The reference
/// the distributed transform is checked against.
///
/// ```
/// use apps::fft2d::{fft2_serial, C64};
/// let a = ndarray::Array2::from_elem((3, 4), C64::new(2.0, 0.0));
/// let s = fft2_serial(a.view());
/// assert!((s[[0, 0]] - C64::new(24.0, 0.0)).norm() < 1e-12);
/// ```
pub fn fft2_serial(a: ArrayView2<'_, C64>) -> Array2<C64> {
    let (n, m) = a.dim();
    let mut out = a.as_standard_layout().into_owned();
    if n == 0 || m == 0 {
        return out;
    }
    let mut planner = FftPlanner::<f64>::new();
    let rows = planner.plan_fft_forward(m);
    let columns = planner.plan_fft_forward(n);
    rows.process(out.as_slice_mut().expect("standard layout"));
    let mut line = vec![C64::default(); n];
    for mut column in out.columns_mut() {
        line.iter_mut()
            .zip(column.iter())
            .for_each(|(d, s)| *d = *s);
        columns.process(&mut line);
        column.iter_mut().zip(&line).for_each(|(d, s)| *d = *s);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 2-D DFT by its definition, O((n·m)²).
    fn naive_dft(a: &Array2<C64>) -> Array2<C64> {
        let (n, m) = a.dim();
        Array2::from_shape_fn((n, m), |(k, l)| {
            let mut s = C64::default();
            for ((x, y), v) in a.indexed_iter() {
                let t = ((k * x) % n) as f64 / n as f64 + ((l * y) % m) as f64 / m as f64;
                s += v * C64::from_polar(1.0, -2.0 * PI * t);
            }
            s
        })
    }

    fn max_diff(a: &Array2<C64>, b: &Array2<C64>) -> f64 {
        a.iter()
            .zip(b.iter())
            .map(|(x, y)| (x - y).norm())
            .fold(0.0, f64::max)
    }

    #[test]
    fn serial_fft_is_the_dft() {
        for (n, m) in [(1, 1), (5, 7), (6, 4), (9, 1), (1, 10)] {
            let a = Array2::from_shape_fn((n, m), |(i, j)| {
                C64::new(
                    (i as f64 * 0.7 + j as f64).sin(),
                    (j as f64 * 1.3 - i as f64).cos(),
                )
            });
            let e = max_diff(&fft2_serial(a.view()), &naive_dft(&a));
            assert!(e < 1e-11, "{n}x{m}: {e}");
        }
    }

    #[test]
    fn waves_have_the_expected_spectrum() {
        for (n, m) in [(7, 5), (8, 6), (3, 2), (1, 1), (2, 9)] {
            let waves = default_waves(n, m);
            let a = Array2::from_shape_fn((n, m), |(x, y)| wave_value(&waves, n, m, x, y));
            let want =
                Array2::from_shape_fn((n, m), |(k, l)| expected_spectrum(&waves, n, m, k, l));
            let e = max_diff(&naive_dft(&a), &want);
            assert!(e < 1e-11, "{n}x{m}: {e}");
            // Amplitudes add where modes coincide: the spectrum sums to n·m·Σ a.
            let total: C64 = want.iter().sum();
            let amplitudes: C64 = waves.iter().map(|w| w.amplitude).sum();
            assert!((total - amplitudes * (n * m) as f64).norm() < 1e-12);
        }
    }

    #[test]
    fn a_misplaced_spike_is_caught() {
        let (n, m) = (8, 6);
        let waves = default_waves(n, m);
        let mut moved = waves.clone();
        moved[1].k1 += 1;
        let a = Array2::from_shape_fn((n, m), |(x, y)| wave_value(&waves, n, m, x, y));
        let s = fft2_serial(a.view());
        let e = s
            .indexed_iter()
            .map(|((k, l), v)| (v - expected_spectrum(&moved, n, m, k, l)).norm())
            .fold(0.0, f64::max);
        assert!(e > 0.5 * (n * m) as f64 * moved[1].amplitude.norm(), "{e}");
    }

    #[test]
    fn negative_frequencies_wrap() {
        assert_eq!(wrap(-3, 7), 4);
        assert_eq!(wrap(-3, 2), 1);
        assert_eq!(wrap(9, 4), 1);
        assert_eq!(wrap(0, 1), 0);
    }
}
