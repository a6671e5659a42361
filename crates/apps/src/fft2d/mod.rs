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
//! [`run()`] is what `examples/fft2d.rs` runs: it transforms a sum of plane
//! waves whose spectrum is known ([`Wave`]), checks it against that spectrum
//! and against a serial 2-D FFT of the gathered array ([`fft2_serial`]),
//! checks the round trip, and times repeated forward + inverse transforms.

use dist_array::{Complex, DistArray, Layout, LayoutSpec, Order};
use mpi::topology::{Communicator, SimpleCommunicator};
use ndarray::{ArrayView2, ArrayViewMut2, Axis, Ix2};
use procgrid::ProcGrid;
use rayon::prelude::*;
use redist::{Options, Redistribution, Remap, Strategy};
use rustfft::{Fft, FftPlanner};
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Instant;
use thiserror::Error;

mod run;
mod waves;

pub(crate) use run::median;
pub use run::{run, FftConfig, FftResult};
pub(crate) use waves::wrap;
pub use waves::{
    default_waves, expected_spectrum, fft2_serial, max_difference, spectrum_error, wave_value, Wave,
};

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

    /// A layout's error.
    #[error(transparent)]
    Layout(#[from] dist_array::PlanError),
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
pub(crate) fn transform_lines(data: &mut [C64], fft: &dyn Fft<f64>, scale: Option<f64>) {
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
    /// Elements one redistribution moves between ranks, over all ranks.
    moved: usize,
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
        let to_x = Redistribution::<C64>::new(&gy, &ly, &gx, &lx, options.clone())?;
        let to_y = Redistribution::<C64>::new(&gx, to_x.target_layout(), &gy, &ly, options)?;
        // Collective: every rank plans the transform.
        let moved = to_x.totals().1;
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
            moved,
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
        self.moved
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

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;

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
}
