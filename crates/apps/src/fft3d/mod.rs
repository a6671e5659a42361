//! The 3-D FFT of `examples/fft3d.rs`: forward and inverse complex FFTs of an
//! `nx × ny × nz` array over a 2-D grid of `P1 × P2` ranks, as *pencils* —
//! every rank holds whole lines along one axis — with two redistributions
//! per transform. Each redistribution also permutes the axes
//! ([`with_permutation`](redist::Redistribution::with_permutation)), so
//! the axis transformed next is always the last, contiguous one and every
//! 1-D FFT runs on contiguous lines.
//!
//! ```text
//!              stored axes   shape          layout
//! x-pencils    (y, z, x)     (ny, nz, nx)   block,block,*@P1xP2x1
//! y-pencils    (z, x, y)     (nz, nx, ny)   block,block,*@P2xP1x1  (ranks numbered column-major)
//! z-pencils    (x, y, z)     (nx, ny, nz)   block,block,*@P1xP2x1
//!
//! forward:  x FFTs → [2, 0, 1] → y FFTs → [2, 0, 1] → z FFTs
//! inverse:  z IFFTs → [1, 2, 0] → y IFFTs → [1, 2, 0] → x IFFTs, × 1/(nx·ny·nz)
//! ```
//!
//! A permutation sends source dimension `d` to target dimension
//! `permutation[d]`: `[2, 0, 1]` takes `(y, z, x)` to `(z, x, y)` and
//! `(z, x, y)` to `(x, y, z)`; `[1, 2, 0]` goes back. The rank at grid
//! coordinates `(c1, c2)` of the x- and z-pencils sits at `(c2, c1)` of the
//! y-pencils, whose `P2 × P1` grid numbers its ranks column-major: z keeps
//! its block from x- to y-pencils, so that exchange runs among the `P1`
//! ranks of one `c2`, and x keeps its block from y- to z-pencils, among the
//! `P2` ranks of one `c1`. Extents need not be multiples of the grid's
//! (block parts are ragged; a rank may hold nothing), and the grid may use
//! fewer ranks than the job.
//!
//! [`Fft3d`] plans the six 1-D FFTs ([`rustfft::FftPlanner`]) and the four
//! redistributions once and reuses them. [`run()`] is what
//! `examples/fft3d.rs` runs: it transforms a sum of plane waves whose
//! spectrum is known ([`Wave`]), checks it against that spectrum and against
//! a serial 3-D FFT of the gathered array ([`fft3_serial`]), checks the
//! round trip, and times repeated forward + inverse transforms.
//! [`choose_pencil_grid`] chooses the grid by timing whole transforms on
//! each candidate (`--grid auto`), and keeps it in a wisdom file.

use crate::fft2d::transform_lines;
use dist_array::{Complex, DistArray, Layout};
use mpi::topology::{Communicator, SimpleCommunicator};
use procgrid::ProcGrid;
use redist::Strategy;
use rustfft::FftPlanner;
use std::time::Instant;
use thiserror::Error;

mod pencils;
mod run;
mod tuned;
mod waves;

pub use pencils::PencilGrid;
use pencils::{LinePlans, Pencils, Reshapes};
pub use run::{run, FftConfig, FftResult, SERIAL_MAX_ELEMENTS};
pub use tuned::{choose_pencil_grid, pencil_candidates};
pub use waves::{
    default_waves, expected_spectrum, fft3_serial, spectrum_error, wave_value, Extents, Wave,
};

/// The element type: a double-precision complex number.
pub type C64 = Complex<f64>;

/// The permutation from x- to y-pencils and from y- to z-pencils.
pub const FORWARD_PERMUTATION: [usize; 3] = [2, 0, 1];

/// The permutation from z- to y-pencils and from y- to x-pencils.
pub const INVERSE_PERMUTATION: [usize; 3] = [1, 2, 0];

