//! How the dimensions' colours combine into the colour of an n-D message:
//! a function of the two ranks' coordinates alone, so that the sender and
//! the receiver find the same step without talking.
//!
//! Two ways, each a proper colouring of the product of the dimensions it
//! is given (the n-D graph has an edge `a → b` where every dimension's
//! graph has `a_d → b_d`):
//!
//! - [`EdgeProduct`]: the dimensions' edge colourings. Dimensions where
//!   every source sends to one target (or every target receives from one
//!   source) add up modulo the larger of the two sides' products; the
//!   others multiply as digits of a mixed-radix number. At a source the
//!   sum's first part is constant and its second tells the source's
//!   messages apart; at a target the other way round.
//! - [`LabelShift`]: the dimensions' vertex labels ([`Labels`]). Number a
//!   source by the mixed-radix number `X` of its labels and a target by
//!   `Y` of its own; the message `a → b` moves in step `(Y − X) mod n`,
//!   `n = max(ΠX-radices, ΠY-radices)`. At a source `X` is fixed and the
//!   labels of its targets differ (two targets of one source never share a
//!   label in any dimension), so `Y` differs; at a target the other way
//!   round. With labels as few as the degrees allow, `n` is the maximum
//!   degree of the n-D graph, `max(Π_d ΔS_d, Π_d ΔT_d)`, whichever side
//!   leads in each dimension: the labels fold every dimension's graph into
//!   a complete one, and the n-D graph into a complete graph on `n`
//!   numbers coloured by its shift.
//!
//! A [`Combination`] gives some dimensions to the first and the rest to
//! the second; the product of the two colourings (first's colour times
//! the second's colours, plus the second's colour) is again proper.

use super::axis_graph::{AxisGraph, Labels};

/// The dimensions' edge colourings, one-sided ones summed, the others
/// multiplied.
struct EdgeProduct {
    /// Per dimension taken: its index, kind and radix.
    dims: Vec<(usize, Kind, usize)>,
    /// Modulus of the one-sided sum.
    base: usize,
    /// Colours in all.
    colours: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Every source sends to at most one target: a constant at every
    /// source, one colour per source at a target.
    SourceOne,
    /// Every target receives from at most one source.
    TargetOne,
    /// Both sides have degree above one.
    General,
}

impl EdgeProduct {
    /// The product of the dimensions `dims`, one-sided ones summed unless
    /// `digits` (then every dimension is a digit).
    fn new(graphs: &[AxisGraph], dims: &[usize], digits: bool) -> EdgeProduct {
        let dims: Vec<(usize, Kind, usize)> = (dims.iter())
            .map(|&d| {
                let (s, t) = graphs[d].degrees();
                let kind = match (s <= 1, t <= 1) {
                    _ if digits => Kind::General,
                    (true, _) => Kind::SourceOne,
                    (false, true) => Kind::TargetOne,
                    _ => Kind::General,
                };
                (d, kind, graphs[d].colours().max(1))
            })
            .collect();
        let radix = |k: Kind| {
            (dims.iter())
                .filter(|d| d.1 == k)
                .fold(1usize, |n, d| n.saturating_mul(d.2))
        };
        let base = radix(Kind::SourceOne).max(radix(Kind::TargetOne));
        EdgeProduct {
            colours: base.saturating_mul(radix(Kind::General)),
            dims,
            base,
        }
    }

    fn colour(&self, graphs: &[AxisGraph], a: &[usize], b: &[usize]) -> usize {
        // Mixed-radix numbers of each kind's colours.
        let (mut x, mut y, mut w) = (0usize, 0usize, 0usize);
        for &(d, kind, radix) in &self.dims {
            let c = graphs[d].colour(a[d], b[d]);
            match kind {
                Kind::SourceOne => x = x * radix + c,
                Kind::TargetOne => y = y * radix + c,
                Kind::General => w = w * radix + c,
            }
        }
        (x + y) % self.base + self.base * w
    }
}

/// The dimensions' vertex labels, as mixed-radix numbers `X` (sources) and
/// `Y` (targets); step `(Y − X) mod n`.
struct LabelShift {
    /// Per dimension taken: its index and labels.
    dims: Vec<(usize, Labels)>,
    /// The modulus: the larger of the two numbers' ranges.
    n: usize,
}

