//! One dimension's communication graph, as a schedule needs it: which
//! source process of the dimension sends to which target process, the
//! largest degree on each side, a proper colouring of its edges with the
//! fewest colours, and proper colourings of its vertices (see
//! [`Labels`]).
//!
//! A dimension has at most a few thousand processes and its whole 1-D plan
//! holds a few runs per process, so every rank builds the same graph, in
//! the same order, and finds the same colours without talking.

use super::{greedy, Message};
use crate::plan::AxisPlan;

/// A dimension's bipartite communication graph: source processes `0..p`,
/// target processes `0..q`, an edge where a source sends to a target.
pub(super) struct AxisGraph {
    /// Source processes of the dimension.
    p: usize,
    /// Target processes of the dimension.
    q: usize,
    /// The most targets one source sends to.
    degree_source: usize,
    /// The most sources one target receives from.
    degree_target: usize,
    /// Whether colour 0 holds exactly the edges `x → x`.
    diagonal_zero: bool,
    edges: Edges,
}

enum Edges {
    /// Every source sends to every target.
    Complete,
    /// The edges by `(source, target)`, each with its colour and the
    /// offset of its first index in the period (where it first appears
    /// along the dimension).
    Listed(Vec<Edge>),
}

#[derive(Debug, Clone, Copy)]
struct Edge {
    p: usize,
    q: usize,
    /// Indices moved.
    len: usize,
    colour: usize,
    first: usize,
}

/// Colourings of a dimension's vertices: `source[p]` differs between any two
/// sources of one target, `target[q]` between any two targets of one
/// source. Merging vertices of one colour shrinks the graph to one on
/// `source_colours` sources and `target_colours` targets whose degrees are
/// no larger; where the colours are as few as the degrees allow (the
/// largest target degree and the largest source degree), that graph is
/// complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Labels {
    /// The label of every source process (empty: the label is the process).
    source: Vec<usize>,
    /// The label of every target process (empty: the label is the process).
    target: Vec<usize>,
    /// Labels used on the sources.
    pub source_colours: usize,
    /// Labels used on the targets.
    pub target_colours: usize,
}

impl Labels {
    /// The label of source process `p`.
    pub fn source(&self, p: usize) -> usize {
        self.source.get(p).copied().unwrap_or(p)
    }

    /// The label of target process `q`.
    pub fn target(&self, q: usize) -> usize {
        self.target.get(q).copied().unwrap_or(q)
    }
}

impl AxisGraph {
    /// The complete graph: every one of `p` sources sends to every one of
    /// `q` targets.
    pub fn complete(p: usize, q: usize) -> AxisGraph {
        AxisGraph {
            p,
            q,
            degree_source: q,
            degree_target: p,
            diagonal_zero: p == q,
            edges: Edges::Complete,
        }
    }

    /// The graph of a dimension's whole 1-D plan, its edges coloured with
    /// the fewest colours by [`greedy`] (longest messages first). With
    /// `diagonal` (the two sides' processes are the same ranks), the edges
    /// `x → x` take colour 0 and the others the colours after it, where
    /// that needs no more colours: every vertex of the largest degree has
    /// its edge `x → x`.
    pub fn of_plan(plan: &AxisPlan, diagonal: bool) -> AxisGraph {
        let (p, q) = (plan.source().procs(), plan.target().procs());
        let pairs: Vec<(usize, usize, usize)> = plan.pairs().collect();
        if pairs.len() == p * q {
            return AxisGraph::complete(p, q);
        }
        let mut edges: Vec<Edge> = (pairs.iter())
            .map(|&(p, q, len)| Edge {
                p,
                q,
                len,
                colour: 0,
                first: plan.runs(p, q).first().map_or(usize::MAX, |r| r.global),
            })
            .collect();
        let most = |side: fn(&Edge) -> usize, n: usize| {
            let mut count = vec![0usize; n];
            for e in &edges {
                count[side(e)] += 1;
            }
            count.into_iter().max().unwrap_or(0)
        };
        let (degree_source, degree_target) = (most(|e| e.p, p), most(|e| e.q, q));
        let fewest = degree_source.max(degree_target);
        // Off the diagonal the degree drops by one where every vertex of
        // the largest degree has its edge x → x; König then colours those
        // edges with one colour fewer, leaving colour 0 to the diagonal.
        let diagonal_zero = diagonal && p == q && {
            let mut count = vec![(0usize, 0usize, false, false); p];
            for e in &edges {
                count[e.p].0 += 1;
                count[e.q].1 += 1;
                if e.p == e.q {
                    count[e.p].2 = true;
                    count[e.q].3 = true;
                }
            }
            count
                .iter()
                .all(|&(s, t, ds, dt)| (s < fewest || ds) && (t < fewest || dt))
        };
        colour_edges(&mut edges, diagonal_zero);
        AxisGraph {
            p,
            q,
            degree_source,
            degree_target,
            diagonal_zero,
            edges: Edges::Listed(edges),
        }
    }

