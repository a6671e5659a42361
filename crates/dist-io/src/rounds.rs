//! The file as a layout: rounds of contiguous ranges dealt to the
//! aggregators.
//!
//! A file holds its array in C (or Fortran) order, so the indices `a..b`
//! of one dimension, with every faster dimension whole and every slower one
//! fixed, are one contiguous range of the file. A transfer cuts the region
//! it moves (the whole array, or a window of it) into such boxes, one per
//! round, each small enough that its share on every aggregator fits the
//! staging budget; inside a round, aggregator `q` holds the `q`-th block of
//! the split dimension. Seen as a layout, a round is `*` on every
//! dimension but the split one, which is `cyclic(block)` over all the
//! communicator's ranks with the aggregators first in the rank map: one
//! cycle covers the round, so the ranks after the first `aggregators`
//! hold nothing. Moving an array to or from the file is then one
//! redistribution per round.
//!
//! ```
//! use dist_io::rounds::Rounds;
//! use procgrid::Order;
//! // 1000 x 300 f64 (rows of 2400 bytes), 2 aggregators of 1 MiB each.
//! let r = Rounds::new(&[1000, 300], Order::RowMajor, 8, 2, 1 << 20);
//! assert_eq!((r.axis(), r.len()), (0, 2)); // 436 rows per aggregator, 872 a round
//! let first = r.round(0);
//! assert_eq!((first.origin.clone(), first.extent.clone(), first.block), (vec![0, 0], vec![872, 300], 436));
//! let held = first.aggregator_box(1).unwrap();
//! assert_eq!((held.origin, held.extent), (vec![436, 0], vec![436, 300]));
//! ```

use dist_array::{Dist, LayoutSpec};
use procgrid::Order;

/// A region cut into rounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rounds {
    extent: Vec<usize>,
    /// The split dimension.
    axis: usize,
    /// The dimensions slower than `axis` in the file, slowest first: one
    /// index of each per round.
    slower: Vec<usize>,
    /// Indices of `axis` per round.
    step: usize,
    aggregators: usize,
}

/// One round: a box of the region, contiguous in the file when the region
/// covers the faster dimensions whole, and how it is dealt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Round {
    /// First index of the box, in the region.
    pub origin: Vec<usize>,
    /// Extent of the box.
    pub extent: Vec<usize>,
    /// The split dimension.
    pub axis: usize,
    /// Indices of `axis` per aggregator.
    pub block: usize,
}

impl Rounds {
    /// The rounds of a region of `extent` in a file of `order`, elements
    /// of `element_bytes`, over `aggregators` ranks that may each hold
    /// `budget` bytes: the split dimension is the slowest one whose single
    /// index (every faster dimension whole) fits the budget.
    pub fn new(
        extent: &[usize],
        order: Order,
        element_bytes: usize,
        aggregators: usize,
        budget: usize,
    ) -> Rounds {
        let dims: Vec<usize> = match order {
            Order::RowMajor => (0..extent.len()).collect(),
            Order::ColumnMajor => (0..extent.len()).rev().collect(),
        };
        let aggregators = aggregators.max(1);
        // Bytes of one index of dims[j], every faster dimension whole.
        let inner = |j: usize| -> u128 {
            (dims[j + 1..].iter()).fold(element_bytes as u128, |acc, &d| acc * extent[d] as u128)
        };
        let j = (0..dims.len())
            .find(|&j| inner(j) <= budget as u128)
            .unwrap_or(dims.len().saturating_sub(1));
        let axis = dims.get(j).copied().unwrap_or(0);
        let per_aggregator = (budget as u128 / inner(j).max(1)).max(1);
        let step = (per_aggregator * aggregators as u128)
            .min(extent.get(axis).copied().unwrap_or(0) as u128)
            .max(1);
        Rounds {
            extent: extent.to_vec(),
            axis,
            slower: dims[..j].to_vec(),
            step: usize::try_from(step).unwrap_or(usize::MAX),
            aggregators,
        }
    }

    /// The split dimension.
    pub fn axis(&self) -> usize {
        self.axis
    }

    /// Rounds per index of the slower dimensions.
    fn chunks(&self) -> usize {
        self.extent[self.axis].div_ceil(self.step)
    }

    /// The number of rounds (none for a region without elements).
    pub fn len(&self) -> usize {
        if self.extent.contains(&0) {
            return 0;
        }
        (self.slower.iter())
            .try_fold(self.chunks(), |acc, &d| acc.checked_mul(self.extent[d]))
            .unwrap_or(usize::MAX)
    }

    /// Whether there are no rounds.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Round `i` (below [`len`](Self::len)).
    pub fn round(&self, i: usize) -> Round {
        let chunks = self.chunks();
        let (mut prefix, chunk) = (i / chunks, i % chunks);
        let mut origin = vec![0; self.extent.len()];
        let mut extent = self.extent.clone();
        for &d in self.slower.iter().rev() {
            origin[d] = prefix % self.extent[d];
            prefix /= self.extent[d];
            extent[d] = 1;
        }
        let start = chunk * self.step;
        origin[self.axis] = start;
        extent[self.axis] = self.step.min(self.extent[self.axis] - start);
        let block = extent[self.axis].div_ceil(self.aggregators);
        Round {
            origin,
            extent,
            axis: self.axis,
            block,
        }
    }

    /// Every round, in file order.
    pub fn iter(&self) -> impl Iterator<Item = Round> + '_ {
        (0..self.len()).map(|i| self.round(i))
    }
}

/// A box of the region: its first index, relative to the region's, and
/// its extent per dimension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionBox {
    /// First index, relative to the region's first.
    pub origin: Vec<usize>,
    /// Extent per dimension.
    pub extent: Vec<usize>,
}

