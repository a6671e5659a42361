//! Schedules one rank computes alone: the step of each of its messages,
//! the same on the sender and the receiver, every step a matching, without
//! the whole communication graph.
//!
//! The n-D graph (source ranks on one side, target ranks on the other, an
//! edge per message) is the product of the 1-D graphs of the dimensions:
//! ranks `a` and `b` exchange data when every dimension's coordinates do.
//! No schedule has fewer steps than its maximum degree, the most messages
//! one rank sends or receives; König's theorem says a bipartite graph
//! always reaches it. The product graph's is `Δ = max(Π_d ΔS_d, Π_d ΔT_d)`
//! (`ΔS_d`, `ΔT_d` the largest source and target degree of dimension `d`),
//! counting a rank's message to itself; the real one is `Δ` or `Δ − 1`, the
//! latter where every rank of degree `Δ` keeps part of its data (a local
//! copy is no message). Every dimension's graph is small — its processes
//! and a few runs each, not the ranks — so every rank builds all of them
//! alike ([`AxisGraph`]), and a message's step is a function of its two
//! ranks' coordinates. The constructions, in the order they are tried:
//!
//! - **shift**: where every source rank sends to every target rank (a
//!   transpose such as `block,*@Rx1 → *,block@1xR`), the message `a → b`
//!   moves in step `(b − a) mod N`, `N` the larger rank count: step 0 holds
//!   only local copies, so `N − 1` steps, and some rank talks to all `N`
//!   ranks, itself included: minimal.
//! - **one dimension** (`Axis`): where only one dimension has more than one
//!   process on a side, the n-D graph is that dimension's graph on ranks,
//!   which every rank holds anyway; it is coloured whole by
//!   [`greedy`](super::greedy), local copies left out: minimal.
//! - **product**: the dimensions' colours combined ([`Combination`]), the
//!   fewest colours over every split of the dimensions between
//!   - their *edge colourings* with `Δ_d = max(ΔS_d, ΔT_d)` colours each:
//!     one-sided dimensions (every source sends to one target, or every
//!     target receives from one source) add up modulo the larger side's
//!     product, the others multiply. This reaches `Δ` where one side leads
//!     in every dimension;
//!   - their *vertex labels*: label the sources of a dimension so that two
//!     sources of one target differ, and the targets so that two targets
//!     of one source differ; read a rank's labels as mixed-radix numbers
//!     `X` (as a source) and `Y` (as a target) and send `a → b` in step
//!     `(Y(b) − X(a)) mod n`, `n = max(range of X, range of Y)`. It is
//!     proper: the targets of one source differ in a label of some
//!     dimension, so in `Y`, while `X(a)` is fixed; the same at a target.
//!     A dimension needs at least `ΔT_d` source labels and `ΔS_d` target
//!     labels (a target's sources all differ); with exactly that many,
//!     `n = Δ` whatever side leads in each dimension — a source-led and a
//!     target-led dimension (fan-out × fan-in) no longer multiply. The
//!     labels are taken greedily in the order the processes first appear
//!     along the dimension, which needs no more than the degrees where the
//!     pattern is an interval of the line; where it wraps around its
//!     period it may need more (`block@4 → cyclic(2)@8`: every two sources
//!     share a target, 4 labels for degree 3).
//!
//!   Where both layouts place every rank at the same grid coordinates, a
//!   rank's local copy is the edge `x → x` of every dimension; where every
//!   dimension's colour 0 can hold exactly its edges `x → x` (every vertex
//!   of the largest degree has one), the edge colours as digits of one
//!   number give colour 0 to exactly the local copies, and the schedule
//!   has `Π Δ_d − 1` steps, messages in steps `1..`.
//! - **whole**: a graph of at most [`WHOLE_EDGES_MAX`] edges whose product
//!   leaves a step to spare (local copies lowering the degree where the
//!   grids place ranks differently, or labels above the degrees) is
//!   coloured whole, at a cost bounded whatever the rank count.
//! - **rank shift fallback**: where some dimension's 1-D graph is too large
//!   to colour (its basic period holds more runs than
//!   [`RUNS_MAX`](crate::plan::RUNS_MAX)), the shift on ranks, a proper
//!   colouring of any graph, with `N − 1` steps.
//!
//! What is minimal, then: every case that one of the first three reaches,
//! and every graph of up to [`WHOLE_EDGES_MAX`] edges. Two classes of
//! larger graphs can take one or a few steps more: where local copies
//! lower the degree and the two grids place ranks differently (a
//! grid-shape change or relabelled ranks; `Δ` steps for `Δ − 1`), and where
//! a dimension's labels need more colours than its degrees (wrapping
//! patterns). On 2 400 random pairs of 1 to 64 ranks the rank-local
//! constructions alone were above the degree in about 5 % of the cases,
//! almost all of the first class (`local/minimal.rs`). [`RankSchedule`]
//! reports the steps next to `Δ`.

