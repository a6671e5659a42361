//! The 2-D FFT of `examples/fft2d.rs`: forward and inverse complex FFTs of an
//! `n × m` array distributed over MPI ranks, with one redistribution — the
//! transpose-like phase change — per transform.
//!
//! The array is `a[x][y]` with `x` along dimension 0 (extent `n`) and `y`
//! along dimension 1 (extent `m`). As in [`adi`](crate::adi), a *y-layout*
//! keeps dimension 1 whole (whole rows, default `block,*@Px1`) and an
//! *x-layout* keeps dimension 0 whole (whole columns, default `*,block@1xP`).
//!
//! ```text
//! forward:  rows FFT (y-layout) → redistribute → columns FFT (x-layout)
//! inverse:  columns IFFT (x-layout) → redistribute back → rows IFFT, × 1/(n·m) (y-layout)
//! ```
//!
//! The forward transform starts in the y-layout and leaves the spectrum in
//! the x-layout; the inverse goes back. Each 1-D FFT is planned once
//! ([`rustfft::FftPlanner`]) and each of the two redistributions once, and
//! both are reused by every transform. Columns are transformed either in
//! place in column-major local storage, where they are contiguous
//! ([`ColumnStorage::ColumnMajor`]), or through a scratch tile that a block of
//! columns of row-major storage is copied into and back
//! ([`ColumnStorage::Scratch`]).
//!
//! [`run`] is what `examples/fft2d.rs` runs: it transforms a sum of plane
//! waves whose spectrum is known ([`Wave`]), checks it against that spectrum
//! and against a serial 2-D FFT of the gathered array ([`fft2_serial`]),
//! checks the round trip, and times repeated forward + inverse transforms.

use dist_array::{Complex, DistArray, Layout, LayoutSpec, Order};
use mpi::collective::{CommunicatorCollectives, Root, SystemOperation};
use mpi::topology::{Communicator, SimpleCommunicator};
use ndarray::{Array2, ArrayView2, ArrayViewMut2, Axis, Ix2};
use procgrid::ProcGrid;
use rayon::prelude::*;
use redist::{Options, Redistribution, Remap, Strategy};
use rustfft::{Fft, FftPlanner};
use std::f64::consts::PI;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Instant;
use thiserror::Error;

/// The element type: a double-precision complex number.
pub type C64 = Complex<f64>;

/// Columns per scratch tile in [`ColumnStorage::Scratch`]: the tile is
/// filled row by row, 8 contiguous elements (128 bytes) at a time.
const TILE_COLUMNS: usize = 8;

/// What can go wrong in the 2-D FFT.
#[derive(Debug, Error)]
pub enum FftError {
    /// A layout that does not keep the needed dimension whole.
    #[error("{which} layout {spec} must keep dimension {dim} whole (grid extent 1 there, e.g. {example})")]
    LineLayout {
        /// `x` (whole columns) or `y` (whole rows).
        which: &'static str,
        /// The spec as given.
        spec: String,
        /// The dimension that must be whole.
        dim: usize,
        /// A valid example.
        example: String,
    },
    /// Invalid parameters.
    #[error("invalid parameter: {0}")]
    Parameter(String),
    /// A layout or array error.
    #[error(transparent)]
    Dist(#[from] dist_array::DistError),
    /// A redistribution error.
    #[error(transparent)]
    Redist(#[from] redist::RedistError),
    /// A process-grid error.
    #[error(transparent)]
    Grid(#[from] procgrid::GridError),
}

/// How the columns of the x-layout are stored while they are transformed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ColumnStorage {
    /// The x-layout's local part is column-major, so every column is
    /// contiguous and is transformed in place; the redistribution writes it
    /// transposed.
    #[default]
    ColumnMajor,
    /// The x-layout's local part is row-major; blocks of columns are copied
    /// to a scratch tile, transformed there and copied back.
    Scratch,
}

impl FromStr for ColumnStorage {
    type Err = FftError;

    fn from_str(s: &str) -> Result<ColumnStorage, FftError> {
        match s {
            "column-major" => Ok(ColumnStorage::ColumnMajor),
            "scratch" => Ok(ColumnStorage::Scratch),
            _ => Err(FftError::Parameter(format!(
                "column storage {s:?}: expected column-major or scratch"
            ))),
        }
    }
}

impl fmt::Display for ColumnStorage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ColumnStorage::ColumnMajor => "column-major",
            ColumnStorage::Scratch => "scratch",
        })
    }
}

