//! One side of a message as a tree MPI can take as one derived datatype:
//! runs of consecutive elements, repeated at constant strides, in
//! sequences. Built from the per-dimension programs, so it holds what they
//! hold — the lines of one period, a repeat count, the tail — and never one
//! node per run of the whole extent (a flat list of runs would grow with
//! the array: 65 536 entries for one message of a 4096² `cyclic(64)`
//! exchange, against 3 nodes here).

use super::axis::{AxisProgram, Line};

/// The elements of one side of a message, in message order, as offsets (in
/// elements) from a base.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TypeTree {
    /// `n` consecutive elements from offset 0.
    Run(usize),
    /// `count` instances of `inner`, instance `i` from offset `i·stride`.
    Repeat {
        /// Instances.
        count: usize,
        /// Offset between instances.
        stride: usize,
        /// One instance.
        inner: Box<TypeTree>,
    },
    /// The children one after another in message order, each from its
    /// offset.
    Seq(Vec<(usize, TypeTree)>),
}

impl TypeTree {
    /// Nothing.
    fn empty() -> TypeTree {
        TypeTree::Seq(Vec::new())
    }

    /// `count` instances of `inner` at `stride`, simplified: no instance is
    /// nothing, one is `inner`, back-to-back runs are one run.
    pub fn repeat(count: usize, stride: usize, inner: TypeTree) -> TypeTree {
        match (count, inner) {
            (0, _) => TypeTree::empty(),
            (1, inner) => inner,
            (_, TypeTree::Run(n)) if stride == n => TypeTree::Run(count * n),
            (_, inner) if inner.elements() == 0 => TypeTree::empty(),
            (count, inner) => TypeTree::Repeat {
                count,
                stride,
                inner: Box::new(inner),
            },
        }
    }

    /// `children` one after another, simplified: nested sequences flattened,
    /// empty children dropped, runs that continue each other merged, a lone
    /// child at offset 0 returned as itself.
    pub fn seq(children: impl IntoIterator<Item = (usize, TypeTree)>) -> TypeTree {
        let mut out: Vec<(usize, TypeTree)> = Vec::new();
        fn push(out: &mut Vec<(usize, TypeTree)>, at: usize, child: TypeTree) {
            match child {
                TypeTree::Seq(children) => {
                    for (o, p) in children {
                        push(out, at + o, p);
                    }
                }
                p if p.elements() == 0 => {}
                TypeTree::Run(n) => match out.last_mut() {
                    Some((o, TypeTree::Run(m))) if *o + *m == at => *m += n,
                    _ => out.push((at, TypeTree::Run(n))),
                },
                p => out.push((at, p)),
            }
        }
        for (at, child) in children {
            push(&mut out, at, child);
        }
        if out.len() == 1 && out[0].0 == 0 {
            return out.pop().map_or_else(TypeTree::empty, |(_, p)| p);
        }
        TypeTree::Seq(out)
    }

    /// Whether this is a single run.
    pub fn is_run(&self) -> bool {
        matches!(self, TypeTree::Run(_))
    }

    /// Whether some sequence of two or more children lies under a repeat: a
    /// period made of several different runs (or lines), repeated.
    /// O(nodes).
    pub fn repeats_sequences(&self) -> bool {
        fn under(node: &TypeTree, repeated: bool) -> bool {
            match node {
                TypeTree::Run(_) => false,
                TypeTree::Repeat { inner, .. } => under(inner, true),
                TypeTree::Seq(children) => {
                    (repeated && children.len() > 1)
                        || children.iter().any(|(_, p)| under(p, repeated))
                }
            }
        }
        under(self, false)
    }

    /// Elements described.
    pub fn elements(&self) -> usize {
        match self {
            TypeTree::Run(n) => *n,
            TypeTree::Repeat { count, inner, .. } => count * inner.elements(),
            TypeTree::Seq(children) => children.iter().map(|(_, p)| p.elements()).sum(),
        }
    }

    /// One past the largest offset described (0 for nothing).
    pub fn span(&self) -> usize {
        match self {
            TypeTree::Run(n) => *n,
            TypeTree::Repeat {
                count,
                stride,
                inner,
            } => match inner.span() {
                0 => 0,
                s => (count - 1) * stride + s,
            },
            TypeTree::Seq(children) => children
                .iter()
                .map(|(o, p)| match p.span() {
                    0 => 0,
                    s => o + s,
                })
                .max()
                .unwrap_or(0),
        }
    }

    /// Runs at the leaves, counting every repeat: at least the number of
    /// contiguous runs described (runs that happen to meet across nodes
    /// count twice). O(nodes).
    pub fn leaf_runs(&self) -> usize {
        match self {
            TypeTree::Run(_) => 1,
            TypeTree::Repeat { count, inner, .. } => count.saturating_mul(inner.leaf_runs()),
            TypeTree::Seq(children) => children.iter().map(|(_, p)| p.leaf_runs()).sum(),
        }
    }

    /// Nodes of the tree: what building its datatype costs.
    #[cfg(test)]
    pub fn nodes(&self) -> usize {
        match self {
            TypeTree::Run(_) => 1,
            TypeTree::Repeat { inner, .. } => 1 + inner.nodes(),
            TypeTree::Seq(children) => 1 + children.iter().map(|(_, p)| p.nodes()).sum::<usize>(),
        }
    }

    /// Calls `f(offset)` for every element, in message order, from `base`
    /// (for tests: O(elements)).
    #[cfg(test)]
    pub fn each_element(&self, base: usize, f: &mut impl FnMut(usize)) {
        match self {
            TypeTree::Run(n) => (base..base + n).for_each(f),
            TypeTree::Repeat {
                count,
                stride,
                inner,
            } => {
                for i in 0..*count {
                    inner.each_element(base + i * stride, f);
                }
            }
            TypeTree::Seq(children) => {
                for (o, p) in children {
                    p.each_element(base + o, f);
                }
            }
        }
    }
}

impl AxisProgram {
    /// The tree of this dimension on one side (`source`, else target),
    /// with local indices `stride` elements apart and `inner` the tree of
    /// one index (the dimensions inside this one).
    pub(super) fn type_tree(&self, source: bool, stride: usize, inner: &TypeTree) -> TypeTree {
        let line = |l: &Line| {
            let (at, step) = if source {
                (l.src, l.src_step)
            } else {
                (l.dst, l.dst_step)
            };
            let stretch = TypeTree::repeat(l.len, stride, inner.clone());
            (
                at * stride,
                TypeTree::repeat(l.count, step * stride, stretch),
            )
        };
        let period_stride = if source {
            self.src_stride
        } else {
            self.dst_stride
        };
        let body = TypeTree::seq(self.body.iter().map(line));
        let periods = TypeTree::repeat(self.periods, period_stride * stride, body);
        TypeTree::seq(std::iter::once((0, periods)).chain(self.tail.iter().map(line)))
    }
}