use super::axis_graph::{AxisGraph, Labels};
use super::product::Combination;
use super::{greedy, Message};
use crate::error::PlanError;
use crate::layout::axis::AxisMap;
use crate::layout::Layout;
use crate::plan::{AxisPlan, AxisView, Link, RankPlan};

/// How a rank's steps were found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Construction {
    /// Every source rank sends to every target rank: step `(b − a) mod N`.
    Shift,
    /// One dimension moves data between processes: its graph, on ranks,
    /// coloured whole.
    Axis,
    /// Colours of the dimensions' graphs, combined.
    Product,
    /// A graph of at most `WHOLE_EDGES_MAX` (4 096) edges where ranks keep data:
    /// coloured whole.
    Whole,
    /// A dimension's graph too large to colour: the shift on ranks.
    RankShift,
}

/// A rank's schedule: how it was built, how many steps it has, and the
/// fewest any schedule could have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RankSchedule {
    /// How the steps were found.
    pub construction: Construction,
    /// Steps of the schedule, the same on every rank with a message and 0
    /// on a rank with none: messages move in steps `0..steps`, or
    /// `1..=steps` where step 0 holds only local copies (the shifts, and
    /// products whose colour 0 is the local copies). A product may leave
    /// a step empty (a colour that only local copies took); no rank then
    /// waits in it.
    pub steps: usize,
    /// The maximum degree of the product graph, `max(Π ΔS_d, Π ΔT_d)`,
    /// counting a rank's message to itself: no schedule has fewer than
    /// this many steps, or one fewer where every rank of that degree keeps
    /// data.
    pub degree: usize,
}

impl RankSchedule {
    /// Whether no contention-free schedule has fewer steps, given the
    /// graph's maximum degree `max_degree` (the most messages any rank sends
    /// or receives).
    pub fn is_minimal(&self, max_degree: usize) -> bool {
        self.steps <= max_degree
    }
}

/// Assigns the step of every send and receive of `plan` and returns the
/// schedule's figures. Every rank computes the same steps for a message
/// from the two ranks' coordinates alone.
///
/// # Errors
///
/// [`PlanError::Limit`] only from building a dimension's 1-D plan, which
/// is then skipped for the rank shift; none in practice.
pub fn assign_steps(plan: &mut RankPlan) -> Result<RankSchedule, PlanError> {
    steps_with(plan, WHOLE_EDGES_MAX)
}

/// [`assign_steps`], colouring whole graphs of at most `whole_max` edges.
fn steps_with(plan: &mut RankPlan, whole_max: usize) -> Result<RankSchedule, PlanError> {
    let (source, target) = (plan.source().clone(), plan.target().clone());
    let ranks = source.ranks().max(target.ranks());
    let same = same_places(&source, &target);
    let graphs = axis_graphs(&source, &target, plan, same);
    let shift = |a: usize, b: usize| (b + ranks - a % ranks) % ranks;
    let me = plan.rank();
    // Message a -> b in step (b - a) mod ranks, on both of its sides.
    let by_shift = |plan: &mut RankPlan, construction, degree| {
        set_steps(plan, |send, peer| {
            if send {
                shift(me, peer)
            } else {
                shift(peer, me)
            }
        });
        Ok(finish(plan, construction, ranks.saturating_sub(1), degree))
    };
    let Some(graphs) = graphs else {
        // A dimension too large to colour: the shift on ranks.
        return by_shift(plan, Construction::RankShift, degree(&[]));
    };
    let degree = degree(&graphs);
    if graphs.iter().all(AxisGraph::is_complete) {
        return by_shift(plan, Construction::Shift, degree);
    }
    if single_axis(&graphs).is_some() {
        let whole = whole_graph(&source, &target, &graphs)?;
        whole.set(plan);
        return Ok(finish(plan, Construction::Axis, whole.steps, degree));
    }
    let mut combination = Combination::by_edges(&graphs);
    if combination.colours > degree {
        let labels: Vec<Option<Labels>> = graphs.iter().map(|g| Some(g.labels())).collect();
        combination = Combination::fewest(&graphs, &labels);
    }
    // Colour 0 only for local copies: one step fewer.
    let mut first = 0;
    if same && graphs.iter().all(AxisGraph::diagonal_zero) {
        let digits = Combination::by_digits(&graphs);
        if digits.colours <= combination.colours {
            combination = digits;
            first = 1;
        }
    }
    let steps = combination.colours - first;
    // A small graph whose local copies may save a step: coloured whole.
    if first == 0 && whole_edges(&graphs) <= whole_max {
        let whole = whole_graph(&source, &target, &graphs)?;
        if whole.steps < steps {
            whole.set(plan);
            return Ok(finish(plan, Construction::Whole, whole.steps, degree));
        }
    }
    let coords = |l: &Layout, rank: usize| l.coords_of_rank(rank).unwrap_or_default();
    let (mine_src, mine_dst) = (coords(&source, me), coords(&target, me));
    set_steps(plan, |send, peer| {
        if send {
            combination.colour(&graphs, &mine_src, &coords(&target, peer))
        } else {
            combination.colour(&graphs, &coords(&source, peer), &mine_dst)
        }
    });
    Ok(finish(plan, Construction::Product, steps, degree))
}

