//! A rank's copy programs: the messages it sends and receives and its
//! local copy, built from its own rows and columns of the plan, and the
//! listing of their small messages' lines.

use super::{axis_bytes, transposing_order, AxisProgram, Builder, MessageProgram, Shape};
use crate::error::PlanError;
use crate::padding::Padding;
use crate::plan::RankPlan;
use std::collections::HashSet;
use std::mem::size_of;
use std::sync::Arc;

/// What one rank sends, receives and copies locally in a redistribution.
#[derive(Debug, Clone, Default)]
pub struct RankProgram {
    /// Messages this rank sends, by increasing target rank (itself excluded).
    pub sends: Vec<MessageProgram>,
    /// Messages this rank receives, by increasing source rank (itself excluded).
    pub recvs: Vec<MessageProgram>,
    /// The local copy: the kept elements, which stay on this rank.
    pub local: Option<MessageProgram>,
}

impl RankProgram {
    /// The programs of the messages of `plan` (one rank's), with units of
    /// parallel work of about `unit_elements` elements (`usize::MAX`:
    /// copies run on the calling thread alone); copies into the rank's
    /// target storage stream as `Shape` says for `stream` (see
    /// [`STREAM_MIN_SOURCE_RUN_BYTES`](crate::tuning::STREAM_MIN_SOURCE_RUN_BYTES)).
    /// Sends and the local copy come from the rank's rows,
    /// receives from its columns.
    ///
    /// With `target_axes` (a permutation π), the plan's target is an array
    /// with its axes permuted seen in the source's axis order (its
    /// dimension `d` is the real target's dimension `π[d]`): the target
    /// side's strides are then those of the real target's local storage,
    /// taken in that order, so that copies write the real target.
    ///
    /// With `padding`, each side's local parts are stored padded by ghost
    /// layers ([`Padding`]: the target's widths in the real target's axis
    /// order): the programs read and write the interiors, with the padded
    /// storages' strides. The programs are the unpadded ones but for
    /// strides and starting offsets, so they cost what those cost.
    ///
    /// # Errors
    ///
    /// - [`PlanError::InvalidArgument`] when `plan` no longer holds its
    ///   runs ([`RankPlan::release_runs`], as the plan of a
    ///   [`RankPart`](crate::RankPart) does): build one with
    ///   [`RankPlan::new`] or [`plan_rank`](crate::part::plan_rank);
    /// - as [`Padding::check`] when `padding` does not fit the layouts.
    pub fn new(
        plan: &RankPlan,
        unit_elements: usize,
        stream: Option<usize>,
        target_axes: Option<&[usize]>,
        padding: &Padding,
    ) -> Result<RankProgram, PlanError> {
        if !plan.holds_runs() {
            return Err(PlanError::InvalidArgument {
                what: "rank plan",
                value: "one whose runs were released".to_string(),
                expected: "a plan that still holds its runs (RankPlan::new or plan_rank, \
                           not RankPart::plan)"
                    .to_string(),
            });
        }
        let me = plan.rank();
        let mut build = Builder::new(plan.source(), plan.target(), unit_elements);
        let seen = match target_axes {
            Some(axes) => {
                let widths = padding.target();
                if !widths.is_empty() && widths.len() != axes.len() {
                    return Err(PlanError::InvalidArgument {
                        what: "target ghost widths",
                        value: format!("{widths:?}"),
                        expected: format!("one width per axis of the target ({})", axes.len()),
                    });
                }
                padding.target_seen(axes)
            }
            None => padding.clone(),
        };
        seen.check(plan.source(), plan.target())?;
        build.padding = seen;
        if let Some(axes) = target_axes {
            build.target_axes = Some(axes.to_vec());
            transposing_order(&mut build.order, axes, plan.target().storage());
        }
        let sends = (plan.sends().iter())
            .map(|l| build.message(plan.rows(), me, l.peer, l.peer, None))
            .collect();
        let recvs = (plan.recvs().iter())
            .map(|l| build.message(plan.columns(), l.peer, me, l.peer, stream))
            .collect();
        let local = (plan.kept() > 0).then(|| build.message(plan.rows(), me, me, me, stream));
        Ok(RankProgram {
            sends,
            recvs,
            local,
        })
    }

    /// Lists the lines of small messages (the local copy first, then
    /// receives and sends), [`LISTED_LINES`](crate::tuning::LISTED_LINES)
    /// lines at most in all; attempts that fail count what they walked
    /// against the same budget, so listing costs O(that budget) at most.
    pub fn list_small(&mut self) {
        use crate::tuning::{LISTED_LINES, LISTED_MESSAGE_LINES};
        let mut budget = LISTED_LINES;
        let mut scratch = Default::default();
        let all = (self.local.iter_mut())
            .chain(self.recvs.iter_mut())
            .chain(self.sends.iter_mut());
        for m in all {
            if budget == 0 {
                break;
            }
            let (listed, walked) = m.list(budget.min(LISTED_MESSAGE_LINES), &mut scratch);
            budget = budget.saturating_sub(listed.max(walked / 2));
        }
    }

    /// Whether some copy into this rank's target storage streams.
    pub fn streams(&self) -> bool {
        self.recvs
            .iter()
            .chain(&self.local)
            .any(|t| t.shape.stream_unpack || t.shape.stream_direct)
    }

    /// Bytes the programs hold on the heap, each shared shape and
    /// dimension program counted once.
    pub fn heap_bytes(&self) -> usize {
        let all = || self.sends.iter().chain(&self.recvs).chain(&self.local);
        let own: usize = all().map(MessageProgram::own_bytes).sum();
        let mut shapes = HashSet::new();
        let mut axes = HashSet::new();
        let mut shared = 0;
        for t in all().filter(|t| shapes.insert(Arc::as_ptr(&t.shape))) {
            shared += size_of::<Shape>() + t.shape.strides.len() * size_of::<usize>();
            for a in t.shape.axes.iter() {
                shared += size_of::<Arc<AxisProgram>>();
                if axes.insert(Arc::as_ptr(a)) {
                    shared += axis_bytes(a);
                }
            }
        }
        own + shared + (self.sends.capacity() + self.recvs.capacity()) * size_of::<MessageProgram>()
    }
}
