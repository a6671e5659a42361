//! The whole plan: every n-D message of a redistribution, with its
//! statistics and schedule — for tools and statistics only (a rank executes
//! its own part, [`RankPlan`](crate::RankPlan)). It sits above the steps it
//! assembles: the 1-D plans ([`crate::plan`]), the target's rank map
//! ([`crate::remap`]) and the steps ([`crate::schedule`]).

use crate::error::PlanError;
use crate::layout::Layout;
use crate::options::Remap;
use crate::plan::{axis_plans, check_window, AxisPlan, AxisView, Window};
use crate::remap;
use crate::schedule::{self, Message, Schedule};

/// Most messages (rank pairs that exchange data, local copies included) a
/// plan lists: 2^24, an all-to-all among 4096 ranks.
pub const MESSAGES_MAX: usize = 1 << 24;

/// What a plan moves, in elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PlanStats {
    /// Elements in the array.
    pub elements: usize,
    /// Elements whose source and target rank are the same.
    pub kept_local: usize,
    /// Elements that change rank.
    pub moved: usize,
    /// Rank pairs `a != b` that exchange data.
    pub messages: usize,
    /// Largest number of ranks any rank sends to.
    pub max_partners: usize,
    /// Contention-free steps of the schedule (the minimum: the maximum
    /// degree of the communication graph).
    pub steps: usize,
    /// Σ over steps of the longest message in the step, in elements.
    pub schedule_cost: usize,
}

/// The plan of a redistribution from one layout to another.
///
/// ```
/// use redist_plan::Layout;
/// use redist_plan::{Plan, Remap};
/// let from = Layout::parse(&[8, 8], "block,*@4x1").unwrap();
/// let to = Layout::parse(&[8, 8], "*,block@1x4").unwrap();
/// let plan = Plan::new(&from, &to, Remap::None).unwrap();
/// let s = plan.stats();
/// assert_eq!((s.elements, s.kept_local, s.moved), (64, 16, 48));
/// assert_eq!((s.messages, s.max_partners, s.steps), (12, 3, 3));
/// ```
#[derive(Debug, Clone)]
pub struct Plan {
    source: Layout,
    target: Layout,
    window: Window,
    axes: Vec<AxisPlan>,
    messages: Vec<Message>,
    schedule: Schedule,
    stats: PlanStats,
}

impl Plan {
    /// Plans the redistribution of an array laid out as `source` into
    /// `target`, relabelling the target's ranks as `remap` allows.
    ///
    /// # Errors
    ///
    /// - [`PlanError::ShapeMismatch`] when the two layouts have different shapes;
    /// - [`PlanError::Limit`] when a dimension has more than 2^21 runs in
    ///   its basic period ([`AxisPlan::new`]), or when the plan
    ///   would list more than [`MESSAGES_MAX`] messages;
    /// - [`PlanError::Remap`] with [`Remap::ClosedForm`] when the two grids differ in
    ///   shape or no closed form covers some dimension.
    pub fn new(source: &Layout, target: &Layout, remap: Remap) -> Result<Plan, PlanError> {
        if source.shape() != target.shape() {
            return Err(PlanError::ShapeMismatch {
                source_shape: source.shape().to_vec(),
                target_shape: target.shape().to_vec(),
            });
        }
        Plan::with_window(source, target, &Window::whole(source.shape()), remap)
    }