impl Round {
    /// The box aggregator `q` holds in this round, relative to the region
    /// (`None` when it holds nothing).
    pub fn aggregator_box(&self, q: usize) -> Option<RegionBox> {
        let start = q.checked_mul(self.block)?;
        let len = self.extent[self.axis].checked_sub(start)?.min(self.block);
        if len == 0 {
            return None;
        }
        let mut origin = self.origin.clone();
        let mut extent = self.extent.clone();
        origin[self.axis] += start;
        extent[self.axis] = len;
        Some(RegionBox { origin, extent })
    }

    /// The round as a layout over `ranks` ranks: `*` everywhere but the
    /// split dimension, `cyclic(block)` there, the grid `ranks` along it.
    pub fn spec(&self, ranks: usize) -> LayoutSpec {
        let dists = (0..self.extent.len())
            .map(|d| {
                if d == self.axis {
                    Dist::cyclic(self.block.max(1))
                } else {
                    Dist::Collapsed
                }
            })
            .collect();
        let grid = (0..self.extent.len())
            .map(|d| if d == self.axis { ranks } else { 1 })
            .collect();
        LayoutSpec::new(dists, grid).expect("a valid spec: every block at least 1")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dist_array::Layout;
    use quickcheck::{quickcheck, TestResult};

    /// Checks that the rounds of `extent` cover every index once, that
    /// every aggregator's box fits the budget (one element where it holds
    /// less), and that the round as a layout gives aggregator `q` exactly
    /// its box.
    fn check(
        extent: &[usize],
        order: Order,
        elem: usize,
        aggs: usize,
        budget: usize,
        ranks: usize,
    ) {
        let rounds = Rounds::new(extent, order, elem, aggs, budget);
        let total: usize = extent.iter().product();
        let mut seen = vec![0u8; total];
        let lin = |idx: &[usize]| idx.iter().zip(extent).fold(0, |a, (&i, &n)| a * n + i);
        for round in rounds.iter() {
            let layout = Layout::new(&round.extent, &round.spec(ranks)).unwrap();
            for q in 0..ranks {
                let held = round.aggregator_box(q);
                let shape = layout.local_shape(q).unwrap();
                match &held {
                    Some(b) => assert_eq!(shape, b.extent, "{round:?} q={q}"),
                    None => assert!(shape.contains(&0), "{round:?} q={q}"),
                }
                assert!(q < aggs || held.is_none(), "only aggregators hold boxes");
                let Some(RegionBox {
                    origin: o,
                    extent: e,
                }) = held
                else {
                    continue;
                };
                let bytes: usize = e.iter().product::<usize>() * elem;
                assert!(bytes <= budget.max(elem), "{bytes} > {budget}: {round:?}");
                let mut idx = o.clone();
                loop {
                    seen[lin(&idx)] += 1;
                    let mut d = extent.len();
                    loop {
                        if d == 0 {
                            break;
                        }
                        d -= 1;
                        idx[d] += 1;
                        if idx[d] < o[d] + e[d] {
                            break;
                        }
                        idx[d] = o[d];
                    }
                    if idx == o {
                        break;
                    }
                }
            }
        }
        assert!(seen.iter().all(|&s| s == 1), "{extent:?}: every index once");
    }

    #[test]
    fn small_regions_are_one_round() {
        let r = Rounds::new(&[10, 7], Order::RowMajor, 8, 3, 1 << 20);
        assert_eq!(r.len(), 1);
        assert_eq!(r.round(0).block, 4);
        check(&[10, 7], Order::RowMajor, 8, 3, 1 << 20, 5);
    }

    #[test]
    fn rows_larger_than_the_budget_split_a_faster_dimension() {
        // A row of 8 * 1000 bytes, a budget of 4000: each row in rounds.
        let r = Rounds::new(&[3, 1000], Order::RowMajor, 8, 2, 4000);
        assert_eq!((r.axis(), r.len()), (1, 3 * 1000usize.div_ceil(1000)));
        check(&[3, 1000], Order::RowMajor, 8, 2, 4000, 3);
        let f = Rounds::new(&[1000, 3], Order::ColumnMajor, 8, 2, 4000);
        assert_eq!(f.axis(), 0);
        check(&[1000, 3], Order::ColumnMajor, 8, 2, 4000, 2);
    }

    #[test]
    fn a_budget_below_one_element_moves_one_element_a_round() {
        let r = Rounds::new(&[2, 3], Order::RowMajor, 16, 1, 1);
        assert_eq!(r.len(), 6);
        check(&[2, 3], Order::RowMajor, 16, 1, 1, 1);
    }

    #[test]
    fn empty_regions_have_no_rounds() {
        assert!(Rounds::new(&[4, 0, 3], Order::RowMajor, 8, 2, 100).is_empty());
    }

    quickcheck! {
        fn rounds_tile_the_region(
            dims: Vec<u8>, f: bool, elem: u8, aggs: u8, budget: u16, extra: u8
        ) -> TestResult {
            let extent: Vec<usize> = dims.iter().take(4).map(|&e| usize::from(e % 9)).collect();
            if extent.is_empty() || extent.iter().product::<usize>() > 5000 {
                return TestResult::discard();
            }
            let order = if f { Order::ColumnMajor } else { Order::RowMajor };
            let elem = [1, 4, 8, 16][usize::from(elem % 4)];
            let aggs = usize::from(aggs % 5) + 1;
            let ranks = aggs + usize::from(extra % 3);
            check(&extent, order, elem, aggs, usize::from(budget) + 1, ranks);
            TestResult::passed()
        }
    }
}