/// The schedule's figures; a rank with nothing to send or receive has no
/// step.
fn finish(
    plan: &RankPlan,
    construction: Construction,
    steps: usize,
    degree: usize,
) -> RankSchedule {
    let idle = plan.sends().is_empty() && plan.recvs().is_empty();
    RankSchedule {
        construction,
        steps: if idle { 0 } else { steps },
        degree,
    }
}

/// Whether every rank sits at the same grid coordinates in both layouts
/// (then a rank's message to itself is the edge `x → x` of every
/// dimension).
fn same_places(source: &Layout, target: &Layout) -> bool {
    source.grid_extents() == target.grid_extents()
        && match (source.rank_dims(), target.rank_dims()) {
            (Some(a), Some(b)) => a == b,
            // Ranks placed by a map: compared up to the first difference.
            _ => (0..source.ranks()).all(|i| source.rank_at(i) == target.rank_at(i)),
        }
}

/// The one dimension whose graph has more than one process on a side, if
/// only one has.
fn single_axis(graphs: &[AxisGraph]) -> Option<usize> {
    let mut moving = (0..graphs.len()).filter(|&d| graphs[d].procs() != (1, 1));
    let d = moving.next()?;
    moving.next().is_none().then_some(d)
}

/// Most edges of an n-D graph that [`whole_graph`] colours: a bound on its
/// cost, whatever the rank count.
pub const WHOLE_EDGES_MAX: usize = 1 << 12;

/// The edges of the n-D graph, `Π_d |E_d|`, saturating.
fn whole_edges(graphs: &[AxisGraph]) -> usize {
    (graphs.iter()).fold(1usize, |n, g| n.saturating_mul(g.edge_count()))
}

/// The whole n-D graph on ranks, coloured by [`greedy`] (local copies left
/// out, longest messages first): as `(from, to)` → step, sorted, and the
/// steps. Used where only one dimension moves data (the graph is that
/// dimension's, which every rank holds anyway) and where the graph has at
/// most [`WHOLE_EDGES_MAX`] edges.
fn whole_graph(
    source: &Layout,
    target: &Layout,
    graphs: &[AxisGraph],
) -> Result<WholeSteps, PlanError> {
    let per_axis: Vec<Vec<(usize, usize)>> = graphs.iter().map(AxisGraph::edges).collect();
    let mut messages = Vec::new();
    let mut pick = vec![0usize; graphs.len()];
    let (mut a, mut b) = (vec![0; graphs.len()], vec![0; graphs.len()]);
    if per_axis.iter().all(|e| !e.is_empty()) {
        loop {
            let mut len = 1usize;
            for d in 0..graphs.len() {
                (a[d], b[d]) = per_axis[d][pick[d]];
                len = len.saturating_mul(graphs[d].volume(a[d], b[d]));
            }
            messages.push(Message {
                from: source.rank_of_coords(&a)?,
                to: target.rank_of_coords(&b)?,
                len,
            });
            // The next combination, the last dimension fastest.
            let mut d = graphs.len();
            loop {
                if d == 0 {
                    break;
                }
                d -= 1;
                pick[d] += 1;
                if pick[d] < per_axis[d].len() {
                    break;
                }
                pick[d] = 0;
            }
            if pick.iter().all(|&i| i == 0) {
                break;
            }
        }
    }
    let schedule = greedy(&messages);
    let mut step_of: Vec<((usize, usize), usize)> = Vec::new();
    for (s, step) in schedule.steps().iter().enumerate() {
        for &i in step {
            step_of.push(((messages[i].from, messages[i].to), s));
        }
    }
    step_of.sort_unstable();
    Ok(WholeSteps {
        step_of,
        steps: schedule.len(),
    })
}

