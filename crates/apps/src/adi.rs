//! The ADI heat solver of `examples/adi.rs`: u_t = u_xx + u_yy on the unit
//! square, zero Dirichlet boundary, Peaceman–Rachford alternating-direction
//! implicit steps, with the field redistributed between whole x-lines and
//! whole y-lines twice per step.
//!
//! The field is `u[i][j]` with `i` along x (array dimension 0) and `j` along
//! y (dimension 1) on an `n × n` interior grid, `h = 1/(n+1)`,
//! `r = dt / (2h²)`. One step:
//!
//! ```text
//! (I − r δx²) u* = (I + r δy²) uⁿ        y-term explicit where y-lines are whole,
//!                                         then x-systems where x-lines are whole
//! (I − r δy²) uⁿ⁺¹ = (I + r δx²) u*      x-term explicit where x-lines are whole,
//!                                         then y-systems where y-lines are whole
//! ```
//!
//! Every element sees the same floating-point operations in the same order
//! whatever the number of ranks or the layouts ([`kernels`]), so results are
//! bitwise identical for any rank count and layout pair, and equal to
//! [`solve_serial`].
//!
//! # Checkpoint and restart
//!
//! With [`AdiConfig::checkpoint`] a run saves `u` after every step whose
//! number is a multiple of [`Checkpoints::every`] — the last step included
//! when it is one — to a `.npy` file and a JSON sidecar beside it
//! ([`checkpoint`] describes the two files and why a crash never leaves a
//! pair that resumes from the wrong step). With [`AdiConfig::restart`] a
//! run loads such a checkpoint instead of the initial field, onto its own
//! layouts on its own rank count, and runs the steps after the
//! checkpoint's up to [`AdiConfig::steps`], which stays the total step
//! count. The state is `u` alone and the steps are bitwise reproducible,
//! so an interrupted run resumed on any rank count ends with the
//! uninterrupted run's field, bit for bit.

use dist_array::{DistArray, Layout, LayoutSpec};
use mpi::collective::{CommunicatorCollectives, Root, SystemOperation};
use mpi::topology::{Communicator, SimpleCommunicator};
use ndarray::{Array2, ArrayView2, ArrayViewMut2, Axis, Ix2};
use procgrid::ProcGrid;
use rayon::prelude::*;
use redist::{Options, Redistribution, Remap, Strategy};
use std::f64::consts::PI;
use std::path::PathBuf;
use std::time::Instant;
use thiserror::Error;

pub mod checkpoint;

pub use checkpoint::Checkpoints;

