//! The explicit heat solver of `examples/heat.rs`: `u_t = Δu` on the
//! periodic unit square or cube, the 5-point (7-point) stencil on a block
//! layout with one ghost layer, refreshed every step by a
//! [`GhostUpdate`] planned once — the interior computed while the ghosts
//! move (`begin`, the deep interior, `finish`, the rim).
//!
//! It checks itself: starting from a Fourier mode ([`mode`]) each step
//! multiplies the field by a known factor, so after `k` steps the field is
//! `g^k` times the first up to rounding, whatever the rank count and
//! layout. Checkpoints are `.npy` files written from the ghosted field
//! itself (its interior), with the step in a sidecar `FILE.json`; a
//! restart may use any rank count and layout.
//!
//! - [`mode`]: the starting mode and the factor of one step;
//! - [`stencil`]: the step on padded storage, the deep interior and the rim.

pub mod mode;
pub mod stencil;

use dist_array::{DistArray, Layout, LayoutSpec, Order};
use dist_io::IoOptions;
use mpi::collective::SystemOperation;
use mpi::topology::{Communicator, SimpleCommunicator};
use ndarray::{Array2, Axis, Dimension, Zip};
use procgrid::ProcGrid;
use redist::ghost::{Corners, GhostOptions, GhostSpec, GhostUpdate};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Instant;
use stencil::Padded;

