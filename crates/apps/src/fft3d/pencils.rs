//! The pieces an [`Fft3d`](super::Fft3d) is built from: the `P1 × P2`
//! process grid ([`PencilGrid`]), the grids and layouts of the three pencil
//! decompositions, the four redistributions between them, and the 1-D FFT
//! plans.

use super::{Extents, FftError, C64, FORWARD_PERMUTATION, INVERSE_PERMUTATION};
use dist_array::{Layout, LayoutSpec, Order};
use mpi::topology::SimpleCommunicator;
use procgrid::ProcGrid;
use redist::{Options, Redistribution, Remap, Strategy};
use rustfft::{Fft, FftPlanner};
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

/// The 2-D process grid `P1 × P2` the pencils are spread over: `P1` ranks
/// along the first stored axis of the x- and z-pencils, `P2` along the
/// second. Written `P1xP2`.
///
/// ```
/// use apps::fft3d::PencilGrid;
/// let g: PencilGrid = "3x2".parse().unwrap();
/// assert_eq!((g.p1, g.p2, g.ranks()), (3, 2, 6));
/// assert_eq!(g.to_string(), "3x2");
/// assert_eq!(PencilGrid::balanced(12).unwrap(), PencilGrid { p1: 4, p2: 3 });
/// assert!("3x0".parse::<PencilGrid>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PencilGrid {
    /// Ranks along the first grid dimension.
    pub p1: usize,
    /// Ranks along the second grid dimension.
    pub p2: usize,
}

impl PencilGrid {
    /// The most nearly square grid of `ranks` ranks, `P1 ≥ P2`
    /// ([`procgrid::balanced_extents`]).
    ///
    /// # Errors
    ///
    /// [`FftError::Grid`] when `ranks` is 0.
    pub fn balanced(ranks: usize) -> Result<PencilGrid, FftError> {
        let e = procgrid::balanced_extents(ranks, &[0, 0])?;
        Ok(PencilGrid { p1: e[0], p2: e[1] })
    }

    /// Ranks in the grid, `P1·P2` (saturating).
    pub fn ranks(&self) -> usize {
        self.p1.saturating_mul(self.p2)
    }
}

impl FromStr for PencilGrid {
    type Err = FftError;

    fn from_str(s: &str) -> Result<PencilGrid, FftError> {
        let bad = || FftError::Parameter(format!("process grid {s:?}: expected P1xP2, e.g. 2x3"));
        let (a, b) = s.split_once('x').ok_or_else(bad)?;
        let extent = |t: &str| t.trim().parse::<usize>().ok().filter(|&p| p > 0);
        match (extent(a), extent(b)) {
            (Some(p1), Some(p2)) => Ok(PencilGrid { p1, p2 }),
            _ => Err(bad()),
        }
    }
}

impl fmt::Display for PencilGrid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.p1, self.p2)
    }
}

/// The forward and inverse 1-D FFTs along one axis.
pub(super) struct LinePlans {
    pub(super) forward: Arc<dyn Fft<f64>>,
    pub(super) inverse: Arc<dyn Fft<f64>>,
}

impl LinePlans {
    pub(super) fn new(planner: &mut FftPlanner<f64>, len: usize) -> LinePlans {
        LinePlans {
            forward: planner.plan_fft_forward(len),
            inverse: planner.plan_fft_inverse(len),
        }
    }

    pub(super) fn get(&self, inverse: bool) -> &dyn Fft<f64> {
        if inverse {
            &*self.inverse
        } else {
            &*self.forward
        }
    }
}

/// The grids and layouts of the three pencil decompositions.
pub(super) struct Pencils {
    /// The `P1 × P2 × 1` grid of the x- and z-pencils.
    pub(super) xz_grid: ProcGrid,
    /// The `P2 × P1 × 1` grid of the y-pencils, ranks numbered column-major.
    pub(super) y_grid: ProcGrid,
    pub(super) x: Layout,
    pub(super) y: Layout,
    pub(super) z: Layout,
}