    /// Whether colour 0 holds exactly the edges `x → x` (then no other
    /// edge has colour 0).
    pub fn diagonal_zero(&self) -> bool {
        self.diagonal_zero
    }

    /// Source and target processes.
    pub fn procs(&self) -> (usize, usize) {
        (self.p, self.q)
    }

    /// Whether every source sends to every target.
    pub fn is_complete(&self) -> bool {
        matches!(self.edges, Edges::Complete)
    }

    /// The largest source and target degree.
    pub fn degrees(&self) -> (usize, usize) {
        (self.degree_source, self.degree_target)
    }

    /// Colours of [`colour`](Self::colour): the maximum degree.
    pub fn colours(&self) -> usize {
        self.degree_source.max(self.degree_target)
    }

    /// The colour of edge `(p, q)` in a proper colouring with
    /// [`colours`](Self::colours) colours (0 for a pair that is no edge).
    pub fn colour(&self, p: usize, q: usize) -> usize {
        match &self.edges {
            Edges::Complete if self.p <= self.q => (q + self.q - p % self.q) % self.q,
            Edges::Complete => (p + self.p - q % self.p) % self.p,
            Edges::Listed(edges) => {
                let i = edges.partition_point(|e| (e.p, e.q) < (p, q));
                (edges.get(i))
                    .filter(|e| (e.p, e.q) == (p, q))
                    .map_or(0, |e| e.colour)
            }
        }
    }

    /// Indices moved from source `p` to target `q` (1 on a complete
    /// graph, whose volumes are not kept).
    pub fn volume(&self, p: usize, q: usize) -> usize {
        match &self.edges {
            Edges::Complete => 1,
            Edges::Listed(edges) => {
                let i = edges.partition_point(|e| (e.p, e.q) < (p, q));
                (edges.get(i))
                    .filter(|e| (e.p, e.q) == (p, q))
                    .map_or(0, |e| e.len)
            }
        }
    }

    /// Number of edges.
    pub fn edge_count(&self) -> usize {
        match &self.edges {
            Edges::Complete => self.p.saturating_mul(self.q),
            Edges::Listed(edges) => edges.len(),
        }
    }

    /// The edges as `(source, target)` pairs, by source then target.
    pub fn edges(&self) -> Vec<(usize, usize)> {
        match &self.edges {
            Edges::Complete => (0..self.p)
                .flat_map(|p| (0..self.q).map(move |q| (p, q)))
                .collect(),
            Edges::Listed(edges) => edges.iter().map(|e| (e.p, e.q)).collect(),
        }
    }