/// Wall time of the three phases of one transform on one rank, seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PhaseTimes {
    /// Row FFTs (y-layout).
    pub rows_s: f64,
    /// The redistribution.
    pub redist_s: f64,
    /// Column FFTs (x-layout).
    pub columns_s: f64,
}

impl PhaseTimes {
    /// All three phases.
    pub fn total(&self) -> f64 {
        self.rows_s + self.redist_s + self.columns_s
    }
}

/// Checks that `spec` is 2-D and keeps dimension `dim` whole.
fn line_layout(
    spec: &LayoutSpec,
    which: &'static str,
    dim: usize,
    p: usize,
) -> Result<(), FftError> {
    if spec.ndim() != 2 || spec.grid()[dim] != 1 {
        let example = if dim == 0 {
            format!("*,cyclic(8)@1x{p}")
        } else {
            format!("cyclic(8),*@{p}x1")
        };
        return Err(FftError::LineLayout {
            which,
            spec: spec.to_string(),
            dim,
            example,
        });
    }
    Ok(())
}

/// Transforms every line of `data`, which holds whole lines of `fft.len()`
/// contiguous elements one after the other, in parallel (rayon over groups
/// of lines), multiplying the results by `scale` if one is given.
fn transform_lines(data: &mut [C64], fft: &dyn Fft<f64>, scale: Option<f64>) {
    let len = fft.len();
    if data.is_empty() || len == 0 {
        return;
    }
    let lines = data.len() / len;
    let per_task = lines
        .div_ceil(4 * rayon::current_num_threads().max(1))
        .max(1);
    let scratch_len = fft.get_inplace_scratch_len();
    data.par_chunks_mut(per_task * len).for_each_init(
        || vec![C64::default(); scratch_len],
        |scratch, chunk| {
            fft.process_with_scratch(chunk, scratch);
            if let Some(s) = scale {
                chunk.iter_mut().for_each(|z| *z *= s);
            }
        },
    );
}

/// Transforms every column of `a` (row-major or any strides) through scratch
/// tiles of [`TILE_COLUMNS`] columns: each tile is copied out row by row
/// into column-major order, transformed, and copied back.
fn transform_columns_scratch(mut a: ArrayViewMut2<'_, C64>, fft: &dyn Fft<f64>) {
    let (n, cols) = a.dim();
    if n == 0 || cols == 0 {
        return;
    }
    let scratch_len = fft.get_inplace_scratch_len();
    a.axis_chunks_iter_mut(Axis(1), TILE_COLUMNS)
        .into_par_iter()
        .for_each_init(
            || {
                (
                    vec![C64::default(); n * TILE_COLUMNS],
                    vec![C64::default(); scratch_len],
                )
            },
            |(tile, scratch), mut block| {
                let c = block.ncols();
                let tile = &mut tile[..n * c];
                for (i, row) in block.rows().into_iter().enumerate() {
                    for (j, &v) in row.iter().enumerate() {
                        tile[j * n + i] = v;
                    }
                }
                fft.process_with_scratch(tile, scratch);
                for (i, mut row) in block.rows_mut().into_iter().enumerate() {
                    for (j, v) in row.iter_mut().enumerate() {
                        *v = tile[j * n + i];
                    }
                }
            },
        );
}

fn view2(a: &DistArray<C64>) -> ArrayView2<'_, C64> {
    a.local()
        .into_dimensionality::<Ix2>()
        .expect("2-D local part")
}

fn view2_mut(a: &mut DistArray<C64>) -> ArrayViewMut2<'_, C64> {
    a.local_mut()
        .into_dimensionality::<Ix2>()
        .expect("2-D local part")
}

