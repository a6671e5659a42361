//! Generators shared by the unit tests: random layouts, pairs of layouts of
//! one shape, and windows between layouts of two shapes.

use crate::coords::Order;
use crate::layout::spec::{Dist, LayoutSpec};
use crate::layout::Layout;
use crate::plan::Window;
use quickcheck::{Arbitrary, Gen};

/// Two random layouts of one random shape (1 to 3 dimensions).
#[derive(Clone, Debug)]
pub(crate) struct Pair(pub Layout, pub Layout);

/// A random layout of `shape`: block, cyclic(1..5) or collapsed per
/// dimension on 1..3 processes, random first processes, rank map and
/// storage order.
pub(crate) fn random_layout(g: &mut Gen, shape: &[usize]) -> Layout {
    let mut dists = vec![];
    let mut grid = vec![];
    for _ in shape {
        let p = usize::arbitrary(g) % 3 + 1;
        let first = usize::arbitrary(g) % p;
        dists.push(match u8::arbitrary(g) % 4 {
            0 if p == 1 => Dist::Collapsed,
            0 | 1 => Dist::block().starting_at(first),
            _ => Dist::cyclic(usize::arbitrary(g) % 5 + 1).starting_at(first),
        });
        grid.push(p);
    }
    let spec = LayoutSpec::new(dists, grid).unwrap();
    let mut l = Layout::new(shape, &spec).unwrap();
    let mut map: Vec<usize> = (0..l.ranks()).collect();
    for i in (1..map.len()).rev() {
        map.swap(i, usize::arbitrary(g) % (i + 1));
    }
    l = l.with_rank_map(map).unwrap();
    if bool::arbitrary(g) {
        l = l.with_storage(Order::ColumnMajor);
    }
    l
}

impl Arbitrary for Pair {
    fn arbitrary(g: &mut Gen) -> Self {
        let ndim = usize::arbitrary(g) % 3 + 1;
        let max = [40, 12, 6][ndim - 1];
        let shape: Vec<usize> = (0..ndim).map(|_| usize::arbitrary(g) % max + 1).collect();
        Pair(random_layout(g, &shape), random_layout(g, &shape))
    }
}

/// A window between two layouts of possibly different shapes.
#[derive(Clone, Debug)]
pub(crate) struct Windowed(pub Layout, pub Layout, pub Window);

impl Arbitrary for Windowed {
    fn arbitrary(g: &mut Gen) -> Self {
        let ndim = usize::arbitrary(g) % 3 + 1;
        let max = [40, 12, 6][ndim - 1];
        let mut extent = || usize::arbitrary(g) % max + 1;
        let a: Vec<usize> = (0..ndim).map(|_| extent()).collect();
        let b: Vec<usize> = (0..ndim).map(|_| extent()).collect();
        let shape: Vec<usize> = a
            .iter()
            .zip(&b)
            .map(|(&x, &y)| usize::arbitrary(g) % (x.min(y) + 1))
            .collect();
        let mut origin = |full: &[usize]| -> Vec<usize> {
            full.iter()
                .zip(&shape)
                .map(|(&n, &w)| usize::arbitrary(g) % (n - w + 1))
                .collect()
        };
        let (sa, sb) = (origin(&a), origin(&b));
        let w = Window::new(&sa, &sb, &shape).unwrap();
        Windowed(random_layout(g, &a), random_layout(g, &b), w)
    }
}

/// Every index of an array of `shape`, in row-major order.
pub(crate) fn all_indices(shape: &[usize]) -> Vec<Vec<usize>> {
    shape.iter().fold(vec![vec![]], |indices, &n| {
        (indices.iter())
            .flat_map(|v| (0..n).map(move |i| [v.as_slice(), &[i]].concat()))
            .collect()
    })
}
