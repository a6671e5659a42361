//! Plans of one rank and of one dimension: what a rank sends, receives and
//! keeps ([`RankPlan`], `rank.rs`), built from the 1-D plans of the
//! dimensions at its own coordinates ([`AxisPlan`], `axis/`), over a window
//! of the arrays ([`Window`]). The message from source rank `a` to target
//! rank `b` is the Cartesian product, over dimensions, of the 1-D runs
//! between `a`'s and `b`'s grid coordinates; its size is the product of the
//! 1-D volumes. Pure: no communication.

mod axis;
mod rank;
mod window;

pub use axis::{AxisPlan, AxisView, Run, Segments, RUNS_MAX};
pub use rank::{Link, RankPlan, RANK_MESSAGES_MAX};
pub use window::Window;

use crate::error::PlanError;
use crate::layout::Layout;
use crate::options::Remap;

/// What can be wrong with a window and a remapping mode before anything is
/// planned: another number of dimensions than the layouts, or closed forms
/// asked for a sub-array.
pub(crate) fn check_window(
    source: &Layout,
    target: &Layout,
    window: &Window,
    remap: Remap,
) -> Result<(), PlanError> {
    if window.ndim() != source.ndim() || window.ndim() != target.ndim() {
        return Err(PlanError::InvalidArgument {
            what: "window",
            value: window.to_string(),
            expected: format!(
                "{} dimensions, as the source ({}-D) and target ({}-D) layouts",
                source.ndim(),
                source.ndim(),
                target.ndim()
            ),
        });
    }
    if remap == Remap::ClosedForm && !window.is_whole(source.shape(), target.shape()) {
        return Err(PlanError::Remap {
            remap: remap.to_string(),
            reason: format!(
                "closed forms cover whole arrays, not the window {window}; \
                 use Remap::Optimal or Remap::None"
            ),
        });
    }
    Ok(())
}

/// The 1-D plan of every dimension of `window`, each covering what
/// `view(d)` says.
pub(crate) fn axis_plans(
    source: &Layout,
    target: &Layout,
    window: &Window,
    view: impl Fn(usize) -> AxisView,
) -> Result<Vec<AxisPlan>, PlanError> {
    (0..window.ndim())
        .map(|d| {
            AxisPlan::view(
                &source.axes()[d],
                window.source_origin()[d],
                &target.axes()[d],
                window.target_origin()[d],
                window.shape()[d],
                view(d),
            )
            .map_err(|e| match e {
                PlanError::InvalidArgument {
                    what: "window",
                    expected,
                    ..
                } => PlanError::InvalidArgument {
                    what: "window",
                    value: window.to_string(),
                    expected: format!(
                        "a window inside both arrays ({:?} and {:?}); in dimension {d}, {expected}",
                        source.shape(),
                        target.shape()
                    ),
                },
                e => e,
            })
        })
        .collect()
}
