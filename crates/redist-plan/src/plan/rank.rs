//! One rank's part of a plan: what it sends, receives and keeps, built from
//! the 1-D plans at its own coordinates alone.
//!
//! The message from rank `a` to rank `b` is the Cartesian product over
//! dimensions of the 1-D runs between their coordinates, so a rank's
//! partners are the Cartesian product of its 1-D partners: it needs, per
//! dimension, the row of its source coordinate (every target coordinate it
//! sends to) and the column of its target coordinate (every source
//! coordinate it receives from) — [`AxisView`]s, found at the cost of their
//! own runs. Building a rank's plan costs O(its partners × dimensions + the
//! runs of its rows and columns) and never looks at another rank's
//! messages: at 10^5 ranks, a rank with 4 partners holds 4 messages.

use super::{axis_plans, check_window, AxisPlan, AxisView, Window};
use crate::error::PlanError;
use crate::layout::Layout;
use crate::options::Remap;

/// Most messages one rank may send or receive in one plan: 2^24, more than
/// an all-to-all among the ranks of any machine.
pub const RANK_MESSAGES_MAX: usize = 1 << 24;

/// One message of a rank: the other rank, the elements, and the step of the
/// schedule it moves in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Link {
    /// The other rank: the target rank of a send, the source rank of a
    /// receive.
    pub peer: usize,
    /// Elements in the message.
    pub len: usize,
    /// The step of the schedule the message moves in: every step is a
    /// matching, on every rank alike ([`assign_steps`](crate::schedule::assign_steps)).
    pub step: usize,
}

/// What one rank sends, receives and keeps in a redistribution.
///
/// ```
/// use redist_plan::Layout;
/// use redist_plan::{Plan, RankPlan, Remap, Window};
/// let from = Layout::parse(&[8, 8], "block,*@4x1").unwrap();
/// let to = Layout::parse(&[8, 8], "*,block@1x4").unwrap();
/// // Rank 1 holds rows 2 and 3; it keeps columns 2 and 3 and sends the rest.
/// let r = RankPlan::new(&from, &to, &Window::whole(&[8, 8]), 1).unwrap();
/// assert_eq!(r.kept(), 4);
/// assert_eq!(r.sends().iter().map(|l| (l.peer, l.len)).collect::<Vec<_>>(), [(0, 4), (2, 4), (3, 4)]);
/// assert_eq!(r.recvs().len(), 3);
/// // The same messages as the whole plan's.
/// let whole = Plan::new(&from, &to, Remap::None).unwrap();
/// assert!(whole.messages().iter().filter(|m| m.from == 1 && m.to != 1)
///     .all(|m| r.sends().iter().any(|l| l.peer == m.to && l.len == m.len)));
/// ```
#[derive(Debug, Clone)]
pub struct RankPlan {
    rank: usize,
    source: Layout,
    target: Layout,
    window: Window,
    /// Per dimension, the row of this rank's source coordinate; empty when
    /// it holds no source data.
    rows: Vec<AxisPlan>,
    /// Per dimension, the column of this rank's target coordinate; empty
    /// when it receives no target data.
    columns: Vec<AxisPlan>,
    /// Messages to other ranks, by target rank.
    sends: Vec<Link>,
    /// Messages from other ranks, by source rank.
    recvs: Vec<Link>,
    /// Elements this rank keeps (its message to itself).
    kept: usize,
    /// Whether [`release_runs`](Self::release_runs) let go of the rows
    /// and columns.
    released: bool,
}

impl RankPlan {
    /// The plan of rank `rank` for moving `window` of an array laid out as
    /// `source` onto an array laid out as `target` (whose rank map is the
    /// one used: remapping, if any, has chosen it). Steps are not assigned
    /// yet (all 0): [`assign_steps`](crate::schedule::assign_steps) assigns them.
    ///
    /// # Errors
    ///
    /// - [`PlanError::InvalidArgument`] when the window has another number
    ///   of dimensions than the layouts or does not fit inside either array;
    /// - [`PlanError::Limit`] when a dimension's row or column holds more
    ///   than 2^21 runs, or the rank sends or receives more than
    ///   [`RANK_MESSAGES_MAX`] messages.
    pub fn new(
        source: &Layout,
        target: &Layout,
        window: &Window,
        rank: usize,
    ) -> Result<RankPlan, PlanError> {
        check_window(source, target, window, Remap::None)?;
        let coords = |l: &Layout| l.position_of(rank).map(|_| l.coords_of_rank(rank));
        let rows = match coords(source).transpose()? {
            Some(a) => axis_plans(source, target, window, |d| AxisView::Source(a[d]))?,
            None => Vec::new(),
        };
        let columns = match coords(target).transpose()? {
            Some(b) => axis_plans(source, target, window, |d| AxisView::Target(b[d]))?,
            None => Vec::new(),
        };
        let (sends, kept) = links(&rows, target, rank, true)?;
        let (recvs, _) = links(&columns, source, rank, false)?;
        Ok(RankPlan {
            rank,
            source: source.clone(),
            target: target.clone(),
            window: window.clone(),
            rows,
            columns,
            sends,
            recvs,
            kept,
            released: false,
        })
    }