    /// Plans moving `window` of an array laid out as `source` onto the
    /// window's place in an array laid out as `target` (the two shapes may
    /// differ); the rest of the target is not touched. Statistics count the
    /// window's elements.
    ///
    /// ```
    /// use redist_plan::Layout;
    /// use redist_plan::{Plan, Remap, Window};
    /// let a = Layout::parse(&[10, 10], "cyclic(2),cyclic(3)@2x2").unwrap();
    /// let b = Layout::parse(&[6, 8], "block,block@2x2").unwrap();
    /// // a[3..7, 1..6] onto b[2..6, 0..5].
    /// let w = Window::new(&[3, 1], &[2, 0], &[4, 5]).unwrap();
    /// let plan = Plan::with_window(&a, &b, &w, Remap::None).unwrap();
    /// assert_eq!(plan.stats().elements, 20);
    /// // A window that does not fit is refused.
    /// let w = Window::new(&[3, 1], &[3, 0], &[4, 5]).unwrap();
    /// assert!(Plan::with_window(&a, &b, &w, Remap::None).is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new), and [`PlanError::InvalidArgument`] when the
    /// window has another number of dimensions than the layouts or does not
    /// fit inside either array, [`PlanError::Remap`] for
    /// `Remap::ClosedForm` on anything but the whole of both arrays.
    pub fn with_window(
        source: &Layout,
        target: &Layout,
        window: &Window,
        remap: Remap,
    ) -> Result<Plan, PlanError> {
        check_window(source, target, window, remap)?;
        let axes = axis_plans(source, target, window, |_| AxisView::All)?;
        // Count the messages before listing them: an all-to-all on very many
        // ranks is refused rather than allocated.
        let messages = remap::message_count(source, &axes);
        if messages > MESSAGES_MAX {
            return Err(PlanError::Limit {
                what: "messages (rank pairs that exchange data) of a plan",
                value: messages as u128,
                limit: MESSAGES_MAX as u128,
            });
        }
        // Volumes from source ranks to target grid positions (row-major index
        // of the target coordinates), before any rank map.
        let by_position = remap::position_volumes(source, target, &axes);
        let (target, _) = remap::target_for(source, target, window, remap)?;
        let rank_map = target.rank_map();
        let mut messages: Vec<Message> = by_position
            .iter()
            .map(|&(from, position, len)| Message {
                from,
                to: rank_map[position],
                len,
            })
            .collect();
        messages.sort_by_key(|m| (m.from, m.to));
        let schedule = schedule::greedy(&messages);
        let ranks = source.ranks().max(target.ranks());
        let stats = PlanStats::of(&messages, &schedule, window.len(), ranks);
        Ok(Plan {
            source: source.clone(),
            target,
            window: window.clone(),
            axes,
            messages,
            schedule,
            stats,
        })
    }

    /// The source layout.
    pub fn source(&self) -> &Layout {
        &self.source
    }

    /// The target layout, carrying the chosen rank map.
    pub fn target(&self) -> &Layout {
        &self.target
    }

    /// The window moved: the whole array unless the plan was made by
    /// [`with_window`](Self::with_window).
    pub fn window(&self) -> &Window {
        &self.window
    }

    /// Whether the plan moves the whole of both arrays.
    pub fn is_whole(&self) -> bool {
        self.window
            .is_whole(self.source.shape(), self.target.shape())
    }

    /// The 1-D plan of every dimension.
    pub fn axes(&self) -> &[AxisPlan] {
        &self.axes
    }

    /// Every message, local copies (`from == to`) included, ordered by
    /// (source rank, target rank).
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// The contention-free schedule of the messages between different ranks.
    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    /// What the plan moves.
    pub fn stats(&self) -> PlanStats {
        self.stats
    }

    /// Elements every rank sends to and receives from other ranks, indexed
    /// by rank: (sent, received).
    pub fn rank_volumes(&self) -> (Vec<usize>, Vec<usize>) {
        let ranks = self.source.ranks().max(self.target.ranks());
        let mut send = vec![0usize; ranks];
        let mut recv = vec![0usize; ranks];
        for m in self.messages.iter().filter(|m| m.from != m.to) {
            send[m.from] += m.len;
            recv[m.to] += m.len;
        }
        (send, recv)
    }
}