/// A distributed 2-D FFT, planned once: the four 1-D FFTs (forward and
/// inverse along each dimension) and the two redistributions (y → x for the
/// forward transform, x → y for the inverse).
///
/// ```
/// use apps::fft2d::{ColumnStorage, Fft2d, C64};
/// use dist_array::DistArray;
/// use redist::Strategy;
///
/// let universe = procgrid::init().unwrap();
/// let world = universe.world();
/// let mut fft = Fft2d::new(&world, 6, 5, None, None, Strategy::Auto, ColumnStorage::ColumnMajor).unwrap();
/// // A constant: its spectrum is one spike of 30 at (0, 0).
/// let mut rows = DistArray::from_fn(fft.row_grid(), fft.row_layout().clone(), |_| C64::new(1.0, 0.0)).unwrap();
/// let mut cols = DistArray::zeros(fft.column_grid(), fft.column_layout().clone()).unwrap();
/// fft.forward(&mut rows, &mut cols).unwrap();
/// let spectrum = cols.gather(0).unwrap();
/// if let Some(s) = spectrum {
///     assert!((s[[0, 0]] - C64::new(30.0, 0.0)).norm() < 1e-12);
///     assert!(s.iter().skip(1).all(|z| z.norm() < 1e-12));
/// }
/// fft.inverse(&mut cols, &mut rows).unwrap();
/// assert!((rows.sum().unwrap() - C64::new(30.0, 0.0)).norm() < 1e-12);
/// ```
pub struct Fft2d {
    n: usize,
    m: usize,
    row_grid: ProcGrid,
    column_grid: ProcGrid,
    row_layout: Layout,
    columns: ColumnStorage,
    to_x: Redistribution<C64>,
    to_y: Redistribution<C64>,
    rows_forward: Arc<dyn Fft<f64>>,
    rows_inverse: Arc<dyn Fft<f64>>,
    columns_forward: Arc<dyn Fft<f64>>,
    columns_inverse: Arc<dyn Fft<f64>>,
}

impl Fft2d {
    /// Plans the transform of `n × m` arrays on every rank of `world`
    /// (collective): `y_layout` keeps dimension 1 whole (default
    /// `block,*@Px1`), `x_layout` keeps dimension 0 whole (default
    /// `*,block@1xP`); either may use fewer ranks than the job. Other
    /// layouts give [`FftError::LineLayout`] on every rank.
    ///
    /// # Errors
    ///
    /// [`FftError::LineLayout`] for a layout that does not keep its
    /// dimension whole; [`FftError::Grid`], [`FftError::Dist`] or
    /// [`FftError::Redist`] when the grids, layouts or redistributions
    /// cannot be built (shapes, rank counts, sizes).
    pub fn new(
        world: &SimpleCommunicator,
        n: usize,
        m: usize,
        y_layout: Option<LayoutSpec>,
        x_layout: Option<LayoutSpec>,
        strategy: Strategy,
        columns: ColumnStorage,
    ) -> Result<Fft2d, FftError> {
        if n == 0 || m == 0 {
            return Err(FftError::Parameter(format!(
                "the array must have at least one element along each dimension, got {n}x{m}"
            )));
        }
        let p = usize::try_from(world.size()).expect("a communicator has a positive size");
        let y_spec = match y_layout {
            Some(s) => s,
            None => format!("block,*@{p}x1").parse()?,
        };
        let x_spec = match x_layout {
            Some(s) => s,
            None => format!("*,block@1x{p}").parse()?,
        };
        line_layout(&y_spec, "y (whole rows)", 1, p)?;
        line_layout(&x_spec, "x (whole columns)", 0, p)?;
        for spec in [&y_spec, &x_spec] {
            if spec.ranks() > p {
                return Err(FftError::Parameter(format!(
                    "layout {spec} needs {} ranks, the job has {p}",
                    spec.ranks()
                )));
            }
        }
        let ly = Layout::new(&[n, m], &y_spec)?;
        let mut lx = Layout::new(&[n, m], &x_spec)?;
        if columns == ColumnStorage::ColumnMajor {
            lx = lx.with_storage(Order::ColumnMajor);
        }
        let gy = ProcGrid::builder(y_spec.grid()).subset(true).build(world)?;
        let gx = ProcGrid::builder(x_spec.grid())
            .subset(true)
            .build_sharing(&gy)?;
        let options = Options {
            strategy,
            remap: Remap::None,
            ..Options::default()
        };
        let to_x = Redistribution::<C64>::new(&gy, &ly, &gx, &lx, options)?;
        let to_y = Redistribution::<C64>::new(&gx, to_x.target_layout(), &gy, &ly, options)?;
        let mut planner = FftPlanner::<f64>::new();
        Ok(Fft2d {
            n,
            m,
            row_grid: gy,
            column_grid: gx,
            row_layout: ly,
            columns,
            to_x,
            to_y,
            rows_forward: planner.plan_fft_forward(m),
            rows_inverse: planner.plan_fft_inverse(m),
            columns_forward: planner.plan_fft_forward(n),
            columns_inverse: planner.plan_fft_inverse(n),
        })
    }

