//! What one rank builds for a redistribution, from plain inputs: its part
//! of the plan (with the target's ranks relabelled as [`Remap`] asks), its
//! copy programs, and on demand its schedule. No MPI and no data: the engine
//! builds exactly this on each rank and then sets up its exchange, and tools
//! show a rank's part on any number of ranks with it (`redist plan --rank`).

use crate::error::PlanError;
use crate::layout::Layout;
use crate::options::{Remap, Streaming};
use crate::padding::Padding;
use crate::plan::{RankPlan, Window};
use crate::program::RankProgram;
use crate::remap::{self, Relabelling};
use crate::schedule::{assign_steps, RankSchedule};
use crate::stream;
use crate::tuning::{STREAM_MIN_SOURCE_RUN_BYTES, UNIT_BYTES};

/// The facts of the machine a rank runs on that shape its copy programs.
/// The engine reads them once per process; tools and tests state them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Machine {
    /// Cores the rank's process may use.
    pub cores: usize,
    /// Ranks sharing the rank's node (and so its cores and cache).
    pub ranks_on_node: usize,
    /// Bytes of the node's last-level cache, where the machine says.
    pub cache_bytes: Option<usize>,
}

impl Machine {
    /// One rank alone on one core, its cache unknown: copies run on one
    /// thread, and stream as [`Streaming`] says for an unknown cache.
    pub fn single_core() -> Machine {
        Machine {
            cores: 1,
            ranks_on_node: 1,
            cache_bytes: None,
        }
    }

    /// Elements of one unit of parallel work in a copy for elements of
    /// `elem_bytes` bytes, or `usize::MAX` (one unit) where the rank has no
    /// cores to itself: with as many ranks as cores on a node, extra
    /// threads only contend.
    fn unit_elements(&self, elem_bytes: usize) -> usize {
        if self.cores >= 2 * self.ranks_on_node {
            UNIT_BYTES / elem_bytes.max(1)
        } else {
            usize::MAX
        }
    }
}

/// What a rank's part depends on besides the layouts: how the target's
/// ranks may be relabelled, when copies stream, and how each side's local
/// parts are padded by ghost layers.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PartOptions {
    /// How the target's ranks may be relabelled.
    pub remap: Remap,
    /// When copies into target storage use streaming stores.
    pub streaming: Streaming,
    /// The ghost layers around the source's and the target's local parts
    /// (none by default): the copy programs read and write their
    /// interiors.
    pub padding: Padding,
}

/// One rank's part of a redistribution: its plan and copy programs, as the
/// engine builds them on that rank (the exchange's MPI objects aside), and
/// on demand its schedule.
///
/// ```
/// use redist_plan::{Layout, Machine, PartOptions, RankPart, Window};
/// let from = Layout::parse(&[1000], "block@4")?;
/// let to = Layout::parse(&[1000], "cyclic(7)@4")?;
/// let machine = Machine::single_core();
/// let part = RankPart::new(&from, &to, &Window::whole(&[1000]), PartOptions::default(), 0, 8, &machine)?;
/// assert_eq!(part.plan().kept() + part.plan().elements_sent(), 250); // rank 0 holds 0..250
/// assert!(part.program_bytes() < 4096); // however long the array
/// # Ok::<(), redist_plan::PlanError>(())
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
    /// `elem_bytes` bytes, on `machine`.
    ///
    /// # Errors
    ///
    /// As [`RankPlan::new`]; [`PlanError::Remap`] or [`PlanError::Limit`]
    /// when remapping as `options` asks fails; as [`Padding::check`] when
    /// `options.padding` does not fit the layouts.
    pub fn new(
        source: &Layout,
        target: &Layout,
        window: &Window,
        options: PartOptions,
        rank: usize,
        elem_bytes: usize,
        machine: &Machine,
    ) -> Result<RankPart, PlanError> {
        let (mut plan, relabelling) = plan_rank(source, target, window, options.remap, rank)?;
        let program = programs(&plan, &options, elem_bytes, None, machine)?;
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

    /// With [`Remap::Optimal`]: the relabelling, what it keeps and how
    /// close to the optimum.
    pub fn relabelling(&self) -> Option<&Relabelling> {
        self.relabelling.as_ref()
    }

    /// The rank's schedule, its steps set in the plan's messages.
    ///
    /// # Errors
    ///
    /// As [`assign_steps`].
    pub fn schedule(&mut self) -> Result<RankSchedule, PlanError> {
        assign_steps(&mut self.plan)
    }

    /// Bytes of the rank's copy programs.
    pub fn program_bytes(&self) -> usize {
        self.program.heap_bytes()
    }

    /// Bytes the rank keeps for its plan and copy programs.
    pub fn plan_and_program_bytes(&self) -> usize {
        self.plan.heap_bytes() + self.program.heap_bytes()
    }
}