/// What can go wrong in the ADI solver.
#[derive(Debug, Error)]
pub enum AdiError {
    /// A layout that does not keep the needed dimension whole.
    #[error("{which} layout {spec} must keep dimension {dim} whole (grid extent 1 there, e.g. {example})")]
    LineLayout {
        /// `x-line` or `y-line`.
        which: &'static str,
        /// The spec as given.
        spec: String,
        /// The dimension that must be whole.
        dim: usize,
        /// A valid example.
        example: String,
    },
    /// Invalid numerical parameters.
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
    /// Saving or loading a checkpoint's array failed.
    #[error(transparent)]
    Io(#[from] dist_io::IoError),
    /// A checkpoint that cannot be written, read or resumed from.
    #[error("checkpoint {path}: {reason}")]
    Checkpoint {
        /// The checkpoint's array or sidecar.
        path: String,
        /// What is wrong and what was expected.
        reason: String,
    },
}

/// Parameters of a run.
#[derive(Debug, Clone)]
pub struct AdiConfig {
    /// Interior points per dimension.
    pub n: usize,
    /// Time steps, in all: a restarted run ends after the same step as an
    /// uninterrupted one.
    pub steps: usize,
    /// Time step.
    pub dt: f64,
    /// Layout with whole x-lines (dimension 0 whole); `None`: `*,block@1xP`.
    pub x_layout: Option<LayoutSpec>,
    /// Layout with whole y-lines (dimension 1 whole); `None`: `block,*@Px1`.
    pub y_layout: Option<LayoutSpec>,
    /// Exchange strategy of both redistributions.
    pub strategy: Strategy,
    /// Remapping of the y → x redistribution (x → y returns to the y layout).
    pub remap: Remap,
    /// Add the mode 0.5·sin(2πx)·sin(3πy) to the initial field.
    pub two_modes: bool,
    /// Print progress on rank 0 for runs longer than a few seconds.
    pub progress: bool,
    /// Save the state every so many steps; `None`: never.
    pub checkpoint: Option<Checkpoints>,
    /// Resume from the checkpoint at this path (its array's file) instead
    /// of starting from the initial field; `None`: start at step 0.
    pub restart: Option<PathBuf>,
}

/// What a run produced. Field, checksum and errors are the same on every rank.
#[derive(Debug, Clone)]
pub struct AdiResult {
    /// Ranks in the run.
    pub ranks: usize,
    /// Final time.
    pub time: f64,
    /// Max-norm error against the exact solution.
    pub max_error: f64,
    /// Discrete L2 error, sqrt(h² Σ e²).
    pub l2_error: f64,
    /// FNV-1a 64 of the final field, global row-major order, little-endian bytes.
    pub checksum: u64,
    /// The final field on rank 0, `None` elsewhere.
    pub field: Option<Array2<f64>>,
    /// Wall time of the time loop, seconds.
    pub time_s: f64,
    /// Of which redistribution (rank 0's view).
    pub redist_s: f64,
    /// Of which computation (rank 0's view).
    pub compute_s: f64,
    /// Bytes moved between ranks per step (both redistributions).
    pub bytes_moved_per_step: usize,
    /// Strategies used (y → x, x → y).
    pub strategies: (Strategy, Strategy),
    /// The step of the checkpoint the run resumed from (`None`: it started
    /// from the initial field); it ran the steps after it.
    pub restarted_from: Option<usize>,
    /// Checkpoints the run saved.
    pub checkpoints_written: usize,
    /// Of the time loop's wall time, seconds spent saving checkpoints
    /// (rank 0's view).
    pub checkpoint_s: f64,
    /// Seconds spent reading the checkpoint resumed from, before the time
    /// loop: its sidecar, its array, its digest (rank 0's view; 0 without
    /// a restart).
    pub restart_s: f64,
}

/// The point-wise kernels shared by the serial and distributed solvers.
pub mod kernels {
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
}

use kernels::{backward, explicit, forward, thomas_coefficients};

/// Explicit term along rows (dimension 1) of a block whose rows are whole.
fn explicit_rows(src: ArrayView2<'_, f64>, mut dst: ArrayViewMut2<'_, f64>, r: f64) {
    dst.axis_iter_mut(Axis(0))
        .into_par_iter()
        .zip(src.axis_iter(Axis(0)).into_par_iter())
        .for_each(|(mut out, u)| {
            let n = u.len();
            for j in 0..n {
                let l = if j > 0 { u[j - 1] } else { 0.0 };
                let rr = if j + 1 < n { u[j + 1] } else { 0.0 };
                out[j] = explicit(l, u[j], rr, r);
            }
        });
}

/// Explicit term along columns (dimension 0) of a block whose columns are whole.
fn explicit_columns(src: ArrayView2<'_, f64>, mut dst: ArrayViewMut2<'_, f64>, r: f64) {
    let n = src.nrows();
    dst.axis_iter_mut(Axis(0))
        .into_par_iter()
        .enumerate()
        .for_each(|(i, mut out)| {
            let c = src.row(i);
            for j in 0..c.len() {
                let l = if i > 0 { src[[i - 1, j]] } else { 0.0 };
                let rr = if i + 1 < n { src[[i + 1, j]] } else { 0.0 };
                out[j] = explicit(l, c[j], rr, r);
            }
        });
}

/// Solves the tridiagonal systems along rows (each row a whole line), in place.
fn solve_rows(mut d: ArrayViewMut2<'_, f64>, coef: &[(f64, f64)], r: f64) {
    d.axis_iter_mut(Axis(0))
        .into_par_iter()
        .for_each(|mut line| {
            let n = line.len();
            for i in 0..n {
                let prev = if i > 0 { line[i - 1] } else { 0.0 };
                line[i] = forward(line[i], prev, r, coef[i].1, i == 0);
            }
            for i in (0..n.saturating_sub(1)).rev() {
                line[i] = backward(line[i], coef[i].0, line[i + 1]);
            }
        });
}

/// Solves the tridiagonal systems along columns (each column a whole line),
/// in place, sweeping rows so every step reads contiguous memory.
fn solve_columns(mut d: ArrayViewMut2<'_, f64>, coef: &[(f64, f64)], r: f64) {
    let ncols = d.ncols();
    let chunk = 64.max(ncols.div_ceil(rayon::current_num_threads().max(1) * 4));
    if ncols == 0 {
        return;
    }
    d.axis_chunks_iter_mut(Axis(1), chunk)
        .into_par_iter()
        .for_each(|mut block: ArrayViewMut2<'_, f64>| {
            let n = block.nrows();
            for i in 0..n {
                for j in 0..block.ncols() {
                    let prev = if i > 0 { block[[i - 1, j]] } else { 0.0 };
                    block[[i, j]] = forward(block[[i, j]], prev, r, coef[i].1, i == 0);
                }
            }
            for i in (0..n.saturating_sub(1)).rev() {
                for j in 0..block.ncols() {
                    block[[i, j]] = backward(block[[i, j]], coef[i].0, block[[i + 1, j]]);
                }
            }
        });
}