/// What can go wrong in the 3-D FFT.
#[derive(Debug, Error)]
pub enum FftError {
    /// Invalid parameters.
    #[error("invalid parameter: {0}")]
    Parameter(String),
    /// A process grid with more ranks than the job.
    #[error("process grid {grid} needs {needed} ranks, the job has {ranks}")]
    GridTooLarge {
        /// The grid asked for.
        grid: PencilGrid,
        /// Ranks it needs.
        needed: usize,
        /// Ranks in the job.
        ranks: usize,
    },
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

impl FftError {
    /// The 3-D error for an error of the 2-D FFT's helpers reused here.
    fn from_fft2d(e: crate::fft2d::FftError) -> FftError {
        use crate::fft2d::FftError as E2;
        match e {
            E2::Dist(e) => FftError::Dist(e),
            E2::Redist(e) => FftError::Redist(e),
            E2::Grid(e) => FftError::Grid(e),
            other => FftError::Parameter(other.to_string()),
        }
    }
}

/// Wall time of the five phases of one transform on one rank, seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PhaseTimes {
    /// FFTs along x (x-pencils).
    pub x_lines_s: f64,
    /// The redistribution between x- and y-pencils.
    pub xy_redist_s: f64,
    /// FFTs along y (y-pencils).
    pub y_lines_s: f64,
    /// The redistribution between y- and z-pencils.
    pub yz_redist_s: f64,
    /// FFTs along z (z-pencils).
    pub z_lines_s: f64,
}

impl PhaseTimes {
    /// All five phases.
    pub fn total(&self) -> f64 {
        self.lines() + self.redist()
    }

    /// The two redistributions.
    pub fn redist(&self) -> f64 {
        self.xy_redist_s + self.yz_redist_s
    }

    /// The three sets of 1-D FFTs.
    pub fn lines(&self) -> f64 {
        self.x_lines_s + self.y_lines_s + self.z_lines_s
    }
}

/// A distributed 3-D FFT on pencils, planned once: the six 1-D FFTs
/// (forward and inverse along each axis), the four redistributions (x → y
/// and y → z for the forward transform, z → y and y → x for the inverse)
/// and the y-pencils both directions pass through.
///
/// ```
/// use apps::fft3d::{Fft3d, C64};
/// use dist_array::DistArray;
/// use redist::Strategy;
///
/// let universe = procgrid::init().unwrap();
/// let world = universe.world();
/// let mut fft = Fft3d::new(&world, [6, 5, 4], None, Strategy::Auto).unwrap();
/// // A constant: its spectrum is one spike of 120 at (0, 0, 0).
/// let mut x = DistArray::from_fn(fft.grid(), fft.x_layout().clone(), |_| C64::new(1.0, 0.0)).unwrap();
/// let mut z = DistArray::zeros(fft.grid(), fft.z_layout().clone()).unwrap();
/// fft.forward(&mut x, &mut z).unwrap();
/// if let Some(s) = z.gather(0).unwrap() {
///     assert!((s[[0, 0, 0]] - C64::new(120.0, 0.0)).norm() < 1e-12);
///     assert!(s.iter().skip(1).all(|v| v.norm() < 1e-12));
/// }
/// fft.inverse(&mut z, &mut x).unwrap();
/// assert!((x.sum().unwrap() - C64::new(120.0, 0.0)).norm() < 1e-12);
/// ```
pub struct Fft3d {
    extents: Extents,
    pencil_grid: PencilGrid,
    pencils: Pencils,
    reshapes: Reshapes,
    /// The y-pencils between the two redistributions of either direction.
    y_pencils: DistArray<C64>,
    /// Elements moved between ranks by one forward + inverse transform,
    /// over all ranks.
    moved: usize,
    /// Along x, y and z.
    plans: [LinePlans; 3],
}