    /// The rank whose plan this is.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The source layout.
    pub fn source(&self) -> &Layout {
        &self.source
    }

    /// The target layout, with the rank map used.
    pub fn target(&self) -> &Layout {
        &self.target
    }

    /// The window moved.
    pub fn window(&self) -> &Window {
        &self.window
    }

    /// Whether the plan moves the whole of both arrays.
    pub fn is_whole(&self) -> bool {
        self.window
            .is_whole(self.source.shape(), self.target.shape())
    }

    /// Per dimension, the row of this rank's source coordinate: the runs of
    /// every message it sends, and of the elements it keeps. Empty when the
    /// rank holds no source data, and in the plan a
    /// `Redistribution` (the engine's) or
    /// [`RankPart`](crate::RankPart) keeps: its copy programs hold the runs.
    pub fn rows(&self) -> &[AxisPlan] {
        &self.rows
    }

    /// Per dimension, the column of this rank's target coordinate: the runs
    /// of every message it receives. Empty when it receives no target data,
    /// and in the plan a `Redistribution` (the engine's) or
    /// [`RankPart`](crate::RankPart) keeps.
    pub fn columns(&self) -> &[AxisPlan] {
        &self.columns
    }

    /// Lets go of the rows and columns once the copy programs hold their
    /// runs: what a redistribution keeps of its plan is its messages.
    pub fn release_runs(&mut self) {
        self.rows = Vec::new();
        self.columns = Vec::new();
        self.released = true;
    }

    /// Whether the plan still holds its rows and columns: copy programs
    /// ([`RankProgram::new`](crate::RankProgram::new)) are built from them.
    pub fn holds_runs(&self) -> bool {
        !self.released
    }

    /// The messages to other ranks, by target rank.
    pub fn sends(&self) -> &[Link] {
        &self.sends
    }

    /// The messages from other ranks, by source rank.
    pub fn recvs(&self) -> &[Link] {
        &self.recvs
    }

    /// Mutable access to the steps of sends and receives, for the schedule.
    pub(crate) fn links_mut(&mut self) -> (&mut [Link], &mut [Link]) {
        (&mut self.sends, &mut self.recvs)
    }

    /// Elements this rank keeps: its message to itself.
    pub fn kept(&self) -> usize {
        self.kept
    }

    /// Elements this rank sends to other ranks.
    pub fn elements_sent(&self) -> usize {
        self.sends.iter().map(|l| l.len).sum()
    }

    /// Elements this rank receives from other ranks.
    pub fn elements_received(&self) -> usize {
        self.recvs.iter().map(|l| l.len).sum()
    }

    /// Bytes the plan holds on the heap: its rows, columns and messages
    /// (the layouts' own few bytes aside).
    pub fn heap_bytes(&self) -> usize {
        let axes: usize = self
            .rows
            .iter()
            .chain(&self.columns)
            .map(|a| a.heap_bytes() + std::mem::size_of::<AxisPlan>())
            .sum();
        axes + (self.sends.capacity() + self.recvs.capacity()) * std::mem::size_of::<Link>()
    }
}