/// The initial field at (x, y).
fn initial(x: f64, y: f64, two_modes: bool) -> f64 {
    let mut u = (PI * x).sin() * (PI * y).sin();
    if two_modes {
        u += 0.5 * (2.0 * PI * x).sin() * (3.0 * PI * y).sin();
    }
    u
}

/// The exact solution at (x, y, t).
fn exact(x: f64, y: f64, t: f64, two_modes: bool) -> f64 {
    let mut u = (-2.0 * PI * PI * t).exp() * (PI * x).sin() * (PI * y).sin();
    if two_modes {
        u += 0.5 * (-13.0 * PI * PI * t).exp() * (2.0 * PI * x).sin() * (3.0 * PI * y).sin();
    }
    u
}

/// FNV-1a 64 over the little-endian bytes of `values`.
///
/// ```
/// assert_eq!(apps::adi::fnv1a64(&[]), 0xcbf29ce484222325);
/// ```
pub fn fnv1a64(values: &[f64]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for v in values {
        for b in v.to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x100000001b3);
        }
    }
    h
}

/// The discretisation of an `n × n` interior grid stepped by `dt`: mesh
/// width `h = 1/(n+1)`, `r = dt / (2h²)`, and the eliminated coefficients of
/// the implicit systems ([`thomas_coefficients`]).
struct Mesh {
    /// Mesh width.
    h: f64,
    /// dt / (2h²).
    r: f64,
    /// The Thomas coefficients of a line of `n` points.
    coef: Vec<(f64, f64)>,
}

impl Mesh {
    fn new(n: usize, dt: f64) -> Mesh {
        let h = 1.0 / (n + 1) as f64;
        let r = dt / (2.0 * h * h);
        let coef = thomas_coefficients(n, r);
        Mesh { h, r, coef }
    }
}

fn check(n: usize, steps: usize, dt: f64) -> Result<(), AdiError> {
    if n == 0 {
        return Err(AdiError::Parameter("n must be at least 1".into()));
    }
    if !(dt.is_finite() && dt > 0.0) {
        return Err(AdiError::Parameter(format!(
            "dt must be a positive number, got {dt}"
        )));
    }
    let _ = steps;
    Ok(())
}

/// Checks the checkpoint and restart options of `cfg`: an `every` of at
/// least 1 and paths that name files (local, before any communication).
fn check_files(cfg: &AdiConfig) -> Result<(), AdiError> {
    if let Some(c) = &cfg.checkpoint {
        if c.every == 0 {
            return Err(AdiError::Parameter(
                "checkpoints every 0 steps: expected every K steps with K >= 1".into(),
            ));
        }
        checkpoint::sidecar_of(&c.path, "--checkpoint")?;
    }
    if let Some(path) = &cfg.restart {
        checkpoint::sidecar_of(path, "--restart")?;
    }
    Ok(())
}

/// The same computation on one process with plain arrays: the reference the
/// distributed solver must match bit for bit.
///
/// # Errors
///
/// - [`AdiError::Parameter`] when `n` is 0 or `dt` is not a positive finite number.
pub fn solve_serial(
    n: usize,
    steps: usize,
    dt: f64,
    two_modes: bool,
) -> Result<Array2<f64>, AdiError> {
    check(n, steps, dt)?;
    let Mesh { h, r, coef } = Mesh::new(n, dt);
    let mut u = Array2::from_shape_fn((n, n), |(i, j)| {
        initial((i + 1) as f64 * h, (j + 1) as f64 * h, two_modes)
    });
    let mut w = Array2::zeros((n, n));
    for _ in 0..steps {
        explicit_rows(u.view(), w.view_mut(), r);
        solve_columns(w.view_mut(), &coef, r);
        explicit_columns(w.view(), u.view_mut(), r);
        solve_rows(u.view_mut(), &coef, r);
    }
    Ok(u)
}