impl Fft3d {
    /// Plans the transform of arrays of `extents` `(nx, ny, nz)` on every
    /// rank of `world` (collective), over `grid` (default: the balanced
    /// grid of the job's ranks, [`PencilGrid::balanced`]); the grid may use
    /// fewer ranks than the job.
    ///
    /// # Errors
    ///
    /// [`FftError::Parameter`] for an extent of 0;
    /// [`FftError::GridTooLarge`] for a grid of more ranks than the job;
    /// [`FftError::Grid`], [`FftError::Dist`] or [`FftError::Redist`] when
    /// the grids, layouts or redistributions cannot be built. Every rank
    /// returns the same.
    pub fn new(
        world: &SimpleCommunicator,
        extents: Extents,
        grid: Option<PencilGrid>,
        strategy: Strategy,
    ) -> Result<Fft3d, FftError> {
        if extents.contains(&0) {
            let [nx, ny, nz] = extents;
            return Err(FftError::Parameter(format!(
                "the array must have at least one element along each axis, got {nx}x{ny}x{nz}"
            )));
        }
        let ranks = usize::try_from(world.size()).expect("a communicator has a positive size");
        let pencil_grid = match grid {
            Some(g) => g,
            None => PencilGrid::balanced(ranks)?,
        };
        if pencil_grid.ranks() > ranks {
            return Err(FftError::GridTooLarge {
                grid: pencil_grid,
                needed: pencil_grid.ranks(),
                ranks,
            });
        }
        let pencils = Pencils::new(world, extents, pencil_grid)?;
        let reshapes = Reshapes::new(&pencils, strategy)?;
        let y_pencils = DistArray::zeros(&pencils.y_grid, reshapes.x_to_y.target_layout().clone())?;
        // Collective: every rank plans the transform.
        let moved = [
            &reshapes.x_to_y,
            &reshapes.y_to_z,
            &reshapes.z_to_y,
            &reshapes.y_to_x,
        ]
        .iter()
        .map(|r| r.totals().1)
        .sum();
        let mut planner = FftPlanner::<f64>::new();
        let plans = extents.map(|len| LinePlans::new(&mut planner, len));
        Ok(Fft3d {
            extents,
            pencil_grid,
            pencils,
            reshapes,
            y_pencils,
            moved,
            plans,
        })
    }

    /// The global extents `(nx, ny, nz)`.
    pub fn extents(&self) -> Extents {
        self.extents
    }

    /// The `P1 × P2` process grid.
    pub fn pencil_grid(&self) -> PencilGrid {
        self.pencil_grid
    }

    /// The `P1 × P2 × 1` grid of the x- and z-pencils: the input of
    /// [`forward`](Self::forward) and its spectrum live on it.
    pub fn grid(&self) -> &ProcGrid {
        &self.pencils.xz_grid
    }

    /// The `P2 × P1 × 1` grid of the y-pencils (ranks numbered
    /// column-major).
    pub fn y_grid(&self) -> &ProcGrid {
        &self.pencils.y_grid
    }

    /// The x-pencils: axes `(y, z, x)`, `block,block,*@P1xP2x1` — the
    /// input of [`forward`](Self::forward), the output of
    /// [`inverse`](Self::inverse).
    pub fn x_layout(&self) -> &Layout {
        &self.pencils.x
    }

    /// The y-pencils: axes `(z, x, y)`, `block,block,*@P2xP1x1`.
    pub fn y_layout(&self) -> &Layout {
        &self.pencils.y
    }

    /// The z-pencils: axes `(x, y, z)`, `block,block,*@P1xP2x1` — the
    /// spectrum's layout.
    pub fn z_layout(&self) -> &Layout {
        &self.pencils.z
    }

    /// The strategies of the four redistributions (x → y, y → z, z → y,
    /// y → x; never `Auto`).
    pub fn strategies(&self) -> [Strategy; 4] {
        let r = &self.reshapes;
        [&r.x_to_y, &r.y_to_z, &r.z_to_y, &r.y_to_x].map(|r| r.strategy())
    }

    /// The ranks this rank sends to in each of the four redistributions
    /// (x → y, y → z, z → y, y → x). For the rank at `(c1, c2)` of the
    /// `P1 × P2` grid, rank `c1·P2 + c2`: those of the same `c2` between
    /// x- and y-pencils, those of the same `c1` between y- and z-pencils.
    pub fn send_peers(&self) -> [Vec<usize>; 4] {
        let r = &self.reshapes;
        [&r.x_to_y, &r.y_to_z, &r.z_to_y, &r.y_to_x]
            .map(|r| r.rank_plan().sends().iter().map(|l| l.peer).collect())
    }