impl LabelShift {
    fn new(labels: &[Option<Labels>], dims: &[usize]) -> LabelShift {
        let dims: Vec<(usize, Labels)> = (dims.iter())
            .filter_map(|&d| labels[d].clone().map(|l| (d, l)))
            .collect();
        let range = |side: fn(&Labels) -> usize| {
            (dims.iter()).fold(1usize, |n, (_, l)| n.saturating_mul(side(l)))
        };
        LabelShift {
            n: range(|l| l.source_colours).max(range(|l| l.target_colours)),
            dims,
        }
    }

    fn colour(&self, a: &[usize], b: &[usize]) -> usize {
        let (mut x, mut y) = (0usize, 0usize);
        for &(d, ref l) in &self.dims {
            x = x * l.source_colours + l.source(a[d]);
            y = y * l.target_colours + l.target(b[d]);
        }
        (y + self.n - x % self.n) % self.n
    }
}

/// Some dimensions coloured by their edges, the others by their vertex
/// labels; see the [module](self).
pub(super) struct Combination {
    edges: EdgeProduct,
    labels: LabelShift,
    /// Colours in all.
    pub colours: usize,
}

impl Combination {
    /// Every dimension by its edge colouring.
    pub fn by_edges(graphs: &[AxisGraph]) -> Combination {
        let all: Vec<usize> = (0..graphs.len()).collect();
        Combination::new(graphs, &[], &all)
    }

    /// Every dimension's edge colour a digit of a mixed-radix number:
    /// colour 0 is where every dimension's colour is 0, which holds
    /// exactly the local copies where every dimension's colour 0 holds
    /// exactly its edges `x → x` and the two sides' ranks sit at the same
    /// coordinates.
    pub fn by_digits(graphs: &[AxisGraph]) -> Combination {
        let all: Vec<usize> = (0..graphs.len()).collect();
        let edges = EdgeProduct::new(graphs, &all, true);
        let labels = LabelShift::new(&[], &[]);
        Combination {
            colours: edges.colours,
            edges,
            labels,
        }
    }

    /// The combination with the fewest colours over every split of the
    /// dimensions between edge colourings and vertex labels (`labels[d]`,
    /// `None` where a dimension has none), the most dimensions by edges
    /// among equals: those keep the edge colouring's packing of long
    /// messages into common steps.
    pub fn fewest(graphs: &[AxisGraph], labels: &[Option<Labels>]) -> Combination {
        let n = graphs.len();
        let labelled: Vec<usize> = (0..n).filter(|&d| labels[d].is_some()).collect();
        // Splits of the labelled dimensions (all of them past 2^12 splits).
        let splits: Vec<u64> = if labelled.len() <= 12 {
            (0..1u64 << labelled.len()).collect()
        } else {
            vec![0, (1u64 << labelled.len().min(63)) - 1]
        };
        let mut best: Option<(usize, usize, Combination)> = None;
        for mask in splits {
            let by_label: Vec<usize> = (labelled.iter().enumerate())
                .filter(|(i, _)| mask >> i & 1 == 1)
                .map(|(_, &d)| d)
                .collect();
            let by_edge: Vec<usize> = (0..n).filter(|d| !by_label.contains(d)).collect();
            let c = Combination::new(graphs, labels, &by_edge);
            let key = (c.colours, by_label.len());
            if best.as_ref().is_none_or(|b| key < (b.0, b.1)) {
                best = Some((key.0, key.1, c));
            }
        }
        best.map_or_else(|| Combination::by_edges(graphs), |b| b.2)
    }

    fn new(graphs: &[AxisGraph], labels: &[Option<Labels>], by_edge: &[usize]) -> Combination {
        let by_label: Vec<usize> = (0..graphs.len()).filter(|d| !by_edge.contains(d)).collect();
        let edges = EdgeProduct::new(graphs, by_edge, false);
        let labels = LabelShift::new(labels, &by_label);
        Combination {
            colours: edges.colours.saturating_mul(labels.n),
            edges,
            labels,
        }
    }

    /// The colour of the message between source coordinates `a` and target
    /// coordinates `b`.
    pub fn colour(&self, graphs: &[AxisGraph], a: &[usize], b: &[usize]) -> usize {
        self.edges.colour(graphs, a, b) * self.labels.n + self.labels.colour(a, b)
    }
}
