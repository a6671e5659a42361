//! The distributed field and the work arrays of a step.

use super::checkpoint;
use super::exact::initial;
use super::plans::LinePlans;
use super::AdiError;
use dist_array::DistArray;

/// The field and the work arrays of a step: `u` and `w_y` with whole
/// y-lines, `w_x` and `v_x` with whole x-lines.
pub(super) struct Fields {
    /// The solution, between steps.
    pub(super) u: DistArray<f64>,
    /// The y-term explicit of `u`.
    pub(super) w_y: DistArray<f64>,
    /// `w_y` with whole x-lines, then u* after the x-systems.
    pub(super) w_x: DistArray<f64>,
    /// The x-term explicit of u*.
    pub(super) v_x: DistArray<f64>,
}

impl Fields {
    /// The field on the y-lines of `plans` — the initial one, or the
    /// checkpoint of `restart` (its path and sidecar) — and zeroed work
    /// arrays. Collective when restarting.
    pub(super) fn new(
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
