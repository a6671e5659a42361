//! The two phases' layouts, grids and redistributions, checked and planned
//! once for the whole run.

use super::{AdiConfig, AdiError};
use dist_array::{Layout, LayoutSpec};
use mpi::topology::SimpleCommunicator;
use procgrid::ProcGrid;
use redist::{Options, Redistribution, Remap};

/// Checks that `spec` keeps dimension `dim` whole.
pub(super) fn line_layout(
    spec: &LayoutSpec,
    which: &'static str,
    dim: usize,
    p: usize,
) -> Result<(), AdiError> {
    if spec.ndim() != 2 || spec.grid()[dim] != 1 {
        let example = if dim == 0 {
            format!("*,cyclic(8)@1x{p}")
        } else {
            format!("cyclic(8),*@{p}x1")
        };
        return Err(AdiError::LineLayout {
            which,
            spec: spec.to_string(),
            dim,
            example,
        });
    }
    Ok(())
}

/// The y-line and x-line layouts of `cfg` on `p` ranks (`block,*@Px1` and
/// `*,block@1xP` where it names none), checked to keep their line dimension
/// whole and to fit in the job.
pub(super) fn line_specs(cfg: &AdiConfig, p: usize) -> Result<(LayoutSpec, LayoutSpec), AdiError> {
    let y_spec = match &cfg.y_layout {
        Some(s) => s.clone(),
        None => format!("block,*@{p}x1").parse()?,
    };
    let x_spec = match &cfg.x_layout {
        Some(s) => s.clone(),
        None => format!("*,block@1x{p}").parse()?,
    };
    line_layout(&y_spec, "y-line", 1, p)?;
    line_layout(&x_spec, "x-line", 0, p)?;
    for spec in [&y_spec, &x_spec] {
        if spec.ranks() > p {
            return Err(AdiError::Parameter(format!(
                "layout {spec} needs {} ranks, the job has {p}",
                spec.ranks()
            )));
        }
    }
    Ok((y_spec, x_spec))
}

/// The two redistributions of a step.
pub(super) struct Exchanges {
    /// Whole y-lines → whole x-lines, with the configured remapping.
    pub(super) to_x: Redistribution<f64>,
    /// Whole x-lines → whole y-lines, back to the y-layout as given.
    pub(super) to_y: Redistribution<f64>,
}

/// The grids and layouts of the two phases and the redistributions between
/// them, planned once for the whole run.
pub(super) struct LinePlans {
    /// The grid of the y-line phase.
    pub(super) y_grid: ProcGrid,
    /// The layout with whole y-lines (dimension 1 whole).
    pub(super) y_layout: Layout,
    /// The grid of the x-line phase.
    pub(super) x_grid: ProcGrid,
    /// The layout with whole x-lines, as the y → x redistribution relabelled it.
    pub(super) x_layout: Layout,
    /// y → x and x → y.
    pub(super) exchanges: Exchanges,
    /// Elements both move between ranks, summed over the ranks.
    moved: usize,
}

impl LinePlans {
    /// Builds the grids on `world` and plans both redistributions of the
    /// `n × n` field of `cfg` (collective).
    pub(super) fn new(
        world: &SimpleCommunicator,
        cfg: &AdiConfig,
        y_spec: &LayoutSpec,
        x_spec: &LayoutSpec,
    ) -> Result<LinePlans, AdiError> {
        let n = cfg.n;
        let ly = Layout::new(&[n, n], y_spec)?;
        let lx = Layout::new(&[n, n], x_spec)?;
        let gy = ProcGrid::builder(y_spec.grid()).subset(true).build(world)?;
        let gx = ProcGrid::builder(x_spec.grid())
            .subset(true)
            .build_sharing(&gy)?;
        let to_x_opts = Options {
            strategy: cfg.strategy,
            remap: cfg.remap,
            ..Options::default()
        };
        let to_x = Redistribution::<f64>::new(&gy, &ly, &gx, &lx, to_x_opts)?;
        let lx = to_x.target_layout().clone();
        let to_y_opts = Options {
            strategy: cfg.strategy,
            remap: Remap::None,
            ..Options::default()
        };
        let to_y = Redistribution::<f64>::new(&gx, &lx, &gy, &ly, to_y_opts)?;
        // Collective: every rank builds the plans.
        let moved = to_x.totals().1 + to_y.totals().1;
        Ok(LinePlans {
            y_grid: gy,
            y_layout: ly,
            x_grid: gx,
            x_layout: lx,
            exchanges: Exchanges { to_x, to_y },
            moved,
        })
    }

    /// Bytes moved between ranks per step (both redistributions).
    pub(super) fn bytes_moved_per_step(&self) -> usize {
        self.moved * 8
    }
}