/// The steps of [`whole_graph`].
struct WholeSteps {
    /// `((from, to), step)`, sorted.
    step_of: Vec<((usize, usize), usize)>,
    /// Steps in all.
    steps: usize,
}

impl WholeSteps {
    fn step(&self, from: usize, to: usize) -> usize {
        let i = self.step_of.partition_point(|x| x.0 < (from, to));
        (self.step_of.get(i))
            .filter(|x| x.0 == (from, to))
            .map_or(0, |x| x.1)
    }

    /// Sets the steps of `plan`'s sends and receives.
    fn set(&self, plan: &mut RankPlan) {
        let me = plan.rank();
        set_steps(plan, |send, peer| {
            if send {
                self.step(me, peer)
            } else {
                self.step(peer, me)
            }
        });
    }
}

/// Sets the step of every send (`step(true, target rank)`) and receive
/// (`step(false, source rank)`).
fn set_steps(plan: &mut RankPlan, step: impl Fn(bool, usize) -> usize) {
    let (sends, recvs) = plan.links_mut();
    let set = |links: &mut [Link], send: bool| {
        for l in links {
            l.step = step(send, l.peer);
        }
    };
    set(sends, true);
    set(recvs, false);
}

/// The maximum degree of the product graph, `max(Π ΔS_d, Π ΔT_d)` (0 when
/// unknown).
fn degree(graphs: &[AxisGraph]) -> usize {
    if graphs.is_empty() {
        return 0;
    }
    let (s, t) = graphs.iter().fold((1usize, 1usize), |(s, t), g| {
        let (ds, dt) = g.degrees();
        (s.saturating_mul(ds), t.saturating_mul(dt))
    });
    s.max(t)
}

/// Every dimension's graph, or `None` when some dimension's is too large to
/// colour.
fn axis_graphs(
    source: &Layout,
    target: &Layout,
    plan: &RankPlan,
    same: bool,
) -> Option<Vec<AxisGraph>> {
    let w = plan.window();
    (0..source.ndim())
        .map(|d| {
            let (a, b) = (&source.axes()[d], &target.axes()[d]);
            let (so, to, len) = (w.source_origin()[d], w.target_origin()[d], w.shape()[d]);
            if complete(a, so, b, to, len) {
                return Some(AxisGraph::complete(a.procs(), b.procs()));
            }
            let whole = AxisPlan::view(a, so, b, to, len, AxisView::All).ok()?;
            Some(AxisGraph::of_plan(&whole, same))
        })
        .collect()
}

