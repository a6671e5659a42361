use super::*;
use crate::layout::spec::Dist;
use crate::testing::all_indices;
use quickcheck::{quickcheck, Arbitrary, Gen};
use std::collections::HashSet;

#[derive(Clone, Debug)]
struct Case(Layout);

impl Arbitrary for Case {
    fn arbitrary(g: &mut Gen) -> Self {
        let ndim = usize::arbitrary(g) % 4 + 1;
        let max_extent = [40, 14, 7, 5][ndim - 1];
        let mut dists = vec![];
        let mut grid = vec![];
        let mut shape = vec![];
        for _ in 0..ndim {
            let p = usize::arbitrary(g) % 4 + 1;
            let first = usize::arbitrary(g) % p;
            dists.push(match u8::arbitrary(g) % 4 {
                0 if p == 1 => Dist::Collapsed,
                0 | 1 => Dist::block().starting_at(first),
                _ => Dist::cyclic(usize::arbitrary(g) % 6 + 1).starting_at(first),
            });
            grid.push(p);
            shape.push(usize::arbitrary(g) % max_extent);
        }
        let spec = LayoutSpec::new(dists, grid).unwrap();
        let mut layout = Layout::new(&shape, &spec).unwrap();
        // A random permutation as the rank map.
        let mut map: Vec<usize> = (0..layout.ranks()).collect();
        for i in (1..map.len()).rev() {
            map.swap(i, usize::arbitrary(g) % (i + 1));
        }
        layout = layout.with_rank_map(map).unwrap();
        if bool::arbitrary(g) {
            layout = layout.with_storage(Order::ColumnMajor);
        }
        Case(layout)
    }
}

/// Naive oracle for one dimension: scan the indices, deal blocks round-robin
/// and count positions per process.
fn scan_axis(n: usize, p: usize, b: usize, first: usize) -> Vec<(usize, usize)> {
    let mut owner = first;
    let mut in_block = 0;
    let mut next = vec![0; p];
    (0..n)
        .map(|_| {
            if in_block == b {
                in_block = 0;
                owner = (owner + 1) % p;
            }
            in_block += 1;
            let l = next[owner];
            next[owner] += 1;
            (owner, l)
        })
        .collect()
}

/// A random order of `k` axes.
fn axis_order(k: usize, g: &mut Gen) -> Vec<usize> {
    let mut order: Vec<usize> = (0..k).collect();
    for i in (1..k).rev() {
        order.swap(i, usize::arbitrary(g) % (i + 1));
    }
    order
}

quickcheck! {
    fn selected_axes_keep_every_element_where_it_was(c: Case, ordered: bool) -> bool {
        let mut g = Gen::new(8);
        // Ranks numbered in a coordinate order, or by an explicit map.
        let l = if ordered {
            c.0.clone().with_grid_order(Order::ColumnMajor)
        } else {
            c.0.clone()
        };
        let order = axis_order(l.ndim(), &mut g);
        let t = l.select_axes(&order).unwrap();
        let pick = |v: &[usize]| -> Vec<usize> { order.iter().map(|&d| v[d]).collect() };
        t.shape() == pick(l.shape()).as_slice()
            && t.storage() == l.storage()
            && (0..l.ranks()).all(|r| {
                t.position_of(r).map(|p| t.rank_at(p)) == Some(r)
                    && t.coords_of_rank(r).unwrap() == pick(&l.coords_of_rank(r).unwrap())
                    && t.local_shape(r).unwrap() == pick(&l.local_shape(r).unwrap())
            })
            && all_indices(l.shape()).iter().all(|gi| {
                let (r, loc) = l.global_to_local(gi).unwrap();
                t.global_to_local(&pick(gi)).unwrap() == (r, pick(&loc))
            })
            // And back: the inverse order gives the layout again.
            && {
                let mut inverse = vec![0; order.len()];
                for (j, &d) in order.iter().enumerate() {
                    inverse[d] = j;
                }
                t.select_axes(&inverse).unwrap() == l
            }
    }

    fn layout_matches_scan(c: Case) -> bool {
        let l = &c.0;
        let spec = l.spec();
        let scans: Vec<Vec<(usize, usize)>> = (0..l.ndim())
            .map(|d| {
                let n = l.shape()[d];
                let p = spec.grid()[d];
                let dist = spec.dists()[d];
                let b = match dist {
                    Dist::Block { .. } => n.div_ceil(p).max(1),
                    Dist::Cyclic { block, .. } => block,
                    Dist::Collapsed => n.max(1),
                };
                scan_axis(n, p, b, dist.first())
            })
            .collect();
        let mut per_rank: Vec<HashSet<Vec<usize>>> = vec![HashSet::new(); l.ranks()];
        for g in all_indices(l.shape()) {
            let coords: Vec<usize> = (0..l.ndim()).map(|d| scans[d][g[d]].0).collect();
            let local: Vec<usize> = (0..l.ndim()).map(|d| scans[d][g[d]].1).collect();
            let i = coords_to_rank(&coords, spec.grid(), Order::RowMajor).unwrap();
            let rank = l.rank_map()[i];
            if l.owner(&g).unwrap() != rank
                || l.global_to_local(&g).unwrap() != (rank, local.clone())
                || l.local_to_global(rank, &local).unwrap() != g
                || l.coords_of_rank(rank).unwrap() != coords
            {
                return false;
            }
            per_rank[rank].insert(g);
        }
        let total: usize = (0..l.ranks()).map(|r| l.local_len(r).unwrap()).sum();
        total == l.len()
            && (0..l.ranks()).all(|r| {
                let shape = l.local_shape(r).unwrap();
                // Every local index maps to a distinct global index this rank owns.
                all_indices(&shape).len() == per_rank[r].len()
                    && shape.iter().product::<usize>() == per_rank[r].len()
                    && all_indices(&shape)
                        .iter()
                        .all(|loc| per_rank[r].contains(&l.local_to_global(r, loc).unwrap()))
            })
    }

    fn local_blocks_tile_the_local_part(c: Case) -> bool {
        let l = &c.0;
        (0..l.ranks()).all(|r| {
            let shape = l.local_shape(r).unwrap();
            let mut covered = 0usize;
            let mut ok = true;
            for b in l.local_blocks(r).unwrap() {
                covered += b.global.iter().map(|g| g.len()).product::<usize>();
                for ((g, lr), &n) in b.global.iter().zip(&b.local).zip(&shape) {
                    ok &= g.len() == lr.len() && lr.end <= n;
                }
                // Corners of the block map consistently.
                let lo: Vec<usize> = b.local.iter().map(|x| x.start).collect();
                let go: Vec<usize> = b.global.iter().map(|x| x.start).collect();
                ok &= l.local_to_global(r, &lo).unwrap() == go;
                let hi: Vec<usize> = b.local.iter().map(|x| x.end - 1).collect();
                let gh: Vec<usize> = b.global.iter().map(|x| x.end - 1).collect();
                ok &= l.local_to_global(r, &hi).unwrap() == gh;
            }
            ok && covered == shape.iter().product::<usize>()
        })
    }
}

