//! The time loop: the steps of a run between two barriers, timed, with
//! its checkpoints and progress lines.

use super::checkpoint;
use super::fields::Fields;
use super::mesh::Mesh;
use super::plans::LinePlans;
use super::step::step;
use super::{AdiConfig, AdiError};
use mpi::collective::CommunicatorCollectives;
use mpi::topology::{Communicator, SimpleCommunicator};
use std::time::Instant;

/// Seconds spent in the time loop, this rank's view.
#[derive(Debug, Default)]
pub(super) struct LoopTimes {
    /// The whole loop, barrier to barrier.
    pub(super) total_s: f64,
    /// Of which redistribution.
    pub(super) redist_s: f64,
    /// Of which computation.
    pub(super) compute_s: f64,
    /// Of which saving checkpoints.
    pub(super) checkpoint_s: f64,
    /// Checkpoints saved.
    pub(super) checkpoints: usize,
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
pub(super) fn time_loop(
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