impl PlanStats {
    /// The statistics of `messages` (local copies included) scheduled as
    /// `schedule`, moving a window of `elements` among `ranks` ranks.
    fn of(messages: &[Message], schedule: &Schedule, elements: usize, ranks: usize) -> PlanStats {
        let kept_local: usize = messages
            .iter()
            .filter(|m| m.from == m.to)
            .map(|m| m.len)
            .sum();
        let mut partners = vec![0usize; ranks];
        for m in messages.iter().filter(|m| m.from != m.to) {
            partners[m.from] += 1;
        }
        PlanStats {
            elements,
            kept_local,
            moved: elements - kept_local,
            messages: messages.iter().filter(|m| m.from != m.to).count(),
            max_partners: partners.into_iter().max().unwrap_or(0),
            steps: schedule.len(),
            schedule_cost: schedule.cost(messages),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arith::gcd;
    use crate::testing::all_indices;
    use crate::testing::{Pair, Windowed};
    use quickcheck::quickcheck;
    use std::collections::HashMap;

    /// (source local index, target local index) of one element.
    type LocalPair = (Vec<usize>, Vec<usize>);

    /// A rectangular piece of a message: per dimension, a stretch of `len`
    /// indices starting at local offset `src` on the source rank and `dst` on
    /// the target rank.
    #[derive(Debug, Clone, PartialEq, Eq)]
    struct Piece {
        /// Source local offset per dimension.
        src: Vec<usize>,
        /// Target local offset per dimension.
        dst: Vec<usize>,
        /// Length per dimension.
        len: Vec<usize>,
    }

    /// The rectangular pieces of the message from source rank `from` to
    /// target rank `to` of `plan`: the Cartesian product of the 1-D
    /// stretches between their coordinates, dimension by dimension. An error
    /// (`PlanError::NoSuchRank`) when `from` is not a rank of the source
    /// layout or `to` of the target layout.
    fn pieces(plan: &Plan, from: usize, to: usize) -> Result<Vec<Piece>, PlanError> {
        let a = plan.source().coords_of_rank(from)?;
        let b = plan.target().coords_of_rank(to)?;
        let per_dim: Vec<Vec<(usize, usize, usize)>> = plan
            .axes()
            .iter()
            .zip(a.iter().zip(&b))
            .map(|(axis, (&p, &q))| axis.segments(p, q).collect())
            .collect();
        let mut out = vec![Piece {
            src: vec![],
            dst: vec![],
            len: vec![],
        }];
        for segs in &per_dim {
            let mut next = Vec::with_capacity(out.len() * segs.len());
            for piece in &out {
                for &(s, d, l) in segs {
                    let mut p = piece.clone();
                    p.src.push(s);
                    p.dst.push(d);
                    p.len.push(l);
                    next.push(p);
                }
            }
            out = next;
        }
        Ok(out)
    }

    /// Scan every element of the window: (source rank, target rank) -> list
    /// of (src local, dst local).
    fn oracle(s: &Layout, t: &Layout, w: &Window) -> HashMap<(usize, usize), Vec<LocalPair>> {
        let mut out: HashMap<_, Vec<_>> = HashMap::new();
        for g in all_indices(w.shape()) {
            let at = |origin: &[usize]| -> Vec<usize> {
                g.iter().zip(origin).map(|(&i, &o)| i + o).collect()
            };
            let (a, la) = s.global_to_local(&at(w.source_origin())).unwrap();
            let (b, lb) = t.global_to_local(&at(w.target_origin())).unwrap();
            out.entry((a, b)).or_default().push((la, lb));
        }
        out
    }

    fn expand(p: &Piece) -> Vec<LocalPair> {
        let mut out = vec![(vec![], vec![])];
        for d in 0..p.len.len() {
            out = out
                .into_iter()
                .flat_map(|(s, t)| {
                    (0..p.len[d]).map(move |i| {
                        let mut s = s.clone();
                        let mut t = t.clone();
                        s.push(p.src[d] + i);
                        t.push(p.dst[d] + i);
                        (s, t)
                    })
                })
                .collect();
        }
        out
    }

    fn check_plan(plan: &Plan) -> bool {
        let want = oracle(plan.source(), plan.target(), plan.window());
        let mut total = 0;
        for m in plan.messages() {
            let mut got: Vec<_> = pieces(plan, m.from, m.to)
                .unwrap()
                .iter()
                .flat_map(expand)
                .collect();
            let mut w = want.get(&(m.from, m.to)).cloned().unwrap_or_default();
            got.sort();
            w.sort();
            if got != w || m.len != got.len() {
                return false;
            }
            total += m.len;
        }
        let s = plan.stats();
        let kept = want
            .iter()
            .filter(|((a, b), _)| a == b)
            .map(|(_, v)| v.len())
            .sum::<usize>();
        let pairs = want.keys().filter(|(a, b)| a != b).count();
        total == plan.window().len()
            && want.len() == plan.messages().len()
            && s.kept_local == kept
            && s.moved + s.kept_local == s.elements
            && s.messages == pairs
            && plan.schedule().check(plan.messages()).is_ok()
            && s.steps == schedule::max_degree(plan.messages())
    }

    quickcheck! {
        fn plans_match_scan(p: Pair) -> bool {
            check_plan(&Plan::new(&p.0, &p.1, Remap::None).unwrap())
        }

        fn optimal_remap_is_valid_and_never_worse(p: Pair) -> bool {
            // Same rank count so every source rank may be a target rank.
            let none = Plan::new(&p.0, &p.1, Remap::None).unwrap();
            let best = Plan::new(&p.0, &p.1, Remap::Optimal).unwrap();
            check_plan(&best)
                && best.stats().kept_local >= none.stats().kept_local
                && best.target().spec() == p.1.spec()
        }

        fn window_plans_match_scan(w: Windowed) -> bool {
            check_plan(&Plan::with_window(&w.0, &w.1, &w.2, Remap::None).unwrap())
        }

        fn optimal_remap_of_windows_is_valid(w: Windowed) -> bool {
            let none = Plan::with_window(&w.0, &w.1, &w.2, Remap::None).unwrap();
            let best = Plan::with_window(&w.0, &w.1, &w.2, Remap::Optimal).unwrap();
            check_plan(&best) && best.stats().kept_local >= none.stats().kept_local
        }
    }

    #[test]
    fn windows_are_checked() {
        let s = Layout::parse(&[8, 8], "cyclic(3),block@2x2").unwrap();
        let t = Layout::parse(&[5, 9], "block,cyclic(2)@2x2").unwrap();
        let ok = Window::new(&[3, 0], &[0, 1], &[5, 8]).unwrap();
        assert_eq!(
            Plan::with_window(&s, &t, &ok, Remap::None)
                .unwrap()
                .stats()
                .elements,
            40
        );
        for (so, to, shape) in [
            (vec![4, 0], vec![0, 1], vec![5, 8]),
            (vec![3, 0], vec![1, 1], vec![5, 8]),
            (vec![0, 0], vec![0, 0], vec![5, 10]),
        ] {
            let w = Window::new(&so, &to, &shape).unwrap();
            let err = Plan::with_window(&s, &t, &w, Remap::None).unwrap_err();
            assert!(
                matches!(&err, PlanError::InvalidArgument { what: "window", .. }),
                "{err}"
            );
        }
        let w3 = Window::new(&[0, 0, 0], &[0, 0, 0], &[1, 1, 1]).unwrap();
        assert!(Plan::with_window(&s, &t, &w3, Remap::None).is_err());
        // Closed forms only for the whole of both arrays.
        let a = Layout::parse(&[12], "cyclic(2)@3").unwrap();
        let b = Layout::parse(&[12], "cyclic(4)@3").unwrap();
        let sub_array = Window::new(&[1], &[0], &[10]).unwrap();
        assert!(Plan::with_window(&a, &b, &Window::whole(&[12]), Remap::ClosedForm).is_ok());
        assert!(matches!(
            Plan::with_window(&a, &b, &sub_array, Remap::ClosedForm),
            Err(PlanError::Remap { .. })
        ));
    }

    #[test]
    fn design_md_cases() {
        // Rotation: block+1@3 -> block@3 moves nothing once remapped.
        let s = Layout::parse(&[9], "block+1@3").unwrap();
        let t = Layout::parse(&[9], "block@3").unwrap();
        assert_eq!(
            Plan::new(&s, &t, Remap::None).unwrap().stats().kept_local,
            0
        );
        assert_eq!(Plan::new(&s, &t, Remap::Optimal).unwrap().stats().moved, 0);
        // Ragged 8x8 cyclic(3),cyclic(4)@3x3 -> cyclic(4),cyclic(2)@3x3: the exact optimum keeps 26.
        let s = Layout::parse(&[8, 8], "cyclic(3),cyclic(4)@3x3").unwrap();
        let t = Layout::parse(&[8, 8], "cyclic(4),cyclic(2)@3x3").unwrap();
        let best = Plan::new(&s, &t, Remap::Optimal).unwrap();
        assert_eq!(best.stats().kept_local, 26);
        // Grid-shape change 2x4 -> 4x2 over the same 8 ranks.
        let s = Layout::parse(&[16, 16], "block,block@2x4").unwrap();
        let t = Layout::parse(&[16, 16], "block,block@4x2").unwrap();
        let none = Plan::new(&s, &t, Remap::None).unwrap();
        let best = Plan::new(&s, &t, Remap::Optimal).unwrap();
        assert!(best.stats().kept_local >= none.stats().kept_local);
        assert!(matches!(
            Plan::new(&s, &t, Remap::ClosedForm),
            Err(PlanError::Remap { .. })
        ));
    }

    #[test]
    fn shapes_must_agree() {
        let s = Layout::parse(&[8, 8], "block,block@2x2").unwrap();
        let t = Layout::parse(&[8, 9], "block,block@2x2").unwrap();
        assert!(matches!(
            Plan::new(&s, &t, Remap::None),
            Err(PlanError::ShapeMismatch { .. })
        ));
        assert!("fastest".parse::<Remap>().is_err());
        assert_eq!(
            "closed-form".parse::<Remap>().unwrap().to_string(),
            "closed-form"
        );
    }

    /// Seed 000, eq. 13: the number of partners δ of a BLOCK-CYCLIC(s) ->
    /// BLOCK-CYCLIC(t) redistribution on M processors is
    /// min(M, ceil(max/min) · BC·gcd / max) with BC = lcm/gcd. The paper's
    /// six test cases on 72 processors; it prints δ for five of them (10, 72,
    /// 16, 20, 50), and eq. 13 gives 4 for 300 -> 200.
    ///
    /// What we found: eq. 13 counts the target sections one local basic cycle
    /// meets. It is the exact number of partners when successive local cycles
    /// of a process meet the same target processes, but for 5 -> 8 and
    /// 40 -> 300 on 72 processors they do not (the period lcm(s·M, t·M)
    /// spans several local cycles), and the exact maximum, checked here
    /// against a scan of every element, is 16 and 18.
    #[test]
    fn partner_counts_of_the_basic_cycle_paper() {
        let delta = |s: usize, t: usize, m: usize| {
            let g = gcd(s, t);
            let bc = s / g * t / g;
            let (lo, hi) = (s.min(t), s.max(t));
            m.min(hi.div_ceil(lo) * bc * g / hi)
        };
        for (s, t, eq13, exact) in [
            (5, 8, 10, 16),
            (100, 3, 72, 72),
            (40, 300, 16, 18),
            (300, 200, 4, 4),
            (60, 3, 20, 20),
            (10, 500, 50, 50),
        ] {
            assert_eq!(delta(s, t, 72), eq13, "eq. 13 for {s} -> {t}");
            let n = 72 * s * t * 4;
            let from = Layout::parse(&[n], &format!("cyclic({s})@72")).unwrap();
            let to = Layout::parse(&[n], &format!("cyclic({t})@72")).unwrap();
            let plan = Plan::new(&from, &to, Remap::None).unwrap();
            // Partners counted with the process itself, as the paper does.
            let with_self = |a: usize| plan.messages().iter().filter(|m| m.from == a).count();
            let most = (0..72).map(with_self).max().unwrap();
            assert_eq!(most, exact, "{s} -> {t}");
            // The scan: distinct target processes of every source process.
            let mut seen = vec![std::collections::BTreeSet::new(); 72];
            for g in (0..n).step_by(gcd(s, t)) {
                seen[(g / s) % 72].insert((g / t) % 72);
            }
            assert_eq!(
                seen.iter().map(|x| x.len()).max().unwrap(),
                exact,
                "{s} -> {t}"
            );
            assert!((0..72).all(|a| with_self(a) == seen[a].len()));
        }
    }

    /// Plans too large to hold are refused with the limit they exceed,
    /// quickly and before allocating it.
    #[test]
    fn plans_too_large_are_refused_by_name() {
        let limit = |from: &str, to: &str, shape: &[usize], remap: Remap| {
            let s = Layout::parse(shape, from).unwrap();
            let t = Layout::parse(shape, to).unwrap();
            let start = std::time::Instant::now();
            let e = Plan::new(&s, &t, remap).unwrap_err();
            assert!(
                start.elapsed().as_secs() < 5,
                "{from} -> {to}: too slow to refuse"
            );
            match e {
                PlanError::Limit { what, .. } => what,
                other => panic!("{from} -> {to}: {other}"),
            }
        };
        // 5000 × 5000 process pairs in one dimension, each with its run.
        let what = limit("block@5000", "cyclic@5000", &[25_000_000], Remap::None);
        assert!(what.contains("runs in one basic period"), "{what}");
        // An all-to-all among 4900 ranks: 24 million messages.
        let what = limit(
            "block,block@70x70",
            "cyclic,cyclic@70x70",
            &[4900, 4900],
            Remap::None,
        );
        assert!(what.contains("messages"), "{what}");
        // An optimal remapping of 4900 ranks is no longer refused: its
        // volume matrix has one non-zero per rank (the sparse assignment).
        let s = Layout::parse(&[700, 700], "block,block@70x70").unwrap();
        let t = Layout::parse(&[700, 700], "block,block@70x70").unwrap();
        let plan = Plan::new(&s, &t, Remap::Optimal).unwrap();
        assert_eq!(plan.stats().kept_local, 700 * 700);
        // A basic period of three million single-element runs.
        let what = limit("cyclic@1024", "cyclic(3)@1021", &[1 << 40], Remap::None);
        assert!(what.contains("runs in one basic period"), "{what}");
    }
}