    /// The global shape `(n, m)`.
    pub fn shape(&self) -> (usize, usize) {
        (self.n, self.m)
    }

    /// The grid of the y-layout (whole rows): the input of
    /// [`forward`](Self::forward), the output of [`inverse`](Self::inverse).
    pub fn row_grid(&self) -> &ProcGrid {
        &self.row_grid
    }

    /// The y-layout (whole rows, row-major storage).
    pub fn row_layout(&self) -> &Layout {
        &self.row_layout
    }

    /// The grid of the x-layout (whole columns): the spectrum's.
    pub fn column_grid(&self) -> &ProcGrid {
        &self.column_grid
    }

    /// The x-layout (whole columns) the spectrum is laid out in, with the
    /// storage order of [`ColumnStorage`].
    pub fn column_layout(&self) -> &Layout {
        self.to_x.target_layout()
    }

    /// How columns are stored while they are transformed.
    pub fn column_storage(&self) -> ColumnStorage {
        self.columns
    }

    /// The strategies of the two redistributions (forward y → x, inverse
    /// x → y; never `Auto`).
    pub fn strategies(&self) -> (Strategy, Strategy) {
        (self.to_x.strategy(), self.to_y.strategy())
    }

    /// Elements moved between ranks by one transform's redistribution (the
    /// same both ways).
    pub fn elements_moved(&self) -> usize {
        self.to_x.plan().stats().moved
    }

    /// The forward transform (collective): `rows`, laid out as
    /// [`row_layout`](Self::row_layout), is overwritten by its row
    /// transforms; `spectrum`, laid out as
    /// [`column_layout`](Self::column_layout), receives the 2-D transform
    /// `X[k][l] = Σ a[x][y]·exp(−2πi(k·x/n + l·y/m))`. Returns this rank's
    /// time per phase.
    ///
    /// # Errors
    ///
    /// [`FftError::Redist`] when the arrays are not laid out as the
    /// transform's layouts (on every rank alike).
    pub fn forward(
        &mut self,
        rows: &mut DistArray<C64>,
        spectrum: &mut DistArray<C64>,
    ) -> Result<PhaseTimes, FftError> {
        let t0 = Instant::now();
        // Rows of the row-major y-layout are contiguous, m elements each.
        transform_lines(rows.local_slice_mut(), &*self.rows_forward, None);
        let t1 = Instant::now();
        self.to_x.execute_into(rows, spectrum)?;
        let t2 = Instant::now();
        self.transform_columns(spectrum, false);
        let t3 = Instant::now();
        Ok(PhaseTimes {
            rows_s: (t1 - t0).as_secs_f64(),
            redist_s: (t2 - t1).as_secs_f64(),
            columns_s: (t3 - t2).as_secs_f64(),
        })
    }

    /// The inverse transform (collective), normalised by `1/(n·m)`:
    /// `spectrum`, laid out as [`column_layout`](Self::column_layout), is
    /// overwritten by its inverse column transforms; `rows`, laid out as
    /// [`row_layout`](Self::row_layout), receives the array. Returns this
    /// rank's time per phase.
    ///
    /// # Errors
    ///
    /// As [`forward`](Self::forward).
    pub fn inverse(
        &mut self,
        spectrum: &mut DistArray<C64>,
        rows: &mut DistArray<C64>,
    ) -> Result<PhaseTimes, FftError> {
        let t0 = Instant::now();
        self.transform_columns(spectrum, true);
        let t1 = Instant::now();
        self.to_y.execute_into(spectrum, rows)?;
        let t2 = Instant::now();
        let scale = 1.0 / (self.n as f64 * self.m as f64);
        transform_lines(rows.local_slice_mut(), &*self.rows_inverse, Some(scale));
        let t3 = Instant::now();
        Ok(PhaseTimes {
            columns_s: (t1 - t0).as_secs_f64(),
            redist_s: (t2 - t1).as_secs_f64(),
            rows_s: (t3 - t2).as_secs_f64(),
        })
    }

