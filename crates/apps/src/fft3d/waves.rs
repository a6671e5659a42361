//! Plane waves in three dimensions with a known spectrum ([`Wave`]), the
//! spectrum's error, and the serial reference ([`fft3_serial`]).

#[cfg(doc)]
use super::{run::run, Fft3d};
use super::{FftError, C64};
use crate::fft2d::wrap;
use dist_array::DistArray;
use mpi::collective::{CommunicatorCollectives, SystemOperation};
use ndarray::{Array3, ArrayView3, Axis, Ix3};
use rayon::prelude::*;
use rustfft::FftPlanner;
use std::f64::consts::PI;

/// Extents `(nx, ny, nz)` of a 3-D array, or an index `(x, y, z)` into one.
pub type Extents = [usize; 3];

/// One plane wave `amplitude · exp(2πi(k[0]·x/nx + k[1]·y/ny + k[2]·z/nz))`;
/// its forward 3-D transform is one spike of `nx·ny·nz·amplitude` at
/// `(k[0] mod nx, k[1] mod ny, k[2] mod nz)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Wave {
    /// Frequencies along x, y and z (any sign; taken modulo the extents).
    pub k: [i64; 3],
    /// Complex amplitude.
    pub amplitude: C64,
}

/// The plane waves [`run`] transforms: a constant, a low mode, one with
/// negative frequencies and one near the middle of the spectrum, with four
/// different complex amplitudes (modes that coincide on small arrays add
/// up).
///
/// ```
/// let waves = apps::fft3d::default_waves([12, 10, 9]);
/// assert_eq!(waves.len(), 4);
/// ```
pub fn default_waves([nx, ny, nz]: Extents) -> Vec<Wave> {
    let fraction = |n: usize, d: usize| i64::try_from(n / d).unwrap_or(0);
    vec![
        Wave {
            k: [0, 0, 0],
            amplitude: C64::new(1.0, 0.0),
        },
        Wave {
            k: [1, 2, 3],
            amplitude: C64::new(0.5, -0.25),
        },
        Wave {
            k: [-3, 5, -1],
            amplitude: C64::new(0.0, 0.75),
        },
        Wave {
            k: [fraction(nx, 2), -fraction(ny, 3), fraction(nz, 4)],
            amplitude: C64::new(-0.3, 0.2),
        },
    ]
}

/// The value at `index` `(x, y, z)` of the sum of `waves` on an array of
/// `extents`. Phases are reduced modulo the extents in integers first, so
/// they stay exact.
pub fn wave_value(waves: &[Wave], extents: Extents, index: Extents) -> C64 {
    let phase = |k: usize, i: usize, len: usize| {
        let r = (k as u128 * i as u128) % len as u128;
        r as f64 / len as f64
    };
    waves
        .iter()
        .map(|w| {
            let t: f64 = (0..3)
                .map(|d| phase(wrap(w.k[d], extents[d]), index[d], extents[d]))
                .sum();
            w.amplitude * C64::from_polar(1.0, 2.0 * PI * t)
        })
        .sum()
}

/// The forward transform of the sum of `waves` at frequency `k`
/// `(kx, ky, kz)`: `nx·ny·nz` times the sum of the amplitudes of the waves
/// of that frequency, zero elsewhere.
pub fn expected_spectrum(waves: &[Wave], extents: Extents, k: Extents) -> C64 {
    let volume: f64 = extents.iter().map(|&n| n as f64).product();
    waves
        .iter()
        .filter(|w| (0..3).all(|d| wrap(w.k[d], extents[d]) == k[d]))
        .map(|w| w.amplitude * volume)
        .sum()
}

/// Largest `|X[kx][ky][kz] − expected|` of a spectrum laid out as an
/// [`Fft3d`]'s [`z_layout`](Fft3d::z_layout) (axes `(kx, ky, kz)`), against
/// the spectrum of `waves` ([`expected_spectrum`]). Collective; the same on
/// every rank.
///
/// # Errors
///
/// [`FftError::Parameter`] when the array is not 3-D; [`FftError::Dist`]
/// when its layout does not place this rank (never for an array of an
/// [`Fft3d`]'s layouts). Both the same on every rank.
pub fn spectrum_error(spectrum: &DistArray<C64>, waves: &[Wave]) -> Result<f64, FftError> {
    let extents: Extents = spectrum.shape().try_into().map_err(|_| {
        FftError::Parameter(format!("a 3-D spectrum, got shape {:?}", spectrum.shape()))
    })?;
    let mut mine = 0.0f64;
    if let Some(rank) = spectrum.rank() {
        let layout = spectrum.layout();
        let coords = layout.coords_of_rank(rank)?;
        let tables: Vec<Vec<usize>> = (0..3)
            .map(|d| layout.axis(d).local_to_global_table(coords[d]))
            .collect();
        let v = spectrum
            .local()
            .into_dimensionality::<Ix3>()
            .map_err(|e| FftError::Parameter(format!("a 3-D local part: {e}")))?;
        mine = v
            .axis_iter(Axis(0))
            .into_par_iter()
            .zip(tables[0].par_iter())
            .map(|(plane, &kx)| {
                let mut e = 0.0f64;
                for (row, &ky) in plane.outer_iter().zip(&tables[1]) {
                    for (x, &kz) in row.iter().zip(&tables[2]) {
                        e = e.max((x - expected_spectrum(waves, extents, [kx, ky, kz])).norm());
                    }
                }
                e
            })
            .reduce(|| 0.0, f64::max);
    }
    let mut all = 0.0f64;
    spectrum
        .grid()
        .communicator()
        .all_reduce_into(&mine, &mut all, SystemOperation::max());
    Ok(all)
}