/// Rank `me`'s plan of `window` from `source` to `target` relabelled as
/// `remap` chooses (with what the relabelling keeps, for
/// [`Remap::Optimal`]). The target's rank map is the same on every rank.
///
/// # Errors
///
/// As [`RankPlan::new`], and [`PlanError::Remap`] or [`PlanError::Limit`]
/// when remapping as `remap` asks fails.
pub fn plan_rank(
    source: &Layout,
    target: &Layout,
    window: &Window,
    remap: Remap,
    me: usize,
) -> Result<(RankPlan, Option<Relabelling>), PlanError> {
    let (target, relabelling) = remap::target_for(source, target, window, remap)?;
    let plan = RankPlan::new(source, &target, window, me)?;
    Ok((plan, relabelling))
}

/// This rank's copy programs of `plan` on `machine`, for elements of
/// `elem_bytes` bytes, the target's axes permuted as `target_axes` says (see
/// [`RankProgram::new`]), each side's local parts padded as
/// `options.padding` says (the target's widths in the real target's axis
/// order). Copies run in parallel where the rank has cores to itself, and
/// stream where it writes more target than `options.streaming` and the
/// machine's cache allow. `options.remap` is the plan's, not read here.
///
/// # Errors
///
/// As [`RankProgram::new`]: `plan` must still hold its runs, which the
/// plan of a [`RankPart`] no longer does, and the padding must fit the
/// layouts.
///
/// ```
/// use redist_plan::part::{plan_rank, programs, Machine};
/// use redist_plan::{Layout, Padding, PartOptions, RankPart, Remap, Window};
/// let (a, b) = (Layout::parse(&[64], "block@4").unwrap(), Layout::parse(&[64], "cyclic@4").unwrap());
/// let w = Window::whole(&[64]);
/// let m = Machine::single_core();
/// let (plan, _) = plan_rank(&a, &b, &w, Remap::None, 1).unwrap();
/// let options = PartOptions::default();
/// assert_eq!(programs(&plan, &options, 8, None, &m).unwrap().recvs.len(), 3);
/// let part = RankPart::new(&a, &b, &w, options.clone(), 1, 8, &m).unwrap();
/// assert!(programs(part.plan(), &options, 8, None, &m).is_err());
/// // Ghost widths must be one per axis.
/// let padded = PartOptions { padding: Padding::new(&[1, 1], &[]), ..options };
/// assert!(programs(&plan, &padded, 8, None, &m).is_err());
/// ```
pub fn programs(
    plan: &RankPlan,
    options: &PartOptions,
    elem_bytes: usize,
    target_axes: Option<&[usize]>,
    machine: &Machine,
) -> Result<RankProgram, PlanError> {
    let elem_bytes = elem_bytes.max(1);
    let written = plan.elements_received() + plan.kept();
    let threshold = stream::threshold(
        options.streaming,
        machine.cache_bytes,
        machine.ranks_on_node,
    );
    let stream = (written.saturating_mul(elem_bytes) >= threshold)
        .then(|| STREAM_MIN_SOURCE_RUN_BYTES.div_ceil(elem_bytes));
    let unit = machine.unit_elements(elem_bytes);
    RankProgram::new(plan, unit, stream, target_axes, &options.padding)
}