    /// Vertex colourings of both sides, each vertex taking the lowest label
    /// its neighbours-once-removed have not taken, in the order the
    /// vertices first appear along the dimension (on an interval of the
    /// line, as a window shorter than a period is, that order needs no more
    /// labels than the largest degree of the other side).
    pub fn labels(&self) -> Labels {
        let Edges::Listed(edges) = &self.edges else {
            return Labels {
                source: Vec::new(),
                target: Vec::new(),
                source_colours: self.p,
                target_colours: self.q,
            };
        };
        let by = |side: fn(&Edge) -> (usize, usize)| {
            let mut e: Vec<(usize, usize)> = edges.iter().map(side).collect();
            e.sort_unstable();
            e
        };
        // (vertex, neighbour) lists from either side.
        let from_source = by(|e| (e.p, e.q));
        let from_target = by(|e| (e.q, e.p));
        let first = |n: usize, side: fn(&Edge) -> usize| {
            let mut at = vec![usize::MAX; n];
            for e in edges {
                let v = &mut at[side(e)];
                *v = (*v).min(e.first);
            }
            at
        };
        let (source, source_colours) =
            colour_vertices(self.p, &first(self.p, |e| e.p), &from_source, &from_target);
        let (target, target_colours) =
            colour_vertices(self.q, &first(self.q, |e| e.q), &from_target, &from_source);
        Labels {
            source,
            target,
            source_colours,
            target_colours,
        }
    }
}

/// Colours `edges` with [`greedy`], longest first: all of them, or with
/// `apart_diagonal` the edges `x → x` colour 0 and the others from 1 on.
/// Returns the largest colour given to an edge off the diagonal (0 when
/// there is none).
fn colour_edges(edges: &mut [Edge], apart_diagonal: bool) -> usize {
    let off = |e: &Edge| !(apart_diagonal && e.p == e.q);
    let base = edges.iter().map(|e| e.p + 1).max().unwrap_or(0);
    // Targets numbered after the sources, so that no edge looks local.
    let messages: Vec<Message> = (edges.iter())
        .filter(|e| off(e))
        .map(|e| Message {
            from: e.p,
            to: base + e.q,
            len: e.len,
        })
        .collect();
    let index: Vec<usize> = (0..edges.len()).filter(|&i| off(&edges[i])).collect();
    let schedule = greedy(&messages);
    let shift = usize::from(apart_diagonal);
    let mut largest = 0;
    for e in edges.iter_mut() {
        e.colour = 0;
    }
    for (c, step) in schedule.steps().iter().enumerate() {
        for &i in step {
            edges[index[i]].colour = c + shift;
            largest = largest.max(c + shift);
        }
    }
    largest
}

/// Greedy colours of `n` vertices of one side, in the order of `first`,
/// such that two vertices with a common neighbour differ: `mine` lists
/// `(vertex, neighbour)` pairs of this side, `theirs` `(neighbour, vertex)`
/// pairs, both sorted. Returns the colours and how many were used.
fn colour_vertices(
    n: usize,
    first: &[usize],
    mine: &[(usize, usize)],
    theirs: &[(usize, usize)],
) -> (Vec<usize>, usize) {
    let range = |list: &[(usize, usize)], v: usize| {
        list.partition_point(|x| x.0 < v)..list.partition_point(|x| x.0 <= v)
    };
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&v| (first[v], v));
    let mut colour = vec![usize::MAX; n];
    let mut taken: Vec<bool> = Vec::new();
    let mut used = 0;
    for v in order {
        taken.iter_mut().for_each(|t| *t = false);
        for &(_, w) in &mine[range(mine, v)] {
            for &(_, u) in &theirs[range(theirs, w)] {
                if let Some(&c) = colour.get(u).filter(|&&c| c != usize::MAX) {
                    if c >= taken.len() {
                        taken.resize(c + 1, false);
                    }
                    taken[c] = true;
                }
            }
        }
        let c = taken.iter().position(|t| !t).unwrap_or(taken.len());
        colour[v] = c;
        used = used.max(c + 1);
    }
    // Vertices with no edge keep label 0.
    for c in &mut colour {
        if *c == usize::MAX {
            *c = 0;
        }
    }
    (colour, used.max(1))
}