/// Whether every source process of a window sends to every target process,
/// known without its plan: the longer blocks (the outer side) each hold a
/// whole cycle of the other side's blocks, and every process of the outer
/// side has a whole block inside the window. (Other complete graphs are
/// found from their plans.)
fn complete(a: &AxisMap, so: usize, b: &AxisMap, to: usize, len: usize) -> bool {
    let ((outer, oo), inner) = if b.block() >= a.block() {
        ((b, to), a)
    } else {
        ((a, so), b)
    };
    let cycle = inner.block() * inner.procs();
    if outer.block() < cycle {
        return false;
    }
    // Whole outer blocks inside the window.
    let first = oo.div_ceil(outer.block());
    let last = (oo + len) / outer.block();
    last.saturating_sub(first) >= outer.procs()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::Remap;
    use crate::plan::Window;
    use crate::testing::{Pair, Windowed};
    use crate::whole::Plan;
    use quickcheck::quickcheck;
    use std::collections::{HashMap, HashSet};

    /// Every rank's plan and schedule for moving `window` from `source` to
    /// `target`.
    fn all_ranks(
        source: &Layout,
        target: &Layout,
        window: &Window,
    ) -> Vec<(RankPlan, RankSchedule)> {
        let ranks = source.ranks().max(target.ranks());
        (0..ranks)
            .map(|r| {
                let mut plan = RankPlan::new(source, target, window, r).unwrap();
                let schedule = assign_steps(&mut plan).unwrap();
                (plan, schedule)
            })
            .collect()
    }

    /// The union of the ranks' schedules is a proper colouring on which
    /// senders and receivers agree, every rank with a message reports the
    /// same steps (the others 0), and the steps used are the most messages
    /// one rank sends or receives.
    fn proper_and_agreed(source: &Layout, target: &Layout, window: &Window) -> Result<(), String> {
        let all = all_ranks(source, target, window);
        let mut sent = HashMap::new();
        let mut used = HashSet::new();
        let mut messages = Vec::new();
        let mut reported = HashSet::new();
        for (plan, schedule) in &all {
            if plan.sends().is_empty() && plan.recvs().is_empty() {
                if schedule.steps != 0 {
                    return Err(format!("idle rank {} reports {schedule:?}", plan.rank()));
                }
            } else {
                reported.insert(schedule.steps);
            }
            for (links, what) in [(plan.sends(), "sends"), (plan.recvs(), "receives")] {
                let steps: HashSet<usize> = links.iter().map(|l| l.step).collect();
                if steps.len() != links.len() {
                    return Err(format!(
                        "rank {} {what} twice in one step: {links:?}",
                        plan.rank()
                    ));
                }
            }
            for l in plan.sends() {
                sent.insert((plan.rank(), l.peer), l.step);
                used.insert(l.step);
                messages.push(Message {
                    from: plan.rank(),
                    to: l.peer,
                    len: l.len,
                });
                if l.step > schedule.steps {
                    return Err(format!("step {} past {schedule:?}", l.step));
                }
            }
        }
        for (plan, _) in &all {
            for l in plan.recvs() {
                if sent.get(&(l.peer, plan.rank())) != Some(&l.step) {
                    return Err(format!(
                        "{} -> {}: receiver's step {} is not the sender's",
                        l.peer,
                        plan.rank(),
                        l.step
                    ));
                }
            }
        }
        if reported.len() > 1 {
            return Err(format!("ranks report {reported:?} steps"));
        }
        let degree = crate::schedule::max_degree(&messages);
        if used.len() != degree {
            return Err(format!(
                "{} steps used, maximum degree {degree}",
                used.len()
            ));
        }
        Ok(())
    }

    fn check(source: &Layout, target: &Layout, window: &Window) -> bool {
        match proper_and_agreed(source, target, window) {
            Ok(()) => true,
            Err(e) => {
                eprintln!("{source} -> {target} ({window}): {e}");
                false
            }
        }
    }

    quickcheck! {
        fn local_schedules_are_proper_colourings(p: Pair) -> bool {
            check(&p.0, &p.1, &Window::whole(p.0.shape()))
        }

        fn local_schedules_of_windows(w: Windowed) -> bool {
            check(&w.0, &w.1, &w.2)
        }

        fn local_schedules_of_remapped_targets(p: Pair) -> bool {
            let plan = Plan::new(&p.0, &p.1, Remap::Optimal).unwrap();
            check(plan.source(), plan.target(), plan.window())
        }
    }

    /// The cases of the design: a transpose (shift, minimal), a grid-shape
    /// change of cyclic layouts (one-sided dimensions added: 2 steps, not
    /// 4), a block-size change on one grid (product, minimal).
    #[test]
    fn steps_of_the_designs_cases() {
        let steps = |shape: &[usize], from: &str, to: &str| {
            let (a, b) = (
                Layout::parse(shape, from).unwrap(),
                Layout::parse(shape, to).unwrap(),
            );
            let w = Window::whole(shape);
            assert!(check(&a, &b, &w), "{from} -> {to}");
            all_ranks(&a, &b, &w)[0].1
        };
        let s = steps(&[64, 64], "block,*@8x1", "*,block@1x8");
        assert_eq!(
            (s.construction, s.steps, s.is_minimal(7)),
            (Construction::Shift, 7, true)
        );
        let s = steps(&[64, 64], "cyclic,cyclic@4x8", "cyclic,cyclic@8x4");
        assert_eq!((s.construction, s.steps), (Construction::Product, 2));
        let s = steps(
            &[1024, 1024],
            "cyclic(64),cyclic(64)@4x8",
            "cyclic(32),cyclic(128)@4x8",
        );
        assert_eq!(
            (s.construction, s.steps, s.degree, s.is_minimal(4)),
            (Construction::Product, 4, 4, true)
        );
    }
}

#[cfg(test)]
mod minimal;