/// What can go wrong in a heat run.
#[derive(Debug, thiserror::Error)]
pub enum HeatError {
    /// Arguments that cannot describe a run.
    #[error("{0}")]
    Usage(String),
    /// A layout or array error.
    #[error(transparent)]
    Dist(#[from] dist_array::DistError),
    /// A layout spec or shape the planning refuses.
    #[error(transparent)]
    Layout(#[from] dist_array::PlanError),
    /// A grid error.
    #[error(transparent)]
    Grid(#[from] procgrid::GridError),
    /// A ghost update's error.
    #[error(transparent)]
    Redist(#[from] redist::RedistError),
    /// A checkpoint's file error.
    #[error(transparent)]
    Io(#[from] dist_io::IoError),
    /// A checkpoint's sidecar that cannot be read.
    #[error("checkpoint {path}: {message}")]
    Sidecar {
        /// The sidecar's path.
        path: String,
        /// What is wrong with it.
        message: String,
    },
}

/// Where and how often to checkpoint.
#[derive(Debug, Clone)]
pub struct Checkpoints {
    /// The `.npy` file (its sidecar is `FILE.json`).
    pub path: PathBuf,
    /// Steps between checkpoints, counted from t = 0.
    pub every: usize,
}

/// A heat run.
#[derive(Debug, Clone)]
pub struct HeatConfig {
    /// Grid points per axis.
    pub n: usize,
    /// 2 or 3.
    pub dims: usize,
    /// Steps in all, counted from t = 0.
    pub steps: usize,
    /// `dt / h²`; stable up to `1 / (2 dims)`.
    pub r: f64,
    /// The layout (one block per rank per axis), default `block` on every
    /// axis of a balanced grid.
    pub layout: Option<LayoutSpec>,
    /// Compute the interior while ghosts move.
    pub overlap: bool,
    /// Read neighbours' storage directly within a node.
    pub node_direct: bool,
    /// Progress lines on rank 0's stderr.
    pub progress: bool,
    /// Checkpoints to write.
    pub checkpoint: Option<Checkpoints>,
    /// A checkpoint to resume from.
    pub restart: Option<PathBuf>,
    /// Gather the mid slice (3-D: z = n/2) to rank 0 for a picture.
    pub slice: bool,
}

/// What a heat run did, the same on every rank (the slice on rank 0 only).
#[derive(Debug, Clone)]
pub struct HeatResult {
    /// Ranks of the run.
    pub ranks: usize,
    /// The step a restart resumed after, if any.
    pub restarted_from: Option<usize>,
    /// Largest |u - g^k · mode| over the field, relative to g^k.
    pub max_error: f64,
    /// Seconds of the time loop, in ghost updates (what the overlap did not
    /// hide), and in the stencil; the slowest rank's.
    pub time_s: f64,
    /// Seconds in `begin`/`finish` (or `update`).
    pub ghost_s: f64,
    /// Seconds in the stencil.
    pub compute_s: f64,
    /// Seconds writing checkpoints.
    pub checkpoint_s: f64,
    /// Checkpoints written.
    pub checkpoints_written: usize,
    /// Ghost bytes moved per step, summed over the ranks.
    pub ghost_bytes_per_step: u64,
    /// A digest of the final field, independent of layout and rank count.
    pub checksum: u64,
    /// The mid slice of the final field (rank 0, when asked).
    pub slice: Option<Array2<f64>>,
}

/// The run's layout on `world`.
fn layout_of(world: &SimpleCommunicator, cfg: &HeatConfig) -> Result<Layout, HeatError> {
    if !(2..=3).contains(&cfg.dims) {
        return Err(HeatError::Usage(format!(
            "--dims {}: 2 or 3 expected",
            cfg.dims
        )));
    }
    let shape = vec![cfg.n; cfg.dims];
    let spec = match &cfg.layout {
        Some(s) => s.clone(),
        None => {
            let extents = procgrid::balanced_extents(world.size() as usize, &vec![0; cfg.dims])?;
            let dists = vec!["block"; cfg.dims].join(",");
            let grid = extents
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join("x");
            format!("{dists}@{grid}").parse()?
        }
    };
    Ok(Layout::new(&shape, &spec)?.with_storage(Order::RowMajor))
}

/// Runs the solver on `world`. Collective; every rank gets the same verdict.
///
/// # Errors
///
/// A usage error, a layout refused by the ghost update (several blocks
/// per rank), a checkpoint that cannot be written or read.
pub fn solve(world: &SimpleCommunicator, cfg: &HeatConfig) -> Result<HeatResult, HeatError> {
    let layout = layout_of(world, cfg)?;
    if cfg.r <= 0.0 || cfg.r > 0.5 / cfg.dims as f64 {
        return Err(HeatError::Usage(format!(
            "--r {}: stable steps need 0 < r <= 1/(2·dims) = {}",
            cfg.r,
            0.5 / cfg.dims as f64
        )));
    }
    let grid = ProcGrid::new(world, layout.grid_extents())?;
    let widths = vec![1; cfg.dims];
    let n = cfg.n;
    let (mut u, start) = match &cfg.restart {
        Some(path) => restart(&grid, &layout, &widths, cfg, path)?,
        None => {
            let u = DistArray::from_fn(&grid, layout.clone(), |g| mode::mode(n, g))?;
            (u.into_shared().with_ghosts(&widths)?, 0)
        }
    };
    let mut v = u.clone();
    let spec = GhostSpec::new(&widths, &vec![true; cfg.dims], Corners::Star);
    let options = GhostOptions {
        node_direct: cfg.node_direct,
        ..GhostOptions::default()
    };
    let mut update = GhostUpdate::with_options(&u, &spec, options)?;
    let sweep = Sweep::of(&u, &update);
    let (mut times, mut checkpoint_s, mut written) = (Times::default(), 0.0, 0);
    let clock = Instant::now();
    let mut last_note = 0.0;
    for step in start + 1..=cfg.steps {
        one_step(&mut update, &mut u, &mut v, &sweep, cfg, &mut times)?;
        std::mem::swap(&mut u, &mut v);
        if let Some(c) = &cfg.checkpoint {
            if step % c.every.max(1) == 0 {
                let t = Instant::now();
                save_checkpoint(&u, c, cfg, step)?;
                checkpoint_s += t.elapsed().as_secs_f64();
                written += 1;
            }
        }
        let t = clock.elapsed().as_secs_f64();
        if cfg.progress && world.rank() == 0 && t - last_note > 2.0 {
            last_note = t;
            let done = step - start;
            eprintln!(
                "  step {step}/{}: {:.1} steps/s",
                cfg.steps,
                done as f64 / t
            );
        }
    }
    let time_s = clock.elapsed().as_secs_f64();
    let g =
        mode::step_factor(n, cfg.dims, cfg.r).powi(i32::try_from(cfg.steps).unwrap_or(i32::MAX));
    let err = distance(
        &u,
        &DistArray::from_fn(&grid, layout.clone(), |x| g * mode::mode(n, x))?,
    );
    let max = |x: f64| {
        let mut out = 0.0;
        procgrid::waits::all_reduce_into(world, &x, &mut out, SystemOperation::max());
        out
    };
    let mut bytes = 0u64;
    procgrid::waits::all_reduce_into(
        world,
        &(update.ghost_bytes() as u64),
        &mut bytes,
        SystemOperation::sum(),
    );
    let slice = if cfg.slice { mid_slice(&u, cfg)? } else { None };
    Ok(HeatResult {
        ranks: world.size() as usize,
        restarted_from: cfg.restart.as_ref().map(|_| start),
        max_error: max(err) / g.abs().max(f64::MIN_POSITIVE),
        time_s: max(time_s),
        ghost_s: max(times.ghost_s),
        compute_s: max(times.compute_s),
        checkpoint_s: max(checkpoint_s),
        checkpoints_written: written,
        ghost_bytes_per_step: bytes,
        checksum: digest(&u),
        slice,
    })
}

/// Where a step computes, in padded ranges: the whole interior, its deep
/// part (what needs no ghost a `begin` leaves missing) and the rim.
struct Sweep {
    padded: Padded,
    interior: Vec<std::ops::Range<usize>>,
    deep: Vec<std::ops::Range<usize>>,
    rim: Vec<Vec<std::ops::Range<usize>>>,
    empty: bool,
}

impl Sweep {
    fn of(u: &DistArray<f64>, update: &GhostUpdate<f64>) -> Sweep {
        let padded = Padded::new(&u.padded_shape());
        // Along axes whose ghosts the rank holds itself, begin fills them.
        let ready = update.local_axes();
        Sweep {
            interior: padded.interior(),
            deep: padded.deep(&ready),
            rim: stencil::rim(&padded, &ready),
            empty: u.local().is_empty(),
            padded,
        }
    }
}

/// Seconds of a run in ghost updates (what overlap did not hide) and in
/// the stencil.
#[derive(Default)]
struct Times {
    ghost_s: f64,
    compute_s: f64,
}

/// One step from `u` into `v`: overlapped (begin, the deep interior,
/// finish, the rim) or not (the update, then the interior).
fn one_step(
    update: &mut GhostUpdate<f64>,
    u: &mut DistArray<f64>,
    v: &mut DistArray<f64>,
    at: &Sweep,
    cfg: &HeatConfig,
    times: &mut Times,
) -> Result<(), HeatError> {
    let t0 = Instant::now();
    if !cfg.overlap {
        update.update(u)?;
        let t1 = Instant::now();
        if !at.empty {
            stencil::step(
                &at.padded,
                u.local_slice(),
                v.local_slice_mut(),
                &at.interior,
                cfg.r,
            );
        }
        times.ghost_s += (t1 - t0).as_secs_f64();
        times.compute_s += t1.elapsed().as_secs_f64();
        return Ok(());
    }
    let flight = update.begin(u)?;
    let t1 = Instant::now();
    if !at.empty {
        let from = flight.array().local_slice();
        stencil::step(&at.padded, from, v.local_slice_mut(), &at.deep, cfg.r);
    }
    let t2 = Instant::now();
    flight.finish()?;
    let t3 = Instant::now();
    if !at.empty {
        for b in &at.rim {
            stencil::step(&at.padded, u.local_slice(), v.local_slice_mut(), b, cfg.r);
        }
    }
    times.ghost_s += (t1 - t0).as_secs_f64() + (t3 - t2).as_secs_f64();
    times.compute_s += (t2 - t1).as_secs_f64() + t3.elapsed().as_secs_f64();
    Ok(())
}

/// The largest |a - b| over this rank's interior (local).
fn distance(a: &DistArray<f64>, b: &DistArray<f64>) -> f64 {
    let mut err = 0.0f64;
    Zip::from(&a.local())
        .and(&b.local())
        .for_each(|&x, &y| err = err.max((x - y).abs()));
    err
}

/// The sidecar of checkpoint `path`.
fn sidecar(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".json");
    PathBuf::from(s)
}

/// Saves `u` (its interior: the plain array) after `step`, and the
/// sidecar saying which step and run it is (rank 0, after the field).
fn save_checkpoint(
    u: &DistArray<f64>,
    c: &Checkpoints,
    cfg: &HeatConfig,
    step: usize,
) -> Result<(), HeatError> {
    dist_io::save(u, &c.path, &IoOptions::default())?;
    let comm = u.grid().communicator();
    let mut verdict = 0u8;
    if comm.rank() == 0 {
        let text = json!({"step": step, "n": cfg.n, "dims": cfg.dims, "r": cfg.r}).to_string();
        verdict = u8::from(std::fs::write(sidecar(&c.path), text).is_err());
    }
    let mut any = 0u8;
    procgrid::waits::all_reduce_into(comm, &verdict, &mut any, SystemOperation::max());
    if any != 0 {
        return Err(HeatError::Sidecar {
            path: sidecar(&c.path).display().to_string(),
            message: "cannot be written".to_string(),
        });
    }
    Ok(())
}

/// The field of checkpoint `path` (loaded into a ghosted array) and its
/// step, checked against `cfg`. Every rank reads the sidecar itself.
fn restart(
    grid: &ProcGrid,
    layout: &Layout,
    widths: &[usize],
    cfg: &HeatConfig,
    path: &Path,
) -> Result<(DistArray<f64>, usize), HeatError> {
    let side = sidecar(path);
    let bad = |message: String| HeatError::Sidecar {
        path: side.display().to_string(),
        message,
    };
    let text = std::fs::read_to_string(&side).map_err(|e| bad(e.to_string()));
    let value: Result<serde_json::Value, HeatError> =
        text.and_then(|t| serde_json::from_str(&t).map_err(|e| bad(e.to_string())));
    let value = value?;
    let field = |k: &str| {
        value[k]
            .as_f64()
            .ok_or_else(|| bad(format!("no number {k:?}")))
    };
    let (n, dims, r) = (field("n")?, field("dims")?, field("r")?);
    let step = (value["step"].as_u64())
        .and_then(|s| usize::try_from(s).ok())
        .ok_or_else(|| bad("no step count \"step\"".to_string()))?;
    if n != cfg.n as f64 || dims != cfg.dims as f64 || r != cfg.r {
        return Err(bad(format!(
            "written by a run of --n {n} --dims {dims} --r {r}, resumed with --n {} --dims {} --r {}",
            cfg.n, cfg.dims, cfg.r
        )));
    }
    if step > cfg.steps {
        return Err(bad(format!("at step {step}, after --steps {}", cfg.steps)));
    }
    let mut u = DistArray::zeros_with_ghosts(grid, layout.clone(), widths)?.into_shared();
    dist_io::load_into(&mut u, path, &IoOptions::default())?;
    Ok((u, step))
}

/// The slice z = n/2 of a 3-D field (the whole of a 2-D one) on rank 0.
fn mid_slice(u: &DistArray<f64>, cfg: &HeatConfig) -> Result<Option<Array2<f64>>, HeatError> {
    let whole = u.gather(0)?;
    Ok(whole.map(|w| {
        let w = if cfg.dims == 3 {
            w.index_axis(Axis(2), cfg.n / 2).to_owned()
        } else {
            w
        };
        w.into_dimensionality().expect("a 2-D slice")
    }))
}

/// A digest of the field, the same on every rank, independent of the
/// layout: Σ mix(linear index ⊕ bits of the value), wrapping. Collective.
pub fn digest(u: &DistArray<f64>) -> u64 {
    let mix = |mut x: u64| {
        x ^= x >> 33;
        x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
        x ^ (x >> 29)
    };
    let mut local = 0u64;
    if let Some(rank) = u.rank() {
        let layout = u.layout();
        if let Ok(coords) = layout.coords_of_rank(rank) {
            let tables: Vec<Vec<usize>> = (0..layout.ndim())
                .map(|d| layout.axis(d).local_to_global_table(coords[d]))
                .collect();
            for (l, &x) in u.local().indexed_iter() {
                let at = (l.slice().iter().enumerate()).fold(0u64, |a, (d, &i)| {
                    a * layout.shape()[d] as u64 + tables[d][i] as u64
                });
                local = local.wrapping_add(mix(mix(at) ^ x.to_bits()));
            }
        }
    }
    let mut total = 0u64;
    procgrid::waits::all_reduce_into(
        u.grid().communicator(),
        &local,
        &mut total,
        SystemOperation::sum(),
    );
    total
}