/// The messages rank `rank` sends (`sends`, from its rows `axes`, to ranks
/// of `other`, the target) or receives (from its columns, from ranks of
/// `other`, the source): per dimension the partners of its row (or column),
/// their Cartesian product; the message to itself set aside as the
/// elements kept.
fn links(
    axes: &[AxisPlan],
    other: &Layout,
    rank: usize,
    sends: bool,
) -> Result<(Vec<Link>, usize), PlanError> {
    if axes.is_empty() {
        return Ok((Vec::new(), 0));
    }
    // Per dimension: (other coordinate, volume).
    let per_dim: Vec<Vec<(usize, usize)>> = axes
        .iter()
        .map(|a| {
            a.pairs()
                .map(|(p, q, v)| (if sends { q } else { p }, v))
                .collect()
        })
        .collect();
    let count = per_dim
        .iter()
        .fold(1usize, |n, list| n.saturating_mul(list.len()));
    if count > RANK_MESSAGES_MAX {
        return Err(PlanError::Limit {
            what: "messages one rank sends or receives",
            value: count as u128,
            limit: RANK_MESSAGES_MAX as u128,
        });
    }
    let grid = other.grid_extents();
    let mut links = Vec::with_capacity(count);
    let mut kept = 0;
    let mut at = vec![0usize; per_dim.len()];
    for _ in 0..count {
        // The row-major grid position of the partner's coordinates.
        let (mut position, mut len) = (0usize, 1usize);
        for (d, list) in per_dim.iter().enumerate() {
            let (c, v) = list[at[d]];
            position = position * grid[d] + c;
            len *= v;
        }
        let peer = other.rank_at(position);
        if peer == rank {
            kept = len;
        } else {
            links.push(Link { peer, len, step: 0 });
        }
        // The next combination, last dimension fastest.
        for d in (0..at.len()).rev() {
            at[d] += 1;
            if at[d] < per_dim[d].len() {
                break;
            }
            at[d] = 0;
        }
    }
    links.sort_by_key(|l| l.peer);
    Ok((links, kept))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::Remap;
    use crate::testing::{Pair, Windowed};
    use crate::whole::Plan;
    use quickcheck::quickcheck;

    /// Every rank's plan holds exactly the whole plan's messages of that
    /// rank (a rank in neither layout included), its rows and columns the
    /// whole plan's runs.
    fn rank_plans_agree(plan: &Plan) -> bool {
        let ranks = plan.source().ranks().max(plan.target().ranks());
        (0..=ranks).all(|r| {
            let mine = RankPlan::new(plan.source(), plan.target(), plan.window(), r).unwrap();
            let of = |keep: &dyn Fn(&crate::schedule::Message) -> Option<(usize, usize)>| {
                plan.messages().iter().filter_map(keep).collect::<Vec<_>>()
            };
            let sends = of(&|m| (m.from == r && m.to != r).then_some((m.to, m.len)));
            let recvs = of(&|m| (m.to == r && m.from != r).then_some((m.from, m.len)));
            let kept = of(&|m| (m.from == r && m.to == r).then_some((r, m.len)));
            let links = |l: &[Link]| l.iter().map(|l| (l.peer, l.len)).collect::<Vec<_>>();
            let runs_agree = |mine: &[AxisPlan]| {
                mine.iter().zip(plan.axes()).all(|(a, whole)| {
                    a.pairs().all(|(p, q, v)| {
                        a.runs(p, q) == whole.runs(p, q) && v == whole.volume(p, q)
                    })
                })
            };
            links(mine.sends()) == sends
                && links(mine.recvs()) == recvs
                && mine.kept() == kept.first().map_or(0, |&(_, n)| n)
                && runs_agree(mine.rows())
                && runs_agree(mine.columns())
        })
    }

    quickcheck! {
        fn rank_plans_are_the_whole_plans_messages(p: Pair) -> bool {
            rank_plans_agree(&Plan::new(&p.0, &p.1, Remap::None).unwrap())
        }

        fn rank_plans_of_windows(w: Windowed) -> bool {
            rank_plans_agree(&Plan::with_window(&w.0, &w.1, &w.2, Remap::None).unwrap())
        }

        fn rank_plans_of_remapped_targets(p: Pair) -> bool {
            rank_plans_agree(&Plan::new(&p.0, &p.1, Remap::Optimal).unwrap())
        }
    }

    /// A rank of the 2-D transpose on 131072 ranks holds its own 131071
    /// receives and one send, built without the other ranks' messages.
    #[test]
    fn a_rank_of_a_large_transpose_holds_its_own_messages() {
        let r = 1 << 17;
        let from = Layout::parse(&[1 << 20, 1 << 20], &format!("block,*@{r}x1")).unwrap();
        let to = Layout::parse(&[1 << 20, 1 << 20], &format!("*,block@1x{r}")).unwrap();
        let w = Window::whole(from.shape());
        for rank in [0, 77, r - 1] {
            let plan = RankPlan::new(&from, &to, &w, rank).unwrap();
            assert_eq!((plan.sends().len(), plan.recvs().len()), (r - 1, r - 1));
            assert_eq!(plan.kept(), 8 * 8);
            assert_eq!(plan.elements_sent() + plan.kept(), 8 << 20);
        }
    }
}