#[test]
fn huge_layout_is_legal_and_cheap() {
    let l = Layout::parse(&[1 << 20, 1 << 20], "cyclic(64),block@4x8").unwrap();
    assert_eq!(l.len(), 1 << 40);
    let g = [(1 << 20) - 1, (1 << 20) - 3];
    let (r, loc) = l.global_to_local(&g).unwrap();
    assert_eq!(l.local_to_global(r, &loc).unwrap(), g);
    let total: usize = (0..32).map(|r| l.local_len(r).unwrap()).sum();
    assert_eq!(total, 1 << 40);
}

#[test]
fn invalid_layouts_are_typed_errors() {
    assert!(matches!(
        Layout::parse(&[4, 4], "block@2"),
        Err(PlanError::RankMismatch {
            expected: 1,
            got: 2,
            ..
        })
    ));
    assert!(matches!(
        Layout::parse(&[usize::MAX, 2], "block,block@1x1"),
        Err(PlanError::Overflow { .. })
    ));
    assert!(matches!(
        Layout::new(
            &[usize::MAX / 2],
            &LayoutSpec::new(vec![Dist::cyclic(usize::MAX / 2)], vec![3]).unwrap()
        ),
        Err(PlanError::Overflow { .. })
    ));
    let l = Layout::parse(&[4, 4], "block,block@2x2").unwrap();
    assert!(matches!(
        l.owner(&[4, 0]),
        Err(PlanError::GlobalOutOfRange { .. })
    ));
    assert!(matches!(
        l.owner(&[0]),
        Err(PlanError::GlobalOutOfRange { .. })
    ));
    assert!(matches!(
        l.local_to_global(0, &[2, 0]),
        Err(PlanError::LocalOutOfRange { .. })
    ));
    assert!(matches!(
        l.local_shape(4),
        Err(PlanError::NoSuchRank { rank: 4, ranks: 4 })
    ));
    assert!(matches!(
        l.clone().with_rank_map(vec![0, 1, 2]),
        Err(PlanError::BadRankMap { .. })
    ));
    assert!(matches!(
        l.with_rank_map(vec![0, 1, 2, 4]),
        Err(PlanError::BadRankMap { .. })
    ));
}

#[test]
fn grid_order_sets_rank_map() {
    let l = Layout::parse(&[4, 6], "block,block@2x3")
        .unwrap()
        .with_grid_order(Order::ColumnMajor);
    // Column-major: coordinates (0,1) hold rank 2.
    assert_eq!(l.rank_of_coords(&[0, 1]).unwrap(), 2);
    assert_eq!(l.owner(&[0, 2]).unwrap(), 2);
    assert_eq!(
        l.to_string(),
        "4x6 block,block@2x3 ranks [0, 2, 4, 1, 3, 5]"
    );
}

/// Rank maps that number the ranks in a coordinate order are held as
/// that order (nothing per rank) and equal it however they were given;
/// other maps are held explicitly; rank_at and position_of are inverse.
#[test]
fn rank_maps_are_held_by_their_order_when_they_have_one() {
    let base = Layout::parse(&[4, 6], "block,block@2x3").unwrap();
    let column = base.clone().with_grid_order(Order::ColumnMajor);
    let explicit_column = base.clone().with_rank_map(vec![0, 2, 4, 1, 3, 5]).unwrap();
    assert_eq!(column, explicit_column);
    assert_eq!(column.rank_order(), Some(Order::ColumnMajor));
    let identity = base.clone().with_rank_map((0..6).collect()).unwrap();
    assert_eq!(identity, base);
    assert_eq!(identity.rank_order(), Some(Order::RowMajor));
    let other = base.clone().with_rank_map(vec![5, 0, 1, 2, 3, 4]).unwrap();
    assert_eq!(other.rank_order(), None);
    for l in [&base, &column, &other] {
        for i in 0..l.ranks() {
            assert_eq!(l.position_of(l.rank_at(i)), Some(i), "{l}");
        }
        assert_eq!(l.position_of(l.ranks()), None);
        assert_eq!(
            l.rank_map(),
            (0..6).map(|i| l.rank_at(i)).collect::<Vec<_>>()
        );
    }
    // With one extent above 1 the two orders number the grid alike.
    let line = Layout::parse(&[8, 8], "block,*@4x1").unwrap();
    assert_eq!(line.clone().with_grid_order(Order::ColumnMajor), line);
}
