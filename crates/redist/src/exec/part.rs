//! What one rank builds for a redistribution, built without MPI and without
//! data: its part of the plan and its copy programs (and, asked for, its
//! schedule). Tools show a rank's part of a redistribution on any number of
//! ranks with it (`redist plan --rank`); a
//! [`Redistribution`](super::Redistribution) builds the same, then sets up
//! its exchange under MPI.

use super::build::{plan_of, programs};
use super::program::RankProgram;
use crate::remap::Relabelling;
use crate::schedule::RankSchedule;
use crate::{Options, RankPlan, RedistError, Window};
use dist_array::Layout;
use std::mem::size_of;

/// One rank's part of a redistribution: its plan and copy programs, as
/// [`Redistribution::new`](super::Redistribution::new) builds them on that
/// rank (the exchange's MPI objects aside), and on demand its schedule
/// (which `new` builds only for the `scheduled` strategy).
///
/// ```
/// use dist_array::Layout;
/// use redist::{Options, RankPart, Window};
/// let from = Layout::parse(&[1 << 20, 1 << 20], "block,*@4096x1").unwrap();
/// let to = Layout::parse(&[1 << 20, 1 << 20], "*,block@1x4096").unwrap();
/// let mut part = RankPart::new(&from, &to, &Window::whole(from.shape()), Options::default(), 7, 8)
///     .unwrap();
/// assert_eq!(part.plan().recvs().len(), 4095);
/// assert_eq!(part.schedule().unwrap().steps, 4095);
/// ```
#[derive(Debug)]
pub struct RankPart {
    plan: RankPlan,
    program: RankProgram,
    relabelling: Option<Relabelling>,
}

impl RankPart {
    /// Rank `rank`'s part of moving `window` of arrays laid out as `source`
    /// onto arrays laid out as `target`, with `options`, for elements of
    /// `elem_bytes` bytes.
    ///
    /// # Errors
    ///
    /// As [`RankPlan::new`], and [`RedistError::Remap`] or
    /// [`RedistError::Limit`] when remapping as `options` asks fails.
    pub fn new(
        source: &Layout,
        target: &Layout,
        window: &Window,
        options: Options,
        rank: usize,
        elem_bytes: usize,
    ) -> Result<RankPart, RedistError> {
        let (mut plan, _, relabelling) =
            plan_of(source, target, window, options.remap, rank, false)?;
        let program = programs(&plan, &options, elem_bytes, None);
        plan.release_runs();
        Ok(RankPart {
            plan,
            program,
            relabelling,
        })
    }

    /// The rank's plan.
    pub fn plan(&self) -> &RankPlan {
        &self.plan
    }

    /// With [`Remap::Optimal`](crate::Remap::Optimal): the relabelling,
    /// what it keeps and how close to the optimum.
    pub fn relabelling(&self) -> Option<&Relabelling> {
        self.relabelling.as_ref()
    }

    /// The rank's schedule, its steps set in the plan's messages.
    ///
    /// # Errors
    ///
    /// As [`assign_steps`](crate::schedule::assign_steps).
    pub fn schedule(&mut self) -> Result<RankSchedule, RedistError> {
        crate::schedule::assign_steps(&mut self.plan)
    }

    /// Bytes of the rank's copy programs.
    pub fn program_bytes(&self) -> usize {
        self.program.heap_bytes()
    }

    /// Bytes the rank keeps for the redistribution apart from data: its
    /// plan, its copy programs, and per message its slot in the buffers and
    /// its route (MPI's own objects, and the exchange's per-execution
    /// state, aside).
    pub fn bytes(&self) -> usize {
        let (sends, recvs) = (self.plan.sends().len(), self.plan.recvs().len());
        let slots = (sends + recvs) * size_of::<(usize, usize)>();
        self.plan.heap_bytes()
            + self.program.heap_bytes()
            + slots
            + super::route::Routes::bytes_for(sends, recvs)
    }
}
