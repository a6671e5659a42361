//! The distributed run: the checks before any communication, the plans,
//! the field, the time loop and the report.

use super::checkpoint;
use super::fields::Fields;
use super::mesh::{check, Mesh};
use super::plans::{line_specs, LinePlans};
use super::report::{agreed_errors, gather_field, local_errors};
use super::time_loop::time_loop;
use super::{AdiConfig, AdiError, AdiResult};
use mpi::topology::{Communicator, SimpleCommunicator};
use std::time::Instant;

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
///   [`Remap`](redist::Remap) without a closed form for the layouts, or a plan beyond its limits);
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