    /// The column FFTs of an array in the x-layout, in place.
    fn transform_columns(&self, a: &mut DistArray<C64>, inverse: bool) {
        let fft = if inverse {
            &*self.columns_inverse
        } else {
            &*self.columns_forward
        };
        match self.columns {
            ColumnStorage::ColumnMajor => transform_lines(a.local_slice_mut(), fft, None),
            ColumnStorage::Scratch => transform_columns_scratch(view2_mut(a), fft),
        }
    }
}

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
fn wrap(k: i64, n: usize) -> usize {
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

/// Parameters of a run of [`run`].
#[derive(Debug, Clone)]
pub struct FftConfig {
    /// Extent of dimension 0 (x).
    pub n: usize,
    /// Extent of dimension 1 (y).
    pub m: usize,
    /// Layout with whole columns (dimension 0 whole); `None`: `*,block@1xP`.
    pub x_layout: Option<LayoutSpec>,
    /// Layout with whole rows (dimension 1 whole); `None`: `block,*@Px1`.
    pub y_layout: Option<LayoutSpec>,
    /// Exchange strategy of both redistributions.
    pub strategy: Strategy,
    /// How columns are stored while they are transformed.
    pub columns: ColumnStorage,
    /// Timed forward + inverse repetitions (at least 1).
    pub reps: usize,
}

/// What a run produced; the same on every rank.
#[derive(Debug, Clone)]
pub struct FftResult {
    /// Ranks in the job.
    pub ranks: usize,
    /// Max-norm error of the forward transform of [`default_waves`] against
    /// its known spectrum.
    pub max_error: f64,
    /// Max-norm difference between the distributed forward transform and
    /// [`fft2_serial`] of the gathered input.
    pub serial_error: f64,
    /// Max-norm error of inverse(forward(x)) − x, the first round trip.
    pub roundtrip_error: f64,
    /// Max-norm error of the array after the first round trip and `reps`
    /// timed ones, against the input.
    pub repeated_error: f64,
    /// Largest modulus of the spectrum (`n·m` times the largest amplitude).
    pub spectrum_max: f64,
    /// One forward + inverse transform, seconds: the median over the
    /// repetitions of the slowest rank's time.
    pub time_s: f64,
    /// Of which the two redistributions (median of the slowest rank's).
    pub redist_s: f64,
    /// Of which the row FFTs (median of the slowest rank's).
    pub rows_s: f64,
    /// Of which the column FFTs (median of the slowest rank's).
    pub columns_s: f64,
    /// Strategies used (forward y → x, inverse x → y).
    pub strategies: (Strategy, Strategy),
    /// Bytes moved between ranks per forward + inverse transform.
    pub bytes_moved: usize,
    /// The y-layout and x-layout in use (spec strings).
    pub layouts: (String, String),
}

/// The median of `v` (the mean of the two middle values for an even count).
fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let k = v.len() / 2;
    if v.len() % 2 == 1 {
        v[k]
    } else {
        0.5 * (v[k - 1] + v[k])
    }
}