impl Pencils {
    /// Builds the grids over `world` (collective) and the layouts of an
    /// array of `extents` `(nx, ny, nz)`.
    pub(super) fn new(
        world: &SimpleCommunicator,
        [nx, ny, nz]: Extents,
        g: PencilGrid,
    ) -> Result<Pencils, FftError> {
        let spec = |a: usize, b: usize| format!("block,block,*@{a}x{b}x1").parse::<LayoutSpec>();
        let (xz_spec, y_spec) = (spec(g.p1, g.p2)?, spec(g.p2, g.p1)?);
        let xz_grid = ProcGrid::builder(xz_spec.grid())
            .subset(true)
            .build(world)?;
        let y_grid = ProcGrid::builder(y_spec.grid())
            .order(Order::ColumnMajor)
            .subset(true)
            .build_sharing(&xz_grid)?;
        Ok(Pencils {
            x: dist_array::layout_on_grid(&[ny, nz, nx], &xz_spec, &xz_grid)?,
            y: dist_array::layout_on_grid(&[nz, nx, ny], &y_spec, &y_grid)?,
            z: dist_array::layout_on_grid(&[nx, ny, nz], &xz_spec, &xz_grid)?,
            xz_grid,
            y_grid,
        })
    }
}

/// The four redistributions of a transform, planned once.
pub(super) struct Reshapes {
    pub(super) x_to_y: Redistribution<C64>,
    pub(super) y_to_z: Redistribution<C64>,
    pub(super) z_to_y: Redistribution<C64>,
    pub(super) y_to_x: Redistribution<C64>,
}

impl Reshapes {
    /// Plans the four (collective).
    pub(super) fn new(p: &Pencils, strategy: Strategy) -> Result<Reshapes, FftError> {
        let options = Options {
            strategy,
            remap: Remap::None,
            ..Options::default()
        };
        let (f, i) = (&FORWARD_PERMUTATION, &INVERSE_PERMUTATION);
        let (xz, y) = (&p.xz_grid, &p.y_grid);
        Ok(Reshapes {
            x_to_y: Self::plan(xz, &p.x, y, &p.y, f, &options)?,
            y_to_z: Self::plan(y, &p.y, xz, &p.z, f, &options)?,
            z_to_y: Self::plan(xz, &p.z, y, &p.y, i, &options)?,
            y_to_x: Self::plan(y, &p.y, xz, &p.x, i, &options)?,
        })
    }

    /// One redistribution from `source` on `source_grid` to `target` on
    /// `target_grid` that permutes the axes by `permutation` (collective).
    fn plan(
        source_grid: &ProcGrid,
        source: &Layout,
        target_grid: &ProcGrid,
        target: &Layout,
        permutation: &[usize],
        options: &Options,
    ) -> Result<Redistribution<C64>, FftError> {
        Ok(Redistribution::<C64>::with_permutation(
            source_grid,
            source,
            target_grid,
            target,
            permutation,
            None,
            options.clone(),
        )?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pencil_grids() {
        let g = |s: &str| s.parse::<PencilGrid>();
        assert_eq!(g("2x3").unwrap(), PencilGrid { p1: 2, p2: 3 });
        assert_eq!(g("1x1").unwrap().ranks(), 1);
        for bad in ["", "2", "2x", "x3", "0x2", "2x3x1", "-1x2", "ax2"] {
            let e = g(bad).unwrap_err().to_string();
            assert!(e.contains("expected P1xP2"), "{bad}: {e}");
        }
        assert_eq!(
            PencilGrid::balanced(7).unwrap(),
            PencilGrid { p1: 7, p2: 1 }
        );
        assert_eq!(
            PencilGrid::balanced(6).unwrap(),
            PencilGrid { p1: 3, p2: 2 }
        );
        assert!(PencilGrid::balanced(0).is_err());
    }

    #[test]
    fn permutations_go_round() {
        // (y, z, x) → (z, x, y) → (x, y, z), and back.
        let apply = |axes: [char; 3], p: [usize; 3]| {
            let mut out = [' '; 3];
            for (d, &a) in p.iter().enumerate() {
                out[a] = axes[d];
            }
            out
        };
        let x = ['y', 'z', 'x'];
        let y = apply(x, FORWARD_PERMUTATION);
        let z = apply(y, FORWARD_PERMUTATION);
        assert_eq!((y, z), (['z', 'x', 'y'], ['x', 'y', 'z']));
        assert_eq!(apply(z, INVERSE_PERMUTATION), y);
        assert_eq!(apply(y, INVERSE_PERMUTATION), x);
    }
}
