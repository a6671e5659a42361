//! [`choose_lines`]: how many ranks the two line phases of the ADI solver
//! run on, chosen by timing whole steps on each candidate
//! ([`redist::tune::choose_grid`]), kept in a wisdom file for later jobs.
//!
//! A line phase keeps its line dimension whole, so its grid has one free
//! extent: `block,*@Qx1` and `*,block@1xQ`. The choice is `Q`, from the
//! job's `P` ranks (the default) down to 1: on a small field, or ranks
//! that share cores, fewer ranks may step faster.

use super::fields::Fields;
use super::mesh::{check, Mesh};
use super::plans::LinePlans;
use super::step::step;
use super::{AdiConfig, AdiError};
use dist_array::LayoutSpec;
use mpi::topology::{Communicator, SimpleCommunicator};
use redist::tune::{choose_grid, GridChoice, GridSettings};

/// The y-line and x-line layouts over `q` ranks: `block,*@Qx1`,
/// `*,block@1xQ`.
///
/// ```
/// let (y, x) = apps::adi::line_layouts(3).unwrap();
/// assert_eq!((y.to_string(), x.to_string()), ("block,*@3x1".to_string(), "*,block@1x3".to_string()));
/// ```
///
/// # Errors
///
/// [`AdiError::Layout`] for `q == 0`.
pub fn line_layouts(q: usize) -> Result<(LayoutSpec, LayoutSpec), AdiError> {
    Ok((
        format!("block,*@{q}x1").parse()?,
        format!("*,block@1x{q}").parse()?,
    ))
}

/// Chooses the rank count of both line phases for the run `cfg` on the
/// ranks of `world` — `P`, `P − 1`, …, 1, the job's `P` first (the
/// default) — by timing whole Peaceman–Rachford steps (both exchanges and
/// every line solve) on each; a choice the wisdom file of `settings` holds
/// for this job and machine is taken without measuring. The grid of the
/// returned choice is `[Q]`; [`line_layouts`] gives its layouts.
/// Collective.
///
/// # Errors
///
/// [`AdiError::Parameter`] for a bad `n` or `dt`, and the errors of
/// planning and stepping, on every rank alike.
pub fn choose_lines(
    world: &SimpleCommunicator,
    cfg: &AdiConfig,
    settings: &GridSettings,
) -> Result<GridChoice, AdiError> {
    check(cfg.n, cfg.steps, cfg.dt)?;
    let p = usize::try_from(world.size()).unwrap_or(1);
    let candidates: Vec<Vec<usize>> = (1..=p).rev().map(|q| vec![q]).collect();
    let job = format!(
        "adi n {} dt {} strategy {} remap {:?}",
        cfg.n, cfg.dt, cfg.strategy, cfg.remap
    );
    choose_grid(world, &job, &candidates, settings, |g: &[usize]| {
        let (y, x) = line_layouts(g[0])?;
        let mut plans = LinePlans::new(world, cfg, &y, &x)?;
        let mesh = Mesh::new(cfg.n, cfg.dt);
        let mut fields = Fields::new(&plans, mesh.h, cfg.two_modes, None)?;
        Ok(move || step(&mut plans.exchanges, &mut fields, &mesh).map(|_| ()))
    })
}