/// Checks that `spec` keeps dimension `dim` whole.
fn line_layout(
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

fn view2(a: &DistArray<f64>) -> ArrayView2<'_, f64> {
    a.local()
        .into_dimensionality::<Ix2>()
        .expect("2-D local part")
}

fn view2_mut(a: &mut DistArray<f64>) -> ArrayViewMut2<'_, f64> {
    a.local_mut()
        .into_dimensionality::<Ix2>()
        .expect("2-D local part")
}

/// The y-line and x-line layouts of `cfg` on `p` ranks (`block,*@Px1` and
/// `*,block@1xP` where it names none), checked to keep their line dimension
/// whole and to fit in the job.
fn line_specs(cfg: &AdiConfig, p: usize) -> Result<(LayoutSpec, LayoutSpec), AdiError> {
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
struct Exchanges {
    /// Whole y-lines → whole x-lines, with the configured remapping.
    to_x: Redistribution<f64>,
    /// Whole x-lines → whole y-lines, back to the y-layout as given.
    to_y: Redistribution<f64>,
}

/// The grids and layouts of the two phases and the redistributions between
/// them, planned once for the whole run.
struct LinePlans {
    /// The grid of the y-line phase.
    y_grid: ProcGrid,
    /// The layout with whole y-lines (dimension 1 whole).
    y_layout: Layout,
    /// The grid of the x-line phase.
    x_grid: ProcGrid,
    /// The layout with whole x-lines, as the y → x redistribution relabelled it.
    x_layout: Layout,
    /// y → x and x → y.
    exchanges: Exchanges,
    /// Elements both move between ranks, summed over the ranks.
    moved: usize,
}

impl LinePlans {
    /// Builds the grids on `world` and plans both redistributions of the
    /// `n × n` field of `cfg` (collective).
    fn new(
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
    fn bytes_moved_per_step(&self) -> usize {
        self.moved * 8
    }
}

/// The field and the work arrays of a step: `u` and `w_y` with whole
/// y-lines, `w_x` and `v_x` with whole x-lines.
struct Fields {
    /// The solution, between steps.
    u: DistArray<f64>,
    /// The y-term explicit of `u`.
    w_y: DistArray<f64>,
    /// `w_y` with whole x-lines, then u* after the x-systems.
    w_x: DistArray<f64>,
    /// The x-term explicit of u*.
    v_x: DistArray<f64>,
}

impl Fields {
    /// The field on the y-lines of `plans` — the initial one, or the
    /// checkpoint of `restart` (its path and sidecar) — and zeroed work
    /// arrays. Collective when restarting.
    fn new(
        plans: &LinePlans,
        h: f64,
        two_modes: bool,
        restart: Option<(&std::path::Path, &checkpoint::Sidecar)>,
    ) -> Result<Fields, AdiError> {
        let ly = &plans.y_layout;
        let u = match restart {
            None => DistArray::from_fn(&plans.y_grid, ly.clone(), |g| {
                initial((g[0] + 1) as f64 * h, (g[1] + 1) as f64 * h, two_modes)
            })?,
            Some((path, sidecar)) => {
                let mut u = DistArray::<f64>::zeros(&plans.y_grid, ly.clone())?;
                checkpoint::restore(&mut u, path, sidecar)?;
                u
            }
        };
        let w_y = DistArray::<f64>::zeros(&plans.y_grid, ly.clone())?;
        let w_x = DistArray::<f64>::zeros(&plans.x_grid, plans.x_layout.clone())?;
        let v_x = DistArray::<f64>::zeros(&plans.x_grid, plans.x_layout.clone())?;
        Ok(Fields { u, w_y, w_x, v_x })
    }
}

/// Seconds spent in the time loop, this rank's view.
#[derive(Debug, Default)]
struct LoopTimes {
    /// The whole loop, barrier to barrier.
    total_s: f64,
    /// Of which redistribution.
    redist_s: f64,
    /// Of which computation.
    compute_s: f64,
    /// Of which saving checkpoints.
    checkpoint_s: f64,
    /// Checkpoints saved.
    checkpoints: usize,
}

/// One Peaceman–Rachford step of `fields`; returns its seconds of
/// (computation, redistribution).
fn step(
    exchanges: &mut Exchanges,
    fields: &mut Fields,
    mesh: &Mesh,
) -> Result<(f64, f64), AdiError> {
    let (coef, r) = (&mesh.coef[..], mesh.r);
    let t0 = Instant::now();
    // y-term explicit on whole y-lines.
    explicit_rows(view2(&fields.u), view2_mut(&mut fields.w_y), r);
    let t1 = Instant::now();
    exchanges
        .to_x
        .execute_into_unchecked(&fields.w_y, &mut fields.w_x)?;
    let t2 = Instant::now();
    // x-systems on whole x-lines, then the x-term explicit.
    solve_columns(view2_mut(&mut fields.w_x), coef, r);
    explicit_columns(view2(&fields.w_x), view2_mut(&mut fields.v_x), r);
    let t3 = Instant::now();
    exchanges
        .to_y
        .execute_into_unchecked(&fields.v_x, &mut fields.u)?;
    let t4 = Instant::now();
    // y-systems on whole y-lines.
    solve_rows(view2_mut(&mut fields.u), coef, r);
    let t5 = Instant::now();
    let compute_s = (t1 - t0).as_secs_f64() + (t3 - t2).as_secs_f64() + (t5 - t4).as_secs_f64();
    let redist_s = (t2 - t1).as_secs_f64() + (t4 - t3).as_secs_f64();
    Ok((compute_s, redist_s))
}

/// Progress lines on standard error: once a run has taken 3 s, at most one
/// every 2 s.
struct Progress {
    /// Whether this rank prints them.
    enabled: bool,
    /// Elapsed seconds at the last line.
    last_report: f64,
}

impl Progress {
    /// Reports `done` of `steps` steps, the run having started after step
    /// `start`, after `elapsed` seconds, if it is time to.
    fn after_step(&mut self, done: usize, start: usize, steps: usize, elapsed: f64) {
        if self.enabled && elapsed > 3.0 && elapsed - self.last_report > 2.0 {
            self.last_report = elapsed;
            let rate = (done - start) as f64 / elapsed;
            eprintln!(
                "  step {done}/{steps}  {elapsed:.1} s elapsed  {rate:.1} steps/s  ETA {:.0} s",
                (steps - done) as f64 / rate
            );
        }
    }
}

/// Runs steps `start + 1 ..= cfg.steps` between two barriers on the
/// y-grid, timing the phases, saving the checkpoints `cfg.checkpoint`
/// asks for, with progress lines on rank 0 when `cfg.progress`.
fn time_loop(
    world: &SimpleCommunicator,
    cfg: &AdiConfig,
    plans: &mut LinePlans,
    fields: &mut Fields,
    mesh: &Mesh,
    start: usize,
) -> Result<LoopTimes, AdiError> {
    let comm = plans.y_grid.communicator();
    comm.barrier();
    let clock = Instant::now();
    let mut times = LoopTimes::default();
    let mut progress = Progress {
        enabled: cfg.progress && world.rank() == 0,
        last_report: 0.0,
    };
    for done in start + 1..=cfg.steps {
        let (compute_s, redist_s) = step(&mut plans.exchanges, fields, mesh)?;
        times.compute_s += compute_s;
        times.redist_s += redist_s;
        if let Some(to) = cfg.checkpoint.as_ref().filter(|c| done % c.every == 0) {
            let t = Instant::now();
            let sidecar = checkpoint::Sidecar {
                step: done,
                n: cfg.n,
                dt: cfg.dt,
                two_modes: cfg.two_modes,
                digest: 0,
            };
            checkpoint::save(&fields.u, to, sidecar)?;
            times.checkpoint_s += t.elapsed().as_secs_f64();
            times.checkpoints += 1;
        }
        progress.after_step(done, start, cfg.steps, clock.elapsed().as_secs_f64());
    }
    comm.barrier();
    times.total_s = clock.elapsed().as_secs_f64();
    Ok(times)
}

/// This rank's largest error and sum of squared errors of `u` (on `layout`)
/// against the exact solution at time `t`; zeros on a rank outside the grid.
fn local_errors(
    u: &DistArray<f64>,
    layout: &Layout,
    h: f64,
    t: f64,
    two_modes: bool,
) -> Result<(f64, f64), AdiError> {
    let (mut max_e, mut sum_e2) = (0.0f64, 0.0f64);
    if let Some(rank) = u.rank() {
        let coords = layout.coords_of_rank(rank)?;
        let gi = layout.axis(0).local_to_global_table(coords[0]);
        let gj = layout.axis(1).local_to_global_table(coords[1]);
        let u = view2(u);
        for (li, &i) in gi.iter().enumerate() {
            for (lj, &j) in gj.iter().enumerate() {
                let reference = exact((i + 1) as f64 * h, (j + 1) as f64 * h, t, two_modes);
                let e = (u[[li, lj]] - reference).abs();
                max_e = max_e.max(e);
                sum_e2 += e * e;
            }
        }
    }
    Ok((max_e, sum_e2))
}

/// The (max-norm, discrete L2) errors from every rank's [`local_errors`],
/// the same on every rank (collective).
fn agreed_errors(comm: &SimpleCommunicator, local: (f64, f64), h: f64) -> (f64, f64) {
    let (max_e, sum_e2) = local;
    let mut max_error = 0.0f64;
    comm.all_reduce_into(&max_e, &mut max_error, SystemOperation::max());
    let mut total = 0.0f64;
    comm.all_reduce_into(&sum_e2, &mut total, SystemOperation::sum());
    (max_error, (h * h * total).sqrt())
}

/// The field `u` gathered on rank 0 (`None` elsewhere) and its checksum,
/// which every rank receives (collective).
fn gather_field(
    u: &DistArray<f64>,
    comm: &SimpleCommunicator,
) -> Result<(Option<Array2<f64>>, u64), AdiError> {
    let field = u
        .gather(0)?
        .map(|f| f.into_dimensionality::<Ix2>().expect("2-D field"));
    let mut checksum = field.as_ref().map_or(0, |f| {
        fnv1a64(f.as_standard_layout().as_slice().expect("contiguous"))
    });
    comm.process_at_rank(0).broadcast_into(&mut checksum);
    Ok((field, checksum))
}

/// Runs the solver on every rank of `world` (collective).
///
/// # Errors
///
/// - [`AdiError::Parameter`] when `cfg.n` is 0, `cfg.dt` is not a positive finite
///   number, or a layout needs more ranks than `world` has;
/// - [`AdiError::LineLayout`] when a layout is not 2-D or does not keep its line
///   dimension whole;
/// - [`AdiError::Dist`] when `n × n` overflows a layout's index arithmetic, or, after
///   the time loop, when the final field exceeds what one gather moves
///   ([`DistError::TooLarge`](dist_array::DistError::TooLarge): `n` ≥ 16384);
/// - [`AdiError::Redist`] when a redistribution cannot be built or executed (e.g. a
///   [`Remap`] without a closed form for the layouts, or a plan beyond its limits);
/// - [`AdiError::Parameter`] when checkpoints are asked for every 0 steps, or the
///   checkpoint or restart path names no file;
/// - [`AdiError::Checkpoint`] when the restart's sidecar cannot be read or is not
///   one, when it disagrees with `cfg` (another `n`, `dt` or `two_modes`, or a step
///   beyond `cfg.steps`: [`Sidecar::check_resumes`](checkpoint::Sidecar::check_resumes)),
///   when the array loaded is not the one the sidecar describes, or when a
///   checkpoint's sidecar cannot be written;
/// - [`AdiError::Io`] when a checkpoint's array cannot be loaded (missing, not a
///   `float64` `.npy` file of shape `n × n`) or saved (the run stops there; the
///   previous checkpoint stays whole).
///
/// The parameter and layout checks come before any communication and depend
/// only on `cfg` and the size of `world`: local to the rank, the same on every
/// rank when all pass the same `cfg`. Redistribution and checkpoint errors are
/// agreed on by every rank.
pub fn solve(world: &SimpleCommunicator, cfg: &AdiConfig) -> Result<AdiResult, AdiError> {
    check(cfg.n, cfg.steps, cfg.dt)?;
    check_files(cfg)?;
    let p = world.size() as usize;
    let (y_spec, x_spec) = line_specs(cfg, p)?;
    let clock = Instant::now();
    let restart = match &cfg.restart {
        Some(path) => {
            let sidecar = checkpoint::read_sidecar(world, path)?;
            sidecar.check_resumes(cfg, path)?;
            Some((path.as_path(), sidecar))
        }
        None => None,
    };
    let read_s = clock.elapsed().as_secs_f64();
    let start = restart.as_ref().map_or(0, |(_, s)| s.step);
    let mut plans = LinePlans::new(world, cfg, &y_spec, &x_spec)?;
    let mesh = Mesh::new(cfg.n, cfg.dt);
    let restored = restart.as_ref().map(|(path, s)| (*path, s));
    let clock = Instant::now();
    let mut fields = Fields::new(&plans, mesh.h, cfg.two_modes, restored)?;
    let restart_s = if restart.is_some() {
        read_s + clock.elapsed().as_secs_f64()
    } else {
        0.0
    };
    let times = time_loop(world, cfg, &mut plans, &mut fields, &mesh, start)?;

    // Errors against the exact solution, on the y-layout.
    let t = cfg.steps as f64 * cfg.dt;
    let local = local_errors(&fields.u, &plans.y_layout, mesh.h, t, cfg.two_modes)?;
    let comm = plans.y_grid.communicator();
    let (max_error, l2_error) = agreed_errors(comm, local, mesh.h);
    let (field, checksum) = gather_field(&fields.u, comm)?;
    Ok(AdiResult {
        ranks: p,
        time: t,
        max_error,
        l2_error,
        checksum,
        field,
        time_s: times.total_s,
        redist_s: times.redist_s,
        compute_s: times.compute_s,
        bytes_moved_per_step: plans.bytes_moved_per_step(),
        strategies: (
            plans.exchanges.to_x.strategy(),
            plans.exchanges.to_y.strategy(),
        ),
        restarted_from: restart.map(|(_, s)| s.step),
        checkpoints_written: times.checkpoints,
        checkpoint_s: times.checkpoint_s,
        restart_s,
    })
}

/// A perceptually ordered colour map (dark blue → teal → yellow), `t` in [0, 1].
fn colour(t: f64) -> [u8; 3] {
    const STOPS: [[f64; 3]; 5] = [
        [0.267, 0.005, 0.329],
        [0.231, 0.322, 0.545],
        [0.129, 0.569, 0.549],
        [0.369, 0.788, 0.384],
        [0.993, 0.906, 0.144],
    ];
    let t = t.clamp(0.0, 1.0) * (STOPS.len() - 1) as f64;
    #[allow(
        clippy::cast_possible_truncation,
        reason = "t is clamped to 0..=STOPS.len() - 1"
    )]
    let k = (t.floor() as usize).min(STOPS.len() - 2);
    let f = t - k as f64;
    let mut out = [0u8; 3];
    for c in 0..3 {
        #[allow(
            clippy::cast_possible_truncation,
            reason = "a colour in 0..=1 times 255"
        )]
        let v = ((STOPS[k][c] * (1.0 - f) + STOPS[k + 1][c] * f) * 255.0).round() as u8;
        out[c] = v;
    }
    out
}