/// The forward 3-D FFT of `a` (axes `(x, y, z)`) on one process with plain
/// arrays and rustfft: every line along z, then y, then x, each through a
/// buffer. The reference the distributed transform is checked against.
///
/// ```
/// use apps::fft3d::{fft3_serial, C64};
/// let a = ndarray::Array3::from_elem((3, 4, 2), C64::new(2.0, 0.0));
/// let s = fft3_serial(a.view());
/// assert!((s[[0, 0, 0]] - C64::new(48.0, 0.0)).norm() < 1e-12);
/// ```
pub fn fft3_serial(a: ArrayView3<'_, C64>) -> Array3<C64> {
    let mut out = a.as_standard_layout().into_owned();
    if out.is_empty() {
        return out;
    }
    let mut planner = FftPlanner::<f64>::new();
    for axis in (0..3).rev() {
        let len = out.len_of(Axis(axis));
        let fft = planner.plan_fft_forward(len);
        let mut line = vec![C64::default(); len];
        let mut scratch = vec![C64::default(); fft.get_inplace_scratch_len()];
        for mut lane in out.lanes_mut(Axis(axis)) {
            line.iter_mut().zip(lane.iter()).for_each(|(d, s)| *d = *s);
            fft.process_with_scratch(&mut line, &mut scratch);
            lane.iter_mut().zip(&line).for_each(|(d, s)| *d = *s);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fft2d::fft2_serial;

    /// The 3-D DFT by its definition, O((nx·ny·nz)²).
    fn naive_dft(a: &Array3<C64>) -> Array3<C64> {
        let (nx, ny, nz) = a.dim();
        Array3::from_shape_fn((nx, ny, nz), |(k, l, m)| {
            let mut s = C64::default();
            for ((x, y, z), v) in a.indexed_iter() {
                let t = ((k * x) % nx) as f64 / nx as f64
                    + ((l * y) % ny) as f64 / ny as f64
                    + ((m * z) % nz) as f64 / nz as f64;
                s += v * C64::from_polar(1.0, -2.0 * PI * t);
            }
            s
        })
    }

    fn max_diff(a: &Array3<C64>, b: &Array3<C64>) -> f64 {
        a.iter()
            .zip(b.iter())
            .map(|(x, y)| (x - y).norm())
            .fold(0.0, f64::max)
    }

    fn input(nx: usize, ny: usize, nz: usize) -> Array3<C64> {
        Array3::from_shape_fn((nx, ny, nz), |(i, j, k)| {
            let (i, j, k) = (i as f64, j as f64, k as f64);
            C64::new((0.7 * i + j - 0.3 * k).sin(), (1.3 * j - i + k * k).cos())
        })
    }

    #[test]
    fn serial_fft_is_the_dft() {
        for (nx, ny, nz) in [(1, 1, 1), (5, 3, 4), (2, 6, 1), (1, 1, 7), (3, 1, 5)] {
            let a = input(nx, ny, nz);
            let e = max_diff(&fft3_serial(a.view()), &naive_dft(&a));
            assert!(e < 1e-11, "{nx}x{ny}x{nz}: {e}");
        }
    }

    #[test]
    fn a_flat_array_is_the_2d_transform() {
        let a = input(6, 5, 1);
        let s3 = fft3_serial(a.view());
        let s2 = fft2_serial(a.index_axis(Axis(2), 0));
        let e = s3
            .index_axis(Axis(2), 0)
            .iter()
            .zip(s2.iter())
            .map(|(x, y)| (x - y).norm())
            .fold(0.0, f64::max);
        assert!(e < 1e-12, "{e}");
    }

    #[test]
    fn waves_have_the_expected_spectrum() {
        for extents in [[7, 5, 3], [4, 6, 2], [3, 2, 1], [1, 1, 1], [2, 9, 4]] {
            let [nx, ny, nz] = extents;
            let waves = default_waves(extents);
            let a = Array3::from_shape_fn((nx, ny, nz), |(x, y, z)| {
                wave_value(&waves, extents, [x, y, z])
            });
            let want = Array3::from_shape_fn((nx, ny, nz), |(k, l, m)| {
                expected_spectrum(&waves, extents, [k, l, m])
            });
            let e = max_diff(&naive_dft(&a), &want);
            assert!(e < 1e-11, "{extents:?}: {e}");
            // Amplitudes add where modes coincide: the spectrum sums to N·Σ a.
            let total: C64 = want.iter().sum();
            let amplitudes: C64 = waves.iter().map(|w| w.amplitude).sum();
            assert!((total - amplitudes * (nx * ny * nz) as f64).norm() < 1e-12);
        }
    }

    #[test]
    fn a_misplaced_spike_is_caught() {
        let extents = [8, 6, 5];
        let waves = default_waves(extents);
        let mut moved = waves.clone();
        moved[1].k[2] += 1;
        let a = Array3::from_shape_fn((8, 6, 5), |(x, y, z)| {
            wave_value(&waves, extents, [x, y, z])
        });
        let s = fft3_serial(a.view());
        let e = s
            .indexed_iter()
            .map(|((k, l, m), v)| (v - expected_spectrum(&moved, extents, [k, l, m])).norm())
            .fold(0.0, f64::max);
        assert!(e > 0.5 * 240.0 * moved[1].amplitude.norm(), "{e}");
    }
}
