//! Schedules one rank computes alone: the step of each of its messages,
//! the same on the sender and the receiver, every step a matching, without
//! the whole communication graph.
//!
//! The n-D graph (source ranks on one side, target ranks on the other, an
//! edge per message) is the product of the 1-D graphs of the dimensions:
//! ranks `a` and `b` exchange data when every dimension's coordinates do.
//! Steps are colours of its edges, built from the dimensions' own:
//!
//! - **shift**: where every source rank sends to every target rank (a
//!   transpose such as `block,*@Rx1 → *,block@1xR`, `BLOCK → CYCLIC`), the
//!   message `a → b` moves in step `(b − a) mod N`, `N` the larger rank
//!   count: step 0 holds only the ranks' messages to themselves, so `N − 1`
//!   steps — the fewest possible when both sides have the same ranks;
//! - **product**: otherwise each dimension's 1-D graph is coloured with the
//!   fewest colours, its maximum degree `Δ_d` (König; a complete 1-D graph
//!   `K_{P,Q}` by its own shift `(q − p) mod max(P, Q)`, others by the
//!   edge colouring of [`greedy`](super::greedy) on the dimension's whole
//!   1-D plan — a few runs per process of that dimension, not of the
//!   ranks). Dimensions where every source coordinate sends to one target
//!   coordinate (or every target coordinate receives from one) contribute a
//!   constant on that side: their colours add up, modulo the larger of the
//!   two products, instead of multiplying — this is what makes a
//!   grid-shape change such as `cyclic,cyclic@256x512 → @512x256` take 2
//!   steps, not 4. The other dimensions' colours multiply (a mixed-radix
//!   number). A message's step is a function of its two ranks'
//!   coordinates, so sender and receiver agree without talking;
//! - **rank shift fallback**: where some dimension's 1-D graph is too large
//!   to colour (its basic period holds more runs than
//!   [`RUNS_MAX`](crate::plan::RUNS_MAX)), the shift on ranks, which is
//!   a proper colouring of any graph, with `N − 1` steps.
//!
//! No schedule has fewer steps than the maximum degree of the graph, the
//! most messages one rank sends or receives. The product graph's is
//! `max(Π_d ΔS_d, Π_d ΔT_d)` (`ΔS_d`, `ΔT_d` the largest source and target
//! degree of dimension `d`), counting a rank's message to itself; the real
//! one is that or one less, where every rank of that degree keeps part of
//! its data (a local copy is no message). [`RankSchedule`] reports the steps
//! next to the product graph's degree; a redistribution learns the real
//! maximum degree from its agreement all-reduce. Where every dimension is
//! complete (the shift) the steps are the minimum, `N − 1`, when both sides
//! have the same ranks. The product reaches the product graph's degree
//! where one side has the larger degree in every dimension that is not
//! one-sided — the minimum, or one above it where every rank of that degree
//! keeps data; where dimensions of both kinds mix it takes more, and the
//! report says how many more. A minimal schedule of such graphs needs the
//! whole graph, which no rank holds; since only the `scheduled` strategy
//! steps through the schedule (`auto` never picks it), the local schedule
//! is kept and its count reported.

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
    /// Colours of the dimensions' 1-D graphs, added and multiplied.
    Product,
    /// A dimension's graph too large to colour: the shift on ranks.
    RankShift,
}

/// A rank's schedule: how it was built, how many steps it has, and the
/// fewest any schedule could have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RankSchedule {
    /// How the steps were found.
    pub construction: Construction,
    /// Steps of the schedule (the same on every rank): messages move in
    /// steps `0..steps`, or `1..=steps` for the shifts, whose step 0 holds
    /// only local copies.
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

/// A dimension's 1-D communication graph, as far as the schedule needs it.
enum AxisGraph {
    /// Every source process sends to every target process.
    Complete { p: usize, q: usize },
    /// A proper colouring with the fewest colours, edge by edge: `(p, q,
    /// colour)` by `(p, q)`.
    Coloured {
        colours: Vec<(usize, usize, usize)>,
        degree_source: usize,
        degree_target: usize,
    },
}