/// The heat-map of `field` as an 8-bit RGB image, `(width, height, pixels)`
/// with `pixels` row by row from the top, three bytes per pixel: x to the
/// right, y upwards, each element a square of `512 / max(nx, ny)` pixels (at
/// least one), and a colour bar on the right running from the field's minimum
/// (bottom) to its maximum (top), with tick marks at quarters.
/// `examples/adi.rs` encodes it as a PNG.
///
/// ```
/// let field = ndarray::Array2::from_shape_fn((4, 2), |(i, j)| (i + j) as f64);
/// let (width, height, pixels) = apps::adi::heat_map_rgb(&field);
/// assert_eq!((width, height), (4 * 128 + 16 + 24 + 8, 2 * 128));
/// assert_eq!(pixels.len(), width * height * 3);
/// ```
pub fn heat_map_rgb(field: &Array2<f64>) -> (usize, usize, Vec<u8>) {
    let (nx, ny) = (field.nrows(), field.ncols());
    let scale = (512 / nx.max(ny).max(1)).max(1);
    let (w_map, h_map) = (nx * scale, ny * scale);
    let (gap, bar, ticks) = (16, 24, 8);
    let width = w_map + gap + bar + ticks;
    let height = h_map;
    let lo = field.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = field.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let span = if hi > lo { hi - lo } else { 1.0 };
    let mut img = vec![255u8; width * height * 3];
    let mut put = |x: usize, y: usize, c: [u8; 3]| {
        let o = (y * width + x) * 3;
        img[o..o + 3].copy_from_slice(&c);
    };
    for py in 0..h_map {
        let j = ny - 1 - py / scale;
        for px in 0..w_map {
            let i = px / scale;
            put(px, py, colour((field[[i, j]] - lo) / span));
        }
    }
    for py in 0..height {
        let c = colour(1.0 - py as f64 / (height.max(2) - 1) as f64);
        for px in w_map + gap..w_map + gap + bar {
            put(px, py, c);
        }
    }
    for q in 0..=4 {
        let py = ((height - 1) * q) / 4;
        for px in w_map + gap + bar..width {
            put(px, py, [0, 0, 0]);
        }
    }
    (width, height, img)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Max-norm error of the serial solver against the exact solution.
    fn error(n: usize, steps: usize, dt: f64) -> f64 {
        let u = solve_serial(n, steps, dt, false).unwrap();
        let h = 1.0 / (n + 1) as f64;
        let t = steps as f64 * dt;
        u.indexed_iter()
            .map(|((i, j), v)| (v - exact((i + 1) as f64 * h, (j + 1) as f64 * h, t, false)).abs())
            .fold(0.0, f64::max)
    }

    #[test]
    fn second_order_convergence() {
        // Halving h and dt together cuts the error by 4 ± 1.
        let e = [
            error(15, 10, 4e-3),
            error(31, 20, 2e-3),
            error(63, 40, 1e-3),
        ];
        for w in e.windows(2) {
            let ratio = w[0] / w[1];
            assert!((3.0..=5.0).contains(&ratio), "errors {e:?}, ratio {ratio}");
        }
    }

    #[test]
    fn two_modes_decay_at_their_rates() {
        let (n, steps, dt) = (31, 20, 2e-3);
        let u = solve_serial(n, steps, dt, true).unwrap();
        let h = 1.0 / (n + 1) as f64;
        let t = steps as f64 * dt;
        let e = u
            .indexed_iter()
            .map(|((i, j), v)| (v - exact((i + 1) as f64 * h, (j + 1) as f64 * h, t, true)).abs())
            .fold(0.0, f64::max);
        assert!(e < 2e-3, "{e}");
    }

    #[test]
    fn thomas_solves_the_system() {
        let (n, r) = (9, 0.7);
        let coef = thomas_coefficients(n, r);
        let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
        // d = (I - r δ²) x
        let mut d = Array2::from_shape_fn((1, n), |(_, i)| {
            let l = if i > 0 { x[i - 1] } else { 0.0 };
            let rr = if i + 1 < n { x[i + 1] } else { 0.0 };
            (1.0 + 2.0 * r) * x[i] - r * (l + rr)
        });
        let mut dt = d.t().to_owned();
        solve_rows(d.view_mut(), &coef, r);
        solve_columns(dt.view_mut(), &coef, r);
        for i in 0..n {
            assert!((d[[0, i]] - x[i]).abs() < 1e-12);
            assert_eq!(
                d[[0, i]].to_bits(),
                dt[[i, 0]].to_bits(),
                "rows and columns agree bit for bit"
            );
        }
    }

    #[test]
    fn bad_parameters() {
        assert!(solve_serial(0, 1, 1e-3, false).is_err());
        assert!(solve_serial(4, 1, 0.0, false).is_err());
        assert!(solve_serial(4, 1, f64::NAN, false).is_err());
    }

    #[test]
    fn heat_map_layout_and_colour_bar() {
        // Field 3 x 2: scale 512 / 3 = 170, so the map is 510 x 340 pixels.
        let field = Array2::from_shape_fn((3, 2), |(i, j)| (i * 2 + j) as f64);
        let (width, height, img) = heat_map_rgb(&field);
        assert_eq!((width, height), (510 + 16 + 24 + 8, 340));
        assert_eq!(img.len(), width * height * 3);
        let pixel = |x: usize, y: usize| {
            let o = (y * width + x) * 3;
            [img[o], img[o + 1], img[o + 2]]
        };
        // x to the right, y upwards: the minimum (0, 0) is bottom left, the
        // maximum (2, 1) top right.
        assert_eq!(pixel(0, height - 1), colour(0.0));
        assert_eq!(pixel(509, 0), colour(1.0));
        // The gap is white; the bar runs from the maximum (top) to the minimum.
        assert_eq!(pixel(510 + 8, 100), [255, 255, 255]);
        assert_eq!(pixel(510 + 16, 0), colour(1.0));
        assert_eq!(pixel(510 + 16 + 23, height - 1), colour(0.0));
        // Ticks at quarters, white between them.
        for q in 0..=4 {
            assert_eq!(pixel(width - 1, (height - 1) * q / 4), [0, 0, 0]);
        }
        assert_eq!(pixel(width - 1, 1), [255, 255, 255]);
    }

    #[test]
    fn heat_map_of_a_constant_field() {
        let (width, height, img) = heat_map_rgb(&Array2::from_elem((512, 512), 1.5));
        assert_eq!((width, height), (512 + 48, 512));
        assert_eq!(&img[..3], &colour(0.0));
    }
}