    /// Elements moved between ranks by one forward + inverse transform
    /// (four redistributions), over all ranks.
    pub fn elements_moved(&self) -> usize {
        self.moved
    }

    /// The forward transform (collective): `x_pencils`, laid out as
    /// [`x_layout`](Self::x_layout), is overwritten by its x transforms;
    /// `spectrum`, laid out as [`z_layout`](Self::z_layout), receives
    /// `X[kx][ky][kz] = Σ a[x][y][z]·exp(−2πi(kx·x/nx + ky·y/ny + kz·z/nz))`.
    /// Returns this rank's time per phase.
    ///
    /// # Errors
    ///
    /// [`FftError::Redist`] when the arrays are not laid out as the
    /// transform's layouts (on every rank alike; an array in a wrong layout
    /// is not transformed).
    pub fn forward(
        &mut self,
        x_pencils: &mut DistArray<C64>,
        spectrum: &mut DistArray<C64>,
    ) -> Result<PhaseTimes, FftError> {
        let t0 = Instant::now();
        // A wrong array is left alone: the redistribution below refuses it
        // on every rank.
        if x_pencils.layout() == &self.pencils.x {
            transform_lines(x_pencils.local_slice_mut(), self.plans[0].get(false), None);
        }
        let t1 = Instant::now();
        self.reshapes
            .x_to_y
            .execute_into(x_pencils, &mut self.y_pencils)?;
        let t2 = Instant::now();
        let y_lines = self.y_pencils.local_slice_mut();
        transform_lines(y_lines, self.plans[1].get(false), None);
        let t3 = Instant::now();
        self.reshapes
            .y_to_z
            .execute_into(&self.y_pencils, spectrum)?;
        let t4 = Instant::now();
        transform_lines(spectrum.local_slice_mut(), self.plans[2].get(false), None);
        let t5 = Instant::now();
        Ok(PhaseTimes {
            x_lines_s: (t1 - t0).as_secs_f64(),
            xy_redist_s: (t2 - t1).as_secs_f64(),
            y_lines_s: (t3 - t2).as_secs_f64(),
            yz_redist_s: (t4 - t3).as_secs_f64(),
            z_lines_s: (t5 - t4).as_secs_f64(),
        })
    }

    /// The inverse transform (collective), normalised by `1/(nx·ny·nz)`:
    /// `spectrum`, laid out as [`z_layout`](Self::z_layout), is overwritten
    /// by its inverse z transforms; `x_pencils`, laid out as
    /// [`x_layout`](Self::x_layout), receives the array. Returns this rank's
    /// time per phase.
    ///
    /// # Errors
    ///
    /// As [`forward`](Self::forward).
    pub fn inverse(
        &mut self,
        spectrum: &mut DistArray<C64>,
        x_pencils: &mut DistArray<C64>,
    ) -> Result<PhaseTimes, FftError> {
        let t0 = Instant::now();
        if spectrum.layout() == &self.pencils.z {
            transform_lines(spectrum.local_slice_mut(), self.plans[2].get(true), None);
        }
        let t1 = Instant::now();
        self.reshapes
            .z_to_y
            .execute_into(spectrum, &mut self.y_pencils)?;
        let t2 = Instant::now();
        let y_lines = self.y_pencils.local_slice_mut();
        transform_lines(y_lines, self.plans[1].get(true), None);
        let t3 = Instant::now();
        self.reshapes
            .y_to_x
            .execute_into(&self.y_pencils, x_pencils)?;
        let t4 = Instant::now();
        let scale = 1.0 / self.extents.iter().map(|&n| n as f64).product::<f64>();
        let x_lines = x_pencils.local_slice_mut();
        transform_lines(x_lines, self.plans[0].get(true), Some(scale));
        let t5 = Instant::now();
        Ok(PhaseTimes {
            z_lines_s: (t1 - t0).as_secs_f64(),
            yz_redist_s: (t2 - t1).as_secs_f64(),
            y_lines_s: (t3 - t2).as_secs_f64(),
            xy_redist_s: (t4 - t3).as_secs_f64(),
            x_lines_s: (t5 - t4).as_secs_f64(),
        })
    }
}