impl AxisGraph {
    /// The colour of edge `(p, q)`.
    fn colour(&self, p: usize, q: usize) -> usize {
        match self {
            AxisGraph::Complete { p: ps, q: qs } if ps <= qs => (q + qs - p % qs) % qs,
            AxisGraph::Complete { p: ps, .. } => (p + ps - q % ps) % ps,
            AxisGraph::Coloured { colours, .. } => {
                let i = colours.partition_point(|&(a, b, _)| (a, b) < (p, q));
                colours
                    .get(i)
                    .filter(|x| (x.0, x.1) == (p, q))
                    .map_or(0, |x| x.2)
            }
        }
    }

    /// The largest source and target degree.
    fn degrees(&self) -> (usize, usize) {
        match self {
            AxisGraph::Complete { p, q } => (*q, *p),
            AxisGraph::Coloured {
                degree_source,
                degree_target,
                ..
            } => (*degree_source, *degree_target),
        }
    }

    /// Colours used: the maximum degree.
    fn colours(&self) -> usize {
        let (s, t) = self.degrees();
        s.max(t)
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
    let (source, target) = (plan.source().clone(), plan.target().clone());
    let ranks = source.ranks().max(target.ranks());
    let graphs = axis_graphs(&source, &target, plan);
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
        Ok(RankSchedule {
            construction,
            steps: ranks.saturating_sub(1),
            degree,
        })
    };
    let Some(graphs) = graphs else {
        // A dimension too large to colour: the shift on ranks.
        return by_shift(plan, Construction::RankShift, degree(&[]));
    };
    let degree = degree(&graphs);
    if graphs
        .iter()
        .all(|g| matches!(g, AxisGraph::Complete { .. }))
    {
        return by_shift(plan, Construction::Shift, degree);
    }
    let product = Product::new(&graphs);
    let coords = |l: &Layout, rank: usize| l.coords_of_rank(rank).unwrap_or_default();
    let (mine_src, mine_dst) = (coords(&source, me), coords(&target, me));
    set_steps(plan, |send, peer| {
        if send {
            product.colour(&graphs, &mine_src, &coords(&target, peer))
        } else {
            product.colour(&graphs, &coords(&source, peer), &mine_dst)
        }
    });
    Ok(RankSchedule {
        construction: Construction::Product,
        steps: product.colours,
        degree,
    })
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
fn axis_graphs(source: &Layout, target: &Layout, plan: &RankPlan) -> Option<Vec<AxisGraph>> {
    let w = plan.window();
    (0..source.ndim())
        .map(|d| {
            let (a, b) = (&source.axes()[d], &target.axes()[d]);
            let (so, to, len) = (w.source_origin()[d], w.target_origin()[d], w.shape()[d]);
            if complete(a, so, b, to, len) {
                return Some(AxisGraph::Complete {
                    p: a.procs(),
                    q: b.procs(),
                });
            }
            let whole = AxisPlan::view(a, so, b, to, len, AxisView::All).ok()?;
            Some(coloured(&whole))
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

/// The 1-D graph of `plan` (every pair) coloured with the fewest colours.
fn coloured(plan: &AxisPlan) -> AxisGraph {
    let p = plan.source().procs();
    let edges: Vec<(usize, usize)> = plan.pairs().map(|(x, y, _)| (x, y)).collect();
    if edges.len() == p * plan.target().procs() {
        return AxisGraph::Complete {
            p,
            q: plan.target().procs(),
        };
    }
    // Targets numbered after the sources, so that no edge looks local.
    let messages: Vec<Message> = plan
        .pairs()
        .map(|(x, y, v)| Message {
            from: x,
            to: p + y,
            len: v,
        })
        .collect();
    let schedule = greedy(&messages);
    let mut colours = vec![(0, 0, 0); edges.len()];
    for (c, step) in schedule.steps().iter().enumerate() {
        for &i in step {
            colours[i] = (edges[i].0, edges[i].1, c);
        }
    }
    let degree = |side: fn(&(usize, usize)) -> usize| {
        let mut count = std::collections::HashMap::<usize, usize>::new();
        for e in &edges {
            *count.entry(side(e)).or_default() += 1;
        }
        count.into_values().max().unwrap_or(0)
    };
    AxisGraph::Coloured {
        colours,
        degree_source: degree(|e| e.0),
        degree_target: degree(|e| e.1),
    }
}

/// How the dimensions' colours combine: one-sided dimensions add up modulo
/// `base`, the others multiply.
struct Product {
    /// Per dimension: its kind, and its radix in the sum or the product.
    dims: Vec<(Kind, usize)>,
    /// Modulus of the one-sided sum.
    base: usize,
    /// Colours in all.
    colours: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Every source coordinate sends to at most one target coordinate: a
    /// constant at every source, one colour per source at a target.
    SourceOne,
    /// Every target coordinate receives from at most one source
    /// coordinate.
    TargetOne,
    /// Both sides have degree above one.
    General,
}

impl Product {
    fn new(graphs: &[AxisGraph]) -> Product {
        let dims: Vec<(Kind, usize)> = graphs
            .iter()
            .map(|g| {
                let (s, t) = g.degrees();
                let kind = match (s <= 1, t <= 1) {
                    (true, _) => Kind::SourceOne,
                    (false, true) => Kind::TargetOne,
                    _ => Kind::General,
                };
                (kind, g.colours().max(1))
            })
            .collect();
        let radix = |k: Kind| {
            dims.iter()
                .filter(|d| d.0 == k)
                .fold(1usize, |n, d| n.saturating_mul(d.1))
        };
        let base = radix(Kind::SourceOne).max(radix(Kind::TargetOne));
        Product {
            colours: base.saturating_mul(radix(Kind::General)),
            dims,
            base,
        }
    }

    /// The colour of the message between source coordinates `a` and target
    /// coordinates `b`.
    fn colour(&self, graphs: &[AxisGraph], a: &[usize], b: &[usize]) -> usize {
        // Mixed-radix numbers of each kind's colours.
        let (mut x, mut y, mut w) = (0usize, 0usize, 0usize);
        for (d, (&(kind, radix), g)) in self.dims.iter().zip(graphs).enumerate() {
            let c = g.colour(a[d], b[d]);
            match kind {
                Kind::SourceOne => x = x * radix + c,
                Kind::TargetOne => y = y * radix + c,
                Kind::General => w = w * radix + c,
            }
        }
        // At a source x is constant and y tells its messages apart; at a
        // target the other way round: their sum modulo `base` does both.
        (x + y) % self.base + self.base * w
    }
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
    /// senders and receivers agree, every rank reports the same schedule,
    /// and where it claims to be minimal its steps are the maximum degree.
    fn proper_and_agreed(source: &Layout, target: &Layout, window: &Window) -> Result<(), String> {
        let all = all_ranks(source, target, window);
        let Some(first) = all.first().map(|x| x.1) else {
            return Ok(());
        };
        let mut sent = HashMap::new();
        let mut used = HashSet::new();
        let mut degree = 0;
        for (plan, schedule) in &all {
            if *schedule != first {
                return Err(format!(
                    "rank {} reports {schedule:?}, rank 0 {first:?}",
                    plan.rank()
                ));
            }
            degree = degree.max(plan.sends().len()).max(plan.recvs().len());
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
                let range = match first.construction {
                    Construction::Product => 0..first.steps,
                    _ => 1..first.steps + 1,
                };
                if !range.contains(&l.step) {
                    return Err(format!("step {} outside {range:?}", l.step));
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
        // The claims of the design: the shift between equal rank sets is
        // minimal; a product that reaches the product graph's degree is at
        // most one step above the minimum (local copies).
        let equal = source.ranks() == target.ranks();
        let claim = match first.construction {
            Construction::Shift if equal => Some(degree),
            Construction::Product if first.steps == first.degree => Some(degree + 1),
            _ => None,
        };
        if claim.is_some_and(|most| used.len() > most) {
            return Err(format!(
                "{first:?}: {} steps used, maximum degree {degree}",
                used.len()
            ));
        }
        if used.len() > first.steps {
            return Err(format!("{first:?}: {} steps used", used.len()));
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