/// Plans the transform, checks it three ways on the plane waves of
/// [`default_waves`] and times `reps` forward + inverse transforms, on
/// every rank of `world` (collective).
///
/// # Errors
///
/// [`FftError::Parameter`] for `reps == 0`, and the errors of
/// [`Fft2d::new`]: every rank returns the same.
pub fn run(world: &SimpleCommunicator, cfg: &FftConfig) -> Result<FftResult, FftError> {
    if cfg.reps == 0 {
        return Err(FftError::Parameter("reps must be at least 1".into()));
    }
    let (n, m) = (cfg.n, cfg.m);
    let mut fft = Fft2d::new(
        world,
        n,
        m,
        cfg.y_layout.clone(),
        cfg.x_layout.clone(),
        cfg.strategy,
        cfg.columns,
    )?;
    let waves = default_waves(n, m);
    let input = DistArray::from_fn(fft.row_grid(), fft.row_layout().clone(), |g| {
        wave_value(&waves, n, m, g[0], g[1])
    })?;
    let mut rows = input.clone();
    let mut spectrum = DistArray::zeros(fft.column_grid(), fft.column_layout().clone())?;

    // (a) and (b): the spectrum against the waves' and against a serial FFT.
    fft.forward(&mut rows, &mut spectrum)?;
    let max_error = spectrum_error(&spectrum, &waves)?;
    let spectrum_max = spectrum.max_abs()?;
    let whole_input = input.gather(0)?;
    let whole_spectrum = spectrum.gather(0)?;
    let mut serial_error = match (whole_input, whole_spectrum) {
        (Some(a), Some(s)) => {
            let a = a.into_dimensionality::<Ix2>().expect("2-D input");
            let s = s.into_dimensionality::<Ix2>().expect("2-D spectrum");
            let reference = fft2_serial(a.view());
            reference
                .iter()
                .zip(s.iter())
                .map(|(r, x)| (r - x).norm())
                .fold(0.0, f64::max)
        }
        _ => 0.0,
    };
    let grid = fft.row_grid().clone();
    let comm = grid.communicator();
    comm.process_at_rank(0).broadcast_into(&mut serial_error);

    // (c): the round trip.
    fft.inverse(&mut spectrum, &mut rows)?;
    let roundtrip_error = max_difference(&rows, &input)?;

    // Timing: forward + inverse, the same plans and redistributions each time.
    let mut times = vec![PhaseTimes::default(); cfg.reps];
    for t in &mut times {
        comm.barrier();
        let f = fft.forward(&mut rows, &mut spectrum)?;
        let i = fft.inverse(&mut spectrum, &mut rows)?;
        *t = PhaseTimes {
            rows_s: f.rows_s + i.rows_s,
            redist_s: f.redist_s + i.redist_s,
            columns_s: f.columns_s + i.columns_s,
        };
    }
    let repeated_error = max_difference(&rows, &input)?;
    // The slowest rank's time, repetition by repetition.
    let slowest = |part: fn(&PhaseTimes) -> f64| {
        let mine: Vec<f64> = times.iter().map(part).collect();
        let mut all = vec![0.0f64; mine.len()];
        comm.all_reduce_into(&mine[..], &mut all[..], SystemOperation::max());
        median(all)
    };
    let time_s = slowest(PhaseTimes::total);
    let redist_s = slowest(|t| t.redist_s);
    let rows_s = slowest(|t| t.rows_s);
    let columns_s = slowest(|t| t.columns_s);
    Ok(FftResult {
        ranks: usize::try_from(world.size()).expect("a communicator has a positive size"),
        max_error,
        serial_error,
        roundtrip_error,
        repeated_error,
        spectrum_max,
        time_s,
        redist_s,
        rows_s,
        columns_s,
        strategies: fft.strategies(),
        bytes_moved: 2 * fft.elements_moved() * std::mem::size_of::<C64>(),
        layouts: (
            fft.row_layout().spec().to_string(),
            fft.column_layout().spec().to_string(),
        ),
    })
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

    #[test]
    fn line_layouts() {
        let ok = |s: &str, dim| line_layout(&s.parse().unwrap(), "y", dim, 4).is_ok();
        assert!(ok("block,*@4x1", 1));
        assert!(ok("cyclic(3)+1,*@3x1", 1));
        assert!(ok("*,cyclic@1x2", 0));
        assert!(!ok("*,block@1x4", 1));
        assert!(!ok("block,*@4x1", 0));
        assert!(!ok("block,*,*@4x1x1", 1));
        let e = line_layout(&"*,block@1x4".parse().unwrap(), "y (whole rows)", 1, 4)
            .unwrap_err()
            .to_string();
        assert!(e.contains("must keep dimension 1 whole"), "{e}");
        assert!(e.contains("cyclic(8),*@4x1"), "{e}");
    }

    #[test]
    fn scratch_columns_match_contiguous_lines() {
        let (n, m) = (12, 19);
        let a = Array2::from_shape_fn((n, m), |(i, j)| C64::new(i as f64, (j * j) as f64));
        let fft = FftPlanner::<f64>::new().plan_fft_forward(n);
        let mut scratch = a.clone();
        transform_columns_scratch(scratch.view_mut(), &*fft);
        let mut fortran = a.t().as_standard_layout().into_owned();
        transform_lines(fortran.as_slice_mut().unwrap(), &*fft, None);
        assert_eq!(scratch, fortran.t());
    }

    #[test]
    fn parsing() {
        assert_eq!(
            "scratch".parse::<ColumnStorage>().unwrap(),
            ColumnStorage::Scratch
        );
        assert_eq!(ColumnStorage::ColumnMajor.to_string(), "column-major");
        assert!("rows".parse::<ColumnStorage>().is_err());
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
